//! Direct retained PM4: `Pm4Builder` records dispatches and boundaries,
//! `Gpu::finalize` installs the IB on a queue actor, `Pm4Ib` replays it and
//! patches kernargs in place. `Gpu::finalize_multi` installs several
//! independent builders as lanes on the family's queue width.

use std::time::Duration;

use relaunch_encoders::{BoundaryKind, EncodeOptions, IbBuilder, KernelCode, Launch};
use relaunch_sched::hsa::{HsaBackend, HsaWatch};
use relaunch_sched::scheduler::{LaneProgram, MultiIb};
use relaunch_sched::{Completion, IbHandle, QueuePolicy};

use crate::error::{Error, Result};
use crate::gpu::{Gpu, HsaScheduler};
use crate::keepalive::KeptAlive;
use crate::module::Module;
use crate::refusal::Refusal;

/// How long a synchronous replay waits before reporting a timeout.
pub const REPLAY_TIMEOUT: Duration = Duration::from_secs(60);

/// Refuses `what` (a replay or patch) when called from inside a simulated
/// kernel's twin: the twin runs on the queue thread the call would wait
/// for, so it would hang until the replay timeout.
pub fn refuse_inside_twin(what: &str) -> Result<()> {
    // Without the simulator there are no twins.
    if inside_twin() {
        return Err(Refusal::InsideTwin {
            call: what.to_string(),
        }
        .into());
    }
    Ok(())
}

#[cfg(feature = "sim")]
fn inside_twin() -> bool {
    relaunch_sim::twins::inside_twin()
}

#[cfg(not(feature = "sim"))]
fn inside_twin() -> bool {
    false
}

/// Records one IB's dispatches. Consumed by `Gpu::finalize`.
pub struct Pm4Builder {
    gpu: Gpu,
    builder: IbBuilder,
    /// Modules used, kept alive as long as the IB.
    modules: Vec<Module>,
    /// Allocations the kernargs point into, kept alive as long as the IB.
    kept: KeptAlive,
}

impl Gpu {
    /// A builder with default options (every dispatch keeps its own
    /// patchable kernarg block).
    pub fn builder(&self) -> Pm4Builder {
        self.builder_with(EncodeOptions::default())
    }

    /// A builder with `options`; whether dispatches carry TRAP_PRESENT is
    /// the runtime's fact (it installed a trap handler or not), not an
    /// option, so it is set from this GPU whatever `options` say.
    pub fn builder_with(&self, mut options: EncodeOptions) -> Pm4Builder {
        options.trap_handler = self.inner.trap_handler;
        Pm4Builder {
            gpu: self.clone(),
            builder: IbBuilder::for_target(self.facts(), options),
            modules: Vec::new(),
            kept: KeptAlive::default(),
        }
    }
}

impl Pm4Builder {
    /// Records a dispatch of `symbol` (grid and block in work-items).
    pub fn dispatch(
        &mut self,
        module: &Module,
        symbol: &str,
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_group_bytes: u32,
        kernarg: &[u8],
    ) -> Result<usize> {
        let on_this = module
            .gpu()
            .is_some_and(|gpu| std::sync::Arc::ptr_eq(&gpu.inner, &self.gpu.inner));
        if !on_this {
            return Err(if module.is_hip() {
                Refusal::HipModuleInPm4
            } else {
                Refusal::ModuleOnOtherGpu
            }
            .into());
        }
        let kernel = module.kernel(symbol)?;
        let code = KernelCode {
            symbol: &kernel.info.name,
            family: self.gpu.family(),
            descriptor: kernel.info.descriptor,
            kd_address: kernel.kd_address,
            unread: kernel.info.unread,
        };
        let launch = Launch {
            grid,
            block,
            dynamic_group_bytes,
        };
        let geometry = crate::Geometry {
            grid,
            block,
            dynamic_group_bytes,
        };
        let kernarg = crate::kernargs::complete(&kernel.info, kernarg, &geometry)?;
        let id = self
            .builder
            .dispatch(&code, &launch, &kernarg, kernel.info.kernarg_align)?;
        self.kept.record(
            &self.gpu.inner.allocations,
            id as usize,
            &kernel.info,
            &kernarg,
        );
        if !self.modules.iter().any(|m| m.same_as(module)) {
            self.modules.push(module.clone());
        }
        Ok(id as usize)
    }

    /// Read-after-write boundary before the next dispatch: `rmw_vmem` when
    /// `consumer` is proven VMEM-only, else the generic K$/V$/GL1
    /// invalidate (`rmw`).
    pub fn wait_rmw(&mut self, consumer: Option<(&Module, &str)>) -> Result<()> {
        let mut kind = BoundaryKind::Rmw;
        if let Some((module, symbol)) = consumer {
            module.kernel(symbol)?;
            // A consumer proven VMEM-only keeps K$ (GCR 0x300).
            if module.read_cache(symbol) == crate::ReadCache::VmemOnly {
                kind = BoundaryKind::RmwVmem;
            }
        }
        self.builder.boundary(kind);
        Ok(())
    }

