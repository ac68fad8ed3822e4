//! `Gpu`: one opened device (real through the system HSA runtime, or
//! simulated), chosen by a stable selector, with its queue schedulers,
//! memory helpers and module loading.
//!
//! Selection: the selector is resolved against the host's devices and
//! manifest (`relaunch_device::identity`); the deny check runs on what was
//! found, so no form reaches a denied device. `sim:<target>` opens the
//! simulated device through the same HSA function table code.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use relaunch_device::hsa::{AgentInfo, AllocFlags, Allocation, Runtime};
use relaunch_device::identity::{self, AgentFacts, HostContext, IdentityError, Resolved};
use relaunch_device::{Family, GfxTarget};
use relaunch_facts::TargetFacts;
use relaunch_sched::hsa::{HsaBackend, HsaQueueOptions};
use relaunch_sched::scheduler::Scheduler;
use relaunch_sched::{ActorOptions, QueuePolicy};

use crate::error::{Error, Result};
use crate::refusal::Refusal;

/// Environment variable naming the default device selector.
pub const DEVICE_ENV: &str = "RELAUNCH_DEVICE";

/// Selector used when no real GPU is present and none was given.
pub const FALLBACK_SELECTOR: &str = "sim:gfx1201";

/// The scheduler type the facade uses (real HSA queues; the simulated
/// device is just another HSA table).
pub(crate) type HsaScheduler = Scheduler<HsaBackend>;

pub(crate) struct GpuInner {
    pub(crate) runtime: Runtime,
    pub(crate) agent: AgentInfo,
    pub(crate) target: GfxTarget,
    /// The target's facts row (what the encoder checks launches against).
    pub(crate) facts: &'static TargetFacts,
    pub(crate) simulated: bool,
    /// The runtime installed a trap handler for this GPU (ROCr's rule, see
    /// `relaunch_device::hsa::trap`): replayed dispatches then carry
    /// RSRC2.TRAP_PRESENT as the CP sets it for AQL dispatches.
    pub(crate) trap_handler: bool,
    describe: String,
    /// One scheduler per queue width asked for, created on first use and
    /// kept: queues are long-lived, never created per replay.
    schedulers: Mutex<HashMap<usize, Arc<HsaScheduler>>>,
    /// Live allocations, so IBs can keep alive what their kernargs use.
    pub(crate) allocations: crate::keepalive::Registry,
    /// Replays of IBs dropped while they ran (`settle`).
    pub(crate) unwaited: crate::settle::Unwaited,
    /// The hostcall service (device printf), started by the first install
    /// of a kernel that needs it.
    hostcall: Mutex<Option<Arc<crate::hostcall::Hostcall>>>,
    /// Where that service's printf output goes.
    printf_output: Arc<Mutex<crate::hostcall::PrintfOutput>>,
}

/// An opened GPU. Cheap to clone; everything made from it (modules, IBs,
/// memory) keeps it alive.
#[derive(Clone)]
pub struct Gpu {
    pub(crate) inner: Arc<GpuInner>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("device", &self.inner.describe)
            .finish()
    }
}

impl Gpu {
    /// Opens the device a selector names (`uuid:`, `bdf:`, `slot:`,
    /// `name:`, `index:`, `@alias`, `sim:<target>`).
    pub fn open(selector: &str) -> Result<Gpu> {
        let ctx = HostContext::from_env()?;
        // A sysfs-only pass tells a simulated request (also via an alias)
        // apart without touching the real runtime.
        let sysfs = ctx.inventory(None)?;
        match ctx.resolve(selector, &sysfs) {
            Ok(Resolved::Sim(target)) => return Gpu::open_sim_in(&target, &ctx, selector),
            Ok(Resolved::Device(_)) => {}
            // Which device matches is only known with the runtime's agents.
            Err(IdentityError::NoMatch { .. } | IdentityError::NoSlotLabels { .. }) => {}
            // Malformed selectors, denied devices, alias problems, and
            // ambiguity stay errors whatever the runtime would say.
            Err(e) => return Err(e.into()),
        }
        let runtime = Runtime::open_system(None).map_err(|e| {
            Error::from(e)
                .hint(format!(
                    "on a machine without an AMD GPU use sim:<target>, e.g. {FALLBACK_SELECTOR}"
                ))
                .context(format!("cannot open {selector:?}"))
        })?;
        Gpu::open_on(runtime, &ctx, selector)
    }

