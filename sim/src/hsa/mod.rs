//! The HSA function table of the simulated system: an [`HsaApi`] filled with
//! `extern "C"` functions over process-wide simulator state (one CPU agent
//! and one GPU agent per configured target, sharing one address space).
//!
//! Owns: handles (agents, pools, signals, queues, readers, executables,
//! symbols) and their mapping to the simulator objects. Refuses: calls
//! before `hsa_init`, stale or foreign handles, null out-pointers, each with
//! an HSA status and a message kept for [`last_error`]. No panic crosses
//! these functions: every body runs under `catch_unwind`.
//! Must not import anything above this crate.

mod agents;
pub mod anchors;
mod code;
mod events;
mod queues;

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use parking_lot::RwLock;
use relaunch_hsa_sys::{self as sys, HsaApi, LoadedHsa, Status};

use crate::device::{KernelEntry, LoadedImage, SimConfig, SimDevice, SimError};
use crate::memory::DeviceMemory;
use crate::queue::SimQueue;
use crate::signal::SignalTable;

/// Targets of the GPU agents `hsa_init` creates when none were added with
/// [`add_gpu`]: a comma-separated list (default `gfx1201`).
pub const TARGETS_ENV: &str = "RELAUNCH_SIM_TARGETS";

const CPU_AGENT: u64 = 1;
const GPU_AGENT_BASE: u64 = 0x100;
const CPU_POOL: u64 = 0x1000;
const GPU_POOL_BASE: u64 = 0x2000;

struct QueueEntry {
    queue: Arc<SimQueue>,
    /// The `hsa_queue_t` handed out (Box::into_raw; freed at destroy).
    raw: usize,
}

struct Executable {
    frozen: bool,
    images: Vec<(usize, LoadedImage)>,
}

struct Symbol {
    executable: u64,
    gpu: usize,
    kernel: Arc<KernelEntry>,
}

/// Everything the table's handles refer to.
struct System {
    init: usize,
    started: Instant,
    memory: Arc<DeviceMemory>,
    signals: Arc<SignalTable>,
    gpus: Vec<Arc<SimDevice>>,
    queues: HashMap<usize, QueueEntry>,
    readers: HashMap<u64, Arc<Vec<u8>>>,
    executables: HashMap<u64, Executable>,
    symbols: HashMap<u64, Symbol>,
    next_handle: u64,
    /// `hsa_amd_register_system_event_handler` registrations.
    event_handlers: events::Handlers,
}

impl System {
    fn handle(&mut self) -> u64 {
        self.next_handle += 1;
        self.next_handle
    }

    fn gpu_index(&self, agent: sys::Agent) -> Option<usize> {
        let i = agent.handle.checked_sub(GPU_AGENT_BASE)? as usize;
        (i < self.gpus.len()).then_some(i)
    }
}

fn system() -> &'static RwLock<System> {
    static SYSTEM: OnceLock<RwLock<System>> = OnceLock::new();
    SYSTEM.get_or_init(|| {
        let memory = Arc::new(DeviceMemory::new(SimConfig::new("gfx1201").memory_limit));
        RwLock::new(System {
            init: 0,
            started: Instant::now(),
            // Handles are `amd_signal_t` addresses, as ROCr's are, so
            // kernels (ockl's hostcall doorbell) can update them.
            signals: Arc::new(SignalTable::in_memory(Arc::clone(&memory))),
            memory,
            gpus: Vec::new(),
            queues: HashMap::new(),
            readers: HashMap::new(),
            executables: HashMap::new(),
            symbols: HashMap::new(),
            next_handle: 0x10_0000,
            event_handlers: Vec::new(),
        })
    })
}

thread_local! {
    static LAST_ERROR: RefCell<(Status, String)> = const { RefCell::new((0, String::new())) };
}

/// The last queue error reported through a callback, any thread.
static LAST_QUEUE_ERROR: parking_lot::Mutex<Option<(Status, String)>> =
    parking_lot::Mutex::new(None);

/// What `hsa_status_string` says about `status`: the message of this
/// thread's last failure with that status, else of the last queue error
/// with it, else `None` (the caller then uses the plain name).
fn detail_for(status: Status) -> Option<String> {
    let mine = LAST_ERROR.with(|e| {
        let e = e.borrow();
        (e.0 == status && !e.1.is_empty()).then(|| e.1.clone())
    });
    mine.or_else(|| {
        LAST_QUEUE_ERROR
            .lock()
            .as_ref()
            .filter(|(s, _)| *s == status)
            .map(|(_, m)| m.clone())
    })
}

/// Called on the reporting queue's processor thread just before its error
/// callback: `hsa_status_string` asked inside the callback (on this
/// thread) describes this queue's error, whatever other queues report.
fn record_queue_error(status: Status, message: &str) {
    LAST_ERROR.with(|e| *e.borrow_mut() = (status, message.to_string()));
    *LAST_QUEUE_ERROR.lock() = Some((status, message.to_string()));
}

