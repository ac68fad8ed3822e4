//! relaunch-hsa-sys: `#[repr(C)]` types and constants for the subset of the
//! HSA runtime API relaunch uses, and a function table filled at run time.
//! Must not depend on any other relaunch crate.
