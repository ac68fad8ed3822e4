//! Clang offload bundles ("fat binaries") behind a bare pointer: HIP
//! passes no size, so the bundle's extent is worked out from its own
//! header and entry table (every range bounded by [`MAX_IMAGE_BYTES`]),
//! like `image.rs` does for an ELF. The bytes up to there are then parsed,
//! and the device's entry picked, by relaunch-device's bundle reader
//! (`codeobj::bundle`), the one parser of the format; this module only
//! walks the table far enough to know how much to copy. A compressed
//! bundle (`CCOB`, versions 2 and 3) is as long as its header says; it is
//! copied whole and decompressed by relaunch-device
//! (`codeobj::compressed`, bounded). Refuses version 1 compressed bundles
//! (no recorded size) and anything that is not a bundle, with the reason.
//!
//! Layout (public LLVM documentation, "Clang Offload Bundler", section
//! "Bundled Code Object Layout", https://clang.llvm.org/docs/ClangOffloadBundler.html):
//! the 24-byte magic `__CLANG_OFFLOAD_BUNDLE__`, a little-endian u64 entry
//! count, then per entry: u64 offset of the code object from the start of
//! the bundle, u64 its size, u64 the length of the entry id, the id bytes
//! (no terminator). Compressed bundles start with `CCOB` (same document,
//! "Compression and Decompression").

use relaunch::device::codeobj::{bundle, compressed, CodeObject};
use relaunch::device::target::GfxTarget;

use crate::image::MAX_IMAGE_BYTES;

pub const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
pub const COMPRESSED_MAGIC: &[u8; 4] = b"CCOB";
/// More entries than any real bundle holds (one per target): a garbage
/// count is refused before anything is read for it.
pub const MAX_ENTRIES: u64 = 4096;
/// Longest entry id accepted (real ones are under 64 bytes).
pub const MAX_ID_BYTES: u64 = 1024;

/// Reads `len` bytes at `offset` of the image, or says why it cannot.
pub type Read<'a> = &'a dyn Fn(u64, u64) -> Result<Vec<u8>, String>;

fn u64_le(b: &[u8]) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[..8]);
    u64::from_le_bytes(x)
}

/// True when `head` (an image's first 24 bytes or more) starts like a
/// bundle, compressed or not.
pub fn looks_like_bundle(head: &[u8]) -> bool {
    bundle::is_bundle(head)
}

/// The byte length of the bundle `read` gives access to: the furthest end
/// of its header, its entry table and its entries.
pub fn extent(read: Read<'_>) -> Result<u64, String> {
    let r = |off: u64, len: u64| {
        let bytes = read(off, len).map_err(|e| format!("reading the offload bundle: {e}"))?;
        if bytes.len() as u64 != len {
            return Err(format!(
                "{len} bytes at {off} of the offload bundle came back short"
            ));
        }
        Ok(bytes)
    };
    if r(0, 4)? == COMPRESSED_MAGIC {
        return compressed_extent(&r);
    }
    let not_a_bundle =
        || "the fat binary is not a clang offload bundle (no __CLANG_OFFLOAD_BUNDLE__ magic)";
    let head = r(0, 32).map_err(|_| not_a_bundle())?;
    if !head.starts_with(BUNDLE_MAGIC) {
        return Err(not_a_bundle().into());
    }
    let count = u64_le(&head[24..]);
    if count == 0 || count > MAX_ENTRIES {
        return Err(format!(
            "the offload bundle claims {count} entries (0 or more than {MAX_ENTRIES}): not a real bundle"
        ));
    }
    let (mut at, mut extent) = (32u64, 32u64);
    for index in 0..count {
        let fixed = r(at, 24)?;
        let (offset, size, id_len) = (u64_le(&fixed), u64_le(&fixed[8..]), u64_le(&fixed[16..]));
        if id_len == 0 || id_len > MAX_ID_BYTES {
            return Err(format!(
                "offload bundle entry {index}: an id of {id_len} bytes (want 1..={MAX_ID_BYTES})"
            ));
        }
        at += 24 + id_len;
        let end = offset
            .checked_add(size)
            .filter(|e| *e <= MAX_IMAGE_BYTES)
            .ok_or_else(|| {
                format!(
                    "offload bundle entry {index}: {size} bytes at {offset} reach past {MAX_IMAGE_BYTES} bytes"
                )
            })?;
        extent = extent.max(at).max(end);
    }
    Ok(extent)
}