/// The message of the last failed call on this thread (HSA statuses alone
/// say little; this says what was wrong).
pub fn last_error() -> String {
    LAST_ERROR.with(|e| e.borrow().1.clone())
}

fn fail(status: Status, message: impl Into<String>) -> Status {
    let message = message.into();
    tracing::debug!(status, %message, "sim HSA call failed");
    LAST_ERROR.with(|e| *e.borrow_mut() = (status, message));
    status
}

/// Run a status-returning body; a panic becomes `HSA_STATUS_ERROR`.
fn guard(f: impl FnOnce() -> Status) -> Status {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        fail(
            sys::HSA_STATUS_ERROR,
            "internal error: the simulated HSA runtime panicked",
        )
    })
}

/// Run a value-returning body; a panic returns `default`.
fn guard_value<T>(default: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        fail(
            sys::HSA_STATUS_ERROR,
            "internal error: the simulated HSA runtime panicked",
        );
        default
    })
}

/// The common body of a table function: panic-guarded, refused before
/// `hsa_init`, with the system read-locked for the call.
fn with_system(f: impl FnOnce(&System) -> Status) -> Status {
    guard(|| {
        let s = system().read();
        match initialized(&s) {
            Ok(()) => f(&s),
            Err(st) => st,
        }
    })
}

/// [`with_system`] with the system write-locked.
fn with_system_mut(f: impl FnOnce(&mut System) -> Status) -> Status {
    guard(|| {
        let mut s = system().write();
        match initialized(&s) {
            Ok(()) => f(&mut s),
            Err(st) => st,
        }
    })
}

/// Fail unless `hsa_init` has been called.
fn initialized(s: &System) -> Result<(), Status> {
    if s.init == 0 {
        return Err(fail(
            sys::HSA_STATUS_ERROR_NOT_INITIALIZED,
            "the simulated HSA runtime is not initialized: call hsa_init first",
        ));
    }
    Ok(())
}

/// Write `value` through an out-pointer, refusing null.
///
/// # Safety
/// `out` is null or valid for writing a `T` (the HSA contract of the caller).
unsafe fn write_out<T>(out: *mut T, value: T, what: &str) -> Status {
    if out.is_null() {
        return fail(
            sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
            format!("{what}: the out-pointer is null"),
        );
    }
    // SAFETY: non-null and valid for a T per this function's contract.
    unsafe { out.write_unaligned(value) };
    sys::HSA_STATUS_SUCCESS
}

/// Add a GPU agent for `config` to the simulated system (or return the one
/// with the same target). Agents added after `hsa_init` appear in the next
/// `hsa_iterate_agents`.
pub fn add_gpu(config: SimConfig) -> Result<Arc<SimDevice>, SimError> {
    let mut s = system().write();
    if let Some(d) = s.gpus.iter().find(|d| d.config().same_board(&config)) {
        return Ok(Arc::clone(d));
    }
    let dev = SimDevice::new_shared(config, Arc::clone(&s.memory), Arc::clone(&s.signals))?;
    events::connect(&dev, s.gpus.len());
    s.gpus.push(Arc::clone(&dev));
    Ok(dev)
}

/// The simulated device behind a GPU agent handle.
pub fn device_of_agent(agent: sys::Agent) -> Option<Arc<SimDevice>> {
    let s = system().read();
    s.gpu_index(agent).map(|i| Arc::clone(&s.gpus[i]))
}

/// The simulated queue behind an `hsa_queue_t` pointer (fault injection, errors).
pub fn queue_of(queue: *const sys::Queue) -> Option<Arc<SimQueue>> {
    let s = system().read();
    s.queues
        .get(&(queue as usize))
        .map(|e| Arc::clone(&e.queue))
}

/// The simulated queue with HSA queue id `id`.
pub fn queue_by_id(id: u64) -> Option<Arc<SimQueue>> {
    let s = system().read();
    s.queues
        .values()
        .find(|e| e.queue.id == id)
        .map(|e| Arc::clone(&e.queue))
}

/// The memory every simulated agent shares (for leak checks).
pub fn memory() -> Arc<DeviceMemory> {
    Arc::clone(&system().read().memory)
}

/// The signal table every simulated agent shares.
pub fn signals() -> Arc<SignalTable> {
    Arc::clone(&system().read().signals)
}