    /// Opens `RELAUNCH_DEVICE` if set, else the first real GPU. Falls back
    /// to the simulated `gfx1201` only when there is no ROCm runtime (no
    /// HSA library, or no `/dev/kfd`); a host with ROCr and an unusable GPU
    /// (permission on `/dev/kfd`, `hsa_init` failing or hanging, a first
    /// GPU that is not RDNA, a denied one) fails with the reason.
    pub fn open_default() -> Result<Gpu> {
        if let Ok(selector) = std::env::var(DEVICE_ENV) {
            if !selector.trim().is_empty() {
                return Gpu::open(selector.trim());
            }
        }
        let Some(runtime) = crate::fallback::system_runtime()? else {
            if !crate::simulated::available() {
                return Err(Refusal::NoRuntimeNoSimulator.into());
            }
            return Gpu::open(FALLBACK_SELECTOR);
        };
        let ctx = HostContext::from_env()?;
        let first = runtime.gpus().next().map(|g| g.name.clone());
        let found = Gpu::resolve_on(&runtime, &ctx, "index:0")?;
        Gpu::open_resolved(runtime, &ctx, "index:0", found).map_err(|e| {
            e.context(format!(
                "the first GPU ({}) cannot be used by relaunch (it runs on RDNA GPUs, \
                 gfx10-gfx12); choose another with --device or RELAUNCH_DEVICE, or \
                 sim:<target> for the simulator",
                first.as_deref().unwrap_or("none")
            ))
        })
    }

    /// Opens the volatile index form (`rl_gpu_new`).
    pub fn open_index(ordinal: i32) -> Result<Gpu> {
        if ordinal < 0 {
            return Err(Refusal::NegativeOrdinal { ordinal }.into());
        }
        Gpu::open(&format!("index:{ordinal}"))
    }

    /// Resolves `selector` among `runtime`'s GPU agents (joined with sysfs
    /// facts) and opens the one found.
    pub fn open_on(runtime: Runtime, ctx: &HostContext, selector: &str) -> Result<Gpu> {
        let found = Gpu::resolve_on(&runtime, ctx, selector)?;
        Gpu::open_resolved(runtime, ctx, selector, found)
    }

    fn resolve_on(
        runtime: &Runtime,
        ctx: &HostContext,
        selector: &str,
    ) -> Result<Resolved, IdentityError> {
        let inventory = ctx.inventory(Some(runtime_agent_facts(runtime)))?;
        ctx.resolve(selector, &inventory)
    }

    fn open_resolved(
        runtime: Runtime,
        ctx: &HostContext,
        selector: &str,
        found: Resolved,
    ) -> Result<Gpu> {
        match found {
            Resolved::Sim(target) => Gpu::open_sim_in(&target, ctx, selector),
            Resolved::Device(found) => {
                let agent = runtime
                    .gpus()
                    .nth(found.rocr_index)
                    .cloned()
                    .ok_or_else(|| Refusal::NoRuntimeAgent {
                        device: found.describe(),
                    })?;
                let simulated = runtime.is_simulated();
                Gpu::from_agent(runtime, agent, found.describe(), simulated)
            }
        }
    }

    /// Opens the simulated device for `target` (in process). The host's
    /// deny list applies as it does to `open("sim:<target>")`.
    pub fn open_sim(target: &GfxTarget) -> Result<Gpu> {
        let ctx = HostContext::from_env()?;
        Gpu::open_sim_in(target, &ctx, &format!("sim:{target}"))
    }

    pub(crate) fn from_agent(
        runtime: Runtime,
        agent: AgentInfo,
        describe: String,
        simulated: bool,
    ) -> Result<Gpu> {
        let target = GfxTarget::parse(&agent.name)?;
        let facts = target.facts()?;
        Ok(Gpu {
            inner: Arc::new(GpuInner {
                trap_handler: runtime.trap_handler(&agent, facts.family),
                runtime,
                agent,
                target,
                facts,
                simulated,
                describe,
                schedulers: Mutex::new(HashMap::new()),
                allocations: crate::keepalive::Registry::default(),
                unwaited: crate::settle::Unwaited::default(),
                hostcall: Mutex::new(None),
                printf_output: Arc::default(),
            }),
        })
    }

