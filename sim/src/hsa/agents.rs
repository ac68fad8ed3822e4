//! System and agent queries, memory pools, allocation and allow-access.
//!
//! Agents: one CPU agent (handle 1) with one pool (global, KERNARG_INIT |
//! FINE_GRAINED: kernargs and IBs), and one GPU agent per simulated device
//! (0x100 + i) with one device pool (global, COARSE_GRAINED). Host-pool
//! memory is hidden from the GPUs until `hsa_amd_agents_allow_access`, and
//! the CP fetches IBs only from memory allocated with the executable flag.

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::OnceLock;

use parking_lot::Mutex;

use relaunch_hsa_sys::{self as sys, Agent, AgentCallback, MemoryPool, MemoryPoolCallback, Status};

use super::anchors;
use super::{
    fail, guard, initialized, system, with_system, write_out, System, CPU_AGENT, CPU_POOL,
    GPU_AGENT_BASE, GPU_POOL_BASE,
};
use crate::device::SimPci;
use crate::memory::{AllocOptions, MemKind, MemoryError, ALLOCATION_ALIGN};

const HSA_AGENT_FEATURE_KERNEL_DISPATCH: u32 = 1;
/// The frequency of the clock timestamp packets read (and of the signal
/// wait hints, which the queues take as nanoseconds): one value, so both
/// convert right.
const TIMESTAMP_HZ: u64 = crate::pm4::timestamp::TIMESTAMP_FREQUENCY_HZ;
const _: () = assert!(
    TIMESTAMP_HZ == 1_000_000_000,
    "queues.rs reads wait hints as ns"
);

/// Most distinct detailed status strings kept (each lives for the process).
const MAX_INTERNED: usize = 4096;

/// A `'static` C string for `text`: interned, so a pointer handed out stays
/// valid forever, as `hsa_status_string`'s contract requires.
fn interned(text: String) -> Option<&'static CStr> {
    static TABLE: OnceLock<Mutex<HashMap<String, &'static CStr>>> = OnceLock::new();
    let mut table = TABLE.get_or_init(Default::default).lock();
    if let Some(c) = table.get(&text) {
        return Some(c);
    }
    if table.len() >= MAX_INTERNED {
        return None;
    }
    let c: &'static CStr = Box::leak(
        CString::new(text.replace('\0', " "))
            .ok()?
            .into_boxed_c_str(),
    );
    table.insert(text, c);
    Some(c)
}

/// The status name, followed by what went wrong when the simulator knows
/// (the last failure with this status on this thread, or the last queue error).
pub(super) extern "C" fn status_string(status: Status, out: *mut *const c_char) -> Status {
    guard(|| {
        let Some(&(_, name)) = sys::STATUS_NAMES.iter().find(|(s, _)| *s == status) else {
            return fail(
                sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                format!("hsa_status_string: unknown status {status:#x}"),
            );
        };
        let text = match super::detail_for(status) {
            Some(detail) => format!("{name}: {detail}"),
            None => name.to_string(),
        };
        match interned(text).or_else(|| interned(name.to_string())) {
            // SAFETY: `out` is checked for null by write_out; the string is 'static.
            Some(c) => unsafe { write_out(out, c.as_ptr(), "hsa_status_string") },
            None => fail(
                sys::HSA_STATUS_ERROR_OUT_OF_RESOURCES,
                "status string table full",
            ),
        }
    })
}

pub(super) extern "C" fn system_get_info(attribute: u32, value: *mut c_void) -> Status {
    with_system(|s| {
        // SAFETY (each write): the caller passes storage of the attribute's type.
        unsafe {
            match attribute {
                sys::HSA_SYSTEM_INFO_VERSION_MAJOR => {
                    write_out(value.cast::<u16>(), 1, "VERSION_MAJOR")
                }
                sys::HSA_SYSTEM_INFO_VERSION_MINOR => {
                    write_out(value.cast::<u16>(), 1, "VERSION_MINOR")
                }
                sys::HSA_SYSTEM_INFO_TIMESTAMP => {
                    let ns = s.started.elapsed().as_nanos() as u64;
                    write_out(value.cast::<u64>(), ns, "TIMESTAMP")
                }
                sys::HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY => {
                    write_out(value.cast::<u64>(), TIMESTAMP_HZ, "TIMESTAMP_FREQUENCY")
                }
                sys::HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT => {
                    write_out(value.cast::<u64>(), u64::MAX, "SIGNAL_MAX_WAIT")
                }
                sys::HSA_AMD_SYSTEM_INFO_BUILD_VERSION => write_out(
                    value.cast::<*const std::ffi::c_char>(),
                    build_version().as_ptr(),
                    "BUILD_VERSION",
                ),
                other => fail(
                    sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                    format!(
                        "hsa_system_get_info: attribute {other} is not supported by the simulator"
                    ),
                ),
            }
        }
    })
}

