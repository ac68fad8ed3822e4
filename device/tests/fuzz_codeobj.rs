//! Fuzz the code-object reader with proptest (cargo-fuzz needs nightly):
//! the committed fixtures are mutated by bit flips, truncation, splices and
//! extreme field values, wrapped in bundles, and fed to the reader, the
//! metadata decoder and the bundle reader. None may panic; a successful read
//! must stay self-consistent, and no read may allocate more than a small
//! multiple of its input (a counting allocator measures the peak). Case
//! counts are bounded so this runs in seconds.

use std::path::PathBuf;
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::test_runner::Config;
use relaunch_device::codeobj::{bundle, metadata, CodeObject};
use relaunch_testsupport::alloc::{peak_during, CountingAlloc};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// What a read of `input_len` bytes may allocate at its peak.
fn allocation_bound(input_len: usize) -> usize {
    64 * input_len + (256 << 10)
}

fn corpus() -> &'static [Vec<u8>] {
    static CORPUS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/kernels/build");
        let mut out = Vec::new();
        for target in ["gfx1010", "gfx1100", "gfx1201"] {
            for name in ["counter", "produce_consume", "lds_reverse", "scratch_hog"] {
                let path = root.join(target).join(format!("{name}.co"));
                out.push(std::fs::read(&path).unwrap());
            }
        }
        out.push(std::fs::read(root.join("gfx1030/add_scalar-v4.co")).unwrap());
        out
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    FlipBit {
        at: usize,
        bit: u8,
    },
    Truncate {
        keep: usize,
    },
    /// Copy `len` bytes from corpus file `from` at `src` over `dst`.
    Splice {
        from: usize,
        src: usize,
        dst: usize,
        len: usize,
    },
    /// Write an extreme 64-bit value at an 8-byte-aligned position.
    Extreme {
        at: usize,
        value: u64,
    },
    /// Write an extreme 32-bit value at a 4-byte-aligned position.
    Extreme32 {
        at: usize,
        value: u32,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let extreme64 = prop_oneof![
        Just(0u64),
        Just(u64::MAX),
        Just(u64::MAX - 63),
        Just(1 << 40),
        Just(0x8000_0000_0000_0000),
        any::<u64>(),
    ];
    let extreme32 = prop_oneof![Just(0u32), Just(u32::MAX), Just(0x7fff_fff0), any::<u32>()];
    prop_oneof![
        4 => (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::FlipBit { at, bit }),
        1 => any::<usize>().prop_map(|keep| Mutation::Truncate { keep }),
        2 => (any::<usize>(), any::<usize>(), any::<usize>(), 1usize..256)
            .prop_map(|(from, src, dst, len)| Mutation::Splice { from, src, dst, len }),
        2 => (any::<usize>(), extreme64).prop_map(|(at, value)| Mutation::Extreme { at, value }),
        2 => (any::<usize>(), extreme32).prop_map(|(at, value)| Mutation::Extreme32 { at, value }),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let n = bytes.len();
    if n == 0 {
        return;
    }
    match *m {
        Mutation::FlipBit { at, bit } => bytes[at % n] ^= 1 << bit,
        Mutation::Truncate { keep } => bytes.truncate(keep % (n + 1)),
        Mutation::Splice {
            from,
            src,
            dst,
            len,
        } => {
            let donor = &corpus()[from % corpus().len()];
            let src = src % donor.len();
            let dst = dst % n;
            let len = len.min(donor.len() - src).min(n - dst);
            bytes[dst..dst + len].copy_from_slice(&donor[src..src + len]);
        }
        Mutation::Extreme { at, value } => {
            if n >= 8 {
                let at = (at % (n / 8)) * 8;
                bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
            }
        }
        Mutation::Extreme32 { at, value } => {
            if n >= 4 {
                let at = (at % (n / 4)) * 4;
                bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
            }
        }
    }
}

/// Read `bytes` and, when that succeeds, check what came back holds together.
fn read_and_check(bytes: &[u8], target: Option<&str>) {
    let mut result = None;
    let peak = peak_during(|| result = Some(CodeObject::from_bundle_or_elf(bytes, target)));
    assert!(
        peak <= allocation_bound(bytes.len()),
        "reading {} bytes allocated {peak} bytes at peak",
        bytes.len()
    );
    let Some(Ok(object)) = result else {
        return;
    };
    let size = object.bytes().len() as u64;
    assert!(object.image_size() <= relaunch_device::codeobj::elf::MAX_IMAGE_BYTES);
    for seg in object.load_segments() {
        assert!(seg.file_offset + seg.filesz <= size);
        assert_eq!(object.segment_bytes(seg).len() as u64, seg.filesz);
    }
    // Every patch a loader would write lies inside a loaded segment.
    if let Ok(patches) = object.patches(0x7f00_0000_0000) {
        for p in patches {
            assert!(object.load_segments().iter().any(|s| {
                p.vaddr >= s.vaddr && p.vaddr + u64::from(p.width) <= s.vaddr + s.memsz
            }));
        }
    }
    for k in object.kernels() {
        assert!(k
            .args
            .iter()
            .all(|a| a.offset as u64 + a.size as u64 <= k.kernarg_size as u64));
        assert!(object
            .load_segments()
            .iter()
            .any(|s| s.contains(k.code_entry_offset)));
    }
}

fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config(6000))]

    #[test]
    fn mutated_code_objects_never_panic(
        pick in any::<usize>(),
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        let mut bytes = corpus()[pick % corpus().len()].clone();
        for m in &mutations {
            apply(&mut bytes, m);
        }
        read_and_check(&bytes, None);
    }
}

