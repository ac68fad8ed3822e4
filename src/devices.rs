//! The host's GPUs as `relaunch devices` and Python's `relaunch.devices()`
//! list them: from sysfs, then from the HSA runtime's agent list when sysfs
//! shows GPUs (initialising HSA opens no queue, so this is safe on a busy
//! machine), each with the deny entry that matches it, if any.

use relaunch_device::hsa::Runtime;
use relaunch_device::identity::{
    device_deny_match, DenyEntry, DeviceIdentity, FactSource, HostContext, Inventory,
};

use crate::error::{Error, Result};

/// One listed GPU and the deny entry that matches it.
#[derive(Debug, Clone)]
pub struct ListedDevice {
    pub identity: DeviceIdentity,
    pub denied: Option<DenyEntry>,
}

/// This host's GPUs, the context (manifest, sysfs root) they were read
/// with, and where the facts came from.
#[derive(Debug)]
pub struct HostDevices {
    pub context: HostContext,
    pub devices: Vec<ListedDevice>,
    pub source: FactSource,
    /// Why the runtime's agent list was not used, when sysfs shows GPUs
    /// but the runtime could not be opened.
    pub runtime_problem: Option<String>,
}

/// Lists the host's GPUs (see the module docs). `RELAUNCH_SYSFS_ROOT`
/// points at a fixture tree, which is then the only source.
pub fn host_devices() -> Result<HostDevices> {
    let context = HostContext::from_env()?;
    let sysfs = context.inventory(None)?;
    let mut runtime_problem = None;
    let inventory: Inventory =
        if sysfs.is_empty() || std::env::var_os("RELAUNCH_SYSFS_ROOT").is_some() {
            sysfs
        } else {
            match Runtime::open_system(None) {
                Ok(runtime) => context.inventory(Some(crate::runtime_agent_facts(&runtime)))?,
                Err(e) => {
                    runtime_problem = Some(e.to_string());
                    sysfs
                }
            }
        };
    let devices = inventory
        .devices()
        .iter()
        .map(|identity| {
            let denied = device_deny_match(identity, &context.manifest)
                .map_err(|e| Error::from(e).context("deny list"))?
                .cloned();
            Ok(ListedDevice {
                identity: identity.clone(),
                denied,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(HostDevices {
        source: inventory.source(),
        context,
        devices,
        runtime_problem,
    })
}
