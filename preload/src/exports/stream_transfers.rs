//! Copies and fills enqueued on a stream: on a stream the shadow is
//! capturing, each becomes a memset/memcpy node of the capture (after the
//! node captured before it), built exactly as an explicit node of the
//! same shape (`model/transfers.rs`: `hipMemcpyAsync` as a 1-D memcpy node,
//! `hipMemcpy2DAsync` as a `hipMemcpy3DParms` of depth 1, the memsets as a
//! `hipMemsetParams`); otherwise they are only forwarded. Every function
//! forwards first and changes the shadow only after the real call
//! succeeded.
//!
//! Signatures from the public HIP API reference ("Memory management"):
//! `hipMemcpyAsync(dst, src, sizeBytes, kind, stream)`,
//! `hipMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind,
//! stream)`, `hipMemsetAsync(dst, int value, sizeBytes, stream)`,
//! `hipMemsetD8Async(dst, unsigned char, count, stream)`,
//! `hipMemsetD16Async(dst, unsigned short, count, stream)`,
//! `hipMemsetD32Async(dst, int value, count, stream)`,
//! `hipMemset2DAsync(dst, pitch, int value, width, height, stream)`.

use std::ffi::c_void;

use relaunch::DmaOp;

use crate::exports::forward;
use crate::hip::{key, real_is_capturing, Handle, HipError, HIP_SUCCESS};
use crate::model::reason::Reason;
use crate::model::shadow::NodeWork;
use crate::model::transfers::{
    copy_3d_ops, copy_ops, memset_ops, Memcpy3DParams, MemoryMap, MemsetParams, PitchedPtr, Triple,
};
use crate::state::with_state;

/// A copy/fill enqueued on `stream` after a successful real call: a node
/// of the capture on it, if the shadow is capturing it; on a stream the
/// real HIP reports capturing but the shadow is not (joined through
/// events), every capture in progress falls through.
fn record(
    stream: Handle,
    call: &'static str,
    ops: impl FnOnce(&MemoryMap) -> Result<Vec<DmaOp>, Reason>,
) {
    let others = with_state(call, |s| {
        if !s.captures.contains_key(&key(stream)) {
            return !s.captures.is_empty();
        }
        let work = ops(&s.memory).map(|o| NodeWork::Transfer(o.into()));
        if let Some(c) = s.captures.get_mut(&key(stream)) {
            c.push_work(work);
        }
        false
    });
    if others == Some(true) && real_is_capturing(stream) {
        with_state(call, |s| s.mark_all_captures(stream));
    }
}

/// A memset of `height` rows of `width` elements of `element_size` bytes,
/// `pitch` apart, as HIP's memset node parameters describe it.
fn memset(
    dst: *mut c_void,
    element_size: u32,
    value: u32,
    (width, height, pitch): (usize, usize, usize),
) -> MemsetParams {
    MemsetParams {
        dst,
        element_size,
        height,
        pitch,
        value,
        width,
    }
}

/// # Safety
/// HIP's `hipMemcpyAsync(dst, src, sizeBytes, kind, stream)` contract.
#[no_mangle]
pub unsafe extern "C" fn hipMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: i32,
    stream: Handle,
) -> HipError {
    let rc = forward!(hipMemcpyAsync(dst, src, bytes, kind, stream));
    if rc == HIP_SUCCESS {
        record(stream, "hipMemcpyAsync", |m| {
            copy_ops(m, dst as u64, src as u64, bytes as u64, kind)
        });
    }
    rc
}