pub(super) extern "C" fn iterate_agents(callback: AgentCallback, data: *mut c_void) -> Status {
    guard(|| {
        let handles: Vec<u64> = {
            let s = system().read();
            if let Err(st) = initialized(&s) {
                return st;
            }
            std::iter::once(CPU_AGENT)
                .chain((0..s.gpus.len() as u64).map(|i| GPU_AGENT_BASE + i))
                .collect()
        };
        for handle in handles {
            // SAFETY: the caller's callback and data, per hsa_iterate_agents.
            let st = unsafe { callback(Agent { handle }, data) };
            match st {
                sys::HSA_STATUS_SUCCESS => {}
                sys::HSA_STATUS_INFO_BREAK => return sys::HSA_STATUS_SUCCESS,
                other => return other,
            }
        }
        sys::HSA_STATUS_SUCCESS
    })
}

/// Write `text` NUL-padded into a `char[N]`.
///
/// # Safety
/// `value` is null or valid for writing N bytes.
unsafe fn write_text<const N: usize>(value: *mut c_void, text: &str, what: &str) -> Status {
    let mut buf = [0u8; N];
    let n = text.len().min(N - 1);
    buf[..n].copy_from_slice(&text.as_bytes()[..n]);
    // SAFETY: forwarded contract.
    unsafe { write_out(value.cast::<[u8; N]>(), buf, what) }
}

/// GPU `i`'s reported name and which board of that name it is.
fn board_of(s: &System, i: usize) -> (String, usize) {
    let names: Vec<String> = s.gpus[..=i]
        .iter()
        .map(|d| {
            d.config()
                .listed_as
                .clone()
                .unwrap_or_else(|| d.target().processor().to_string())
        })
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    (names[i].to_string(), anchors::occurrence(&names, i))
}

/// GPU `i`'s PCI location: its config's, else derived (`anchors`).
fn pci_of(s: &System, i: usize) -> SimPci {
    s.gpus[i].config().pci.unwrap_or_else(|| {
        let (name, k) = board_of(s, i);
        anchors::pci(&name, k)
    })
}

fn agent_kind(s: &System, agent: Agent) -> Result<Option<usize>, Status> {
    if agent.handle == CPU_AGENT {
        return Ok(None);
    }
    s.gpu_index(agent).map(Some).ok_or_else(|| {
        fail(
            sys::HSA_STATUS_ERROR_INVALID_AGENT,
            format!(
                "agent handle {:#x} is not an agent of the simulated system",
                agent.handle
            ),
        )
    })
}

