//! The ground under the three floors: the slice of the HIP C ABI the
//! interposer reads (error codes, `dim3`, `hipKernelNodeParams`, the
//! capture status, the opaque handle types, all pointers) and the real HIP
//! functions behind it (`real`). Imports nothing else of this crate.
//!
//! Facts from the public HIP headers/docs (`hip_runtime_api.h`, HIP Runtime
//! API Reference, "hipKernelNodeParams Struct Reference": fields blockDim,
//! extra, func, gridDim, kernelParams, sharedMemBytes, in that order;
//! `dim3` is three `uint32_t`). Handles are compared by address only; the
//! interposer never dereferences them.

use std::ffi::c_void;

pub mod real;

/// `hipError_t` (a C enum, `int` sized).
pub type HipError = i32;

pub const HIP_SUCCESS: HipError = 0;
pub const HIP_ERROR_INVALID_VALUE: HipError = 1;
/// `hipErrorSharedObjectSymbolNotFound` (302 in `hip_runtime_api.h`): the
/// real HIP function is missing.
pub const HIP_ERROR_SYMBOL_NOT_FOUND: HipError = 302;
/// `hipErrorLaunchFailure` (719 in `hip_runtime_api.h`): a relaunch replay
/// failed.
pub const HIP_ERROR_LAUNCH_FAILURE: HipError = 719;

/// `hipStreamCaptureStatusActive` (`hipStreamCaptureStatusNone = 0`,
/// `Active = 1`, `Invalidated = 2`).
pub const CAPTURE_STATUS_ACTIVE: i32 = 1;

/// Opaque handles (`hipModule_t`, `hipFunction_t`, `hipGraph_t`,
/// `hipGraphNode_t`, `hipGraphExec_t`, `hipStream_t`).
pub type Handle = *mut c_void;

/// `dim3`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Dim3 {
    pub fn to_array(self) -> [u32; 3] {
        [self.x, self.y, self.z]
    }
}

/// `hipKernelNodeParams`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KernelNodeParams {
    pub block_dim: Dim3,
    pub extra: *mut *mut c_void,
    pub func: *mut c_void,
    pub grid_dim: Dim3,
    pub kernel_params: *mut *mut c_void,
    pub shared_mem_bytes: u32,
}

/// A C string argument as text for messages, `"?"` when null.
///
/// # Safety
/// `name` is null or NUL-terminated.
pub unsafe fn c_name(name: *const std::ffi::c_char) -> String {
    if name.is_null() {
        return "?".to_string();
    }
    // SAFETY: NUL-terminated per the caller.
    unsafe { std::ffi::CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned()
}

/// Key of a handle in the shadow maps.
pub fn key(handle: *const c_void) -> usize {
    handle as usize
}

/// The dependency handles of a successful real add-node call.
///
/// # Safety
/// `deps` is null or points to `n` handles (the real call read them).
pub unsafe fn deps_of(deps: *const Handle, n: usize) -> Vec<usize> {
    if deps.is_null() || n == 0 {
        return Vec::new();
    }
    // SAFETY: per the caller.
    unsafe { std::slice::from_raw_parts(deps, n) }
        .iter()
        .map(|d| key(*d))
        .collect()
}

/// Whether the real HIP reports `stream` as actively capturing.
pub(crate) fn real_is_capturing(stream: Handle) -> bool {
    let Some(f) = real::hipStreamIsCapturing() else {
        return false;
    };
    let mut status = 0i32;
    // SAFETY: a valid out-pointer; the stream was just accepted by a real
    // launch.
    let rc = unsafe { f(stream, &mut status) };
    rc == HIP_SUCCESS && status == CAPTURE_STATUS_ACTIVE
}

/// The real `hipStreamSynchronize(stream)` (its status is logged, the
/// caller has nothing better to do with it).
pub(crate) fn sync_stream(stream: Handle) {
    match real::hipStreamSynchronize() {
        // SAFETY: the application's stream.
        Some(f) => {
            let rc = unsafe { f(stream) };
            if rc != HIP_SUCCESS {
                tracing::warn!(status = rc, "hipStreamSynchronize failed");
            }
        }
        None => tracing::warn!("the real hipStreamSynchronize is missing"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_node_params_has_the_c_layout() {
        // dim3 (12) + pad (4), extra at 16, func at 24, gridDim at 32 (12)
        // + pad, kernelParams at 48, sharedMemBytes at 56, size 64.
        assert_eq!(std::mem::offset_of!(KernelNodeParams, extra), 16);
        assert_eq!(std::mem::offset_of!(KernelNodeParams, func), 24);
        assert_eq!(std::mem::offset_of!(KernelNodeParams, grid_dim), 32);
        assert_eq!(std::mem::offset_of!(KernelNodeParams, kernel_params), 48);
        assert_eq!(std::mem::offset_of!(KernelNodeParams, shared_mem_bytes), 56);
        assert_eq!(std::mem::size_of::<KernelNodeParams>(), 64);
    }
}
