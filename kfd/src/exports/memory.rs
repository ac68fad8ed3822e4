//! Allocation, registration, mappings, pointer queries and user data.

use super::*;

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