pub(super) extern "C" fn agent_get_info(
    agent: Agent,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    with_system(|s| {
        let gpu = match agent_kind(s, agent) {
            Ok(g) => g.map(|i| (i, &s.gpus[i])),
            Err(st) => return st,
        };
        let u32_out = |v: u32| {
            // SAFETY: u32 attributes get u32 storage from the caller.
            unsafe { write_out(value.cast::<u32>(), v, "agent info") }
        };
        // SAFETY (text/array writes): storage of the attribute's documented type.
        unsafe {
            match (attribute, gpu) {
                (sys::HSA_AGENT_INFO_NAME, Some((_, d))) => {
                    let name = d.config().listed_as.as_deref();
                    write_text::<64>(value, name.unwrap_or(d.target().processor()), "NAME")
                }
                (sys::HSA_AGENT_INFO_NAME, None) => write_text::<64>(value, "relaunch-sim-cpu", "NAME"),
                (sys::HSA_AGENT_INFO_VENDOR_NAME, _) => write_text::<64>(value, "AMD", "VENDOR_NAME"),
                (sys::HSA_AGENT_INFO_FEATURE, g) => {
                    u32_out(if g.is_some() { HSA_AGENT_FEATURE_KERNEL_DISPATCH } else { 0 })
                }
                (sys::HSA_AGENT_INFO_DEVICE, g) => u32_out(if g.is_some() {
                    sys::HSA_DEVICE_TYPE_GPU
                } else {
                    sys::HSA_DEVICE_TYPE_CPU
                }),
                (sys::HSA_AGENT_INFO_NODE, g) => u32_out(g.map_or(0, |(i, _)| i as u32 + 1)),
                (sys::HSA_AMD_AGENT_INFO_PRODUCT_NAME, Some((_, d))) => {
                    write_text::<64>(value, &d.config().product_name, "PRODUCT_NAME")
                }
                (sys::HSA_AMD_AGENT_INFO_PRODUCT_NAME, None) => {
                    write_text::<64>(value, "relaunch simulated host", "PRODUCT_NAME")
                }
                (sys::RELAUNCH_SIM_AGENT_INFO_TRAP_HANDLER, Some((_, d))) => {
                    // SAFETY: the attribute's storage is one byte.
                    write_out(value.cast::<u8>(), u8::from(d.config().trap_handler), "trap handler")
                }
                (sys::HSA_AMD_AGENT_INFO_UUID, Some((i, d))) => match &d.config().uuid {
                    Some(uuid) => write_text::<21>(value, uuid, "UUID"),
                    None => {
                        let (name, k) = board_of(s, i);
                        write_text::<21>(value, &anchors::uuid(&name, k), "UUID")
                    }
                },
                (sys::HSA_AMD_AGENT_INFO_UUID, None) => write_text::<21>(value, "CPU-XX", "UUID"),
                (sys::HSA_AMD_AGENT_INFO_BDFID, g) => u32_out(g.map_or(0, |(i, _)| {
                    let p = pci_of(s, i);
                    (u32::from(p.bus) << 8) | (u32::from(p.device & 0x1F) << 3) | u32::from(p.function & 0x7)
                })),
                (sys::HSA_AMD_AGENT_INFO_DOMAIN, g) => u32_out(g.map_or(0, |(i, _)| pci_of(s, i).domain)),
                (sys::HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT, g) => {
                    u32_out(g.map_or(1, |(_, d)| d.config().compute_units))
                }
                (sys::HSA_AMD_AGENT_INFO_CHIP_ID | sys::HSA_AMD_AGENT_INFO_ASIC_REVISION, _) => u32_out(0),
                (sys::HSA_AMD_AGENT_INFO_CACHELINE_SIZE, _) => u32_out(128),
                (sys::HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY, _) => u32_out(1000),
                (sys::HSA_AMD_AGENT_INFO_DRIVER_NODE_ID, g) => u32_out(g.map_or(0, |(i, _)| i as u32 + 1)),
                (sys::HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES, _) => u32_out(1),
                (sys::HSA_AGENT_INFO_WAVEFRONT_SIZE, Some(_)) => u32_out(32),
                (sys::HSA_AGENT_INFO_WORKGROUP_MAX_DIM, Some(_)) => {
                    write_out(value.cast::<[u16; 3]>(), [1024; 3], "WORKGROUP_MAX_DIM")
                }
                (sys::HSA_AGENT_INFO_WORKGROUP_MAX_SIZE, Some(_)) => u32_out(1024),
                (sys::HSA_AGENT_INFO_GRID_MAX_DIM, Some(_)) => write_out(
                    value.cast::<sys::Dim3>(),
                    sys::Dim3 {
                        x: u32::MAX,
                        y: u32::MAX,
                        z: u32::MAX,
                    },
                    "GRID_MAX_DIM",
                ),
                (sys::HSA_AGENT_INFO_GRID_MAX_SIZE, Some(_)) => u32_out(u32::MAX),
                (sys::HSA_AGENT_INFO_QUEUES_MAX, Some(_)) => u32_out(128),
                (sys::HSA_AGENT_INFO_QUEUE_MIN_SIZE, Some(_)) => u32_out(64),
                (sys::HSA_AGENT_INFO_QUEUE_MAX_SIZE, Some(_)) => u32_out(131_072),
                (sys::HSA_AGENT_INFO_QUEUE_TYPE, Some(_)) => u32_out(sys::HSA_QUEUE_TYPE_MULTI),
                (other, g) => fail(
                    sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                    format!(
                        "hsa_agent_get_info: attribute {other:#x} is not supported for the simulated {} agent",
                        if g.is_some() { "GPU" } else { "CPU" }
                    ),
                ),
            }
        }
    })
}

