//! Clang offload bundles ("fat binaries") behind a bare pointer: HIP
//! passes no size, so the bundle's extent is worked out from its own
//! header and entry table by relaunch-device's code-object reader
//! (`relaunch::extent::bundle_extent`, within its limits: at most
//! `MAX_BUNDLE_ENTRIES` entries and `MAX_BUNDLE_BYTES` bytes), the bytes up
//! to there copied, and the device's entry picked (decompressing a `CCOB`
//! bundle first) by the same reader. This module is only the pointer edge.

use relaunch::extent::{bundle_extent, ExtentError, MAX_BUNDLE_BYTES};
use relaunch::{CodeObject, CodeObjectError, GfxTarget};

/// True when `head` (an image's first 24 bytes or more) starts like a
/// bundle, compressed or not.
pub fn looks_like_bundle(head: &[u8]) -> bool {
    relaunch::extent::is_bundle(head)
}

/// The code object for `target` in the whole bundle `bytes` (decompressed
/// first when it is a compressed one), picked by relaunch-device's reader
/// (same processor; feature settings the device states must not be
/// contradicted; an exact match wins).
pub fn code_for(bytes: &[u8], target: &GfxTarget) -> Result<CodeObject, CodeObjectError> {
    CodeObject::from_bundle_or_elf(bytes, Some(&target.to_string()))
}

/// The whole bundle at `base`, copied (its extent read from its table).
///
/// # Safety
/// `base` is null or points to a readable offload bundle.
pub unsafe fn copy(base: *const u8) -> Result<Vec<u8>, ExtentError> {
    // SAFETY: per the caller.
    let read = unsafe { pointer_reader(base) };
    let len = bundle_extent(&read)?;
    read(0, len).map_err(|reason| ExtentError::Read {
        what: "offload bundle",
        reason,
    })
}

/// A reader over a bundle at `base` whose size is unknown: offsets are
/// trusted only after `bundle_extent` bounded them.
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
        if off.checked_add(len).is_none_or(|e| e > MAX_BUNDLE_BYTES) {
            return Err(format!("{len} bytes at {off} exceed {MAX_BUNDLE_BYTES}"));
        }
        // SAFETY: the caller vouches for a readable bundle; every range
        // comes from its own header and is bounded by MAX_BUNDLE_BYTES.
        let bytes = unsafe {
            std::slice::from_raw_parts((base as *const u8).add(off as usize), len as usize)
        };
        Ok(bytes.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use relaunch_testsupport::bundle::assemble;

    use super::*;

    fn target(t: &str) -> GfxTarget {
        GfxTarget::parse(t).unwrap()
    }

    fn counter(t: &str) -> Vec<u8> {
        relaunch_testsupport::fixture(t, "counter")
    }

    const HOST: &str = "host-x86_64-unknown-linux-gnu-";
    const G1100: &str = "hipv4-amdgcn-amd-amdhsa--gfx1100";
    const G1201: &str = "hipv4-amdgcn-amd-amdhsa--gfx1201";

    #[test]
    fn the_devices_entry_is_picked_and_a_missing_one_named() {
        let (c1100, c1201) = (counter("gfx1100"), counter("gfx1201"));
        let bundle = assemble(&[(HOST, b""), (G1100, &c1100), (G1201, &c1201)]);
        let code = code_for(&bundle, &target("gfx1201")).unwrap();
        assert_eq!(code.target().to_string(), "gfx1201");
        let code = code_for(&bundle, &target("gfx1100")).unwrap();
        assert_eq!(code.target().to_string(), "gfx1100");
        let err = code_for(&bundle, &target("gfx1030"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("gfx1030") && err.contains(G1100), "{err}");
    }

    #[test]
    fn a_bundle_behind_a_pointer_is_copied_to_its_extent() {
        let bundle = assemble(&[(HOST, b""), (G1201, &counter("gfx1201"))]);
        let mut padded = bundle.clone();
        padded.extend([0u8; 100]);
        // SAFETY: `padded` is a readable bundle for the whole call.
        let copied = unsafe { copy(padded.as_ptr()) }.unwrap();
        assert_eq!(copied, bundle);
        // SAFETY: null is refused before anything is read.
        let err = unsafe { copy(std::ptr::null()) }.unwrap_err();
        assert!(err.to_string().contains("null fat binary"), "{err}");
    }
}