    /// One line naming the device by its stable anchors.
    pub fn describe(&self) -> &str {
        &self.inner.describe
    }

    /// The PCI address the runtime reports for the device (simulated ones
    /// have one too: the k-th simulated gfxNNNN at `NNNN:(e0+k):00.0`);
    /// `None` if it reports none.
    pub fn pci_address(&self) -> Option<relaunch_device::identity::Bdf> {
        self.inner.agent.bdf
    }

    /// The GPU target, e.g. `gfx1201`.
    pub fn target(&self) -> &GfxTarget {
        &self.inner.target
    }

    pub fn family(&self) -> Family {
        self.inner.facts.family
    }

    /// The target's facts row (family, limits, queue width, ...).
    pub fn facts(&self) -> &'static TargetFacts {
        self.inner.facts
    }

    /// True on the simulated device.
    pub fn is_simulated(&self) -> bool {
        self.inner.simulated
    }

    /// Queues to use for `independent_width` independent lanes under
    /// `policy` (Auto: the per-family width that held up on hardware).
    pub fn pm4_queue_count(&self, policy: QueuePolicy, independent_width: usize) -> usize {
        relaunch_sched::queue_count(self.inner.target.processor(), policy, independent_width)
    }

    /// The scheduler with `queues` queues (created once, then reused).
    /// Callers ask for a count the queue policy gave
    /// ([`Gpu::pm4_queue_count`]) or for one queue.
    pub(crate) fn scheduler(&self, queues: usize) -> Result<Arc<HsaScheduler>> {
        let mut all = self.inner.schedulers.lock();
        if let Some(s) = all.get(&queues) {
            return Ok(Arc::clone(s));
        }
        let scheduler = Scheduler::open_hsa(
            &self.inner.runtime,
            &self.inner.agent,
            queues,
            HsaQueueOptions::default(),
            ActorOptions::default(),
        )
        .map_err(|e| Error::Queues(e).context(format!("creating {queues} queue(s)")))?;
        let scheduler = Arc::new(scheduler);
        all.insert(queues, Arc::clone(&scheduler));
        Ok(scheduler)
    }

    /// Where device printf output of kernels on this GPU goes from now on
    /// (default: the process's stdout, as HIP). Kernels using printf run
    /// on the public-AQL path (see `GraphExec::lane_submissions`).
    pub fn set_printf_output(&self, output: crate::hostcall::PrintfOutput) {
        *self.inner.printf_output.lock() = output;
    }

    /// Captures device printf output from now on and returns the capture
    /// (for tests and tools): `set_printf_output(PrintfOutput::Capture(..))`.
    pub fn capture_printf(&self) -> crate::hostcall::PrintfCapture {
        let capture = crate::hostcall::PrintfCapture::default();
        self.set_printf_output(crate::hostcall::PrintfOutput::Capture(capture.clone()));
        capture
    }

    /// This GPU's hostcall service, started on first use.
    pub(crate) fn hostcall(&self) -> Result<Arc<crate::hostcall::Hostcall>> {
        let mut slot = self.inner.hostcall.lock();
        if let Some(h) = slot.as_ref() {
            return Ok(Arc::clone(h));
        }
        let h = Arc::new(crate::hostcall::Hostcall::start(
            &self.inner.runtime,
            &self.inner.agent,
            Arc::clone(&self.inner.printf_output),
        )?);
        *slot = Some(Arc::clone(&h));
        Ok(h)
    }

    /// Packets of kernels on this GPU that asked for a hostcall service
    /// relaunch does not serve (answered with -1, logged, and reported by
    /// the next graph launch); 0 before any kernel used hostcall.
    pub fn hostcall_unknown_services(&self) -> u64 {
        self.inner
            .hostcall
            .lock()
            .as_ref()
            .map_or(0, |h| h.unknown_services())
    }

    /// Zero-filled memory the GPU can use. `host_visible`: fine-grained host
    /// memory (readable and writable from the host); else device-local.
    pub fn alloc(&self, bytes: usize, host_visible: bool) -> Result<DeviceBuffer> {
        if bytes == 0 {
            return Err(Refusal::ZeroAllocation.into());
        }
        let rt = &self.inner.runtime;
        let pool = if host_visible {
            rt.host_fine_grained_pool()
        } else {
            rt.device_pool(&self.inner.agent)
        }?;
        let mut mem = rt
            .allocate(&pool, bytes, AllocFlags { executable: false })
            .map_err(|e| Error::from(e).context(format!("allocating {bytes} bytes")))?;
        if host_visible {
            mem.allow_access(&[&self.inner.agent])?;
            mem.write(0, &vec![0; bytes])?;
        } else if mem.host_accessible() {
            mem.write(0, &vec![0; bytes])?;
        } else {
            mem.fill_zero()?;
        }
        let addr = mem.addr();
        let held = Arc::new(crate::keepalive::Held {
            mem: Mutex::new(mem),
        });
        self.inner.allocations.register(addr, bytes, &held);
        Ok(DeviceBuffer {
            _gpu: self.clone(),
            mem: held,
            len: bytes,
        })
    }
}