/// The simulated runtime's function table.
pub fn api() -> HsaApi {
    HsaApi {
        init: hsa_init,
        shut_down: hsa_shut_down,
        status_string: agents::status_string,
        system_get_info: agents::system_get_info,
        iterate_agents: agents::iterate_agents,
        agent_get_info: agents::agent_get_info,
        amd_agent_iterate_memory_pools: agents::iterate_pools,
        amd_memory_pool_get_info: agents::pool_get_info,
        amd_agent_memory_pool_get_info: agents::agent_pool_get_info,
        amd_memory_pool_allocate: agents::pool_allocate,
        amd_memory_pool_free: agents::pool_free,
        amd_memory_fill: agents::memory_fill,
        amd_agents_allow_access: agents::allow_access,
        signal_create: queues::signal_create,
        signal_destroy: queues::signal_destroy,
        signal_load_scacquire: queues::signal_load,
        signal_load_relaxed: queues::signal_load,
        signal_store_relaxed: queues::signal_store,
        signal_store_screlease: queues::signal_store,
        signal_silent_store_relaxed: queues::signal_silent_store,
        signal_wait_scacquire: queues::signal_wait,
        queue_create: queues::queue_create,
        queue_destroy: queues::queue_destroy,
        queue_inactivate: queues::queue_inactivate,
        queue_load_read_index_scacquire: queues::load_read_index,
        queue_load_write_index_relaxed: queues::load_write_index,
        queue_add_write_index_scacq_screl: queues::add_write_index,
        code_object_reader_create_from_memory: code::reader_create,
        code_object_reader_destroy: code::reader_destroy,
        executable_create_alt: code::executable_create,
        executable_load_agent_code_object: code::executable_load,
        executable_freeze: code::executable_freeze,
        executable_get_symbol_by_name: code::symbol_by_name,
        executable_symbol_get_info: code::symbol_get_info,
        executable_destroy: code::executable_destroy,
        amd_register_system_event_handler: events::register_system_event_handler,
        memory_copy: events::memory_copy,
    }
}

/// The table wrapped the way `relaunch-device`'s runtime takes it.
pub fn loaded() -> LoadedHsa {
    LoadedHsa::from_table(api(), "relaunch simulated device").simulated()
}

/// The config for target `t` of `RELAUNCH_SIM_TARGETS`: simulated when
/// RDNA; a known GPU of another family (e.g. CDNA `gfx90a`) is listed
/// under its own name over a simulated stand-in, as ROCr would list a
/// board relaunch cannot use.
fn listed_config(t: &str) -> SimConfig {
    use relaunch_facts::GfxTarget;
    match GfxTarget::parse(t) {
        Ok(target) if target.family().is_err() => SimConfig {
            listed_as: Some(target.processor().to_string()),
            ..SimConfig::new("gfx1100")
        },
        _ => SimConfig::new(t),
    }
}

extern "C" fn hsa_init() -> Status {
    guard(|| {
        let mut s = system().write();
        if s.gpus.is_empty() {
            let targets = std::env::var(TARGETS_ENV).unwrap_or_else(|_| "gfx1201".into());
            for t in targets.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                let dev = SimDevice::new_shared(
                    listed_config(t),
                    Arc::clone(&s.memory),
                    Arc::clone(&s.signals),
                );
                match dev {
                    Ok(d) => {
                        events::connect(&d, s.gpus.len());
                        s.gpus.push(d)
                    }
                    Err(e) => {
                        return fail(
                            sys::HSA_STATUS_ERROR_INVALID_ISA_NAME,
                            format!("{TARGETS_ENV}: {e}"),
                        )
                    }
                }
            }
        }
        s.init += 1;
        sys::HSA_STATUS_SUCCESS
    })
}

extern "C" fn hsa_shut_down() -> Status {
    guard(|| {
        let mut s = system().write();
        if let Err(status) = initialized(&s) {
            return status;
        }
        s.init -= 1;
        if s.init > 0 {
            return sys::HSA_STATUS_SUCCESS;
        }
        // Last reference: destroy what the runtime owns, as ROCr does
        // (its system event handlers included).
        s.event_handlers.clear();
        let queues: Vec<QueueEntry> = s.queues.drain().map(|(_, e)| e).collect();
        let executables: Vec<Executable> = s.executables.drain().map(|(_, e)| e).collect();
        s.symbols.clear();
        s.readers.clear();
        let gpus = s.gpus.clone();
        drop(s);
        for q in queues {
            queues::release(q);
        }
        for e in executables {
            for (gpu, image) in e.images {
                let _ = gpus[gpu].unload(&image);
            }
        }
        sys::HSA_STATUS_SUCCESS
    })
}

/// `data` pointers of C callbacks: only handed back to the caller's function.
#[derive(Clone, Copy)]
struct CallbackData(*mut c_void);
// SAFETY: the HSA contract makes the caller responsible for `data` being
// usable from the runtime's threads; we never dereference it.
unsafe impl Send for CallbackData {}
// SAFETY: as above.
unsafe impl Sync for CallbackData {}
