//! The code-object reader: ELF, clang offload bundles, the metadata note,
//! the load-time relocations, the PM4 verdict and kernarg packing. Property: any input is a value or
//! an error, never a panic (or an allocation far beyond the input).
#![no_main]

use libfuzzer_sys::fuzz_target;
use relaunch_device::codeobj::{metadata, CodeObject};
use relaunch_encoders::kernarg_pack::{self, Geometry};
use relaunch_encoders::Pm4Verdict;

fuzz_target!(|data: &[u8]| {
    // The metadata decoder alone too: a note is msgpack from the file.
    let _ = metadata::decode(data);
    for target in [None, Some("gfx1100"), Some("gfx1201")] {
        let Ok(object) = CodeObject::from_bundle_or_elf(data, target) else {
            continue;
        };
        let _ = object.image_size();
        for segment in object.load_segments() {
            let _ = object.segment_bytes(segment);
        }
        // The load-time relocations, resolved for an image at some base.
        let _ = object.patches(0x7f00_0000_0000);
        for kernel in object.kernels() {
            if !kernel.pm4_verdict().accepted() {
                continue; // packing is for kernels the verdict accepted
            }
            let tail = data
                .get(data.len().saturating_sub(24)..)
                .unwrap_or_default();
            let word = |i: usize| {
                tail.get(i * 4..i * 4 + 4)
                    .map_or(1, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            };
            let geometry = Geometry {
                grid: [word(0), word(1), word(2)],
                block: [word(3).max(1), 1, 1],
                dynamic_group_bytes: word(4),
            };
            let explicit = &data[..data.len().min(kernel.kernarg_size as usize)];
            let _ = kernarg_pack::pack(kernel, explicit, &geometry);
        }
    }
});
