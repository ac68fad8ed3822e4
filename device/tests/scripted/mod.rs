//! A small scripted HSA table for testing the runtime layer (included with
//! `#[path]` by `hsa_runtime_layer.rs`, `hsa_device_lost.rs` and
//! relaunch-sched's `scripted_device_lost.rs`; a folder, so cargo does not
//! build it as a test binary of its own): one CPU and one GPU agent (two GPUs with `second_gpu`),
//! host-memory pools, signals and queue rings the test inspects itself. It
//! records what the wrapper did so tests can check it. By default nothing
//! executes packets (that is the simulated device's job); with `execute`,
//! the scripted packet processor (`processor.rs`) runs PM4-IB
//! packets as `counter` dispatches and reports wild addresses as ROCr does.
#![allow(dead_code)]

pub mod processor;

mod executables;
use executables::*;

use std::alloc::Layout;
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use relaunch_device::hsa::{HsaError, Runtime};
use relaunch_hsa_sys as sys;

pub const CPU: sys::Agent = sys::Agent { handle: 1 };
pub const GPU: sys::Agent = sys::Agent { handle: 2 };
/// The second GPU (listed only with `State::second_gpu`).
pub const GPU2: sys::Agent = sys::Agent { handle: 3 };
pub const KERNARG_POOL: u64 = 10;
pub const FINE_POOL: u64 = 11;
pub const DEVICE_POOL: u64 = 20;
pub const DEVICE_POOL2: u64 = 21;
pub const KERNEL_OBJECT: u64 = 0x7000_1000;

#[derive(Default)]
pub struct State {
    pub cpu_only: bool,
    /// List a second GPU agent (`GPU2`, its own device pool and identity).
    pub second_gpu: bool,
    /// Run PM4-IB packets when a doorbell rings (`processor`).
    pub execute: bool,
    /// GPUs whose queues the "driver" stopped after a memory fault.
    pub faulted: Vec<u64>,
    /// Memory faults no system event handler took: ROCr would have called
    /// `abort()` (tests assert this stays empty).
    pub aborted: Vec<String>,
    pub init_delay: Option<std::time::Duration>,
    pub inits: i32,
    pub shutdowns: i32,
    pub next: u64,
    pub signals: HashMap<u64, Arc<AtomicI64>>,
    pub allocations: HashMap<usize, (Layout, u32)>,
    pub allowed: Vec<(Vec<u64>, usize)>,
    /// Live queues, in creation order.
    pub queues: Vec<FakeQueue>,
    pub readers: HashMap<u64, Vec<u8>>,
    pub executables: HashMap<u64, bool>,
    /// System event handlers registered (callback, data), as ROCr keeps them.
    pub event_handlers: Vec<(sys::SystemEventCallback, usize)>,
    /// What BUILD_VERSION reports (default: "6.4.43482-scripted").
    pub build_version: Option<&'static CStr>,
    /// Refuse every non-zero pool flag, as ROCr 5.2.3 does (a runtime that
    /// predates the executable flag).
    pub refuse_pool_flags: bool,
    /// Queues created so far (their ids count from 42).
    pub queues_created: u64,
}

pub struct FakeQueue {
    pub queue: *mut sys::Queue,
    pub agent: sys::Agent,
    pub doorbell: u64,
    pub ring: usize,
    pub layout: Layout,
    pub read: Arc<AtomicU64>,
    pub write: Arc<AtomicU64>,
    pub callback: sys::QueueErrorCallback,
    pub data: usize,
    /// COMPUTE_USER_DATA_0/1 as the packet processor last set them.
    pub user_data: [u32; 2],
}

// SAFETY: test fixture state, only touched under the STATE mutex.
unsafe impl Send for FakeQueue {}

impl State {
    /// The one queue a single-queue test created.
    pub fn queue(&self) -> &FakeQueue {
        assert_eq!(self.queues.len(), 1, "expected exactly one live queue");
        &self.queues[0]
    }

    /// The live queue `q`.
    pub fn queue_of(&self, q: *const sys::Queue) -> &FakeQueue {
        self.queues
            .iter()
            .find(|f| std::ptr::eq(f.queue, q))
            .expect("a queue of this table")
    }
}

static STATE: Mutex<Option<State>> = Mutex::new(None);
static SERIAL: Mutex<()> = Mutex::new(());

