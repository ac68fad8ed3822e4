//! Device identity: sysfs enumeration, selectors, host manifest, deny list.
//!
//! Owns: the selector grammar (`uuid:`, `bdf:`, `slot:`, `name:`, `index:`,
//! `@alias`, `sim:`), read-only GPU enumeration from sysfs (KFD topology,
//! DRM cards, PCI slot labels), the join of runtime agent facts with sysfs,
//! the host manifest (aliases, deny list; which files apply: `sources`;
//! which host this is: `hostname`) and resolution of a selector to one
//! device with the deny check applied to the device found.
//! Refuses: unprefixed selectors, ambiguous `name:` matches, denied devices,
//! undefined or looping aliases, malformed manifests (named by file and line),
//! manifests owned by anyone but the user or root, non-regular files.
//! Must not import: the HSA runtime (`crate::hsa`); agent facts arrive as
//! plain `AgentFacts` values so the simulated device can supply them too.

mod anchor;
mod error;
mod hostname;
mod inventory;
mod manifest;
mod resolve;
mod selector;
mod sources;
mod sysfs;

pub use anchor::{gfx_name_from_target_version, Bdf, BdfForm, GpuUuid};
pub use error::{Denial, IdentityError, Origin};
pub use hostname::{
    hostname_from_env, machine_hostname, machine_names, machine_names_from, KERNEL_HOSTNAME,
    STATIC_HOSTNAME,
};
pub use inventory::{AgentFacts, DeviceIdentity, FactSource, Inventory};
pub use manifest::{AliasEntry, DenyEntry, HostManifest};
pub use resolve::{
    deny_match, device_deny_match, refuse_denied, resolve, resolve_str, Resolved, MAX_ALIAS_DEPTH,
};
pub use selector::{Selector, SelectorError, ACCEPTED_FORMS};
pub use sources::ManifestSources;
pub use sysfs::{has_slot_labels, kfd_nodes, parse_properties, scan, KfdGpu, KfdNode, SysfsRoot};

/// Everything identity knows about this host before the runtime is asked:
/// its name, its manifest, and its GPUs as sysfs shows them.
#[derive(Debug, Clone)]
pub struct HostContext {
    pub manifest: HostManifest,
    pub sysfs_root: SysfsRoot,
    pub gpus: Vec<KfdGpu>,
    pub has_slot_labels: bool,
}

impl HostContext {
    /// Gather from explicit sources (tests, embedders).
    pub fn load(
        sysfs_root: SysfsRoot,
        sources: &ManifestSources,
        host: &str,
    ) -> Result<Self, IdentityError> {
        HostContext::load_for(sysfs_root, sources, host, None)
    }

    /// As `load` for active host `host` on the machine named `machine`
    /// (whose own deny entries then apply too; see `HostManifest::load_for`).
    pub fn load_for(
        sysfs_root: SysfsRoot,
        sources: &ManifestSources,
        host: &str,
        machine: Option<&str>,
    ) -> Result<Self, IdentityError> {
        let names: Vec<String> = machine.into_iter().map(str::to_string).collect();
        HostContext::load_for_names(sysfs_root, sources, host, &names)
    }

    /// As `load` for active host `host` on the machine with these names.
    pub fn load_for_names(
        sysfs_root: SysfsRoot,
        sources: &ManifestSources,
        host: &str,
        machine: &[String],
    ) -> Result<Self, IdentityError> {
        let gpus = scan(&sysfs_root)?;
        let has_slot_labels = has_slot_labels(&sysfs_root)?;
        let manifest = HostManifest::load_for_names(sources, host, machine)?;
        Ok(HostContext {
            manifest,
            sysfs_root,
            gpus,
            has_slot_labels,
        })
    }

    /// Gather the way the library and CLI do: `RELAUNCH_SYSFS_ROOT`,
    /// `RELAUNCH_HOST` (else `REDLINE_HOST`, else the kernel host name), the
    /// standard manifest locations (relaunch's and the reference system's). An unknown host name is only an error when a manifest
    /// exists, since then its deny list could not be applied; the machine's
    /// own names (the kernel's and `/etc/hostname`) are needed then even
    /// with `RELAUNCH_HOST` set, because their deny entries stay in force
    /// whatever that says.
    pub fn from_env() -> Result<Self, IdentityError> {
        // Every device open and listing passes here: the place to say what
        // becomes of the reference system's variables.
        crate::migration::check_environment();
        let sources = ManifestSources::from_env();
        let machine = match machine_names() {
            Ok(names) => names,
            Err(e) if any_manifest_exists(&sources) => return Err(e),
            Err(e) => {
                tracing::debug!(error = %e, "machine name unknown; no manifest to apply");
                Vec::new()
            }
        };
        let host = match hostname_from_env() {
            Ok(host) => host,
            Err(_) => machine
                .first()
                .cloned()
                .unwrap_or_else(|| "unknown".to_string()),
        };
        Self::load_for_names(SysfsRoot::from_env(), &sources, &host, &machine)
    }

    /// The selectable devices: runtime agents joined with sysfs when the
    /// runtime is up, else sysfs alone.
    pub fn inventory(&self, agents: Option<Vec<AgentFacts>>) -> Result<Inventory, IdentityError> {
        match agents {
            Some(agents) => Inventory::from_agents(agents, &self.gpus, self.has_slot_labels),
            None => Ok(Inventory::from_sysfs(&self.gpus, self.has_slot_labels)),
        }
    }

    /// Resolve a selector against an inventory with this host's manifest.
    pub fn resolve(
        &self,
        selector: &str,
        inventory: &Inventory,
    ) -> Result<Resolved, IdentityError> {
        resolve_str(selector, inventory, &self.manifest)
    }
}

fn any_manifest_exists(sources: &ManifestSources) -> bool {
    sources.candidates().iter().any(|path| path.exists())
}
