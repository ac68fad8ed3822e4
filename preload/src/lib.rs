//! relaunch-hipgraph: `librelaunch_hipgraph.so`, the `LD_PRELOAD`
//! interposer. Every call goes to the real HIP first, so the application
//! only holds real handles; supported graphs then replay as retained PM4
//! through the `relaunch` facade and everything else falls through
//! unchanged.
//!
//! Three floors on one ground, each importing only the ones below it:
//! - `exports` (top): the exported HIP entry points (`hip*`,
//!   `__hipRegister*`) and the inspection API (`rl_hipgraph_*`).
//! - `state` (middle): the process-wide shadow record keyed by the real
//!   handles, the relaunch device, the registered fat binaries, the replay
//!   switch and launch totals.
//! - `model` (bottom): shadow modules and graphs, stream capture, event
//!   and ordering nodes, child graphs, kernel arguments, execs and their
//!   builds, stream-ordered launches and the watcher, memsets and memcpys
//!   as CP DMA ops, code objects behind a pointer, fat binaries, and the
//!   reasons things fall through. Testable without the exported doors.
//! - `hip` (ground): the HIP ABI slice and the real functions
//!   (`dlsym(RTLD_NEXT)`).
//!
//! `floors` (a test) checks that no file imports a floor above its own.
//! Refuses: panicking across the C boundary (a panic disables the shadow
//! and all later calls fall through). Must not import anything below the
//! facade except through `relaunch::` re-exports, and nothing may depend
//! on it (but the unshipped benchmarks, which time the model).

pub mod exports;
pub mod hip;
pub mod model;
pub mod state;

#[cfg(test)]
mod floors;
