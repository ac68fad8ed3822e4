//! AMDGPU HSA code objects: ELF container, metadata note, kernel descriptors
//! and the PM4 acceptance verdict.

pub mod descriptor;

pub use descriptor::KernelDescriptor;
pub mod verdict;

pub use verdict::{Refusal, Verdict};
