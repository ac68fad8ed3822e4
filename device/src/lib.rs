//! relaunch-device: everything about one machine's AMD GPUs.
//!
//! Owns: GPU target names and families, AMDGPU code objects (ELF, metadata,
//! kernel descriptors, PM4 acceptance), and (later) the HSA runtime seam and
//! device identity. Refuses: anything outside RDNA1-4, code objects it cannot
//! read completely. Must not depend on the encoders, graph, scheduler or the
//! simulated device: they all sit above it.

pub mod codeobj;
pub mod hsa;
pub mod identity;
pub mod target;

pub use target::{Family, GfxTarget, TargetError};