/// The extent of a compressed bundle: the total size its header records
/// (v2, v3). A v1 header records none, and behind a bare pointer the end
/// of its stream cannot be known, so it is refused.
fn compressed_extent(r: &dyn Fn(u64, u64) -> Result<Vec<u8>, String>) -> Result<u64, String> {
    // Version first: it says how long the header is.
    let version = u16::from_le_bytes(r(4, 2)?.try_into().unwrap_or_default());
    let header_len = match version {
        2 => 24,
        3 => 32,
        1 => {
            return Err(
                "the fat binary is a version 1 compressed offload bundle (CCOB), whose header \
                 records no size: its end behind a bare pointer is unknown"
                    .into(),
            )
        }
        v => {
            return Err(format!(
                "the fat binary is a compressed offload bundle (CCOB) of version {v}, which \
                 relaunch does not read (2, 3)"
            ))
        }
    };
    let h = compressed::parse_header(&r(0, header_len)?).map_err(|e| e.to_string())?;
    match h.file_size {
        Some(size) if size <= MAX_IMAGE_BYTES => Ok(size),
        Some(size) => Err(format!(
            "the compressed offload bundle claims {size} bytes, past {MAX_IMAGE_BYTES}"
        )),
        None => Err("the compressed offload bundle records no size".into()),
    }
}

/// The code object for `target` in the whole bundle `bytes` (decompressed
/// first when it is a compressed one), picked by relaunch-device's reader
/// (same processor; feature settings the device states must not be
/// contradicted; an exact match wins).
pub fn code_for(bytes: &[u8], target: &GfxTarget) -> Result<CodeObject, String> {
    let plain = compressed::plain_bundle(bytes).map_err(|e| e.to_string())?;
    let entry = bundle::select(&plain, Some(&target.to_string())).map_err(|e| e.to_string())?;
    CodeObject::parse(entry.bytes).map_err(|e| format!("{}: {e}", entry.id))
}

/// The whole bundle at `base`, copied (its extent read from its table).
///
/// # Safety
/// `base` is null or points to a readable offload bundle.
pub unsafe fn copy(base: *const u8) -> Result<Vec<u8>, String> {
    // SAFETY: per the caller.
    let read = unsafe { pointer_reader(base) };
    let len = extent(&read)?;
    read(0, len)
}

/// A reader over a bundle at `base` whose size is unknown: offsets are
/// trusted only after [`extent`] bounded them.
///
/// # Safety
/// `base` must point to a readable offload bundle (the one the real HIP
/// was given) for as long as the reader is used.
pub unsafe fn pointer_reader(base: *const u8) -> impl Fn(u64, u64) -> Result<Vec<u8>, String> {
    let base = base as usize;
    move |off: u64, len: u64| {
        if base == 0 {
            return Err("null fat binary".into());
        }
        if off.checked_add(len).is_none_or(|e| e > MAX_IMAGE_BYTES) {
            return Err(format!("{len} bytes at {off} exceed {MAX_IMAGE_BYTES}"));
        }
        // SAFETY: the caller vouches for a readable bundle; every range
        // comes from its own header and is bounded by MAX_IMAGE_BYTES.
        let bytes = unsafe {
            std::slice::from_raw_parts((base as *const u8).add(off as usize), len as usize)
        };
        Ok(bytes.to_vec())
    }
}

