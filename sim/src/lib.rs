//! relaunch-sim: the simulated RDNA device (see README.md).
//!
//! Owns: checked device memory, the host-twin kernel registry, the
//! instruction interpreter that runs kernels' machine code (`isa`), PM4
//! and AQL execution, the copy engine (`sdma`), the ordering/coherence
//! model and the HSA table over all that.
//! Refuses: anything it cannot check (unknown packets, registers the family
//! lacks, instructions the interpreter does not implement) with an error,
//! never a silent no-op.
//! Must not import: lanes, sched, the facade or any front end.

pub mod aql;
mod code_in_memory;
pub mod counters;
pub mod device;
pub mod driver;
pub mod fault;
pub mod hsa;
pub mod isa;
mod lanemask;
pub mod memory;
pub mod ordering;
pub mod pm4;
pub mod queue;
pub mod sdma;
pub mod signal;
pub mod trace;
pub mod twins;

pub use device::{KernelEntry, LoadedImage, SimConfig, SimDevice, SimError, SimPci};
pub use queue::{ErrorCallback, FaultPlan, QueueError, QueueErrorKind, SimQueue};
