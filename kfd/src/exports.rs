//! The `hsaKmt*` functions ROCr 5.2.3 imports (symbol version HSAKMT_1,
//! see `hsakmt.map`), each a thin translation to the driver model. No
//! panic crosses back into C: every body runs under [`guard`].

#![allow(non_snake_case)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use relaunch_sim::driver::{EventError, EventKind, MemFlags, Origin, QueueKind};

use crate::abi::*;
use crate::process::{self, with};
use crate::topology;

/// `RELAUNCH_KFD_TRACE=1` prints every failing call.
fn trace(call: &str, status: Status, why: &str) {
    if std::env::var_os("RELAUNCH_KFD_TRACE").is_some() {
        eprintln!("relaunch-kfd: {call} -> {status}: {why}");
    }
}

fn guard(call: &str, f: impl FnOnce() -> Result<(), (Status, String)>) -> Status {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => SUCCESS,
        Ok(Err((status, why))) => {
            trace(call, status, &why);
            status
        }
        Err(_) => {
            eprintln!("relaunch-kfd: internal error (panic) in {call}");
            ERROR
        }
    }
}

fn not_open() -> (Status, String) {
    (
        KERNEL_IO_CHANNEL_NOT_OPENED,
        "hsaKmtOpenKFD was not called".into(),
    )
}

/// Write `value` through `out`, refusing null.
///
/// # Safety
/// `out` is null or valid for a write of `T`.
unsafe fn put<T>(out: *mut T, value: T) -> Result<(), (Status, String)> {
    if out.is_null() {
        return Err((INVALID_PARAMETER, "null output pointer".into()));
    }
    // SAFETY: non-null, and valid for writes by the caller's contract;
    // unaligned since the thunk's structs are packed to 4 bytes.
    unsafe { out.write_unaligned(value) };
    Ok(())
}

/// Copy `items` to the caller's array of `n` entries.
///
/// # Safety
/// `out` is valid for `n` writes of `T`.
unsafe fn put_all<T: Copy>(out: *mut T, n: u32, items: &[T]) -> Result<(), (Status, String)> {
    if out.is_null() {
        return Err((INVALID_PARAMETER, "null output array".into()));
    }
    for (i, item) in items.iter().take(n as usize).enumerate() {
        // SAFETY: i < n, inside the caller's array.
        unsafe { out.add(i).write_unaligned(*item) };
    }
    Ok(())
}

fn gpu_index(node: u32) -> Result<usize, (Status, String)> {
    let gpus = process::driver().ok_or_else(not_open)?.gpus().len();
    match (node as usize).checked_sub(1) {
        Some(i) if i < gpus => Ok(i),
        _ => Err((INVALID_NODE_UNIT, format!("node {node} is not a GPU node"))),
    }
}

#[no_mangle]
pub extern "C" fn hsaKmtOpenKFD() -> Status {
    guard("OpenKFD", || process::open().map_err(|e| (ERROR, e)))
}