pub fn state() -> MutexGuard<'static, Option<State>> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}
pub fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    f(state().as_mut().expect("fixture not set up"))
}

/// Serialises tests (the table is global) and resets the fixture.
pub fn setup(cpu_only: bool) -> MutexGuard<'static, ()> {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    *state() = Some(State {
        cpu_only,
        next: 100,
        ..State::default()
    });
    guard
}

pub fn open() -> Result<Runtime, HsaError> {
    Runtime::open(Arc::new(sys::LoadedHsa::from_table(
        table(),
        "scripted test table",
    )))
}

unsafe fn put<T>(value: *mut c_void, v: T) {
    // SAFETY: the wrapper passes a buffer of the attribute's documented type.
    unsafe { value.cast::<T>().write_unaligned(v) }
}

unsafe fn put_str(value: *mut c_void, s: &str) {
    let mut buf = [0u8; 64];
    buf[..s.len()].copy_from_slice(s.as_bytes());
    // SAFETY: string attributes get a char[64] buffer.
    unsafe { put(value, buf) }
}

extern "C" fn init() -> sys::Status {
    if let Some(delay) = with(|s| s.init_delay) {
        std::thread::sleep(delay);
    }
    with(|s| s.inits += 1);
    sys::HSA_STATUS_SUCCESS
}
extern "C" fn shut_down() -> sys::Status {
    with(|s| s.shutdowns += 1);
    sys::HSA_STATUS_SUCCESS
}
unsafe extern "C" fn status_string(status: sys::Status, out: *mut *const c_char) -> sys::Status {
    let text: &'static CStr = match status {
        sys::HSA_STATUS_ERROR_INVALID_CODE_OBJECT => {
            c"HSA_STATUS_ERROR_INVALID_CODE_OBJECT: bad code object."
        }
        sys::HSA_STATUS_ERROR_MEMORY_FAULT => c"HSA_STATUS_ERROR_MEMORY_FAULT: page fault.",
        _ => return sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
    };
    // SAFETY: valid out-pointer from the wrapper.
    unsafe { *out = text.as_ptr() };
    sys::HSA_STATUS_SUCCESS
}
unsafe extern "C" fn system_get_info(attr: sys::SystemInfo, value: *mut c_void) -> sys::Status {
    match attr {
        sys::HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY => unsafe { put(value, 1_000_000_000u64) },
        sys::HSA_AMD_SYSTEM_INFO_BUILD_VERSION => {
            let version = with(|s| s.build_version).unwrap_or(c"6.4.43482-scripted");
            unsafe { put(value, version.as_ptr()) }
        }
        other => panic!("scripted table: system attribute {other:#x} not scripted"),
    }
    sys::HSA_STATUS_SUCCESS
}
unsafe extern "C" fn iterate_agents(cb: sys::AgentCallback, data: *mut c_void) -> sys::Status {
    let agents: &[sys::Agent] = match with(|s| (s.cpu_only, s.second_gpu)) {
        (true, _) => &[CPU],
        (false, false) => &[CPU, GPU],
        (false, true) => &[CPU, GPU, GPU2],
    };
    for a in agents {
        let rc = unsafe { cb(*a, data) };
        if rc != sys::HSA_STATUS_SUCCESS {
            return rc;
        }
    }
    sys::HSA_STATUS_SUCCESS
}
unsafe extern "C" fn agent_get_info(
    agent: sys::Agent,
    attr: sys::AgentInfo,
    value: *mut c_void,
) -> sys::Status {
    let gpu = agent == GPU || agent == GPU2;
    let second = agent == GPU2;
    unsafe {
        match attr {
            sys::HSA_AGENT_INFO_NAME => put_str(value, if gpu { "gfx1201" } else { "fake-cpu" }),
            sys::HSA_AGENT_INFO_VENDOR_NAME => put_str(value, if gpu { "AMD" } else { "CPU" }),
            sys::HSA_AGENT_INFO_DEVICE => put(
                value,
                if gpu {
                    sys::HSA_DEVICE_TYPE_GPU
                } else {
                    sys::HSA_DEVICE_TYPE_CPU
                },
            ),
            sys::HSA_AMD_AGENT_INFO_PRODUCT_NAME if gpu => put_str(value, "Radeon Test 9070"),
            sys::HSA_AMD_AGENT_INFO_UUID => put_str(
                value,
                match (gpu, second) {
                    (true, false) => "GPU-XX",
                    (true, true) => "GPU-YY",
                    (false, _) => "CPU-XX",
                },
            ),
            sys::HSA_AMD_AGENT_INFO_BDFID => put(value, if second { 0x0408u32 } else { 0x0308 }),
            sys::HSA_AMD_AGENT_INFO_DOMAIN => put(value, 1u32),
            sys::HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT => put(value, if gpu { 64u32 } else { 16 }),
            sys::HSA_AGENT_INFO_NODE => put(value, u32::from(gpu) + u32::from(second)),
            sys::HSA_AGENT_INFO_WAVEFRONT_SIZE => put(value, 32u32),
            sys::HSA_AGENT_INFO_WORKGROUP_MAX_DIM => put(value, [1024u16, 1024, 1024]),
            sys::HSA_AGENT_INFO_WORKGROUP_MAX_SIZE => put(value, 1024u32),
            sys::HSA_AGENT_INFO_GRID_MAX_DIM => put(
                value,
                sys::Dim3 {
                    x: u32::MAX,
                    y: 65535,
                    z: 65535,
                },
            ),
            sys::HSA_AGENT_INFO_GRID_MAX_SIZE => put(value, u32::MAX),
            sys::HSA_AGENT_INFO_QUEUES_MAX => put(value, 128u32),
            sys::HSA_AGENT_INFO_QUEUE_MIN_SIZE => put(value, 4u32),
            sys::HSA_AGENT_INFO_QUEUE_MAX_SIZE => put(value, 131072u32),
            sys::HSA_AGENT_INFO_QUEUE_TYPE => put(value, sys::HSA_QUEUE_TYPE_MULTI),
            _ => return sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
        }
    }
    sys::HSA_STATUS_SUCCESS
}
unsafe extern "C" fn iterate_pools(
    agent: sys::Agent,
    cb: sys::MemoryPoolCallback,
    data: *mut c_void,
) -> sys::Status {
    let pools: &[u64] = match agent {
        GPU => &[DEVICE_POOL],
        GPU2 => &[DEVICE_POOL2],
        _ => &[FINE_POOL, KERNARG_POOL],
    };
    for p in pools {
        let rc = unsafe { cb(sys::MemoryPool { handle: *p }, data) };
        if rc != sys::HSA_STATUS_SUCCESS {
            return rc;
        }
    }
    sys::HSA_STATUS_SUCCESS
}
unsafe extern "C" fn pool_get_info(
    pool: sys::MemoryPool,
    attr: sys::MemoryPoolInfo,
    value: *mut c_void,
) -> sys::Status {
    let flags = match pool.handle {
        KERNARG_POOL => {
            sys::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT
                | sys::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED
        }
        FINE_POOL => sys::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED,
        _ => sys::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED,
    };
    unsafe {
        match attr {
            sys::HSA_AMD_MEMORY_POOL_INFO_SEGMENT => put(value, sys::HSA_AMD_SEGMENT_GLOBAL),
            sys::HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS => put(value, flags),
            sys::HSA_AMD_MEMORY_POOL_INFO_SIZE => put(value, 1usize << 30),
            sys::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED => put(value, 1u8),
            sys::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE => put(value, 4096usize),
            sys::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT => put(value, 4096usize),
            _ => return sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
        }
    }
    sys::HSA_STATUS_SUCCESS
}
unsafe extern "C" fn agent_pool_get_info(
    _: sys::Agent,
    _: sys::MemoryPool,
    _: u32,
    _: *mut c_void,
) -> sys::Status {
    sys::HSA_STATUS_ERROR_INVALID_ARGUMENT
}
unsafe extern "C" fn pool_allocate(
    pool: sys::MemoryPool,
    size: usize,
    flags: u32,
    ptr: *mut *mut c_void,
) -> sys::Status {
    if flags != 0 && with(|s| s.refuse_pool_flags) {
        return sys::HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    let layout = Layout::from_size_align(size, 4096).unwrap();
    // SAFETY: non-zero size (the wrapper refuses 0).
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    with(|s| {
        s.allocations
            .insert(p as usize, (layout, flags | (pool.handle as u32) << 8))
    });
    unsafe { *ptr = p.cast() };
    sys::HSA_STATUS_SUCCESS
}
unsafe extern "C" fn pool_free(ptr: *mut c_void) -> sys::Status {
    match with(|s| s.allocations.remove(&(ptr as usize))) {
        // SAFETY: allocated above with this layout.
        Some((layout, _)) => unsafe { std::alloc::dealloc(ptr.cast(), layout) },
        None => return sys::HSA_STATUS_ERROR_INVALID_ALLOCATION,
    }
    sys::HSA_STATUS_SUCCESS
}
unsafe extern "C" fn amd_memory_fill(ptr: *mut c_void, value: u32, count: usize) -> sys::Status {
    let known = with(|s| {
        s.allocations
            .get(&(ptr as usize))
            .is_some_and(|(layout, _)| count.checked_mul(4).is_some_and(|b| b <= layout.size()))
    });
    if !known {
        return sys::HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    for i in 0..count {
        // SAFETY: inside a live allocation of this table (checked above);
        // pool allocations are at least 4-byte aligned.
        unsafe { ptr.cast::<u32>().add(i).write(value) };
    }
    sys::HSA_STATUS_SUCCESS
}
unsafe extern "C" fn allow_access(
    n: u32,
    agents: *const sys::Agent,
    flags: *const u32,
    ptr: *const c_void,
) -> sys::Status {
    assert!(flags.is_null());
    let list = unsafe { std::slice::from_raw_parts(agents, n as usize) }
        .iter()
        .map(|a| a.handle)
        .collect();
    with(|s| s.allowed.push((list, ptr as usize)));
    sys::HSA_STATUS_SUCCESS
}
pub fn signal(h: sys::Signal) -> Arc<AtomicI64> {
    with(|s| Arc::clone(&s.signals[&h.handle]))
}
unsafe extern "C" fn signal_create(
    v: i64,
    _: u32,
    _: *const sys::Agent,
    out: *mut sys::Signal,
) -> sys::Status {
    let handle = with(|s| {
        s.next += 1;
        s.signals.insert(s.next, Arc::new(AtomicI64::new(v)));
        s.next
    });
    unsafe { *out = sys::Signal { handle } };
    sys::HSA_STATUS_SUCCESS
}
extern "C" fn signal_destroy(h: sys::Signal) -> sys::Status {
    match with(|s| s.signals.remove(&h.handle)) {
        Some(_) => sys::HSA_STATUS_SUCCESS,
        None => sys::HSA_STATUS_ERROR_INVALID_SIGNAL,
    }
}
extern "C" fn signal_load(h: sys::Signal) -> i64 {
    signal(h).load(Ordering::Acquire)
}
extern "C" fn signal_store(h: sys::Signal, v: i64) {
    signal(h).store(v, Ordering::Release);
    processor::rung(h);
}
extern "C" fn signal_wait(h: sys::Signal, cond: u32, cmp: i64, ticks: u64, _: u32) -> i64 {
    assert_eq!(cond, sys::HSA_SIGNAL_CONDITION_LT);
    let sig = signal(h);
    let deadline = std::time::Instant::now() + Duration::from_nanos(ticks.min(2_000_000));
    loop {
        let v = sig.load(Ordering::Acquire);
        if v < cmp || std::time::Instant::now() >= deadline {
            return v;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}
unsafe extern "C" fn queue_create(
    agent: sys::Agent,
    size: u32,
    _: u32,
    cb: Option<sys::QueueErrorCallback>,
    data: *mut c_void,
    _: u32,
    _: u32,
    out: *mut *mut sys::Queue,
) -> sys::Status {
    assert!(agent == GPU || agent == GPU2, "queue on a non-GPU agent");
    let layout = Layout::from_size_align(size as usize * 64, 64).unwrap();
    let ring = unsafe { std::alloc::alloc_zeroed(layout) };
    for i in 0..size as usize {
        // Runtime-initialised slots hold INVALID headers.
        unsafe {
            ring.cast::<u32>()
                .add(i * 16)
                .write(sys::HSA_PACKET_TYPE_INVALID as u32)
        };
    }
    let mut doorbell = sys::Signal::default();
    unsafe { signal_create(-1, 0, std::ptr::null(), &mut doorbell) };
    // Ids from 42, one per queue created.
    let id = with(|s| 42 + s.queues_created);
    let queue = Box::into_raw(Box::new(sys::Queue {
        queue_type: 0,
        features: 1,
        base_address: ring.cast(),
        doorbell_signal: doorbell,
        size,
        reserved1: 0,
        id,
    }));
    with(|s| {
        s.queues_created += 1;
        s.queues.push(FakeQueue {
            queue,
            agent,
            doorbell: doorbell.handle,
            ring: ring as usize,
            layout,
            read: Arc::default(),
            write: Arc::default(),
            callback: cb.unwrap(),
            data: data as usize,
            user_data: [0; 2],
        })
    });
    unsafe { *out = queue };
    sys::HSA_STATUS_SUCCESS
}
unsafe extern "C" fn queue_destroy(q: *mut sys::Queue) -> sys::Status {
    let fq = with(|s| {
        let at = s.queues.iter().position(|f| std::ptr::eq(f.queue, q));
        s.queues.remove(at.expect("a queue of this table"))
    });
    let q = unsafe { Box::from_raw(q) };
    signal_destroy(q.doorbell_signal);
    unsafe { std::alloc::dealloc(fq.ring as *mut u8, fq.layout) };
    sys::HSA_STATUS_SUCCESS
}
/// The scripted queue has no processor to stop: inactivation is accepted
/// and nothing runs on it afterwards anyway.
extern "C" fn queue_inactivate(_: *mut sys::Queue) -> sys::Status {
    sys::HSA_STATUS_SUCCESS
}
pub fn indices(q: *const sys::Queue) -> (Arc<AtomicU64>, Arc<AtomicU64>) {
    with(|s| {
        let q = s.queue_of(q);
        (Arc::clone(&q.read), Arc::clone(&q.write))
    })
}
extern "C" fn load_read(q: *const sys::Queue) -> u64 {
    indices(q).0.load(Ordering::Acquire)
}
extern "C" fn load_write(q: *const sys::Queue) -> u64 {
    indices(q).1.load(Ordering::Relaxed)
}
extern "C" fn add_write(q: *const sys::Queue, n: u64) -> u64 {
    indices(q).1.fetch_add(n, Ordering::AcqRel)
}
extern "C" fn register_event_handler(
    cb: sys::SystemEventCallback,
    data: *mut c_void,
) -> sys::Status {
    with(|s| s.event_handlers.push((cb, data as usize)));
    sys::HSA_STATUS_SUCCESS
}
unsafe extern "C" fn memory_copy(dst: *mut c_void, src: *const c_void, size: usize) -> sys::Status {
    unsafe { std::ptr::copy(src.cast::<u8>(), dst.cast::<u8>(), size) };
    sys::HSA_STATUS_SUCCESS
}

pub fn table() -> sys::HsaApi {
    sys::HsaApi {
        init,
        shut_down,
        status_string,
        system_get_info,
        iterate_agents,
        agent_get_info,
        amd_agent_iterate_memory_pools: iterate_pools,
        amd_memory_pool_get_info: pool_get_info,
        amd_agent_memory_pool_get_info: agent_pool_get_info,
        amd_memory_pool_allocate: pool_allocate,
        amd_memory_pool_free: pool_free,
        amd_memory_fill,
        amd_agents_allow_access: allow_access,
        signal_create,
        signal_destroy,
        signal_load_scacquire: signal_load,
        signal_load_relaxed: signal_load,
        signal_store_relaxed: signal_store,
        signal_store_screlease: signal_store,
        signal_silent_store_relaxed: signal_store,
        signal_wait_scacquire: signal_wait,
        queue_create,
        queue_destroy,
        queue_inactivate,
        queue_load_read_index_scacquire: load_read,
        queue_load_write_index_relaxed: load_write,
        queue_add_write_index_scacq_screl: add_write,
        code_object_reader_create_from_memory: reader_create,
        code_object_reader_destroy: reader_destroy,
        executable_create_alt: executable_create,
        executable_load_agent_code_object: executable_load,
        executable_freeze,
        executable_get_symbol_by_name: get_symbol,
        executable_symbol_get_info: symbol_info,
        executable_destroy,
        amd_register_system_event_handler: register_event_handler,
        memory_copy,
    }
}

/// After everything is dropped: no live objects, init paired with shutdown.
pub fn assert_all_released() {
    with(|s| {
        assert_eq!((s.inits, s.shutdowns), (1, 1), "init/shut_down pairing");
        assert!(s.signals.is_empty(), "signals leaked");
        assert!(s.allocations.is_empty(), "allocations leaked");
        assert!(s.queues.is_empty() && s.readers.is_empty() && s.executables.is_empty());
    });
}
