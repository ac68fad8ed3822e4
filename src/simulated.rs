//! Opening the simulated device (`sim:<target>`): feature `sim`, on by
//! default. Without it a `sim:` selector, and the default device on a
//! machine without ROCm, fail naming the feature.

#[cfg(feature = "sim")]
mod with_sim {
    use std::sync::Arc;

    use relaunch_device::hsa::Runtime;
    use relaunch_device::identity::{self, HostContext, Inventory, Resolved};
    use relaunch_device::GfxTarget;

    use crate::error::{Error, Result};
    use crate::gpu::{runtime_agent_facts, Gpu};
    use crate::refusal::Refusal;

    impl Gpu {
        /// `open_sim` under `ctx`'s manifest: refused by target before the
        /// board exists, and again by the facts the opened board reports (its
        /// PCI address and UUID), so a `bdf:`/`uuid:` entry naming it holds too.
        pub(crate) fn open_sim_in(
            target: &GfxTarget,
            ctx: &HostContext,
            selector: &str,
        ) -> Result<Gpu> {
            let manifest = &ctx.manifest;
            identity::refuse_denied(&Resolved::Sim(target.clone()), manifest, selector, "")?;
            let family = target.family()?;
            let name = target.processor().to_string();
            relaunch_sim::hsa::add_gpu(relaunch_sim::SimConfig::new(&name))
                .map_err(|e| Error::from(e).context(format!("sim:{name}")))?;
            let runtime = Runtime::open(Arc::new(relaunch_sim::hsa::loaded()))
                .map_err(|e| Error::from(e).context(format!("sim:{name}")))?;
            let agent = runtime
                .gpus()
                .find(|a| a.name == name)
                .cloned()
                .ok_or_else(|| Refusal::SimAgentMissing { name: name.clone() })?;
            let facts = runtime_agent_facts(&runtime)
                .into_iter()
                .zip(runtime.gpus())
                .filter(|(_, a)| a.name == name)
                .map(|(facts, _)| facts)
                .collect();
            let boards = Inventory::from_agents(facts, &[], false)?;
            for board in boards.devices() {
                identity::refuse_denied(&Resolved::Device(board.clone()), manifest, selector, "")?;
            }
            let describe = format!("{name} sim:{name} (simulated {family} device)");
            Gpu::from_agent(runtime, agent, describe, true)
        }
    }
}

#[cfg(not(feature = "sim"))]
impl crate::gpu::Gpu {
    pub(crate) fn open_sim_in(
        _target: &relaunch_device::GfxTarget,
        _ctx: &relaunch_device::identity::HostContext,
        selector: &str,
    ) -> crate::error::Result<crate::gpu::Gpu> {
        Err(crate::refusal::Refusal::SimulatorNotBuilt {
            selector: selector.to_string(),
        }
        .into())
    }
}

/// Whether this build has the simulator (`sim:` devices).
pub(crate) const fn available() -> bool {
    cfg!(feature = "sim")
}