    /// Wait for everything before to finish (no cache invalidation): for
    /// write-after-read and write-after-write ordering.
    pub fn wait_idle(&mut self) {
        self.builder.boundary(BoundaryKind::Wait);
    }

    /// Dispatches recorded so far.
    pub fn dispatch_count(&self) -> usize {
        self.builder.dispatch_count()
    }

    fn work(&self) -> u64 {
        self.builder.dwords() as u64
    }
}

/// A retained IB installed on one queue.
pub struct Pm4Ib {
    handle: IbHandle<HsaBackend>,
    gpu: Gpu,
    kept: KeptAlive,
    _scheduler: std::sync::Arc<HsaScheduler>,
    _modules: Vec<Module>,
    dispatches: usize,
    dwords: usize,
    /// Timestamp memory and the last times read, when finalized profiled.
    profile: Option<crate::profile::Profiled>,
    /// The last replay submitted: dropping the IB while it runs hands the
    /// modules to `settle` until it settled (their code must outlive it).
    last: parking_lot::Mutex<Option<Completion<HsaWatch>>>,
}

impl Drop for Pm4Ib {
    fn drop(&mut self) {
        let modules = std::mem::take(&mut self._modules);
        if let Some(last) = self.last.get_mut().take() {
            // The kernargs' allocations too: the running replay writes them.
            let kept = std::mem::take(&mut self.kept);
            crate::settle::until_settled(&self.gpu, vec![last], (kept, modules));
        }
    }
}

/// A submitted replay; wait for it before reading results.
pub struct Replay {
    pub(crate) completion: Completion<HsaWatch>,
}

impl Replay {
    /// Waits up to `timeout`; on a timeout the replay keeps running (wait
    /// again, or give it up with [`Replay::wait_or_abandon`]).
    pub fn wait(&self, timeout: Duration) -> Result<()> {
        self.completion.wait(timeout).map_err(Error::Replay)
    }

    /// Waits up to `timeout` and treats a replay still running then as hung
    /// (the timeout contract, docs/architecture.md): its queue is stopped,
    /// so it changes no memory after this returns (what it was writing may
    /// be partial), and the IB's next replay runs on a new queue.
    pub fn wait_or_abandon(&self, timeout: Duration) -> Result<()> {
        self.completion
            .wait_or_abandon(timeout)
            .map_err(Error::Replay)
    }

    pub fn is_complete(&self) -> Result<bool> {
        self.completion.is_complete().map_err(Error::Replay)
    }
}

impl Gpu {
    /// Installs the builder's IB on this GPU's first queue.
    pub fn finalize(&self, builder: Pm4Builder) -> Result<Pm4Ib> {
        self.finalize_with(builder, None)
    }

    /// `finalize` for an IB that times itself: `Pm4Ib::replay_profiled`
    /// measures its GPU execution span (and, with
    /// [`Profiling::Dispatches`](crate::Profiling), each dispatch). The
    /// recording is the same; the timestamps are added here.
    pub fn finalize_profiled(
        &self,
        builder: Pm4Builder,
        profiling: crate::Profiling,
    ) -> Result<Pm4Ib> {
        self.finalize_with(builder, Some(profiling))
    }

    fn finalize_with(
        &self,
        builder: Pm4Builder,
        profiling: Option<crate::Profiling>,
    ) -> Result<Pm4Ib> {
        check_owner(self, &builder)?;
        if builder.dispatch_count() == 0 {
            return Err(Refusal::NoDispatches { lane: None }.into());
        }
        let scheduler = self.scheduler(1)?;
        let actor = scheduler.actor(0).ok_or(Refusal::NoQueue)?;
        let dispatches = builder.dispatch_count();
        let mut program = builder.builder;
        program.set_label("lane0");
        let profile = match profiling {
            Some(p) => {
                let slots = crate::profile::Slots::new(self, p, &[dispatches])?;
                program.set_profile(Some(slots.profile(0)));
                Some(crate::profile::Profiled::new(slots))
            }
            None => None,
        };
        let handle = actor.install(program).map_err(Error::Install)?;
        let dwords = handle.layout().dwords;
        Ok(Pm4Ib {
            handle,
            gpu: self.clone(),
            kept: builder.kept,
            _scheduler: scheduler,
            _modules: builder.modules,
            dispatches,
            dwords,
            profile,
            last: parking_lot::Mutex::new(None),
        })
    }