pub(super) extern "C" fn iterate_pools(
    agent: Agent,
    callback: MemoryPoolCallback,
    data: *mut c_void,
) -> Status {
    guard(|| {
        let pool = {
            let s = system().read();
            if let Err(st) = initialized(&s) {
                return st;
            }
            match agent_kind(&s, agent) {
                Ok(None) => CPU_POOL,
                Ok(Some(i)) => GPU_POOL_BASE + i as u64,
                Err(st) => return st,
            }
        };
        // SAFETY: the caller's callback and data.
        match unsafe { callback(MemoryPool { handle: pool }, data) } {
            sys::HSA_STATUS_SUCCESS | sys::HSA_STATUS_INFO_BREAK => sys::HSA_STATUS_SUCCESS,
            other => other,
        }
    })
}

/// Which pool a handle is: None = the CPU pool, Some(i) = GPU i's pool.
fn pool_kind(s: &System, pool: MemoryPool) -> Result<Option<usize>, Status> {
    if pool.handle == CPU_POOL {
        return Ok(None);
    }
    match pool.handle.checked_sub(GPU_POOL_BASE) {
        Some(i) if (i as usize) < s.gpus.len() => Ok(Some(i as usize)),
        _ => Err(fail(
            sys::HSA_STATUS_ERROR_INVALID_MEMORY_POOL,
            format!(
                "memory pool handle {:#x} is not a pool of the simulated system",
                pool.handle
            ),
        )),
    }
}

pub(super) extern "C" fn pool_get_info(
    pool: MemoryPool,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    with_system(|s| {
        let kind = match pool_kind(s, pool) {
            Ok(k) => k,
            Err(st) => return st,
        };
        let flags = match kind {
            None => {
                sys::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT
                    | sys::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED
            }
            Some(_) => sys::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED,
        };
        let limit = s
            .gpus
            .first()
            .map_or(usize::MAX, |d| d.config().memory_limit);
        // SAFETY (each write): storage of the attribute's documented type.
        unsafe {
            match attribute {
                sys::HSA_AMD_MEMORY_POOL_INFO_SEGMENT => {
                    write_out(value.cast::<u32>(), sys::HSA_AMD_SEGMENT_GLOBAL, "SEGMENT")
                }
                sys::HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS => write_out(value.cast::<u32>(), flags, "GLOBAL_FLAGS"),
                sys::HSA_AMD_MEMORY_POOL_INFO_SIZE | sys::HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE => {
                    write_out(value.cast::<usize>(), limit, "SIZE")
                }
                sys::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED => {
                    write_out(value.cast::<bool>(), true, "RUNTIME_ALLOC_ALLOWED")
                }
                sys::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE
                | sys::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT => {
                    write_out(value.cast::<usize>(), ALLOCATION_ALIGN, "ALLOC_GRANULE")
                }
                sys::HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL => {
                    write_out(value.cast::<bool>(), false, "ACCESSIBLE_BY_ALL")
                }
                other => fail(
                    sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                    format!("hsa_amd_memory_pool_get_info: attribute {other} is not supported by the simulator"),
                ),
            }
        }
    })
}

pub(super) extern "C" fn agent_pool_get_info(
    agent: Agent,
    pool: MemoryPool,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    with_system(|s| {
        let (a, p) = match (agent_kind(s, agent), pool_kind(s, pool)) {
            (Ok(a), Ok(p)) => (a, p),
            (Err(st), _) | (_, Err(st)) => return st,
        };
        if attribute != sys::HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS {
            return fail(
                sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                format!(
                    "hsa_amd_agent_memory_pool_get_info: attribute {attribute} is not supported"
                ),
            );
        }
        let access = match (a, p) {
            (None, None) => sys::HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT,
            (Some(g), Some(q)) if g == q => sys::HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT,
            _ => sys::HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT,
        };
        // SAFETY: ACCESS is a u32 enum.
        unsafe { write_out(value.cast::<u32>(), access, "ACCESS") }
    })
}