/// # Safety
/// HIP's `hipMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind,
/// stream)` contract.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // HIP's signature
pub unsafe extern "C" fn hipMemcpy2DAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: i32,
    stream: Handle,
) -> HipError {
    let rc = forward!(hipMemcpy2DAsync(
        dst, dpitch, src, spitch, width, height, kind, stream
    ));
    if rc == HIP_SUCCESS {
        let origin = Triple { a: 0, b: 0, c: 0 };
        let p = Memcpy3DParams {
            src_array: std::ptr::null_mut(),
            src_pos: origin,
            src_ptr: PitchedPtr {
                ptr: src.cast_mut(),
                pitch: spitch,
                xsize: width,
                ysize: height,
            },
            dst_array: std::ptr::null_mut(),
            dst_pos: origin,
            dst_ptr: PitchedPtr {
                ptr: dst,
                pitch: dpitch,
                xsize: width,
                ysize: height,
            },
            extent: Triple {
                a: width,
                b: height,
                c: 1,
            },
            kind,
        };
        record(stream, "hipMemcpy2DAsync", |m| copy_3d_ops(m, &p));
    }
    rc
}

/// # Safety
/// HIP's `hipMemsetAsync(dst, value, sizeBytes, stream)` contract (the
/// value's low byte is written).
#[no_mangle]
pub unsafe extern "C" fn hipMemsetAsync(
    dst: *mut c_void,
    value: i32,
    bytes: usize,
    stream: Handle,
) -> HipError {
    let rc = forward!(hipMemsetAsync(dst, value, bytes, stream));
    if rc == HIP_SUCCESS {
        let p = memset(dst, 1, value as u32, (bytes, 1, 0));
        record(stream, "hipMemsetAsync", |m| memset_ops(m, &p));
    }
    rc
}

/// # Safety
/// HIP's `hipMemsetD8Async(dst, value, count, stream)` contract.
#[no_mangle]
pub unsafe extern "C" fn hipMemsetD8Async(
    dst: *mut c_void,
    value: u8,
    count: usize,
    stream: Handle,
) -> HipError {
    let rc = forward!(hipMemsetD8Async(dst, value, count, stream));
    if rc == HIP_SUCCESS {
        let p = memset(dst, 1, u32::from(value), (count, 1, 0));
        record(stream, "hipMemsetD8Async", |m| memset_ops(m, &p));
    }
    rc
}

/// # Safety
/// HIP's `hipMemsetD16Async(dst, value, count, stream)` contract.
#[no_mangle]
pub unsafe extern "C" fn hipMemsetD16Async(
    dst: *mut c_void,
    value: u16,
    count: usize,
    stream: Handle,
) -> HipError {
    let rc = forward!(hipMemsetD16Async(dst, value, count, stream));
    if rc == HIP_SUCCESS {
        let p = memset(dst, 2, u32::from(value), (count, 1, 0));
        record(stream, "hipMemsetD16Async", |m| memset_ops(m, &p));
    }
    rc
}

/// # Safety
/// HIP's `hipMemsetD32Async(dst, value, count, stream)` contract.
#[no_mangle]
pub unsafe extern "C" fn hipMemsetD32Async(
    dst: *mut c_void,
    value: i32,
    count: usize,
    stream: Handle,
) -> HipError {
    let rc = forward!(hipMemsetD32Async(dst, value, count, stream));
    if rc == HIP_SUCCESS {
        let p = memset(dst, 4, value as u32, (count, 1, 0));
        record(stream, "hipMemsetD32Async", |m| memset_ops(m, &p));
    }
    rc
}

/// # Safety
/// HIP's `hipMemset2DAsync(dst, pitch, value, width, height, stream)`
/// contract (`width` bytes per row; the value's low byte is written).
#[no_mangle]
pub unsafe extern "C" fn hipMemset2DAsync(
    dst: *mut c_void,
    pitch: usize,
    value: i32,
    width: usize,
    height: usize,
    stream: Handle,
) -> HipError {
    let rc = forward!(hipMemset2DAsync(dst, pitch, value, width, height, stream));
    if rc == HIP_SUCCESS {
        let p = memset(dst, 1, value as u32, (width, height, pitch));
        record(stream, "hipMemset2DAsync", |m| memset_ops(m, &p));
    }
    rc
}
