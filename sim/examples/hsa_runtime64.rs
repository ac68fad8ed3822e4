//! The simulated device as a shared library exporting the `hsa_*` C symbols
//! relaunch uses, so any program that dlopens an HSA runtime can be pointed
//! at it: `cargo build -p relaunch-sim --example hsa_runtime64`, then
//! `RELAUNCH_HSA_LIB=target/debug/examples/libhsa_runtime64.so`.
//! GPU agents come from `RELAUNCH_SIM_TARGETS` (default `gfx1201`).
//! Each export forwards to the table of `relaunch_sim::hsa`, which catches
//! panics; nothing else lives here.

use std::ffi::{c_char, c_void};
use std::sync::OnceLock;

use relaunch_hsa_sys::{
    Agent, AgentCallback, CodeObjectReader, Executable, ExecutableSymbol, HsaApi, LoadedCodeObject,
    MemoryPool, MemoryPoolCallback, Queue, QueueErrorCallback, Signal, Status, SystemEventCallback,
};

fn api() -> &'static HsaApi {
    static API: OnceLock<HsaApi> = OnceLock::new();
    API.get_or_init(relaunch_sim::hsa::api)
}

/// Tells relaunch's loader that this HSA library is the simulator (see
/// `relaunch_hsa_sys::SIMULATED_MARKER`), so its agents stay simulated boards
/// for the deny list.
#[no_mangle]
pub static relaunch_simulated_hsa_runtime: u8 = 1;

macro_rules! export {
    ($($name:ident => $field:ident ( $($arg:ident : $ty:ty),* ) $(-> $ret:ty)?;)*) => {
        $(
            /// Forwards to the simulated table.
            ///
            /// # Safety
            /// The HSA contract of the C function of the same name.
            #[no_mangle]
            pub unsafe extern "C" fn $name($($arg: $ty),*) $(-> $ret)? {
                // SAFETY: forwarded unchanged under the caller's HSA contract.
                unsafe { (api().$field)($($arg),*) }
            }
        )*
    };
}

export! {
    hsa_init => init() -> Status;
    hsa_shut_down => shut_down() -> Status;
    hsa_status_string => status_string(status: Status, string: *mut *const c_char) -> Status;
    hsa_system_get_info => system_get_info(attribute: u32, value: *mut c_void) -> Status;
    hsa_iterate_agents => iterate_agents(callback: AgentCallback, data: *mut c_void) -> Status;
    hsa_agent_get_info => agent_get_info(agent: Agent, attribute: u32, value: *mut c_void) -> Status;
    hsa_amd_agent_iterate_memory_pools => amd_agent_iterate_memory_pools(
        agent: Agent, callback: MemoryPoolCallback, data: *mut c_void) -> Status;
    hsa_amd_memory_pool_get_info => amd_memory_pool_get_info(
        pool: MemoryPool, attribute: u32, value: *mut c_void) -> Status;
    hsa_amd_agent_memory_pool_get_info => amd_agent_memory_pool_get_info(
        agent: Agent, pool: MemoryPool, attribute: u32, value: *mut c_void) -> Status;
    hsa_amd_memory_pool_allocate => amd_memory_pool_allocate(
        pool: MemoryPool, size: usize, flags: u32, ptr: *mut *mut c_void) -> Status;
    hsa_amd_memory_pool_free => amd_memory_pool_free(ptr: *mut c_void) -> Status;
    hsa_amd_memory_fill => amd_memory_fill(ptr: *mut c_void, value: u32, count: usize) -> Status;
    hsa_amd_agents_allow_access => amd_agents_allow_access(
        num_agents: u32, agents: *const Agent, flags: *const u32, ptr: *const c_void) -> Status;
    hsa_signal_create => signal_create(
        initial_value: i64, num_consumers: u32, consumers: *const Agent, signal: *mut Signal) -> Status;
    hsa_signal_destroy => signal_destroy(signal: Signal) -> Status;
    hsa_signal_load_scacquire => signal_load_scacquire(signal: Signal) -> i64;
    hsa_signal_load_relaxed => signal_load_relaxed(signal: Signal) -> i64;
    hsa_signal_store_relaxed => signal_store_relaxed(signal: Signal, value: i64);
    hsa_signal_store_screlease => signal_store_screlease(signal: Signal, value: i64);
    hsa_signal_silent_store_relaxed => signal_silent_store_relaxed(signal: Signal, value: i64);
    hsa_signal_wait_scacquire => signal_wait_scacquire(
        signal: Signal, condition: u32, compare_value: i64, timeout_hint: u64, wait_state_hint: u32) -> i64;
    hsa_queue_create => queue_create(
        agent: Agent, size: u32, queue_type: u32, callback: Option<QueueErrorCallback>, data: *mut c_void,
        private_segment_size: u32, group_segment_size: u32, queue: *mut *mut Queue) -> Status;
    hsa_queue_destroy => queue_destroy(queue: *mut Queue) -> Status;
    hsa_queue_inactivate => queue_inactivate(queue: *mut Queue) -> Status;
    hsa_queue_load_read_index_scacquire => queue_load_read_index_scacquire(queue: *const Queue) -> u64;
    hsa_queue_load_write_index_relaxed => queue_load_write_index_relaxed(queue: *const Queue) -> u64;
    hsa_queue_add_write_index_scacq_screl => queue_add_write_index_scacq_screl(
        queue: *const Queue, value: u64) -> u64;
    hsa_code_object_reader_create_from_memory => code_object_reader_create_from_memory(
        code_object: *const c_void, size: usize, reader: *mut CodeObjectReader) -> Status;
    hsa_code_object_reader_destroy => code_object_reader_destroy(reader: CodeObjectReader) -> Status;
    hsa_executable_create_alt => executable_create_alt(
        profile: u32, rounding: u32, options: *const c_char, executable: *mut Executable) -> Status;
    hsa_executable_load_agent_code_object => executable_load_agent_code_object(
        executable: Executable, agent: Agent, reader: CodeObjectReader, options: *const c_char,
        loaded: *mut LoadedCodeObject) -> Status;
    hsa_executable_freeze => executable_freeze(executable: Executable, options: *const c_char) -> Status;
    hsa_executable_get_symbol_by_name => executable_get_symbol_by_name(
        executable: Executable, name: *const c_char, agent: *const Agent, symbol: *mut ExecutableSymbol) -> Status;
    hsa_executable_symbol_get_info => executable_symbol_get_info(
        symbol: ExecutableSymbol, attribute: u32, value: *mut c_void) -> Status;
    hsa_executable_destroy => executable_destroy(executable: Executable) -> Status;
    hsa_amd_register_system_event_handler => amd_register_system_event_handler(
        callback: SystemEventCallback, data: *mut c_void) -> Status;
    hsa_memory_copy => memory_copy(dst: *mut c_void, src: *const c_void, size: usize) -> Status;
}
