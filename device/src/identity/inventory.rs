//! The devices one can select: runtime agent facts (from the HSA layer or a
//! simulated device) joined with sysfs facts, or sysfs facts alone.

use std::collections::BTreeSet;

use super::anchor::{Bdf, GpuUuid};
use super::error::IdentityError;
use super::sysfs::KfdGpu;

/// What the runtime reports about one GPU agent. The HSA layer (or the
/// simulated device) fills this; identity never calls the runtime itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentFacts {
    /// Discovery order under the current visibility filter (volatile).
    pub rocr_index: usize,
    /// ISA name, e.g. `gfx1100`.
    pub name: String,
    /// Marketing name, e.g. `AMD Radeon RX 7900 XTX`.
    pub product: Option<String>,
    /// `None` when the runtime reports a placeholder (`GPU-XX`).
    pub uuid: Option<GpuUuid>,
    pub bdf: Option<Bdf>,
    /// The runtime reporting it is relaunch's simulator (in process, or
    /// loaded as the HSA library): `sim:` deny entries name such boards.
    pub simulated: bool,
}

/// Where an inventory's devices came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactSource {
    /// The runtime's agents, joined with sysfs.
    Runtime,
    /// sysfs alone; ROCr indices assumed to follow KFD node order.
    Sysfs,
}

/// One selectable GPU with every identity fact known about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceIdentity {
    pub rocr_index: usize,
    pub name: String,
    pub product: Option<String>,
    pub bdf: Option<Bdf>,
    pub uuid: Option<GpuUuid>,
    pub slot: Option<String>,
    pub card: Option<String>,
    pub kfd_node: Option<u32>,
    /// A simulated board (see `AgentFacts::simulated`).
    pub simulated: bool,
}

impl DeviceIdentity {
    /// The selector to copy into configuration: `uuid:` when the device has
    /// a real UUID, else `bdf:`; `None` when it has neither.
    pub fn anchor(&self) -> Option<String> {
        match (&self.uuid, &self.bdf) {
            (Some(uuid), _) => Some(format!("uuid:{uuid}")),
            (None, Some(bdf)) => Some(format!("bdf:{bdf}")),
            (None, None) => None,
        }
    }

    /// `gfx1100 0000:66:00.0 [uuid:GPU-…] slot=3 card0 kfd_node=1 rocr#0(volatile)`;
    /// parts the device does not have are left out.
    pub fn describe(&self) -> String {
        let mut parts = vec![self.name.clone()];
        if let Some(bdf) = &self.bdf {
            parts.push(bdf.to_string());
        }
        parts.push(match self.anchor() {
            Some(anchor) => format!("[{anchor}]"),
            None => "[no stable anchor]".to_string(),
        });
        if let Some(slot) = &self.slot {
            parts.push(format!("slot={slot}"));
        }
        if let Some(card) = &self.card {
            parts.push(card.clone());
        }
        if let Some(node) = self.kfd_node {
            parts.push(format!("kfd_node={node}"));
        }
        if self.simulated {
            parts.push("simulated".to_string());
        }
        parts.push(format!("rocr#{}(volatile)", self.rocr_index));
        parts.join(" ")
    }
}

/// The selectable devices of this process, ordered by ROCr index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inventory {
    devices: Vec<DeviceIdentity>,
    source: FactSource,
    has_slot_labels: bool,
}

impl Inventory {
    /// sysfs only: GPU nodes in KFD node order get ROCr indices 0, 1, …
    /// (what ROCr does without `ROCR_VISIBLE_DEVICES`).
    pub fn from_sysfs(gpus: &[KfdGpu], has_slot_labels: bool) -> Self {
        let devices = gpus
            .iter()
            .enumerate()
            .map(|(index, gpu)| DeviceIdentity {
                rocr_index: index,
                name: gpu.name.clone(),
                product: None,
                bdf: Some(gpu.bdf),
                uuid: gpu.uuid.clone(),
                slot: gpu.slot.clone(),
                card: gpu.card.clone(),
                kfd_node: Some(gpu.kfd_node),
                simulated: false,
            })
            .collect();
        Inventory {
            devices,
            source: FactSource::Sysfs,
            has_slot_labels,
        }
    }

    /// Runtime agents joined with sysfs by BDF (by UUID when an agent has no
    /// BDF). The agent's name and product win; a real UUID from either side
    /// is kept. sysfs GPUs without an agent are hidden from the runtime
    /// (visibility filter) and are not selectable.
    pub fn from_agents(
        agents: Vec<AgentFacts>,
        gpus: &[KfdGpu],
        has_slot_labels: bool,
    ) -> Result<Self, IdentityError> {
        let mut seen_index = BTreeSet::new();
        let mut seen_bdf = BTreeSet::new();
        let mut devices = Vec::with_capacity(agents.len());
        for agent in agents {
            if !seen_index.insert(agent.rocr_index) {
                return Err(IdentityError::Agents(format!(
                    "two agents report ROCr index {}",
                    agent.rocr_index
                )));
            }
            if let Some(bdf) = agent.bdf {
                if !seen_bdf.insert(bdf) {
                    return Err(IdentityError::Agents(format!(
                        "two agents report PCI address {bdf}"
                    )));
                }
            }
            let gpu = gpus.iter().find(|gpu| match (&agent.bdf, &agent.uuid) {
                (Some(bdf), _) => gpu.bdf == *bdf,
                (None, Some(uuid)) => gpu.uuid.as_ref() == Some(uuid),
                (None, None) => false,
            });
            if gpu.is_none() && !gpus.is_empty() {
                tracing::debug!(agent = %agent.name, index = agent.rocr_index, "agent has no sysfs node");
            }
            devices.push(DeviceIdentity {
                rocr_index: agent.rocr_index,
                name: agent.name,
                product: agent.product,
                bdf: agent.bdf.or(gpu.map(|g| g.bdf)),
                uuid: agent.uuid.or_else(|| gpu.and_then(|g| g.uuid.clone())),
                slot: gpu.and_then(|g| g.slot.clone()),
                card: gpu.and_then(|g| g.card.clone()),
                kfd_node: gpu.map(|g| g.kfd_node),
                simulated: agent.simulated,
            });
        }
        devices.sort_by_key(|d| d.rocr_index);
        Ok(Inventory {
            devices,
            source: FactSource::Runtime,
            has_slot_labels,
        })
    }

    pub fn devices(&self) -> &[DeviceIdentity] {
        &self.devices
    }

    pub fn source(&self) -> FactSource {
        self.source
    }

    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }

    /// Whether the host labels its PCI slots (so `slot:` can work at all).
    pub fn has_slot_labels(&self) -> bool {
        self.has_slot_labels
    }

    /// One `describe()` line per device, joined with `; `, for messages.
    pub fn summary(&self) -> String {
        if self.devices.is_empty() {
            return "no GPU agents on this host (use sim:<gfx target>, e.g. sim:gfx1201)"
                .to_string();
        }
        self.devices
            .iter()
            .map(DeviceIdentity::describe)
            .collect::<Vec<_>>()
            .join("; ")
    }
}
