//! How executable memory (for PM4 IBs) is asked of the runtime, decided
//! once per runtime from its build version.
//!
//! What ROCr's source shows (ROCR-Runtime, `hsa_ext_amd.cpp`,
//! `hsa_amd_memory_pool_allocate`):
//! - recent ROCr (e.g. commit 4b99a812) maps `HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG`
//!   to `core::MemoryRegion::AllocateExecutable`, the flag ROCr's own queues
//!   use for their PM4 IBs (`amd_aql_queue.cpp`, `AqlQueue::AqlQueue`:
//!   `pm4_ib_buf_ = system_allocator()(pm4_ib_size_b_, 0x1000,
//!   AllocateExecutable)`);
//! - older ROCr (commits b507d85, 02666ec) refuses any `flags != 0` with
//!   `HSA_STATUS_ERROR_INVALID_ARGUMENT`, and the oldest (092d630) ignores
//!   the flags; both allocate with `AllocateRestrict` only.
//!
//! No other public entry point reaches `AllocateExecutable`:
//! `system_allocator` is internal, and `hsa_memory_allocate` /
//! `hsa_amd_memory_pool_allocate` without the flag allocate with
//! `AllocateRestrict`. So on an older runtime relaunch refuses to install
//! IBs, unless the user verified (`scripts/first-contact`) that their GPU
//! fetches IBs from memory mapped without execute permission.

/// The first ROCm release whose ROCr honours the executable pool flag: the
/// issue's "late 2024" (ROCm 6.3, December 2024). The ROCr sources readable
/// here show the mapping, not the release that first shipped it; confirm
/// on hardware (docs/hardware-validation.md).
pub const MIN_EXEC_FLAG_ROCM: (u32, u32) = (6, 3);

/// Set to `1` to install IBs in ordinary (non-executable) memory on a
/// runtime that does not honour the executable flag.
pub const NONEXEC_IB_ENV: &str = "RELAUNCH_ALLOW_NONEXEC_IB";

/// How an allocation that must be executable is requested.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ExecMemory {
    /// The runtime honours `HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG`.
    Flag,
    /// Plain memory, as the user allowed with [`NONEXEC_IB_ENV`] (an older
    /// runtime would refuse the flag).
    Plain,
    /// Refused: the reason names the version, the minimum and the override.
    Refused(String),
}

impl ExecMemory {
    /// The choice for a runtime reporting `build_version`; `allow_plain`
    /// is [`NONEXEC_IB_ENV`] set to `1`.
    pub(crate) fn decide(build_version: Option<&str>, allow_plain: bool) -> ExecMemory {
        let version = build_version.and_then(rocm_version);
        if version.is_some_and(|v| v >= MIN_EXEC_FLAG_ROCM) {
            return ExecMemory::Flag;
        }
        if allow_plain {
            tracing::warn!(
                build = build_version.unwrap_or("unknown"),
                "{NONEXEC_IB_ENV}=1: IBs go to memory without execute permission"
            );
            return ExecMemory::Plain;
        }
        let (major, minor) = MIN_EXEC_FLAG_ROCM;
        let seen = match (build_version, version) {
            (Some(text), Some(_)) => format!("HSA runtime {text:?}"),
            (Some(text), None) => format!("an HSA runtime of unrecognised version {text:?}"),
            (None, _) => "an HSA runtime that reports no build version".to_string(),
        };
        ExecMemory::Refused(format!(
            "{seen} does not map HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG to executable memory \
             (ROCm {major}.{minor} or later does), so IBs cannot be placed where ROCr places its \
             own; upgrade ROCm, or, if scripts/first-contact showed that this GPU fetches IBs \
             from non-executable memory, set {NONEXEC_IB_ENV}=1"
        ))
    }

    /// [`ExecMemory::decide`] with the override read from the environment.
    pub(crate) fn from_env(build_version: Option<&str>) -> ExecMemory {
        let allow = std::env::var(NONEXEC_IB_ENV).is_ok_and(|v| v.trim() == "1");
        ExecMemory::decide(build_version, allow)
    }
}

/// `(major, minor)` of a ROCr build id such as "6.2.41133-dd7f95766".
fn rocm_version(build: &str) -> Option<(u32, u32)> {
    let mut parts = build.trim().split(['.', '-']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_from_rocr_build_ids() {
        assert_eq!(rocm_version("6.2.41133-dd7f95766"), Some((6, 2)));
        assert_eq!(rocm_version("6.4.0"), Some((6, 4)));
        assert_eq!(rocm_version("7.0"), Some((7, 0)));
        assert_eq!(rocm_version("relaunch-sim"), None);
        assert_eq!(rocm_version(""), None);
    }

    #[test]
    fn recent_runtimes_use_the_flag_and_old_ones_are_refused_by_name() {
        assert_eq!(
            ExecMemory::decide(Some("6.3.42131-x"), false),
            ExecMemory::Flag
        );
        assert_eq!(ExecMemory::decide(Some("7.1.0"), false), ExecMemory::Flag);
        let ExecMemory::Refused(why) = ExecMemory::decide(Some("6.2.41133-abc"), false) else {
            panic!("6.2 must be refused");
        };
        assert!(why.contains("\"6.2.41133-abc\""), "{why}");
        assert!(why.contains("ROCm 6.3 or later"), "{why}");
        assert!(why.contains(NONEXEC_IB_ENV), "{why}");
        let ExecMemory::Refused(why) = ExecMemory::decide(None, false) else {
            panic!("no version must be refused");
        };
        assert!(why.contains("reports no build version"), "{why}");
        assert_eq!(ExecMemory::decide(Some("5.7.1"), true), ExecMemory::Plain);
        assert_eq!(ExecMemory::decide(None, true), ExecMemory::Plain);
    }
}
