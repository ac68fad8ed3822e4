//! What `hipModuleLoadData` was given: HIP passes only a pointer, so the
//! size of a plain ELF code object is worked out from its own headers by
//! relaunch-device's code-object reader (`relaunch::extent::elf_extent`:
//! a little-endian AMDGPU ELF64 of at most `MAX_ELF_BYTES`). A clang
//! offload bundle is `bundle`'s (`hipModuleLoadData` routes it there
//! first); anything else is refused with the reason, which marks the
//! module unsupported (its graphs fall through to the real HIP). This
//! module is only the pointer edge.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use relaunch::extent::elf_extent;

use crate::model::reason::{ImageError, Reason};

/// Largest code object accepted (a bound on what is read from the pointer
/// or a file): the code-object reader's own limit.
pub const MAX_IMAGE_BYTES: u64 = relaunch::extent::MAX_ELF_BYTES;

/// Copies the code object at `image` (its extent read from its headers).
///
/// # Safety
/// `image` must point to a readable code object as `hipModuleLoadData`
/// requires (the real HIP reads the same bytes).
pub unsafe fn copy_image(image: *const u8) -> Result<Vec<u8>, ImageError> {
    if image.is_null() {
        return Err(ImageError::Null);
    }
    let read = |off: u64, len: u64| -> Result<Vec<u8>, String> {
        // SAFETY: the caller vouches for a readable code object; offsets
        // come from its own headers and are bounded by MAX_IMAGE_BYTES.
        let bytes = unsafe { std::slice::from_raw_parts(image.add(off as usize), len as usize) };
        Ok(bytes.to_vec())
    };
    let len = elf_extent(&read)?;
    Ok(read(0, len).expect("the pointer reader does not fail"))
}

/// The bytes of the code object file `path` (`hipModuleLoad`), read once
/// and bounded like an image read through a pointer.
pub fn read_code_file(path: &Path) -> Result<Vec<u8>, Reason> {
    let failed = |e: std::io::Error| Reason::ReadFile {
        path: path.to_path_buf(),
        source: Arc::new(e),
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_IMAGE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(failed)?;
    if bytes.len() as u64 > MAX_IMAGE_BYTES {
        return Err(Reason::FileTooLarge {
            path: path.to_path_buf(),
            max: MAX_IMAGE_BYTES,
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_object_behind_a_pointer_is_copied_to_its_extent() {
        let bytes = relaunch_testsupport::fixture("gfx1201", "counter");
        let mut padded = bytes.clone();
        padded.extend([0u8; 64]);
        // SAFETY: `padded` is a readable code object for the whole call.
        assert_eq!(unsafe { copy_image(padded.as_ptr()) }, Ok(bytes));
        // SAFETY: null is refused before anything is read.
        assert_eq!(
            unsafe { copy_image(std::ptr::null()) },
            Err(ImageError::Null)
        );
    }

    #[test]
    fn a_code_object_file_is_read_whole_and_a_missing_one_named() {
        let path = relaunch_testsupport::fixture_path("gfx1201", "counter");
        let bytes = read_code_file(&path).unwrap();
        assert_eq!(bytes, relaunch_testsupport::fixture("gfx1201", "counter"));
        let missing = path.with_file_name("no-such-kernel.co");
        let err = read_code_file(&missing).unwrap_err();
        assert!(matches!(err, Reason::ReadFile { .. }), "{err}");
        assert!(err.to_string().contains("no-such-kernel.co"), "{err}");
    }
}
