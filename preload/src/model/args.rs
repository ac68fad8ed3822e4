//! A kernel node's launch from HIP's description of it: the function
//! (a module function or a registered host stub), the geometry, and the
//! explicit arguments in either of HIP's two forms: `kernelParams` (one
//! pointer per argument, packed at the metadata's offsets) or `extra`
//! (`HIP_LAUNCH_PARAM_BUFFER_POINTER` / `_BUFFER_SIZE` / `_END`: a buffer
//! already laid out as the kernel expects). Hidden arguments are filled by
//! the facade either way. Bad lists are refused with the reason (their
//! graphs fall through); nothing is read past `HIP_LAUNCH_PARAM_END`.

use std::ffi::c_void;

use crate::hip::{key, KernelNodeParams};
use crate::model::reason::{ExtraError, Reason};
use crate::model::shadow::{node_kernel, node_kernel_packed, Function, NodeKernel};

/// The node launch HIP describes with `params`, or why it is unsupported.
/// `function_of` names the kernel a `func` handle (its key) stands for: a
/// module function or a registered host stub (the state knows both).
///
/// # Safety
/// `params` is null or a valid `hipKernelNodeParams` whose `kernelParams`
/// holds one valid pointer per explicit kernel argument (HIP's contract).
pub unsafe fn kernel_of(
    params: *const KernelNodeParams,
    function_of: impl FnOnce(usize) -> Option<Function>,
) -> Result<NodeKernel, Reason> {
    // SAFETY: null or valid per the caller.
    let p = unsafe { params.as_ref() }.ok_or(Reason::NullParams)?;
    let function = function_of(key(p.func)).ok_or(Reason::UnknownFunction { func: key(p.func) })?;
    if !p.extra.is_null() {
        if !p.kernel_params.is_null() {
            return Err(Reason::BothArgForms);
        }
        // SAFETY: `extra` is a HIP_LAUNCH_PARAM_* list (HIP's contract).
        let buffer = unsafe { extra_buffer(p.extra) }?;
        return node_kernel_packed(
            &function,
            p.grid_dim.to_array(),
            p.block_dim.to_array(),
            p.shared_mem_bytes,
            &buffer,
        );
    }
    let args = |i: usize, size: usize| -> Result<Vec<u8>, Reason> {
        if p.kernel_params.is_null() {
            return Err(Reason::NullKernelParams);
        }
        // SAFETY: one pointer per explicit argument (HIP's contract), each
        // to `size` bytes as the kernel's metadata says.
        let arg = unsafe { *p.kernel_params.add(i) };
        if arg.is_null() {
            return Err(Reason::NullKernelParam { index: i });
        }
        // SAFETY: as above.
        Ok(unsafe { std::slice::from_raw_parts(arg as *const u8, size) }.to_vec())
    };
    node_kernel(
        &function,
        p.grid_dim.to_array(),
        p.block_dim.to_array(),
        p.shared_mem_bytes,
        &args,
    )
}

/// `HIP_LAUNCH_PARAM_BUFFER_POINTER`, `_BUFFER_SIZE` and `_END` (`(void *)1`,
/// `2` and `3` in hip_runtime_api.h): the keys of an `extra` list.
const PARAM_BUFFER_POINTER: usize = 1;
const PARAM_BUFFER_SIZE: usize = 2;
const PARAM_END: usize = 3;
/// Keys read before a list without `HIP_LAUNCH_PARAM_END` is refused.
const MAX_EXTRA_KEYS: usize = 16;
/// Largest argument buffer taken (a kernarg segment is far smaller).
const MAX_EXTRA_BYTES: usize = 1 << 16;

