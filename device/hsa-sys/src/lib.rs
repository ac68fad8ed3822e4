//! relaunch-hsa-sys: `#[repr(C)]` types and constants for the subset of the
//! HSA runtime API relaunch uses, and [`HsaApi`], a table of C function
//! pointers filled at run time.
//!
//! Owns: layouts and values restated from `hsa.h` / `hsa_ext_amd.h` (checked
//! against the installed headers by `tests/layout.rs`), the function table,
//! and loading it from `libhsa-runtime64` via libloading (no link-time
//! dependency on ROCm). Refuses: 32-bit or big-endian models, any wrapping
//! or policy (that lives in `relaunch-device`'s `hsa` module). Must not
//! import any other relaunch crate.
//!
//! Everything here is plain data except calling a table entry, which is
//! `unsafe` under the state and lifetime contract documented on [`HsaApi`].

#[cfg(not(all(target_pointer_width = "64", target_endian = "little")))]
compile_error!("relaunch-hsa-sys supports only the 64-bit little-endian HSA model");

pub mod api;
pub mod event;
pub mod handles;
pub mod info;
pub mod load;
pub mod packet;
pub mod status;

pub use api::{AgentCallback, HsaApi, MemoryPoolCallback, QueueErrorCallback};
pub use event::*;
pub use handles::*;
pub use info::*;
pub use load::{LoadError, LoadedHsa, DEFAULT_CANDIDATES, HSA_LIB_ENV, SIMULATED_MARKER};
pub use packet::*;
pub use status::*;
