//! The HSA runtime over the function table in `relaunch-hsa-sys`.
//!
//! Owns: init/shutdown (one `hsa_init` per [`Runtime`], `hsa_shut_down`
//! when the last object goes), agents and their info, memory pools and
//! allocations, the kernarg arena, signals, AQL queues (publish body, then
//! header with release, then doorbell; waits with timeouts and the queue
//! error callback checked), executables, and GPU memory faults (one
//! system event handler per table; a GPU with a recorded fault is lost:
//! `HsaError::DeviceLost` from every queue check). The API is safe Rust; `unsafe`
//! stays in thin wrappers around table calls, each with a `// SAFETY:` line.
//!
//! Refuses: anything not reachable through the table (no sysfs, no
//! simulator knowledge: the simulated device is just another table).
//! Must not import the encoders, graph, scheduler or simulator crates.

mod agent;
mod error;
mod executable;
mod fault;
mod ib_memory;
mod kernarg;
mod memory;
mod packet;
mod queue;
mod runtime;
mod signal;
mod trap;

pub use agent::{parse_uuid, AgentInfo, Bdf, DeviceKind, KernelLimits};
pub use error::HsaError;
pub use executable::{descriptor_symbol_name, Executable, KernelSymbol};
pub use fault::GpuFault;
pub use kernarg::{place_block, KernargArena, KernargBlock, KERNARG_MAX_ALIGN, KERNARG_MIN_ALIGN};
pub use memory::{AllocFlags, Allocation, PoolInfo};
pub use packet::{pm4_ib_packet, AqlPacket, AQL_COMPLETION_SIGNAL_WORD};
pub use queue::AqlQueue;
pub use runtime::{Runtime, INIT_TIMEOUT};
pub use signal::Signal;
pub use trap::{
    kfd_exception_debugging, rocr_installs_trap_handler, CAP_DEBUG_SUPPORTED_FIRMWARE,
    KFD_TOPOLOGY, SIM_AGENT_INFO_TRAP_HANDLER,
};
