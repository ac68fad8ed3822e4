//! relaunch-capi: the C ABI (`rl_*`) over the facade crate, built as
//! `librelaunch.so` / `librelaunch.a` with the cbindgen header
//! `include/relaunch.h`.
//!
//! Owns: the opaque-handle registry (`handles`), the status codes and the
//! per-thread last error (`status`), and one module per family of entry
//! points (`gpu`, `module`, `pm4`, `multi`, `graph`, `sim`, `catalog`).
//! Refuses: NULL, stale, foreign and garbage handles, out-of-range enum
//! values and unbounded sizes, each with a status and a message; a panic
//! never crosses the boundary (`RL_ERR_INTERNAL`).
//! Must not import: the crates below the facade directly, except the
//! simulator's twin registry (reached through `facade::twins`).
//!
//! Handles are not pointers to memory: they encode a registry slot, its
//! generation and the object kind, so a freed or foreign handle is
//! detected instead of dereferenced. Objects are reference counted: an IB
//! keeps its modules, GPU and the GPU's `rl_gpu_alloc` memory alive, so
//! freeing handles in any order never frees anything still in use.

#[cfg(not(target_pointer_width = "64"))]
compile_error!("relaunch's C ABI encodes handles in 64-bit pointers; build for a 64-bit target");

mod catalog;
mod certify;
mod enums;
mod gpu;
mod graph;
mod handles;
mod module;
mod multi;
mod pm4;
mod profile;
mod sim;
mod status;
mod util;
mod verbs;

#[cfg(test)]
mod tests;

pub use catalog::*;
pub use certify::*;
pub use enums::*;
pub use gpu::*;
pub use graph::*;
pub use module::*;
pub use multi::*;
pub use pm4::*;
pub use profile::*;
pub use sim::*;
pub use status::*;

/// The version of this C ABI; changes when a signature or meaning changes.
pub const RL_ABI_VERSION: u32 = 1;

/// The ABI version this library implements (`RL_ABI_VERSION`, 1).
#[no_mangle]
pub extern "C" fn rl_abi_version() -> u32 {
    RL_ABI_VERSION
}

/// Queue-count policies (`rl_gpu_pm4_queue_count`, `rl_pm4_finalize_multi`
/// takes `RlQueueAuto`). Passed as `uint32_t`; other values are refused.
#[repr(u32)]
#[allow(clippy::enum_variant_names)]
pub enum RlQueuePolicy {
    /// The per-family width that held up on hardware (2 on gfx1100 and
    /// gfx12, 4 on other gfx11, 1 on gfx10), capped by the width asked.
    RlQueueAuto = 0,
    RlQueueOne = 1,
    RlQueueTwo = 2,
    RlQueueThree = 3,
    RlQueueFour = 4,
}

/// Memory kinds for `rl_gpu_alloc`. Passed as `uint32_t`.
#[repr(u32)]
pub enum RlMemKind {
    /// Device-local memory (host access only where the device allows it).
    RlMemDevice = 0,
    /// Host-visible fine-grained memory (readable and writable from the host).
    RlMemHostVisible = 1,
}

/// Graph modes for `rl_graph_new_tuned`. Passed as `uint32_t`.
#[repr(u32)]
pub enum RlGraphMode {
    /// One replay at a time, finished as soon as possible.
    RlModeLatency = 0,
    /// The next replay is prepared while one runs.
    RlModeOverlap = 1,
    /// Up to `max_in_flight` replays at once share the lanes.
    RlModeThroughput = 2,
}
