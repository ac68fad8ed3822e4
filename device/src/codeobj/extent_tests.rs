use super::*;
use proptest::prelude::*;
use relaunch_testsupport::bundle::assemble;
use relaunch_testsupport::fixture;

fn reader(bytes: &[u8]) -> impl Fn(u64, u64) -> std::result::Result<Vec<u8>, String> + '_ {
    move |off, len| {
        let end = off.checked_add(len).ok_or("overflow")?;
        bytes
            .get(off as usize..end as usize)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| format!("{len} bytes at {off} are outside the {}", bytes.len()))
    }
}

const HOST: &str = "host-x86_64-unknown-linux-gnu-";
const G1100: &str = "hipv4-amdgcn-amd-amdhsa--gfx1100";
const G1201: &str = "hipv4-amdgcn-amd-amdhsa--gfx1201";

#[test]
fn the_extent_of_a_real_code_object_is_its_file_size() {
    let bytes = fixture("gfx1201", "counter");
    assert_eq!(elf_extent(&reader(&bytes)), Ok(bytes.len() as u64));
    let mut padded = bytes.clone();
    padded.extend([0u8; 100]);
    assert_eq!(elf_extent(&reader(&padded)), Ok(bytes.len() as u64));
}

#[test]
fn elf_bundles_and_other_formats_are_refused_with_the_reason() {
    let mut bundle = BUNDLE_MAGIC.to_vec();
    bundle.resize(128, 0);
    let err = elf_extent(&reader(&bundle)).unwrap_err();
    assert!(err.to_string().contains("offload bundle"), "{err}");
    assert_eq!(elf_extent(&reader(&[0u8; 64])), Err(ExtentError::NotElf));
    let mut x86 = fixture("gfx1201", "counter");
    x86[18..20].copy_from_slice(&62u16.to_le_bytes());
    let err = elf_extent(&reader(&x86)).unwrap_err();
    assert!(err.to_string().contains("machine 62"), "{err}");
    let short = &fixture("gfx1201", "counter")[..40];
    assert!(matches!(
        elf_extent(&reader(short)),
        Err(ExtentError::Read { .. })
    ));
}

#[test]
fn the_elf_limit_is_the_elf_readers_and_holds_exactly() {
    assert_eq!(MAX_ELF_BYTES, crate::codeobj::elf::MAX_IMAGE_BYTES);
    let bytes = fixture("gfx1201", "counter");
    let shoff = le(&bytes, 40, 8) as usize;
    // The first section entry (SHT_NULL: occupies its range) ends exactly
    // at the limit, then one byte past it.
    let mut at_limit = bytes.clone();
    let entry = shoff;
    at_limit[entry + 4..entry + 8].copy_from_slice(&1u32.to_le_bytes());
    at_limit[entry + 24..entry + 32].copy_from_slice(&(MAX_ELF_BYTES - 16).to_le_bytes());
    at_limit[entry + 32..entry + 40].copy_from_slice(&16u64.to_le_bytes());
    assert_eq!(elf_extent(&reader(&at_limit)), Ok(MAX_ELF_BYTES));
    let mut past = at_limit;
    past[entry + 32..entry + 40].copy_from_slice(&17u64.to_le_bytes());
    assert_eq!(elf_extent(&reader(&past)), Err(ExtentError::ElfTooLarge));
    let mut absurd = bytes;
    absurd[40..48].copy_from_slice(&u64::MAX.to_le_bytes());
    let err = elf_extent(&reader(&absurd)).unwrap_err();
    assert!(err.to_string().contains("more than"), "{err}");
}

#[test]
fn the_bundle_extent_covers_the_table_and_every_entry() {
    let bundle = assemble(&[(HOST, b""), (G1100, b"eleven"), (G1201, b"twelve!")]);
    assert_eq!(bundle_extent(&reader(&bundle)), Ok(bundle.len() as u64));
    // Trailing bytes past the last entry are not part of the bundle.
    let mut padded = bundle.clone();
    padded.extend([0u8; 100]);
    assert_eq!(bundle_extent(&reader(&padded)), Ok(bundle.len() as u64));
}

