//! `HsaApi`: the one table of HSA entry points relaunch calls. The real
//! runtime's table is resolved by `crate::load`; the simulated device fills
//! the same struct with its own `extern "C"` functions.

use std::ffi::{c_char, c_void};

use crate::event::SystemEventCallback;
use crate::handles::{
    Agent, CodeObjectReader, Executable, ExecutableSymbol, LoadedCodeObject, MemoryPool, Queue,
    Signal, SignalValue,
};
use crate::info::{
    AgentInfo, AgentMemoryPoolInfo, ExecutableSymbolInfo, MemoryPoolInfo, SignalCondition,
    SystemInfo, WaitState,
};
use crate::status::Status;

/// `hsa_iterate_agents` callback: return `HSA_STATUS_SUCCESS` to continue,
/// `HSA_STATUS_INFO_BREAK` to stop early, anything else to fail the walk.
pub type AgentCallback = unsafe extern "C" fn(agent: Agent, data: *mut c_void) -> Status;
/// `hsa_amd_agent_iterate_memory_pools` callback, same protocol.
pub type MemoryPoolCallback = unsafe extern "C" fn(pool: MemoryPool, data: *mut c_void) -> Status;
/// `hsa_queue_create` error callback: called by a runtime thread when the
/// queue hits an error (VM fault, bad packet). It must not unwind.
pub type QueueErrorCallback =
    unsafe extern "C" fn(status: Status, source: *mut Queue, data: *mut c_void);

