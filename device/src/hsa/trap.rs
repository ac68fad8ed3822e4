//! Whether the runtime installed a trap handler for a GPU, decided as ROCr
//! decides it, so the direct PM4 path sets COMPUTE_PGM_RSRC2.TRAP_PRESENT
//! exactly when the CP would for an AQL dispatch of the same kernel.
//!
//! ROCr (`GpuAgent::BindTrapHandler`, amd_gpu_agent.cpp) installs the
//! exception-reporting handler when the kernel driver supports exception
//! debugging (`KfdVersion().supports_exception_debugging`); without that it
//! installs the legacy handler on gfx10 only (none on gfx11 and later).
//! The thunk (`hsaKmtCheckRuntimeDebugSupport`) reports that support when
//! every GPU node's topology capability has DebugSupportedFirmware (bit 29)
//! and the KFD interface is at least 1.13; the bit was reserved (read 0)
//! before the debugger interface of KFD 1.13 defined it, so the capability
//! alone is read here: `/sys/class/kfd/kfd/topology/nodes/*/properties`,
//! the file the thunk parses, through identity's topology reader. The simulator answers through a
//! relaunch-private agent attribute instead.

use std::path::Path;

use relaunch_facts::Family;
use relaunch_hsa_sys as sys;

use super::agent::AgentInfo;
use super::runtime::RuntimeInner;

/// `HSA_CAPABILITY.DebugSupportedFirmware` in a KFD topology node's
/// `capability` (hsakmttypes.h; `HSA_CAP_TRAP_DEBUG_FIRMWARE_SUPPORTED`).
pub const CAP_DEBUG_SUPPORTED_FIRMWARE: u32 = 1 << 29;

/// Where the KFD topology lives; `RELAUNCH_KFD_TOPOLOGY` points elsewhere
/// (tests, containers with a copied tree).
pub const KFD_TOPOLOGY: &str = "/sys/class/kfd/kfd/topology/nodes";

pub use sys::RELAUNCH_SIM_AGENT_INFO_TRAP_HANDLER as SIM_AGENT_INFO_TRAP_HANDLER;

/// Does ROCr install a trap handler on a GPU of `family`, given whether
/// the kernel driver supports exception debugging?
pub const fn rocr_installs_trap_handler(family: Family, exception_debugging: bool) -> bool {
    // Without exception debugging, the legacy handler where the family has one.
    exception_debugging || family.facts().runtime.legacy_trap_handler
}

/// True when every GPU node of the KFD topology under `nodes` reports
/// DebugSupportedFirmware (CPU nodes, with no SIMDs, are skipped as the
/// thunk skips them). The nodes are read by identity's one topology reader.
pub fn kfd_exception_debugging(nodes: &Path) -> Result<bool, String> {
    let nodes_read = crate::identity::kfd_nodes(nodes).map_err(|e| e.to_string())?;
    let mut gpus = 0;
    for node in nodes_read.iter().filter(|n| n.is_gpu()) {
        gpus += 1;
        let capability = node.props.get("capability").copied().ok_or_else(|| {
            format!(
                "{} has no capability line",
                node.dir.join("properties").display()
            )
        })?;
        if capability as u32 & CAP_DEBUG_SUPPORTED_FIRMWARE == 0 {
            return Ok(false);
        }
    }
    if gpus == 0 {
        return Err(format!("no GPU node under {}", nodes.display()));
    }
    Ok(true)
}

/// The runtime's trap-handler state for `gpu` of `family`.
pub(crate) fn installed(inner: &RuntimeInner, gpu: &AgentInfo, family: Family) -> bool {
    if inner.hsa.simulated {
        let mut value = 1u8;
        // SAFETY: live agent of this table; the attribute writes one byte.
        let status = unsafe {
            (inner.api().agent_get_info)(
                gpu.handle,
                SIM_AGENT_INFO_TRAP_HANDLER,
                (&mut value as *mut u8).cast(),
            )
        };
        if status == sys::HSA_STATUS_SUCCESS {
            return value != 0;
        }
        tracing::warn!(gpu = %gpu.name, "the simulator did not say whether it has a trap handler; assuming it has");
        return true;
    }
    let nodes = std::env::var_os("RELAUNCH_KFD_TOPOLOGY")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| KFD_TOPOLOGY.into());
    let debugging = match kfd_exception_debugging(&nodes) {
        Ok(d) => d,
        Err(why) => {
            // ROCr reads the same tree, so this is unusual; current drivers
            // support exception debugging, so assume them.
            tracing::warn!(%why, "KFD topology unreadable; assuming the driver supports exception debugging");
            true
        }
    };
    rocr_installs_trap_handler(family, debugging)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Tree(std::path::PathBuf);
    impl Tree {
        fn path(&self) -> &Path {
            &self.0
        }
    }
    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn tree(nodes: &[(u64, u64)]) -> Tree {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = Tree(std::env::temp_dir().join(format!(
            "relaunch-kfd-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        )));
        std::fs::create_dir_all(dir.path()).unwrap();
        for (i, (simds, cap)) in nodes.iter().enumerate() {
            let n = dir.path().join(i.to_string());
            std::fs::create_dir(&n).unwrap();
            std::fs::write(
                n.join("properties"),
                format!("cpu_cores_count 0\nsimd_count {simds}\ncapability {cap}\n"),
            )
            .unwrap();
        }
        dir
    }

    #[test]
    fn every_gpu_node_needs_the_firmware_bit_and_cpu_nodes_are_skipped() {
        let bit = u64::from(CAP_DEBUG_SUPPORTED_FIRMWARE);
        let d = tree(&[(0, 0), (96, bit | 0x4000), (96, bit)]);
        assert_eq!(kfd_exception_debugging(d.path()), Ok(true));
        let d = tree(&[(0, 0), (96, bit), (96, 0x4000)]);
        assert_eq!(kfd_exception_debugging(d.path()), Ok(false));
        let d = tree(&[(0, 0)]);
        assert!(kfd_exception_debugging(d.path())
            .unwrap_err()
            .contains("no GPU node"));
        assert!(kfd_exception_debugging(Path::new("/nonexistent/kfd")).is_err());
    }

    #[test]
    fn rocr_rule_by_family() {
        assert!(rocr_installs_trap_handler(Family::Gfx10, false));
        assert!(rocr_installs_trap_handler(Family::Gfx10, true));
        assert!(!rocr_installs_trap_handler(Family::Gfx11, false));
        assert!(rocr_installs_trap_handler(Family::Gfx11, true));
        assert!(!rocr_installs_trap_handler(Family::Gfx12, false));
    }
}
