//! How executable memory (for PM4 IBs) is asked of the runtime: with
//! `HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG`, and without it on a runtime that
//! refuses the flag, learned from the first refusal.
//!
//! Where execute permission comes from is the thunk's business, and it
//! changed once (ROCR-Runtime history, read at `github:ROCm/ROCR-Runtime`):
//! - until commit 75143555 (Aug 2024) the thunk (`libhsakmt`,
//!   `fmm_translate_hsa_to_ioc_flags`) mapped *every* allocation executable
//!   ("ROCr interfaces don't allow caller to set page permissions");
//! - commit d58c9dea (Oct 2024) made `hsa_amd_memory_pool_allocate` honour
//!   the executable flag, mapping it to the allocator ROCr uses for its own
//!   PM4 IBs (`AqlQueue::AqlQueue`: `AllocateExecutable`). Both first shipped
//!   together (neither is in rocm-6.2.4).
//!
//! Before that, ROCr either refuses any flag it does not know with
//! `HSA_STATUS_ERROR_INVALID_ARGUMENT` (5.2.3 refuses every non-zero flag,
//! 5.7-6.0 anything above the PCIe flag) or ignores the bit (6.1-6.2). A
//! runtime that ignores it runs on the old thunk, so its memory is
//! executable anyway; one that refuses it also does, so relaunch allocates
//! again without the flag. No build-version parsing: ROCr's
//! `HSA_AMD_SYSTEM_INFO_BUILD_VERSION` is its library version ("1.5.0" in
//! ROCm 5.2.3, "1.14" from 6.2 on, before and after the flag), which cannot
//! tell the two apart. The simulated GPU under `relaunch sim-rocm` follows
//! the same history (`kfd` maps every allocation executable, the CP refuses
//! IBs from memory without execute permission), and `relaunch selftest`
//! checks the outcome on hardware (docs/hardware-validation.md).

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether this runtime has refused the executable flag, learned once.
#[derive(Debug, Default)]
pub(crate) struct ExecFlag(AtomicBool);

impl ExecFlag {
    /// Whether to pass the flag: until the runtime has refused it once.
    pub(crate) fn ask(&self) -> bool {
        !self.0.load(Ordering::Relaxed)
    }

    /// The runtime refused the flag with INVALID_ARGUMENT (it predates it):
    /// from now on executable allocations go without it. Returns true the
    /// first time, so the caller says so once.
    pub(crate) fn refused(&self) -> bool {
        !self.0.swap(true, Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_is_asked_until_the_runtime_refuses_it_once() {
        let f = ExecFlag::default();
        assert!(f.ask());
        assert!(f.refused(), "the first refusal is reported");
        assert!(!f.refused(), "later ones are not");
        assert!(!f.ask());
    }
}