/// Test support: a bundle assembled from `(id, bytes)` entries, each code
/// object at a 16-byte aligned offset after the table.
#[cfg(test)]
pub(crate) fn assemble(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let table: usize = entries.iter().map(|(id, _)| 24 + id.len()).sum();
    let mut at = (32 + table).next_multiple_of(16);
    let mut out = BUNDLE_MAGIC.to_vec();
    out.extend((entries.len() as u64).to_le_bytes());
    let mut body = Vec::new();
    for (id, bytes) in entries {
        out.extend((at as u64).to_le_bytes());
        out.extend((bytes.len() as u64).to_le_bytes());
        out.extend((id.len() as u64).to_le_bytes());
        out.extend(id.as_bytes());
        body.push((at, *bytes));
        at = (at + bytes.len()).next_multiple_of(16);
    }
    for (at, bytes) in body {
        out.resize(at, 0);
        out.extend(bytes);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reader(bytes: &[u8]) -> impl Fn(u64, u64) -> Result<Vec<u8>, String> + '_ {
        move |off, len| {
            let end = off.checked_add(len).ok_or("overflow")?;
            bytes
                .get(off as usize..end as usize)
                .map(<[u8]>::to_vec)
                .ok_or_else(|| format!("{len} bytes at {off} are outside the {}", bytes.len()))
        }
    }

    fn target(t: &str) -> GfxTarget {
        GfxTarget::parse(t).unwrap()
    }

    fn counter(t: &str) -> Vec<u8> {
        relaunch::sim::rig::fixture(t, "counter").unwrap()
    }

    const HOST: &str = "host-x86_64-unknown-linux-gnu-";
    const G1100: &str = "hipv4-amdgcn-amd-amdhsa--gfx1100";
    const G1201: &str = "hipv4-amdgcn-amd-amdhsa--gfx1201";

    #[test]
    fn the_extent_covers_the_table_and_every_entry() {
        let bundle = assemble(&[(HOST, b""), (G1100, b"eleven"), (G1201, b"twelve!")]);
        assert_eq!(extent(&reader(&bundle)), Ok(bundle.len() as u64));
        // Trailing bytes past the last entry are not part of the bundle.
        let mut padded = bundle.clone();
        padded.extend([0u8; 100]);
        assert_eq!(extent(&reader(&padded)), Ok(bundle.len() as u64));
    }

    #[test]
    fn the_devices_entry_is_picked_and_a_missing_one_named() {
        let (c1100, c1201) = (counter("gfx1100"), counter("gfx1201"));
        let bundle = assemble(&[(HOST, b""), (G1100, &c1100), (G1201, &c1201)]);
        let code = code_for(&bundle, &target("gfx1201")).unwrap();
        assert_eq!(code.target().to_string(), "gfx1201");
        let code = code_for(&bundle, &target("gfx1100")).unwrap();
        assert_eq!(code.target().to_string(), "gfx1100");
        let err = code_for(&bundle, &target("gfx1030")).unwrap_err();
        assert!(err.contains("gfx1030") && err.contains(G1100), "{err}");
    }

    #[test]
    fn compressed_and_garbage_are_refused_with_the_reason() {
        let mut ccob = b"CCOB".to_vec();
        ccob.resize(64, 1);
        assert!(extent(&reader(&ccob)).unwrap_err().contains("version 257"));
        assert!(looks_like_bundle(&ccob[..24]) && looks_like_bundle(&assemble(&[])[..24]));
        assert!(!looks_like_bundle(
            b"\x7fELF\x02\x01\x01\x40\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
        ));
        assert!(extent(&reader(&[0u8; 64]))
            .unwrap_err()
            .contains("not a clang offload bundle"));
        assert!(extent(&reader(b"__CLANG"))
            .unwrap_err()
            .contains("not a clang offload bundle"));
        let mut huge = BUNDLE_MAGIC.to_vec();
        huge.extend(u64::MAX.to_le_bytes());
        assert!(extent(&reader(&huge))
            .unwrap_err()
            .contains("claims 18446744073709551615 entries"));
        // An entry reaching past the bound is refused, not read.
        let mut far = assemble(&[(G1201, b"x")]);
        far[32..40].copy_from_slice(&MAX_IMAGE_BYTES.to_le_bytes());
        let err = extent(&reader(&far)).unwrap_err();
        assert!(err.contains("reach past"), "{err}");
        // A truncated table is a read error.
        let short = &assemble(&[(G1201, b"x")])[..40];
        assert!(extent(&reader(short))
            .unwrap_err()
            .contains("reading the offload bundle"));
    }

    #[test]
    fn compressed_bundles_are_sized_by_their_header_and_decompressed() {
        use compressed::Method;
        let c1201 = counter("gfx1201");
        let plain = assemble(&[(HOST, b""), (G1201, &c1201)]);
        for (version, method) in [(2, Method::Zstd), (3, Method::Zlib), (3, Method::Zstd)] {
            let c = compressed::compress(&plain, version, method).unwrap();
            let mut padded = c.clone();
            padded.extend([0u8; 64]);
            assert_eq!(extent(&reader(&padded)), Ok(c.len() as u64));
            let code = code_for(&c, &target("gfx1201")).unwrap();
            assert_eq!(code.target().to_string(), "gfx1201");
        }
        let v1 = compressed::compress(&plain, 1, Method::Zlib).unwrap();
        assert!(extent(&reader(&v1)).unwrap_err().contains("version 1"));
        let mut huge = compressed::compress(&plain, 3, Method::Zstd).unwrap();
        huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(extent(&reader(&huge)).unwrap_err().contains("claims"));
    }

    fn survives(b: &[u8]) {
        if let Ok(n) = extent(&reader(b)) {
            assert!(n <= MAX_IMAGE_BYTES);
            if let Some(whole) = b.get(..n as usize) {
                let _ = code_for(whole, &target("gfx1201"));
            }
        }
    }

    proptest! {
        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512),
                                count in 0u64..8, magic in any::<bool>()) {
            let mut b = bytes;
            if magic {
                let mut m = BUNDLE_MAGIC.to_vec();
                m.extend(count.to_le_bytes());
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
}