proptest! {
    #![proptest_config(config(1500))]

    #[test]
    fn mutated_bundles_never_panic(
        picks in prop::collection::vec(any::<usize>(), 1..4),
        mutations in prop::collection::vec(mutation(), 0..4),
        target in prop_oneof![Just(None), Just(Some("gfx1100")), Just(Some("gfx1201:xnack-"))],
    ) {
        let ids = ["hipv4-amdgcn-amd-amdhsa--gfx1100", "hipv4-amdgcn-amd-amdhsa--gfx1201", "host-x86_64-unknown-linux-gnu-"];
        let entries: Vec<(&str, &[u8])> = picks
            .iter()
            .enumerate()
            .map(|(i, p)| (ids[i % 3], &corpus()[p % corpus().len()][..]))
            .collect();
        let mut out = relaunch_testsupport::bundle::assemble_packed(&entries);
        for m in &mutations {
            apply(&mut out, m);
        }
        let _ = bundle::entries(&out);
        read_and_check(&out, target);
    }

    #[test]
    fn arbitrary_metadata_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let peak = peak_during(|| drop(metadata::decode(&bytes)));
        prop_assert!(peak <= allocation_bound(bytes.len()), "{peak} bytes for {}", bytes.len());
    }

    #[test]
    fn mutated_metadata_notes_never_panic(
        pick in any::<usize>(),
        flips in prop::collection::vec((any::<usize>(), 0u8..8), 1..8),
    ) {
        // The description of the first note of the fixture: after the
        // 12-byte note header and the 8-byte padded "AMDGPU" owner.
        let file = &corpus()[pick % corpus().len()];
        let note = file.windows(8).position(|w| w == b"AMDGPU\0\0").unwrap() + 8;
        let size = u32::from_le_bytes(file[note - 16..note - 12].try_into().unwrap()) as usize;
        let mut desc = file[note..note + size].to_vec();
        for (at, bit) in flips {
            let n = desc.len();
            desc[at % n] ^= 1 << bit;
        }
        let peak = peak_during(|| drop(metadata::decode(&desc)));
        prop_assert!(peak <= allocation_bound(desc.len()), "{peak} bytes for {}", desc.len());
    }
}

#[test]
fn fixtures_read_within_the_allocation_bound() {
    let mut worst = 0.0f64;
    for file in corpus() {
        let peak = peak_during(|| drop(CodeObject::parse(file).unwrap()));
        assert!(peak <= allocation_bound(file.len()));
        assert!(peak >= file.len(), "the counter sees the copy of the bytes");
        worst = worst.max(peak as f64 / file.len() as f64);
    }
    eprintln!("worst peak/input ratio on the fixtures: {worst:.1}");
}