/// Memory allocated through a `Gpu`; freed when it and every IB whose
/// kernargs point into it have dropped (`keepalive`). Keeps its GPU alive.
pub struct DeviceBuffer {
    _gpu: Gpu,
    mem: Arc<crate::keepalive::Held>,
    len: usize,
}

impl DeviceBuffer {
    /// The GPU virtual address (put it in kernargs).
    pub fn address(&self) -> u64 {
        self.mem.mem.lock().addr()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies `dst.len()` bytes at `offset` to the host. Do not read while a
    /// replay that writes this memory is in flight.
    /// Device-local memory goes through the runtime's copy (a blit on the
    /// GPU), refused at once when the GPU is lost.
    pub fn read(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        let mem = self.mem.mem.lock();
        self.check_copy(&mem)?;
        mem.read(offset, dst).map_err(Error::Copy)
    }

    /// Copies `src` into the buffer at `offset` (device-local memory through
    /// the runtime's copy, as for `read`).
    pub fn write(&self, offset: usize, src: &[u8]) -> Result<()> {
        let mut mem = self.mem.mem.lock();
        self.check_copy(&mem)?;
        mem.write(offset, src).map_err(Error::Copy)
    }

    /// A runtime copy would run on a lost GPU's stopped queues and hang.
    fn check_copy(&self, mem: &Allocation) -> Result<()> {
        if mem.host_accessible() {
            return Ok(());
        }
        let inner = &self._gpu.inner;
        inner
            .runtime
            .check_device(&inner.agent, "before a copy to or from device memory")
            .map_err(Error::Copy)
    }

    /// The host address of the whole buffer when it is host-visible (for
    /// zero-copy views such as Python's buffer protocol), else `None`. Valid
    /// while the buffer lives; accesses must not overlap a replay that
    /// uses this memory (as with `read`/`write`).
    pub fn host_ptr(&self) -> Option<*mut u8> {
        self.mem.mem.lock().host_ptr(0, self.len).ok()
    }

    /// Reads the little-endian u32 at `offset`.
    pub fn read_u32(&self, offset: usize) -> Result<u32> {
        let mut b = [0u8; 4];
        self.read(offset, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }
}

/// What `runtime` says about each GPU agent, in its (volatile) order: the
/// input identity joins with sysfs.
pub fn runtime_agent_facts(runtime: &Runtime) -> Vec<AgentFacts> {
    let simulated = runtime.is_simulated();
    runtime
        .gpus()
        .enumerate()
        .map(|(i, a)| agent_facts(i, a, simulated))
        .collect()
}

fn agent_facts(index: usize, agent: &AgentInfo, simulated: bool) -> AgentFacts {
    AgentFacts {
        rocr_index: index,
        name: agent.name.clone(),
        product: agent.product_name.clone(),
        uuid: agent
            .uuid
            .as_deref()
            .and_then(identity::GpuUuid::from_reported),
        bdf: agent.bdf,
        simulated,
    }
}