pub(super) extern "C" fn pool_allocate(
    pool: MemoryPool,
    size: usize,
    flags: u32,
    ptr: *mut *mut c_void,
) -> Status {
    with_system(|s| {
        let kind = match pool_kind(s, pool) {
            Ok(k) => k,
            Err(st) => return st,
        };
        if flags & !sys::HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG != 0 {
            return fail(
                sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                format!("hsa_amd_memory_pool_allocate: unknown flags {flags:#x}"),
            );
        }
        let executable = flags & sys::HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG != 0;
        let (mem_kind, opts) = match kind {
            None => (
                MemKind::HostFineGrained,
                AllocOptions {
                    gpu_visible: false,
                    executable,
                },
            ),
            Some(_) => (
                MemKind::Device,
                AllocOptions {
                    gpu_visible: true,
                    executable,
                },
            ),
        };
        if ptr.is_null() {
            return fail(
                sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                "hsa_amd_memory_pool_allocate: ptr is null",
            );
        }
        match s.memory.allocate_with(size, mem_kind, opts) {
            // SAFETY: ptr checked non-null; the caller provides a void* slot.
            Ok(addr) => unsafe { write_out(ptr, addr as *mut c_void, "ptr") },
            Err(e @ MemoryError::ZeroSize) => {
                fail(sys::HSA_STATUS_ERROR_INVALID_ARGUMENT, e.to_string())
            }
            Err(e) => fail(sys::HSA_STATUS_ERROR_OUT_OF_RESOURCES, e.to_string()),
        }
    })
}

pub(super) extern "C" fn pool_free(ptr: *mut c_void) -> Status {
    with_system(|s| match s.memory.free(ptr as u64) {
        Ok(_) => sys::HSA_STATUS_SUCCESS,
        Err(e) => fail(sys::HSA_STATUS_ERROR_INVALID_ARGUMENT, e.to_string()),
    })
}

/// `hsa_amd_memory_fill`: a device-side fill, so it reaches memory the
/// host cannot (device-local pools) and is checked like any GPU write.
pub(super) extern "C" fn memory_fill(ptr: *mut c_void, value: u32, count: usize) -> Status {
    with_system(|s| {
        let addr = ptr as u64;
        if addr % 4 != 0 {
            return fail(
                sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                format!("hsa_amd_memory_fill: address {addr:#x} is not 4-byte aligned"),
            );
        }
        let Some(bytes) = count.checked_mul(4) else {
            return fail(
                sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                "hsa_amd_memory_fill: count overflows",
            );
        };
        if let Err(fault) = s.memory.check(addr, bytes, crate::memory::Access::Write) {
            return fail(
                sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                format!("hsa_amd_memory_fill: {fault}"),
            );
        }
        let pattern: Vec<u8> = value
            .to_le_bytes()
            .iter()
            .copied()
            .cycle()
            .take(bytes)
            .collect();
        match s.memory.write(addr, &pattern) {
            Ok(()) => sys::HSA_STATUS_SUCCESS,
            Err(fault) => fail(
                sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                format!("hsa_amd_memory_fill: {fault}"),
            ),
        }
    })
}

pub(super) extern "C" fn allow_access(
    num_agents: u32,
    agents: *const Agent,
    flags: *const u32,
    ptr: *const c_void,
) -> Status {
    with_system(|s| {
        if !flags.is_null() || agents.is_null() || num_agents == 0 || num_agents > 1024 {
            return fail(
                sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                "hsa_amd_agents_allow_access: need 1..1024 agents and null flags",
            );
        }
        // SAFETY: the caller passes `num_agents` agents (bounded above).
        let list = unsafe { std::slice::from_raw_parts(agents, num_agents as usize) };
        let mut any_gpu = false;
        for a in list {
            match agent_kind(s, *a) {
                Ok(g) => any_gpu |= g.is_some(),
                Err(st) => return st,
            }
        }
        if s.memory.allocation_of(ptr as u64).is_none() {
            return fail(
                sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                format!("hsa_amd_agents_allow_access: {ptr:p} is not in a live allocation"),
            );
        }
        if any_gpu {
            s.memory.allow_gpu_access(ptr as u64);
        }
        sys::HSA_STATUS_SUCCESS
    })
}

/// What the simulator reports as ROCr's build id: ROCr's library version
/// of the releases that honour the executable pool flag (ROCm 6.3 on).
fn build_version() -> &'static CStr {
    c"1.14.0-relaunch-sim"
}
