//! relaunch-sched: queue actors and the multi-queue scheduler.
//!
//! Owns: the queue actor (one hardware queue, its completion signal and
//! the retained IBs installed on it, with operations kept in the order they
//! were sent: `actor`), completions (`completion`), the backend vocabulary
//! (`backend`: `QueueBackend`, its error bound `BackendFailure`), and on
//! top of that generic core the HSA backend (`hsa`: the queue, its
//! completion-signal ring and watch, kernargs, install; the only module
//! that names HSA types), the synchronisation primitives protocol code uses
//! (`sync`: std, or loom under `--cfg loom`), the queue-width policy (`policy`) and the scheduler that
//! maps lanes onto actors, fans a replay out and gathers it (`scheduler`). Refuses: patches outside a
//! dispatch's kernarg block, operations on stopped actors or foreign IBs.
//! Must not import: the simulator (it is just another HSA table), the
//! facade or any front end. Concurrency primitives come only through
//! `loom` (the facade module), so `--cfg loom` models the protocols.

pub mod actor;
pub mod backend;
pub mod completion;
pub mod error;
mod handle;
pub mod hsa;
pub mod ib_dump;
mod loom;
pub mod policy;
pub mod scheduler;
mod slab;
mod track;

/// The primitives the actor protocols synchronise with: `std`'s, or under
/// `--cfg loom` loom's, so a backend written against them (such as the
/// test suite's counter backend) is explored by the same loom models.
pub mod sync {
    pub use crate::loom::{lock, thread, wait, wait_timeout, Arc, Condvar, Mutex, MutexGuard};
}

pub use actor::{Actor, ActorOptions};
pub use backend::{
    BackendErrorType, BackendFailure, CompletionWatch, IbLayout, KernargWriter, QueueBackend,
    Ticket, WatchError,
};
pub use completion::Completion;
pub use error::{BackendCause, IbName, SchedError};
pub use handle::IbHandle;
pub use policy::{queue_count, queue_count_of, QueuePolicy};