    /// Installs independent builders as lanes over
    /// `pm4_queue_count(policy, builders.len())` queues. Lanes must not
    /// share memory they write.
    pub fn finalize_multi(
        &self,
        builders: Vec<Pm4Builder>,
        policy: QueuePolicy,
    ) -> Result<Pm4MultiIb> {
        self.finalize_multi_with(builders, policy, None)
    }

    /// `finalize_multi` for lanes that time themselves:
    /// `Pm4MultiIb::replay_profiled` measures the makespan from the
    /// earliest lane start to the latest lane end.
    pub fn finalize_multi_profiled(
        &self,
        builders: Vec<Pm4Builder>,
        policy: QueuePolicy,
        profiling: crate::Profiling,
    ) -> Result<Pm4MultiIb> {
        self.finalize_multi_with(builders, policy, Some(profiling))
    }

    fn finalize_multi_with(
        &self,
        builders: Vec<Pm4Builder>,
        policy: QueuePolicy,
        profiling: Option<crate::Profiling>,
    ) -> Result<Pm4MultiIb> {
        if builders.is_empty() {
            return Err(Refusal::NoBuilders.into());
        }
        let mut modules = Vec::new();
        let mut lanes = Vec::with_capacity(builders.len());
        let mut counts = Vec::with_capacity(builders.len());
        let mut kept = Vec::with_capacity(builders.len());
        for (lane, b) in builders.into_iter().enumerate() {
            check_owner(self, &b).map_err(|e| e.context(format!("lane {lane}")))?;
            if b.dispatch_count() == 0 {
                return Err(Refusal::NoDispatches { lane: Some(lane) }.into());
            }
            counts.push(b.dispatch_count());
            let work = b.work();
            modules.extend(b.modules);
            kept.push(b.kept);
            let mut program = b.builder;
            program.set_label(format!("lane{lane}"));
            lanes.push(LaneProgram { program, work });
        }
        let profile = match profiling {
            Some(p) => {
                let slots = crate::profile::Slots::new(self, p, &counts)?;
                for (lane, l) in lanes.iter_mut().enumerate() {
                    l.program.set_profile(Some(slots.profile(lane)));
                }
                Some(crate::profile::Profiled::new(slots))
            }
            None => None,
        };
        let queues = self.pm4_queue_count(policy, lanes.len());
        let scheduler = self.scheduler(queues)?;
        let multi = scheduler.install(lanes).map_err(Error::Install)?;
        Ok(Pm4MultiIb {
            multi,
            gpu: self.clone(),
            kept,
            _scheduler: scheduler,
            _modules: modules,
            dispatches: counts,
            profile,
        })
    }
}

fn check_owner(gpu: &Gpu, builder: &Pm4Builder) -> Result<()> {
    if std::sync::Arc::ptr_eq(&gpu.inner, &builder.gpu.inner) {
        Ok(())
    } else {
        Err(Refusal::ForeignBuilder.into())
    }
}

impl Pm4Ib {
    /// Submits and waits for completion, up to [`REPLAY_TIMEOUT`]; a replay
    /// still running then is abandoned ([`Replay::wait_or_abandon`]).
    pub fn replay(&self) -> Result<()> {
        self.replay_within(REPLAY_TIMEOUT)
    }

    /// [`Pm4Ib::replay`] with a hang timeout of the caller's choosing.
    pub fn replay_within(&self, timeout: Duration) -> Result<()> {
        self.replay_async()?.wait_or_abandon(timeout)
    }

    /// Submits now; wait on the returned replay before reading results.
    pub fn replay_async(&self) -> Result<Replay> {
        refuse_inside_twin("Pm4Ib replay")?;
        let completion = self.handle.replay().map_err(Error::Replay)?;
        *self.last.lock() = Some(completion.clone());
        Ok(Replay { completion })
    }

    /// Overwrites kernarg bytes of dispatch `index`; applied after replays
    /// already submitted have finished, before later ones.
    pub fn set_kernargs(&mut self, index: usize, byte_offset: usize, bytes: &[u8]) -> Result<()> {
        refuse_inside_twin("Pm4Ib set_kernargs")?;
        // An index past the count names no dispatch: a handle error, as
        // the seed's C ABI classes it (a range past a block is a record one).
        if index >= self.dispatches {
            return Err(Refusal::NoSuchDispatch {
                lane: None,
                dispatch: index,
                count: self.dispatches,
            }
            .into());
        }
        self.handle
            .patch(index, byte_offset, bytes)
            .map_err(Error::Patch)?;
        self.kept
            .patch(&self.gpu.inner.allocations, index, byte_offset, bytes);
        Ok(())
    }

    pub fn dispatch_count(&self) -> usize {
        self.dispatches
    }

    pub fn dwords(&self) -> usize {
        self.dwords
    }

