//! relaunch-device: everything about one machine's AMD GPUs.
//!
//! Owns: AMDGPU code objects ([`codeobj`]: ELF, metadata, kernel
//! descriptors as read, certification; targets, families and the descriptor
//! layout are `relaunch-facts`': `Family`, `GfxTarget` and `TargetError` are
//! re-exported at the root), the HSA runtime seam ([`hsa`]: agents, pools, signals, AQL queues and executables
//! over `relaunch-hsa-sys`'s function table) and device identity
//! ([`identity`]: selectors, host manifest, deny list, sysfs) and
//! per-architecture kernel bundles ([`bundle`]: `.kpack` archives, their
//! manifests, verification), and the one way a file it is given is read
//! ([`file`]: regular files only, through a limit), and what becomes of the
//! reference system's environment variables ([`migration`]).
//! Refuses: anything outside RDNA1-4, code objects it cannot read completely,
//! denied devices. Must not depend on the encoders (which own the PM4
//! verdict), graph, scheduler or the simulated device: they all sit above
//! it.

pub mod bundle;
pub mod codeobj;
pub mod file;
pub mod hsa;
pub mod identity;
pub mod migration;

// The target vocabulary device users name (its home is relaunch-facts).
pub use relaunch_facts::{Family, GfxTarget, TargetError};
