//! The top floor: the exported HIP entry points (`#[no_mangle] extern
//! "C" fn hip*`, `__hipRegister*`) and the inspection API
//! (`rl_hipgraph_*`). Each forwards to the real function first and returns
//! its result unchanged; the shadow (`state`) is updated only when the
//! real call succeeded, through the model (`model`). `hipGraphLaunch`, the
//! one that replays instead of calling the real function, lives in
//! `launch`. Nothing below imports this floor.
//!
//! Signatures follow the public HIP headers (`hip_runtime_api.h`).

pub mod allocators;
pub mod capture;
pub mod graphs;
pub mod inspect;
pub mod launch;
pub mod modules;
pub mod mutate;
pub mod mutate_nodes;
pub mod nodes;
pub mod registry;
pub mod stream_transfers;

/// Calls the real function or returns the "not found" error.
macro_rules! forward {
    ($name:ident ( $($arg:expr),* )) => {
        match $crate::hip::real::$name() {
            // SAFETY: forwarded unchanged under the caller's HIP contract.
            Some(f) => unsafe { f($($arg),*) },
            None => return $crate::hip::HIP_ERROR_SYMBOL_NOT_FOUND,
        }
    };
}
pub(crate) use forward;