#[test]
fn the_bundle_limits_are_the_bundle_readers_and_hold_exactly() {
    assert_eq!(MAX_BUNDLE_ENTRIES, 1024);
    let ids: Vec<String> = (0..MAX_BUNDLE_ENTRIES)
        .map(|i| format!("hipv4-amdgcn-amd-amdhsa--gfx1201-{i}"))
        .collect();
    let entries: Vec<(&str, &[u8])> = ids.iter().map(|id| (id.as_str(), &b"x"[..])).collect();
    let full = assemble(&entries);
    assert_eq!(bundle_extent(&reader(&full)), Ok(full.len() as u64));
    // The bundle reader takes what the extent walk accepted.
    assert_eq!(
        crate::codeobj::bundle::entries(&full).unwrap().len() as u64,
        MAX_BUNDLE_ENTRIES
    );
    let mut over = full;
    over[24..32].copy_from_slice(&(MAX_BUNDLE_ENTRIES + 1).to_le_bytes());
    assert_eq!(
        bundle_extent(&reader(&over)),
        Err(ExtentError::EntryCount {
            count: MAX_BUNDLE_ENTRIES + 1
        })
    );
    // An entry may end exactly at the byte limit, not one past it.
    let mut far = assemble(&[(G1201, b"x")]);
    far[32..40].copy_from_slice(&(MAX_BUNDLE_BYTES - 1).to_le_bytes());
    assert_eq!(bundle_extent(&reader(&far)), Ok(MAX_BUNDLE_BYTES));
    far[32..40].copy_from_slice(&MAX_BUNDLE_BYTES.to_le_bytes());
    let err = bundle_extent(&reader(&far)).unwrap_err();
    assert!(err.to_string().contains("reach past"), "{err}");
    // Ids of 0 bytes or over the limit.
    let mut no_id = assemble(&[(G1201, b"x")]);
    no_id[48..56].copy_from_slice(&0u64.to_le_bytes());
    assert!(matches!(
        bundle_extent(&reader(&no_id)),
        Err(ExtentError::IdLength { len: 0, .. })
    ));
    no_id[48..56].copy_from_slice(&(MAX_BUNDLE_ID_BYTES + 1).to_le_bytes());
    assert!(matches!(
        bundle_extent(&reader(&no_id)),
        Err(ExtentError::IdLength { .. })
    ));
}

#[test]
fn bundle_garbage_is_refused_with_the_reason() {
    let mut ccob = COMPRESSED_MAGIC.to_vec();
    ccob.resize(64, 1);
    let err = bundle_extent(&reader(&ccob)).unwrap_err();
    assert!(err.to_string().contains("version 257"), "{err}");
    assert!(is_bundle(&ccob[..24]) && is_bundle(&assemble(&[])[..24]));
    assert!(!is_bundle(
        b"\x7fELF\x02\x01\x01\x40\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
    ));
    assert_eq!(
        bundle_extent(&reader(&[0u8; 64])),
        Err(ExtentError::NotBundle)
    );
    assert_eq!(
        bundle_extent(&reader(b"__CLANG")),
        Err(ExtentError::NotBundle)
    );
    let mut huge = BUNDLE_MAGIC.to_vec();
    huge.extend(u64::MAX.to_le_bytes());
    let err = bundle_extent(&reader(&huge)).unwrap_err();
    assert!(
        err.to_string()
            .contains("claims 18446744073709551615 entries"),
        "{err}"
    );
    // A truncated table is a read error.
    let short = &assemble(&[(G1201, b"x")])[..40];
    let err = bundle_extent(&reader(short)).unwrap_err();
    assert!(
        err.to_string().contains("reading the offload bundle"),
        "{err}"
    );
}

#[test]
fn compressed_bundles_are_sized_by_their_header() {
    use crate::codeobj::compressed::{compress, Method};
    let c1201 = fixture("gfx1201", "counter");
    let plain = assemble(&[(HOST, b""), (G1201, &c1201)]);
    for (version, method) in [(2, Method::Zstd), (3, Method::Zlib), (3, Method::Zstd)] {
        let c = compress(&plain, version, method).unwrap();
        let mut padded = c.clone();
        padded.extend([0u8; 64]);
        assert_eq!(bundle_extent(&reader(&padded)), Ok(c.len() as u64));
        let code = crate::codeobj::CodeObject::from_bundle_or_elf(&c, Some("gfx1201")).unwrap();
        assert_eq!(code.target().to_string(), "gfx1201");
    }
    let v1 = compress(&plain, 1, Method::Zlib).unwrap();
    assert_eq!(bundle_extent(&reader(&v1)), Err(ExtentError::CompressedV1));
    let mut huge = compress(&plain, 3, Method::Zstd).unwrap();
    huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    let err = bundle_extent(&reader(&huge)).unwrap_err();
    assert!(err.to_string().contains("claims"), "{err}");
}

fn survives(b: &[u8]) {
    if let Ok(n) = bundle_extent(&reader(b)) {
        assert!(n <= MAX_BUNDLE_BYTES);
        if let Some(whole) = b.get(..n as usize) {
            let _ = crate::codeobj::CodeObject::from_bundle_or_elf(whole, Some("gfx1201"));
        }
    }
    if let Ok(n) = elf_extent(&reader(b)) {
        assert!(n <= MAX_ELF_BYTES);
    }
}

proptest! {
    #[test]
    fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512),
                            count in 0u64..8, magic in 0u8..3) {
        let mut b = bytes;
        if magic == 1 {
            let mut m = BUNDLE_MAGIC.to_vec();
            m.extend(count.to_le_bytes());
            m.extend(b);
            b = m;
        } else if magic == 2 {
            let mut m = ELF_MAGIC.to_vec();
            m.extend([2, 1]);
            m.extend(b);
            b = m;
        }
        survives(&b);
    }

    #[test]
    fn corrupted_bundles_never_panic(flips in proptest::collection::vec((0usize..400, any::<u8>()), 1..8),
                                     cut in 0usize..400) {
        let mut b = assemble(&[(HOST, b""), (G1100, &[7u8; 100]), (G1201, &[9u8; 100])]);
        for (at, v) in flips {
            let at = at % b.len();
            b[at] = v;
        }
        survives(&b);
        survives(&b[..cut.min(b.len())]);
    }
}