    /// Replays, waits, and returns the GPU's own timing of this replay
    /// (see `profile.rs`). Refused, without replaying, for an IB not
    /// finalized with `finalize_profiled`.
    pub fn replay_profiled(&mut self) -> Result<crate::ReplayTimes> {
        let profile = self
            .profile
            .as_ref()
            .ok_or_else(|| crate::profile::not_profiled("Pm4Ib replay_profiled"))?;
        refuse_inside_twin("Pm4Ib replay_profiled")?;
        // Earlier replays write the same slots: they finish first.
        let earlier = self.last.lock().clone();
        if let Some(earlier) = earlier {
            earlier
                .wait(REPLAY_TIMEOUT)
                .map_err(|e| Error::Replay(e).context("an earlier replay of this IB"))?;
        }
        profile.start()?;
        self.replay()?;
        profile.finish()
    }

    /// How the IB was profiled (`None`: not finalized with profiling).
    pub fn profiling(&self) -> Option<crate::Profiling> {
        self.profile.as_ref().map(|p| p.profiling())
    }

    /// Per-dispatch times of the last profiled replay (µs from the IB's
    /// start). Refused unless the IB was finalized with
    /// `Profiling::Dispatches` and a profiled replay has completed.
    pub fn dispatch_times(&self) -> Result<Vec<crate::DispatchTime>> {
        crate::profile::dispatch_times(self.profile.as_ref(), 0)
    }
}

/// Several retained IBs, one per lane, over one or more queues.
pub struct Pm4MultiIb {
    multi: MultiIb<HsaBackend>,
    gpu: Gpu,
    /// Per lane: allocations its kernargs point into.
    kept: Vec<KeptAlive>,
    _scheduler: std::sync::Arc<HsaScheduler>,
    _modules: Vec<Module>,
    dispatches: Vec<usize>,
    /// Timestamp memory and the last times read, when finalized profiled.
    profile: Option<crate::profile::Profiled>,
}

impl Pm4MultiIb {
    /// Fans a replay out over every lane and waits for all of them.
    pub fn replay(&self) -> Result<()> {
        refuse_inside_twin("Pm4MultiIb replay")?;
        self.multi
            .replay()
            .map_err(Error::Replay)?
            .wait_or_abandon(REPLAY_TIMEOUT)
            .map_err(Error::Replay)
    }

    pub fn set_kernargs(
        &mut self,
        lane: usize,
        dispatch: usize,
        byte_offset: usize,
        bytes: &[u8],
    ) -> Result<()> {
        refuse_inside_twin("Pm4MultiIb set_kernargs")?;
        match self.dispatches.get(lane) {
            None => {
                return Err(Refusal::NoSuchLane {
                    lane,
                    lanes: self.dispatches.len(),
                }
                .into())
            }
            Some(&count) if dispatch >= count => {
                return Err(Refusal::NoSuchDispatch {
                    lane: Some(lane),
                    dispatch,
                    count,
                }
                .into())
            }
            Some(_) => {}
        }
        self.multi
            .set_kernargs(lane, dispatch, byte_offset, bytes)
            .map_err(Error::Patch)?;
        if let Some(kept) = self.kept.get_mut(lane) {
            kept.patch(&self.gpu.inner.allocations, dispatch, byte_offset, bytes);
        }
        Ok(())
    }

    pub fn lane_count(&self) -> usize {
        self.multi.lane_count()
    }

    /// Queues the lanes actually run on.
    pub fn queues_used(&self) -> usize {
        self.multi.queues_used()
    }

    pub fn dispatch_count(&self, lane: usize) -> Option<usize> {
        self.dispatches.get(lane).copied()
    }

    /// Replays every lane, waits, and returns the GPU's own timing: the
    /// makespan from the earliest lane start to the latest lane end, and
    /// each lane's times from that origin. Refused, without replaying,
    /// unless finalized with `finalize_multi_profiled`.
    pub fn replay_profiled(&mut self) -> Result<crate::ReplayTimes> {
        let profile = self
            .profile
            .as_ref()
            .ok_or_else(|| crate::profile::not_profiled("Pm4MultiIb replay_profiled"))?;
        refuse_inside_twin("Pm4MultiIb replay_profiled")?;
        profile.start()?;
        self.replay()?;
        profile.finish()
    }

    /// How the lanes were profiled (`None`: not finalized with profiling).
    pub fn profiling(&self) -> Option<crate::Profiling> {
        self.profile.as_ref().map(|p| p.profiling())
    }

    /// Per-dispatch times of lane `lane` in the last profiled replay (µs
    /// from the earliest lane's start).
    pub fn dispatch_times(&self, lane: usize) -> Result<Vec<crate::DispatchTime>> {
        if lane >= self.dispatches.len() {
            return Err(Refusal::NoSuchLane {
                lane,
                lanes: self.dispatches.len(),
            }
            .into());
        }
        crate::profile::dispatch_times(self.profile.as_ref(), lane)
    }
}
