//! Opening the driver, topology, clocks, XNACK and the trap handler.

use super::*;

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