macro_rules! hsa_api {
    ($(
        $(#[$doc:meta])*
        $field:ident = $sym:literal : fn($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)?;
    )*) => {
        /// The HSA entry points relaunch uses, as plain C function pointers.
        ///
        /// Anyone may build one (all fields are public): the real runtime's
        /// via [`crate::LoadedHsa::load`], the simulated device's from Rust
        /// `extern "C"` functions. Field `x` is the C function `hsa_x`.
        ///
        /// # Safety
        /// Calling any field is `unsafe`; the caller upholds the HSA contract:
        /// - Lifecycle: `init` before anything else; every successful `init`
        ///   is paired with one `shut_down`, after every object created in
        ///   between (signals, queues, allocations, executables, readers) has
        ///   been destroyed. `status_string` may be called in any state.
        /// - Handles and pointers passed in are ones this same table handed
        ///   out, still live (not destroyed/freed), under the same `init`.
        /// - Out-pointers point to writable memory of the type the attribute
        ///   documents (see `crate::info`); callbacks are `extern "C"`, do not
        ///   unwind, and `data` stays valid for the duration of the walk.
        /// - Memory given to `code_object_reader_create_from_memory` stays
        ///   valid and unchanged until the reader is destroyed.
        /// - The functions (and the library they come from, see
        ///   [`crate::LoadedHsa`]) stay loaded while any object exists.
        #[derive(Debug, Clone, Copy)]
        pub struct HsaApi {
            $(
                $(#[$doc])*
                pub $field: unsafe extern "C" fn($($arg: $ty),*) $(-> $ret)?,
            )*
        }

        impl HsaApi {
            /// The C symbol names of every field, in declaration order.
            pub const SYMBOLS: &'static [&'static str] = &[$($sym),*];

            /// Resolves every field from `lib`.
            ///
            /// # Safety
            /// `lib` must export each symbol with the C signature declared
            /// in `hsa.h`/`hsa_ext_amd.h`, and must outlive the returned table.
            pub(crate) unsafe fn resolve(
                lib: &libloading::Library,
                library_name: &str,
            ) -> Result<Self, crate::load::LoadError> {
                Ok(Self {
                    $(
                        $field: {
                            // SAFETY: the caller guarantees the symbol has this signature.
                            let symbol: libloading::Symbol<
                                unsafe extern "C" fn($($ty),*) $(-> $ret)?,
                            > = unsafe { lib.get(concat!($sym, "\0").as_bytes()) }.map_err(
                                |err| crate::load::LoadError::MissingSymbol {
                                    symbol: $sym,
                                    library: library_name.to_string(),
                                    reason: err.to_string(),
                                },
                            )?;
                            *symbol
                        },
                    )*
                })
            }
        }
    };
}

hsa_api! {
    init = "hsa_init": fn() -> Status;
    shut_down = "hsa_shut_down": fn() -> Status;
    /// Writes a pointer to a static NUL-terminated description.
    status_string = "hsa_status_string": fn(status: Status, string: *mut *const c_char) -> Status;
    system_get_info = "hsa_system_get_info": fn(attribute: SystemInfo, value: *mut c_void) -> Status;
    iterate_agents = "hsa_iterate_agents": fn(callback: AgentCallback, data: *mut c_void) -> Status;
    agent_get_info = "hsa_agent_get_info": fn(agent: Agent, attribute: AgentInfo, value: *mut c_void) -> Status;
    amd_agent_iterate_memory_pools = "hsa_amd_agent_iterate_memory_pools":
        fn(agent: Agent, callback: MemoryPoolCallback, data: *mut c_void) -> Status;
    amd_memory_pool_get_info = "hsa_amd_memory_pool_get_info":
        fn(pool: MemoryPool, attribute: MemoryPoolInfo, value: *mut c_void) -> Status;
    amd_agent_memory_pool_get_info = "hsa_amd_agent_memory_pool_get_info":
        fn(agent: Agent, pool: MemoryPool, attribute: AgentMemoryPoolInfo, value: *mut c_void) -> Status;
    /// `flags`: `HSA_AMD_MEMORY_POOL_*_FLAG`.
    amd_memory_pool_allocate = "hsa_amd_memory_pool_allocate":
        fn(pool: MemoryPool, size: usize, flags: u32, ptr: *mut *mut c_void) -> Status;
    amd_memory_pool_free = "hsa_amd_memory_pool_free": fn(ptr: *mut c_void) -> Status;
    /// Fills `count` dwords at `ptr` with `value` (4-byte aligned).
    amd_memory_fill = "hsa_amd_memory_fill": fn(ptr: *mut c_void, value: u32, count: usize) -> Status;
    /// `flags` must be null.
    amd_agents_allow_access = "hsa_amd_agents_allow_access":
        fn(num_agents: u32, agents: *const Agent, flags: *const u32, ptr: *const c_void) -> Status;
    signal_create = "hsa_signal_create":
        fn(initial_value: SignalValue, num_consumers: u32, consumers: *const Agent, signal: *mut Signal) -> Status;
    signal_destroy = "hsa_signal_destroy": fn(signal: Signal) -> Status;
    signal_load_scacquire = "hsa_signal_load_scacquire": fn(signal: Signal) -> SignalValue;
    signal_load_relaxed = "hsa_signal_load_relaxed": fn(signal: Signal) -> SignalValue;
    signal_store_relaxed = "hsa_signal_store_relaxed": fn(signal: Signal, value: SignalValue);
    /// Also how a doorbell is rung (value = packet id).
    signal_store_screlease = "hsa_signal_store_screlease": fn(signal: Signal, value: SignalValue);
    /// Store without waking waiters.
    signal_silent_store_relaxed = "hsa_signal_silent_store_relaxed": fn(signal: Signal, value: SignalValue);
    /// `timeout_hint` is in `HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY` ticks; the
    /// call may return early (spuriously), so callers re-check the value.
    signal_wait_scacquire = "hsa_signal_wait_scacquire":
        fn(signal: Signal, condition: SignalCondition, compare_value: SignalValue, timeout_hint: u64,
           wait_state_hint: WaitState) -> SignalValue;
    queue_create = "hsa_queue_create":
        fn(agent: Agent, size: u32, queue_type: u32, callback: Option<QueueErrorCallback>, data: *mut c_void,
           private_segment_size: u32, group_segment_size: u32, queue: *mut *mut Queue) -> Status;
    queue_destroy = "hsa_queue_destroy": fn(queue: *mut Queue) -> Status;
    /// Stops the queue: ROCr destroys the hardware queue (work in flight is
    /// discarded, later packets are ignored) and keeps the ring allocated
    /// until `hsa_queue_destroy`.
    queue_inactivate = "hsa_queue_inactivate": fn(queue: *mut Queue) -> Status;
    queue_load_read_index_scacquire = "hsa_queue_load_read_index_scacquire": fn(queue: *const Queue) -> u64;
    queue_load_write_index_relaxed = "hsa_queue_load_write_index_relaxed": fn(queue: *const Queue) -> u64;
    /// Reserves `value` slots; returns the previous write index (the packet id).
    queue_add_write_index_scacq_screl = "hsa_queue_add_write_index_scacq_screl":
        fn(queue: *const Queue, value: u64) -> u64;
    code_object_reader_create_from_memory = "hsa_code_object_reader_create_from_memory":
        fn(code_object: *const c_void, size: usize, reader: *mut CodeObjectReader) -> Status;
    code_object_reader_destroy = "hsa_code_object_reader_destroy": fn(reader: CodeObjectReader) -> Status;
    executable_create_alt = "hsa_executable_create_alt":
        fn(profile: u32, default_float_rounding_mode: u32, options: *const c_char,
           executable: *mut Executable) -> Status;
    executable_load_agent_code_object = "hsa_executable_load_agent_code_object":
        fn(executable: Executable, agent: Agent, reader: CodeObjectReader, options: *const c_char,
           loaded_code_object: *mut LoadedCodeObject) -> Status;
    executable_freeze = "hsa_executable_freeze": fn(executable: Executable, options: *const c_char) -> Status;
    executable_get_symbol_by_name = "hsa_executable_get_symbol_by_name":
        fn(executable: Executable, symbol_name: *const c_char, agent: *const Agent,
           symbol: *mut ExecutableSymbol) -> Status;
    executable_symbol_get_info = "hsa_executable_symbol_get_info":
        fn(symbol: ExecutableSymbol, attribute: ExecutableSymbolInfo, value: *mut c_void) -> Status;
    executable_destroy = "hsa_executable_destroy": fn(executable: Executable) -> Status;
    /// Adds a handler for system events (GPU memory faults). ROCr 6 keeps
    /// every handler registered; older ROCr refuse a second one with
    /// `HSA_STATUS_ERROR`. Without one that returns success, a memory fault
    /// aborts the process.
    amd_register_system_event_handler = "hsa_amd_register_system_event_handler":
        fn(callback: SystemEventCallback, data: *mut c_void) -> Status;
    /// Copies `size` bytes between any two allocations of this runtime
    /// (device-local memory included); returns when the copy is done.
    memory_copy = "hsa_memory_copy": fn(dst: *mut c_void, src: *const c_void, size: usize) -> Status;
}
