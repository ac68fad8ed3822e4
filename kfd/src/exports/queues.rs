//! Queues (AQL on the runtime's ring, SDMA on the copy engine; the rest
//! refused), and what the model does not have (GWS, SVM, IPC, graphics
//! interop).

use super::*;

#[no_mangle]
pub unsafe extern "C" fn hsaKmtCreateQueue(
    node: u32,
    kind: u32,
    _percentage: u32,
    _priority: u32,
    ring: *mut std::ffi::c_void,
    ring_bytes: u64,
    _event: *mut HsaEvent,
    resource: *mut HsaQueueResource,
) -> Status {
    guard("CreateQueue", || {
        if resource.is_null() {
            return Err((INVALID_PARAMETER, "null queue resource".into()));
        }
        let driver = process::driver().ok_or_else(not_open)?;
        // SAFETY: non-null caller struct (in/out), read unaligned.
        let mut res = unsafe { resource.read_unaligned() };
        let qkind = match kind {
            queue_type::COMPUTE_AQL => QueueKind::ComputeAql,
            queue_type::SDMA | queue_type::SDMA_XGMI => QueueKind::Sdma,
            other => return Err((NOT_SUPPORTED, format!("queue type {other} is not modelled"))),
        };
        // For AQL, ROCr passes &amd_queue_t.read_dispatch_id as the read
        // pointer; an SDMA queue's offsets come from the driver.
        let amd_queue = match qkind {
            QueueKind::ComputeAql => res.Queue_read_ptr.wrapping_sub(0x80),
            QueueKind::Sdma => 0,
        };
        let created = driver
            .create_queue(node, qkind, ring as u64, ring_bytes, amd_queue)
            .map_err(|e| (NOT_SUPPORTED, e.to_string()))?;
        res.QueueId = created.id;
        res.Queue_DoorBell = created.doorbell;
        if let (Some(read), Some(write)) = (created.read_ptr, created.write_ptr) {
            res.Queue_read_ptr = read;
            res.Queue_write_ptr = write;
        }
        // SAFETY: as above.
        unsafe { put(resource, res) }
    })
}

#[no_mangle]
pub extern "C" fn hsaKmtUpdateQueue(
    id: u64,
    percentage: u32,
    _priority: u32,
    _ring: *mut std::ffi::c_void,
    _size: u64,
    _event: *mut HsaEvent,
) -> Status {
    guard("UpdateQueue", || {
        let driver = process::driver().ok_or_else(not_open)?;
        driver
            .set_queue_running(id, percentage > 0)
            .map_err(|e| (INVALID_PARAMETER, e.to_string()))
    })
}

#[no_mangle]
pub extern "C" fn hsaKmtDestroyQueue(id: u64) -> Status {
    guard("DestroyQueue", || {
        let driver = process::driver().ok_or_else(not_open)?;
        driver
            .destroy_queue(id)
            .map_err(|e| (INVALID_PARAMETER, e.to_string()))
    })
}

#[no_mangle]
pub extern "C" fn hsaKmtSetQueueCUMask(id: u64, _count: u32, _mask: *mut u32) -> Status {
    // Every CU runs every workgroup in the model: a mask changes nothing
    // observable but timing, so it is accepted for a live queue.
    guard("SetQueueCUMask", || {
        let driver = process::driver().ok_or_else(not_open)?;
        driver
            .has_queue(id)
            .map_err(|e| (INVALID_PARAMETER, e.to_string()))
    })
}

#[no_mangle]
pub extern "C" fn hsaKmtAllocQueueGWS(_id: u64, _n: u32, _first: *mut u32) -> Status {
    NOT_SUPPORTED
}

#[no_mangle]
pub extern "C" fn hsaKmtSVMSetAttr(
    _a: *mut std::ffi::c_void,
    _s: u64,
    _n: u32,
    _attrs: *mut std::ffi::c_void,
) -> Status {
    NOT_SUPPORTED
}

#[no_mangle]
pub extern "C" fn hsaKmtSVMGetAttr(
    _a: *mut std::ffi::c_void,
    _s: u64,
    _n: u32,
    _attrs: *mut std::ffi::c_void,
) -> Status {
    NOT_SUPPORTED
}

#[no_mangle]
pub extern "C" fn hsaKmtRegisterGraphicsHandleToNodes(
    _handle: u64,
    _info: *mut std::ffi::c_void,
    _n: u64,
    _nodes: *mut u32,
) -> Status {
    NOT_SUPPORTED
}

#[no_mangle]
pub extern "C" fn hsaKmtShareMemory(
    _a: *mut std::ffi::c_void,
    _s: u64,
    _h: *mut std::ffi::c_void,
) -> Status {
    NOT_SUPPORTED
}

#[no_mangle]
pub extern "C" fn hsaKmtRegisterSharedHandle(
    _h: *const std::ffi::c_void,
    _a: *mut *mut std::ffi::c_void,
    _s: *mut u64,
) -> Status {
    NOT_SUPPORTED
}

#[no_mangle]
pub extern "C" fn hsaKmtRegisterSharedHandleToNodes(
    _h: *const std::ffi::c_void,
    _a: *mut *mut std::ffi::c_void,
    _s: *mut u64,
    _n: u64,
    _nodes: *mut u32,
) -> Status {
    NOT_SUPPORTED
}
