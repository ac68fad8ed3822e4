//! Loadable memory and metadata decoding are bounded by what the file
//! justifies (#15 item 9): a small object cannot declare a huge image, and
//! a metadata note costs a small constant factor of its size to decode.

use std::path::PathBuf;

use relaunch_device::codeobj::{metadata, CodeObject, CodeObjectError};
use relaunch_testsupport::alloc::{peak_during, CountingAlloc};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

#[test]
fn a_small_object_declaring_a_huge_segment_is_refused() {
    let mut bytes = relaunch_testsupport::fixture("gfx1100", "counter");
    assert!(bytes.len() < 64 << 10);
    CodeObject::from_bundle_or_elf(&bytes, None).unwrap();
    // The last program header that is PT_LOAD: grow its memsz to 200 MiB
    // (under the 256 MiB ceiling, far beyond anything the file holds).
    let (phoff, phnum) = (
        u64_at(&bytes, 32) as usize,
        u16::from_le_bytes([bytes[56], bytes[57]]),
    );
    let last_load = (0..phnum as usize)
        .rev()
        .map(|i| phoff + 56 * i)
        .find(|&ph| u32::from_le_bytes(bytes[ph..ph + 4].try_into().unwrap()) == 1)
        .unwrap();
    bytes[last_load + 40..last_load + 48].copy_from_slice(&(200u64 << 20).to_le_bytes());
    let mut result = None;
    let peak = peak_during(|| result = Some(CodeObject::from_bundle_or_elf(&bytes, None)));
    let err = result.unwrap().unwrap_err();
    assert!(
        matches!(err, CodeObjectError::UnjustifiedImage { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("zero-filled"), "{err}");
    assert!(peak < 4 << 20, "reading allocated {peak} bytes");
}

#[test]
fn every_fixture_image_is_justified() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/kernels/build");
    let mut seen = 0;
    for target in std::fs::read_dir(&root).unwrap() {
        for file in std::fs::read_dir(target.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_some_and(|e| e == "co") {
                let bytes = std::fs::read(&path).unwrap();
                CodeObject::from_bundle_or_elf(&bytes, None)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                seen += 1;
            }
        }
    }
    assert!(seen > 10);
}

#[test]
fn a_16_mib_metadata_note_costs_a_small_factor_of_its_size() {
    // One array of 16 Mi - 5 one-byte elements: 32 bytes of decoded value
    // per input byte if decoded whole.
    let n: u32 = (16 << 20) - 5;
    let mut note = vec![0xdd];
    note.extend_from_slice(&n.to_be_bytes());
    note.resize(16 << 20, 0x01);
    let mut result = None;
    let peak = peak_during(|| result = Some(metadata::decode(&note)));
    let err = result.unwrap().unwrap_err();
    assert!(err.to_string().contains("metadata elements"), "{err}");
    assert!(
        peak <= 2 * note.len(),
        "decoding allocated {peak} bytes for {}",
        note.len()
    );
}