#[no_mangle]
pub extern "C" fn hsaKmtCloseKFD() -> Status {
    guard("CloseKFD", || {
        if process::close() {
            Ok(())
        } else {
            Err(not_open())
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtGetVersion(info: *mut HsaVersionInfo) -> Status {
    guard("GetVersion", || {
        // SAFETY: caller's out pointer.
        unsafe {
            put(
                info,
                HsaVersionInfo {
                    KernelInterfaceMajorVersion: 1,
                    KernelInterfaceMinorVersion: 8,
                },
            )
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtRuntimeEnable(
    _r_debug: *mut std::ffi::c_void,
    _setup_ttmp: bool,
) -> Status {
    // The debugger interface is not modelled; ROCr goes on without it.
    NOT_SUPPORTED
}

#[no_mangle]
pub extern "C" fn hsaKmtRuntimeDisable() -> Status {
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtAcquireSystemProperties(props: *mut HsaSystemProperties) -> Status {
    guard("AcquireSystemProperties", || {
        let gpus = process::driver().ok_or_else(not_open)?.gpus().len();
        // SAFETY: caller's out pointer.
        unsafe { put(props, topology::system(gpus)) }
    })
}

#[no_mangle]
pub extern "C" fn hsaKmtReleaseSystemProperties() -> Status {
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtGetNodeProperties(
    node: u32,
    props: *mut HsaNodeProperties,
) -> Status {
    guard("GetNodeProperties", || {
        let driver = process::driver().ok_or_else(not_open)?;
        let p = if node == 0 {
            topology::cpu_node(driver.gpus().len())
        } else {
            let i = gpu_index(node)?;
            topology::gpu_node(i, &driver.gpus()[i])
        };
        // SAFETY: caller's out pointer.
        unsafe { put(props, p) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtGetNodeMemoryProperties(
    node: u32,
    n: u32,
    props: *mut HsaMemoryProperties,
) -> Status {
    guard("GetNodeMemoryProperties", || {
        let driver = process::driver().ok_or_else(not_open)?;
        let banks = if node == 0 {
            topology::cpu_memory()
        } else {
            let i = gpu_index(node)?;
            let page = with(|p| p.mmio_pages[i]).ok_or_else(not_open)?;
            topology::gpu_memory(&driver.gpus()[i], page)
        };
        // SAFETY: the caller sized the array from NumMemoryBanks.
        unsafe { put_all(props, n, &banks) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtGetNodeCacheProperties(
    node: u32,
    _processor: u32,
    n: u32,
    props: *mut HsaCacheProperties,
) -> Status {
    guard("GetNodeCacheProperties", || {
        let caches = if node == 0 {
            process::driver().ok_or_else(not_open)?;
            topology::cpu_caches()
        } else {
            topology::gpu_caches(gpu_index(node)?)
        };
        // SAFETY: the caller sized the array from NumCaches.
        unsafe { put_all(props, n, &caches) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtGetNodeIoLinkProperties(
    node: u32,
    n: u32,
    props: *mut HsaIoLinkProperties,
) -> Status {
    guard("GetNodeIoLinkProperties", || {
        let gpus = process::driver().ok_or_else(not_open)?.gpus().len();
        if node as usize > gpus {
            return Err((INVALID_NODE_UNIT, format!("no node {node}")));
        }
        // SAFETY: the caller sized the array from NumIOLinks.
        unsafe { put_all(props, n, &topology::io_links(node, gpus)) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtGetXNACKMode(enable: *mut i32) -> Status {
    // RDNA runs without XNACK (no retry on page faults).
    // SAFETY: caller's out pointer.
    guard("GetXNACKMode", || unsafe { put(enable, 0) })
}

#[no_mangle]
pub extern "C" fn hsaKmtSetXNACKMode(enable: i32) -> Status {
    if enable == 0 {
        SUCCESS
    } else {
        NOT_SUPPORTED
    }
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtGetClockCounters(
    node: u32,
    counters: *mut HsaClockCounters,
) -> Status {
    guard("GetClockCounters", || {
        process::driver().ok_or_else(not_open)?;
        if node != 0 {
            gpu_index(node)?;
        }
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes the timespec it is given.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
        let ns = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
        let c = HsaClockCounters {
            GPUClockCounter: relaunch_sim::pm4::timestamp::read(),
            CPUClockCounter: ns,
            SystemClockCounter: ns,
            SystemClockFrequencyHz: 1_000_000_000,
        };
        // SAFETY: caller's out pointer.
        unsafe { put(counters, c) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtGetTileConfig(node: u32, config: *mut HsaGpuTileConfig) -> Status {
    guard("GetTileConfig", || {
        gpu_index(node)?;
        if config.is_null() {
            return Err((INVALID_PARAMETER, "null config".into()));
        }
        // SAFETY: non-null caller struct; only the counts are written
        // (no tiling modes: compute only).
        unsafe {
            (*config).NumTileConfigs = 0;
            (*config).NumMacroTileConfigs = 0;
            (*config).GbAddrConfig = 0;
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hsaKmtSetTrapHandler(
    node: u32,
    _code: *mut std::ffi::c_void,
    _code_size: u64,
    _buffer: *mut std::ffi::c_void,
    _buffer_size: u64,
) -> Status {
    // The trap handler's privileged code is not run; its effect (a
    // trapping wave ends the dispatch with a queue error) is modelled.
    guard("SetTrapHandler", || gpu_index(node).map(|_| ()))
}

#[no_mangle]
pub extern "C" fn hsaKmtSetMemoryPolicy(
    _node: u32,
    _default: u32,
    _alternate: u32,
    _addr: *mut std::ffi::c_void,
    _size: u64,
) -> Status {
    SUCCESS
}

fn mem_flags(raw: u32) -> MemFlags {
    MemFlags {
        host_access: raw & mem_flag::HOST_ACCESS != 0,
        // The libhsakmt.so.1 that ROCr of this era links (a separate thunk,
        // before ROCm 6.3) mapped every allocation executable whatever
        // ExecuteAccess said (ROCR-Runtime 75143555, Aug 2024, made the bit
        // count): ROCr's public pool allocator cannot ask for it, and
        // programs depend on that. `raw` keeps what was asked.
        executable: true,
        scratch: raw & mem_flag::SCRATCH != 0,
        coarse_grain: raw & mem_flag::COARSE_GRAIN != 0,
        read_only: raw & mem_flag::READ_ONLY != 0,
        uncached: raw & mem_flag::UNCACHED != 0,
        raw,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtAllocMemory(
    node: u32,
    size: u64,
    flags: u32,
    addr: *mut *mut std::ffi::c_void,
) -> Status {
    guard("AllocMemory", || {
        let driver = process::driver().ok_or_else(not_open)?;
        if node != 0 {
            gpu_index(node)?;
        }
        if flags & (mem_flag::FIXED_ADDRESS | mem_flag::GDS_MEMORY) != 0 {
            return Err((
                NOT_SUPPORTED,
                format!("flags {flags:#x}: fixed addresses and GDS are not modelled"),
            ));
        }
        let base = driver
            .memory
            .alloc(node, size, mem_flags(flags))
            .map_err(|e| (NO_MEMORY, e.to_string()))?;
        // SAFETY: caller's out pointer.
        unsafe { put(addr, base as *mut std::ffi::c_void) }
    })
}

#[no_mangle]
pub extern "C" fn hsaKmtFreeMemory(addr: *mut std::ffi::c_void, _size: u64) -> Status {
    guard("FreeMemory", || {
        let driver = process::driver().ok_or_else(not_open)?;
        with(|p| p.node_arrays.remove(&(addr as u64)));
        driver
            .release_memory(addr as u64)
            .map_err(|e| (MEMORY_NOT_REGISTERED, e.to_string()))
    })
}

#[no_mangle]
pub extern "C" fn hsaKmtRegisterMemoryWithFlags(
    addr: *mut std::ffi::c_void,
    size: u64,
    flags: u32,
) -> Status {
    guard("RegisterMemoryWithFlags", || {
        let driver = process::driver().ok_or_else(not_open)?;
        driver
            .memory
            .register(addr as u64, size, mem_flags(flags))
            .map_err(|e| (MEMORY_ALREADY_REGISTERED, e.to_string()))
    })
}

#[no_mangle]
pub extern "C" fn hsaKmtDeregisterMemory(addr: *mut std::ffi::c_void) -> Status {
    hsaKmtFreeMemory(addr, 0)
}

fn map(addr: u64, size: u64, nodes: &[u32]) -> Result<(), (Status, String)> {
    let driver = process::driver().ok_or_else(not_open)?;
    driver
        .memory
        .map(addr, size, nodes)
        .map_err(|e| (INVALID_PARAMETER, e.to_string()))
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtMapMemoryToGPU(
    addr: *mut std::ffi::c_void,
    size: u64,
    alternate: *mut u64,
) -> Status {
    guard("MapMemoryToGPU", || {
        let gpus = process::driver().ok_or_else(not_open)?.gpus().len() as u32;
        let nodes: Vec<u32> = (1..=gpus).collect();
        map(addr as u64, size, &nodes)?;
        if !alternate.is_null() {
            // SAFETY: non-null caller out pointer.
            unsafe { put(alternate, addr as u64)? };
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtMapMemoryToGPUNodes(
    addr: *mut std::ffi::c_void,
    size: u64,
    alternate: *mut u64,
    _flags: u32,
    n: u64,
    nodes: *const u32,
) -> Status {
    guard("MapMemoryToGPUNodes", || {
        if nodes.is_null() || n == 0 || n > 64 {
            return Err((INVALID_PARAMETER, format!("{n} nodes")));
        }
        // SAFETY: the caller passes `n` node ids.
        let list = unsafe { std::slice::from_raw_parts(nodes, n as usize) };
        for &node in list {
            gpu_index(node)?;
        }
        map(addr as u64, size, list)?;
        if !alternate.is_null() {
            // SAFETY: non-null caller out pointer.
            unsafe { put(alternate, addr as u64)? };
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hsaKmtUnmapMemoryToGPU(addr: *mut std::ffi::c_void) -> Status {
    guard("UnmapMemoryToGPU", || {
        let driver = process::driver().ok_or_else(not_open)?;
        driver
            .memory
            .unmap(addr as u64)
            .map_err(|e| (INVALID_PARAMETER, e.to_string()))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtQueryPointerInfo(
    ptr: *const std::ffi::c_void,
    info: *mut HsaPointerInfo,
) -> Status {
    guard("QueryPointerInfo", || {
        let driver = process::driver().ok_or_else(not_open)?;
        let Some(r) = driver.memory.query(ptr as u64) else {
            let unknown = HsaPointerInfo {
                Type: pointer_type::UNKNOWN,
                Node: 0,
                MemFlags: 0,
                CPUAddress: 0,
                GPUAddress: 0,
                SizeInBytes: 0,
                NRegisteredNodes: 0,
                NMappedNodes: 0,
                RegisteredNodes: std::ptr::null(),
                MappedNodes: std::ptr::null(),
                UserData: 0,
            };
            // SAFETY: caller's out pointer.
            unsafe { put(info, unknown)? };
            return Err((
                INVALID_PARAMETER,
                format!("{:#x} is not known to the driver", ptr as u64),
            ));
        };
        let (registered, mapped) = with(|p| {
            let arrays = p.node_arrays.entry(r.base).or_default();
            arrays.0 = r.mapped_nodes.clone();
            arrays.1 = r.mapped_nodes.clone();
            (arrays.0.as_ptr(), arrays.1.as_ptr())
        })
        .ok_or_else(not_open)?;
        let out = HsaPointerInfo {
            Type: match r.origin {
                Origin::Allocated => pointer_type::ALLOCATED,
                Origin::Registered => pointer_type::REGISTERED_USER,
            },
            Node: r.node,
            MemFlags: r.flags.raw,
            CPUAddress: r.base,
            GPUAddress: r.base,
            SizeInBytes: r.len,
            NRegisteredNodes: r.mapped_nodes.len() as u32,
            NMappedNodes: r.mapped_nodes.len() as u32,
            RegisteredNodes: registered,
            MappedNodes: mapped,
            UserData: r.user_data,
        };
        // SAFETY: caller's out pointer.
        unsafe { put(info, out) }
    })
}

#[no_mangle]
pub extern "C" fn hsaKmtSetMemoryUserData(
    ptr: *const std::ffi::c_void,
    data: *mut std::ffi::c_void,
) -> Status {
    guard("SetMemoryUserData", || {
        let driver = process::driver().ok_or_else(not_open)?;
        driver
            .memory
            .set_user_data(ptr as u64, data as u64)
            .map_err(|e| (INVALID_PARAMETER, e.to_string()))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtCreateEvent(
    desc: *const HsaEventDescriptor,
    manual_reset: bool,
    signaled: bool,
    out: *mut *mut HsaEvent,
) -> Status {
    guard("CreateEvent", || {
        if desc.is_null() {
            return Err((INVALID_PARAMETER, "null descriptor".into()));
        }
        // SAFETY: non-null caller descriptor, read unaligned (packed).
        let desc = unsafe { desc.read_unaligned() };
        let driver = process::driver().ok_or_else(not_open)?;
        let kind = match desc.EventType {
            event_type::SIGNAL => EventKind::Signal,
            event_type::MEMORY => EventKind::Memory,
            other => EventKind::Other(other),
        };
        let (id, mailbox) = driver
            .events
            .create(kind, manual_reset, signaled)
            .map_err(|e| (OUT_OF_RESOURCES, e.to_string()))?;
        let mut event = Box::new(HsaEvent::default());
        event.EventId = id;
        event.EventData.EventType = desc.EventType;
        event.EventData.HWData2 = mailbox.unwrap_or(0);
        event.EventData.HWData3 = id;
        let ptr: *mut HsaEvent = &mut *event;
        with(|p| p.events.insert(id, event)).ok_or_else(not_open)?;
        // SAFETY: caller's out pointer.
        unsafe { put(out, ptr) }
    })
}

/// The id of the caller's event struct.
///
/// # Safety
/// `event` is null or points to an `HsaEvent`.
unsafe fn event_id(event: *const HsaEvent) -> Result<u32, (Status, String)> {
    if event.is_null() {
        return Err((INVALID_HANDLE, "null event".into()));
    }
    // SAFETY: non-null, an event struct by the caller's contract.
    Ok(unsafe { std::ptr::addr_of!((*event).EventId).read_unaligned() })
}

fn event_status(e: EventError) -> (Status, String) {
    match e {
        EventError::Timeout => (WAIT_TIMEOUT, "timed out".into()),
        other => (INVALID_HANDLE, other.to_string()),
    }
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtDestroyEvent(event: *mut HsaEvent) -> Status {
    guard("DestroyEvent", || {
        // SAFETY: caller's event.
        let id = unsafe { event_id(event)? };
        let driver = process::driver().ok_or_else(not_open)?;
        driver.events.destroy(id).map_err(event_status)?;
        with(|p| p.events.remove(&id));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtSetEvent(event: *mut HsaEvent) -> Status {
    guard("SetEvent", || {
        // SAFETY: caller's event.
        let id = unsafe { event_id(event)? };
        let driver = process::driver().ok_or_else(not_open)?;
        driver.events.set(id).map_err(event_status)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtWaitOnEvent(event: *mut HsaEvent, ms: u32) -> Status {
    let mut one = [event];
    // SAFETY: a one-element array of the caller's event.
    unsafe { hsaKmtWaitOnMultipleEvents(one.as_mut_ptr(), 1, true, ms) }
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtWaitOnMultipleEvents(
    events: *mut *mut HsaEvent,
    n: u32,
    all: bool,
    ms: u32,
) -> Status {
    guard("WaitOnMultipleEvents", || {
        if events.is_null() || n == 0 || n > 4096 {
            return Err((INVALID_PARAMETER, format!("{n} events")));
        }
        // SAFETY: the caller passes `n` event pointers.
        let list = unsafe { std::slice::from_raw_parts(events, n as usize) };
        let mut ids = Vec::with_capacity(list.len());
        for &e in list {
            // SAFETY: each is the caller's event.
            ids.push(unsafe { event_id(e)? });
        }
        let driver = process::driver().ok_or_else(not_open)?;
        let timeout = (ms != u32::MAX).then(|| Duration::from_millis(u64::from(ms)));
        driver
            .events
            .wait(&ids, all, timeout)
            .map_err(event_status)?;
        // Memory events report their fault in the caller's struct.
        for (&e, &id) in list.iter().zip(&ids) {
            if let Some(f) = driver.events.fault_of(id) {
                let record = HsaMemoryAccessFault {
                    NodeId: f.node,
                    VirtualAddress: f.address,
                    Failure: u32::from(f.not_present)
                        | u32::from(f.read_only) << 1
                        | u32::from(f.no_execute) << 2
                        | u32::from(f.gpu_access) << 3,
                    // HSA_EVENTID_MEMORY_FATAL_PROCESS
                    Flags: 1,
                };
                // SAFETY: the caller's event struct; the union starts 4
                // bytes into HsaEventData and holds 20 bytes.
                unsafe {
                    let data = std::ptr::addr_of_mut!((*e).EventData.EventData)
                        as *mut HsaMemoryAccessFault;
                    data.write_unaligned(record);
                }
            }
        }
        Ok(())
    })
}

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
        // ROCr passes &amd_queue_t.read_dispatch_id as the read pointer.
        let amd_queue = res.Queue_read_ptr.wrapping_sub(0x80);
        let (id, doorbell) = driver
            .create_queue(node, qkind, ring as u64, ring_bytes, amd_queue)
            .map_err(|e| (NOT_SUPPORTED, e.to_string()))?;
        res.QueueId = id;
        res.Queue_DoorBell = doorbell;
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