/// A copy of the argument buffer an `extra` list names: key/value pairs
/// up to `HIP_LAUNCH_PARAM_END`, the buffer pointer and a pointer to its
/// size both required.
///
/// # Safety
/// `extra` is a `HIP_LAUNCH_PARAM_*` list as HIP takes it, its buffer
/// readable for the size it states.
unsafe fn extra_buffer(extra: *mut *mut c_void) -> Result<Vec<u8>, ExtraError> {
    let (mut buffer, mut size) = (None, None);
    for i in 0..MAX_EXTRA_KEYS {
        // SAFETY: keys and values alternate until END (HIP's contract).
        let key = unsafe { *extra.add(2 * i) } as usize;
        if key == PARAM_END {
            let (Some(buffer), Some(size)) = (buffer, size) else {
                return Err(ExtraError::Incomplete);
            };
            if size > MAX_EXTRA_BYTES {
                return Err(ExtraError::Oversized { size });
            }
            if buffer == 0 && size > 0 {
                return Err(ExtraError::NullBuffer);
            }
            if size == 0 {
                return Ok(Vec::new());
            }
            // SAFETY: the buffer holds `size` bytes (HIP's contract).
            return Ok(unsafe { std::slice::from_raw_parts(buffer as *const u8, size) }.to_vec());
        }
        // SAFETY: as above: a value follows every key but END.
        let value = unsafe { *extra.add(2 * i + 1) };
        match key {
            PARAM_BUFFER_POINTER => buffer = Some(value as usize),
            PARAM_BUFFER_SIZE if value.is_null() => return Err(ExtraError::NullSizePointer),
            // SAFETY: a pointer to a size_t (HIP's contract).
            PARAM_BUFFER_SIZE => size = Some(unsafe { *(value as *const usize) }),
            other => return Err(ExtraError::UnknownKey { key: other }),
        }
    }
    Err(ExtraError::NoEnd {
        keys: MAX_EXTRA_KEYS,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer_of(list: &mut [*mut c_void]) -> Result<Vec<u8>, ExtraError> {
        // SAFETY: every list here is a local array; buffers are locals.
        unsafe { extra_buffer(list.as_mut_ptr()) }
    }

    fn k(v: usize) -> *mut c_void {
        v as *mut c_void
    }

    #[test]
    fn an_extra_list_yields_its_buffer_and_bad_ones_say_why() {
        let bytes = [1u8, 2, 3, 4, 5, 6, 7, 8];
        let mut size = bytes.len();
        let buf = bytes.as_ptr() as *mut c_void;
        let size_ptr = (&mut size as *mut usize).cast::<c_void>();
        let mut good = [k(1), buf, k(2), size_ptr, k(3)];
        assert_eq!(buffer_of(&mut good).unwrap(), bytes);
        // Order does not matter.
        let mut swapped = [k(2), size_ptr, k(1), buf, k(3)];
        assert_eq!(buffer_of(&mut swapped).unwrap(), bytes);

        let mut no_size = [k(1), buf, k(3)];
        assert_eq!(buffer_of(&mut no_size), Err(ExtraError::Incomplete));
        let mut unknown = [k(7), buf, k(3)];
        let e = buffer_of(&mut unknown).unwrap_err();
        assert!(e.to_string().contains("unknown key 0x7"), "{e}");
        let mut null_size = [k(1), buf, k(2), std::ptr::null_mut(), k(3)];
        assert_eq!(buffer_of(&mut null_size), Err(ExtraError::NullSizePointer));
        let mut huge = usize::MAX;
        let mut too_big = [k(1), buf, k(2), (&mut huge as *mut usize).cast(), k(3)];
        assert_eq!(
            buffer_of(&mut too_big),
            Err(ExtraError::Oversized { size: usize::MAX })
        );
        // Pointer keys only, and no END among the first MAX_EXTRA_KEYS.
        let mut endless: Vec<*mut c_void> =
            (0..=MAX_EXTRA_KEYS).flat_map(|_| [k(1), buf]).collect();
        assert_eq!(
            buffer_of(&mut endless),
            Err(ExtraError::NoEnd {
                keys: MAX_EXTRA_KEYS
            })
        );
    }

    /// `hipKernelNodeParams` for the counter kernel behind handle 0xF00,
    /// its one argument (a pointer) at `arg`.
    fn params(arg: &mut *mut c_void) -> (KernelNodeParams, Box<[*mut c_void; 1]>) {
        let mut list = Box::new([(arg as *mut *mut c_void).cast::<c_void>()]);
        let p = KernelNodeParams {
            block_dim: crate::hip::Dim3 { x: 4, y: 1, z: 1 },
            extra: std::ptr::null_mut(),
            func: 0xF00 as *mut c_void,
            grid_dim: crate::hip::Dim3 { x: 2, y: 1, z: 1 },
            kernel_params: list.as_mut_ptr(),
            shared_mem_bytes: 0,
        };
        (p, list)
    }

    #[test]
    fn a_kernel_node_is_read_from_hips_params_through_the_resolver() {
        let f = crate::model::shadow::counter_for("gfx1201");
        let resolve = |func: usize| (func == 0xF00).then(|| f.clone());
        let mut arg = 0x1234_5678usize as *mut c_void;
        let (p, _list) = params(&mut arg);
        // SAFETY: `p` and its argument list are locals that outlive the call.
        let k = unsafe { kernel_of(&p, resolve) }.unwrap();
        assert_eq!(k.grid, [8, 1, 1]);
        assert_eq!(k.kernarg[..8], 0x1234_5678u64.to_le_bytes());

        // The resolver does not know the handle: named by its key.
        // SAFETY: as above.
        let e = unsafe { kernel_of(&p, |_| None) }.unwrap_err();
        assert!(matches!(e, Reason::UnknownFunction { func: 0xF00 }), "{e}");
        // Both argument forms, a null argument, null params.
        let mut extra = [std::ptr::null_mut::<c_void>(); 1];
        let both = KernelNodeParams {
            extra: extra.as_mut_ptr(),
            ..p
        };
        // SAFETY: as above; `extra` is never read (both forms are refused
        // first).
        let e = unsafe { kernel_of(&both, resolve) }.unwrap_err();
        assert!(matches!(e, Reason::BothArgForms), "{e}");
        let mut null_arg = [std::ptr::null_mut::<c_void>(); 1];
        let nulls = KernelNodeParams {
            kernel_params: null_arg.as_mut_ptr(),
            ..p
        };
        // SAFETY: as above.
        let e = unsafe { kernel_of(&nulls, resolve) }.unwrap_err();
        assert!(matches!(e, Reason::NullKernelParam { index: 0 }), "{e}");
        // SAFETY: null is allowed.
        let e = unsafe { kernel_of(std::ptr::null(), resolve) }.unwrap_err();
        assert!(matches!(e, Reason::NullParams), "{e}");
    }

    #[test]
    fn the_extra_form_takes_the_buffer_as_laid_out() {
        let f = crate::model::shadow::counter_for("gfx1201");
        let bytes = 0xABCD_u64.to_le_bytes();
        let size = std::cell::Cell::new(bytes.len());
        let mut list = [
            k(1),
            bytes.as_ptr() as *mut c_void,
            k(2),
            size.as_ptr().cast(),
            k(3),
        ];
        let mut arg = std::ptr::null_mut();
        let (p, _list) = params(&mut arg);
        let p = KernelNodeParams {
            extra: list.as_mut_ptr(),
            kernel_params: std::ptr::null_mut(),
            ..p
        };
        // SAFETY: `p`, its list and buffer are locals that outlive the call.
        let k = unsafe { kernel_of(&p, |_| Some(f.clone())) }.unwrap();
        assert_eq!(k.kernarg[..8], bytes);
        // A buffer shorter than the kernel's explicit arguments.
        size.set(4);
        // SAFETY: as above.
        let e = unsafe { kernel_of(&p, |_| Some(f.clone())) }.unwrap_err();
        assert!(
            matches!(
                e,
                Reason::ShortExtraBuffer {
                    held: 4,
                    need: 8,
                    ..
                }
            ),
            "{e}"
        );
    }
}
