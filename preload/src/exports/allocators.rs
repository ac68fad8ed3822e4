//! The allocations the shadow sees, and what kind of memory each is (what
//! a memset/memcpy node may reach, `model/transfers.rs`): `hipMalloc` and the
//! stream-ordered `hipMallocAsync` give device memory; `hipHostMalloc`
//! pinned host memory the GPU reaches at the same address;
//! `hipHostRegister` pins application memory, which the GPU reaches at the
//! address `hipHostGetDevicePointer` reports (the same one, or the copy
//! falls through naming it); `hipMallocManaged` gives managed memory, which
//! may migrate between host and device, so CP DMA inside the IB does not
//! take it. Frees forget the allocation before the real call (a node
//! recorded later must not reach memory that may be reused).
//!
//! Signatures from the public HIP API reference ("Memory management",
//! "Stream Ordered Memory Allocator", "Managed Memory"): `hipMalloc(void
//! **, size_t)`, `hipHostMalloc(void **, size_t, unsigned)`,
//! `hipMallocAsync(void **, size_t, hipStream_t)`, `hipFreeAsync(void *,
//! hipStream_t)`, `hipMallocManaged(void **, size_t, unsigned)`,
//! `hipHostRegister(void *, size_t, unsigned)`, `hipHostUnregister(void
//! *)`, `hipHostGetDevicePointer(void **devPtr, void *hostPtr, unsigned
//! flags)`.

use std::ffi::c_void;

use crate::exports::forward;
use crate::hip::{Handle, HipError, HIP_SUCCESS};
use crate::model::transfers::MemKind;
use crate::state::with_state;

/// Records a successful allocation of `size` bytes at `*ptr`.
///
/// # Safety
/// `ptr` is null or was written by the successful real call.
unsafe fn allocated(call: &str, ptr: *mut *mut c_void, size: usize, kind: MemKind) {
    if ptr.is_null() {
        return;
    }
    // SAFETY: per the caller.
    let at = unsafe { *ptr } as u64;
    with_state(call, |s| s.memory.insert(at, size as u64, kind));
}

/// Forgets `ptr` before the real free.
fn freed(call: &str, ptr: *mut c_void) {
    with_state(call, |s| s.memory.remove(ptr as u64));
}

/// # Safety
/// HIP's `hipMalloc(ptr, size)` contract.
#[no_mangle]
pub unsafe extern "C" fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> HipError {
    let rc = forward!(hipMalloc(ptr, size));
    if rc == HIP_SUCCESS {
        // SAFETY: written by the successful real call.
        unsafe { allocated("hipMalloc", ptr, size, MemKind::Device) };
    }
    rc
}

/// # Safety
/// HIP's `hipMallocAsync(ptr, size, stream)` contract. The address is
/// device memory from the allocation's point in stream order on; a
/// replay is stream-ordered after it (`model/ordered.rs`). In a capture HIP
/// records an allocation node instead, which the count check catches.
#[no_mangle]
pub unsafe extern "C" fn hipMallocAsync(
    ptr: *mut *mut c_void,
    size: usize,
    stream: Handle,
) -> HipError {
    let rc = forward!(hipMallocAsync(ptr, size, stream));
    if rc == HIP_SUCCESS {
        // SAFETY: written by the successful real call.
        unsafe { allocated("hipMallocAsync", ptr, size, MemKind::Device) };
    }
    rc
}

/// # Safety
/// HIP's `hipHostMalloc(ptr, size, flags)` contract.
#[no_mangle]
pub unsafe extern "C" fn hipHostMalloc(ptr: *mut *mut c_void, size: usize, flags: u32) -> HipError {
    let rc = forward!(hipHostMalloc(ptr, size, flags));
    if rc == HIP_SUCCESS {
        // SAFETY: written by the successful real call.
        unsafe { allocated("hipHostMalloc", ptr, size, MemKind::PinnedHost) };
    }
    rc
}

/// # Safety
/// HIP's `hipMallocManaged(ptr, size, flags)` contract.
#[no_mangle]
pub unsafe extern "C" fn hipMallocManaged(
    ptr: *mut *mut c_void,
    size: usize,
    flags: u32,
) -> HipError {
    let rc = forward!(hipMallocManaged(ptr, size, flags));
    if rc == HIP_SUCCESS {
        // SAFETY: written by the successful real call.
        unsafe { allocated("hipMallocManaged", ptr, size, MemKind::Managed) };
    }
    rc
}

/// # Safety
/// HIP's `hipHostRegister(ptr, size, flags)` contract. The memory is
/// pinned from now on; the GPU reaches it where `hipHostGetDevicePointer`
/// says (unknown without that function: then it stays unknown memory).
#[no_mangle]
pub unsafe extern "C" fn hipHostRegister(ptr: *mut c_void, size: usize, flags: u32) -> HipError {
    let rc = forward!(hipHostRegister(ptr, size, flags));
    if rc != HIP_SUCCESS || ptr.is_null() {
        return rc;
    }
    let Some(device_pointer) = crate::hip::real::hipHostGetDevicePointer() else {
        tracing::info!("no hipHostGetDevicePointer: registered memory is not replayed");
        return rc;
    };
    let mut device: *mut c_void = std::ptr::null_mut();
    // SAFETY: a valid out-pointer and the memory just registered.
    let found = unsafe { device_pointer(&mut device, ptr, 0) };
    if found != HIP_SUCCESS || device.is_null() {
        tracing::info!(
            status = found,
            "hipHostGetDevicePointer refused registered memory"
        );
        return rc;
    }
    let kind = if device == ptr {
        MemKind::PinnedHost
    } else {
        MemKind::RegisteredAt(device as u64)
    };
    with_state("hipHostRegister", |s| {
        s.memory.insert(ptr as u64, size as u64, kind)
    });
    rc
}

/// # Safety
/// HIP's `hipHostUnregister(ptr)` contract.
#[no_mangle]
pub unsafe extern "C" fn hipHostUnregister(ptr: *mut c_void) -> HipError {
    freed("hipHostUnregister", ptr);
    forward!(hipHostUnregister(ptr))
}

/// # Safety
/// HIP's `hipFree(ptr)` contract.
#[no_mangle]
pub unsafe extern "C" fn hipFree(ptr: *mut c_void) -> HipError {
    freed("hipFree", ptr);
    forward!(hipFree(ptr))
}

/// # Safety
/// HIP's `hipFreeAsync(ptr, stream)` contract. Forgotten now: a node
/// recorded after this call may run after the memory was reused.
#[no_mangle]
pub unsafe extern "C" fn hipFreeAsync(ptr: *mut c_void, stream: Handle) -> HipError {
    freed("hipFreeAsync", ptr);
    forward!(hipFreeAsync(ptr, stream))
}

/// # Safety
/// HIP's `hipHostFree(ptr)` contract.
#[no_mangle]
pub unsafe extern "C" fn hipHostFree(ptr: *mut c_void) -> HipError {
    freed("hipHostFree", ptr);
    forward!(hipHostFree(ptr))
}
