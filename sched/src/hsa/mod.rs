//! The HSA backend, on top of the generic core (`backend`, `actor`,
//! `scheduler`) and the only module of the crate that names HSA types:
//! the real queue backend over `relaunch_device::hsa`, one AQL queue per
//! actor, a pool of long-lived completion signals (`ring`: which replay
//! armed which; `watch`: polling and waiting), and installed lanes
//! (`install`: PM4 segments in executable host memory, or public-AQL
//! kernel-dispatch packet templates; either with a kernarg block,
//! `kernargs`). Its error is `HsaBackendError` (`error`). Its locks come
//! through the crate's loom facade.
//!
//! A queue fault kills the queue (HSA says: drop it, make a new one). The
//! next submit does that: the dead generation's outcomes are kept in
//! `RetiredEpochs` and a new queue (epoch + 1) takes over, so one fault
//! does not end the actor. Installed IBs stay valid: they are host memory.

use std::time::{Duration, Instant};

use relaunch_device::hsa::{
    AgentInfo, AllocFlags, Allocation, AqlQueue, HsaError, PoolInfo, Runtime,
    AQL_COMPLETION_SIGNAL_WORD,
};
use relaunch_encoders::PatchError;

use crate::actor::ActorOptions;
use crate::backend::{IbLayout, Published, QueueBackend, RetiredEpochs, Ticket};
use crate::error::SchedError;
use crate::loom::{lock, unlocked, Arc, Mutex, MutexGuard};
use crate::scheduler::Scheduler;
pub use error::HsaBackendError;
pub use kernargs::KernargBlock;
pub use watch::HsaWatch;
use watch::Live;

mod error;
mod install;
mod kernargs;
pub mod ring;
mod watch;
pub use install::HsaProgram;
pub use ring::SIGNALS;

/// Signals re-armed after one doorbell (bounded work per submit).
const REARM_PER_SUBMIT: usize = 2;
/// Alignment of each PM4 segment in IB memory.
const SEGMENT_ALIGN: usize = 256;

/// Options of one HSA queue backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HsaQueueOptions {
    /// AQL ring size in packets (clamped to the agent's limits).
    pub ring_packets: u32,
    /// How long a submit waits for ring room or a free completion signal.
    pub submit_timeout: Duration,
}

impl Default for HsaQueueOptions {
    fn default() -> Self {
        HsaQueueOptions {
            ring_packets: 1024,
            submit_timeout: Duration::from_secs(10),
        }
    }
}

/// One prebuilt vendor packet as the 16 dwords the ring takes, line-aligned
/// so copying it touches one cache line, not two (layout only).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct PacketSlot([u32; 16]);

impl AsRef<[u32; 16]> for PacketSlot {
    fn as_ref(&self) -> &[u32; 16] {
        &self.0
    }
}

/// `words` (a prebuilt vendor packet) completing `signal`.
#[inline(always)]
fn signalled(words: &[u32; 16], signal: &relaunch_device::hsa::Signal) -> [u32; 16] {
    let mut packet = *words;
    let handle = signal.handle().handle;
    packet[AQL_COMPLETION_SIGNAL_WORD] = handle as u32;
    packet[AQL_COMPLETION_SIGNAL_WORD + 1] = (handle >> 32) as u32;
    packet
}

/// An IB installed on an HSA queue.
#[repr(C)]
pub struct HsaIb {
    packets: Vec<PacketSlot>,
    /// The kernarg memory the queue reads, shared with the handle's writer.
    kernargs: KernargBlock,
    /// IB dwords over all segments (0 for a public-AQL lane).
    dwords: usize,
    /// The segments the queue runs (`None` for a public-AQL lane).
    code: Option<Allocation>,
    /// The scratch backing of an IB with scratch dispatches (device
    /// memory on the queue's GPU; freed with the IB).
    scratch: Option<Allocation>,
    /// A public-AQL lane: its packets are published as one batch.
    batch: bool,
    /// The builder's label (errors name the IB by it; std's Arc: an
    /// immutable value, not a protocol primitive).
    label: Option<std::sync::Arc<str>>,
}

/// One AQL queue of one GPU and the IBs retained on it. Small on purpose
/// (what install and recovery need is boxed): the actor keeps it next to
/// its hot fields, and a replay reads only `watch`.
#[repr(C)]
pub struct HsaBackend {
    watch: Arc<HsaWatch>,
    ring: u32,
    cold: Box<Cold>,
}

struct Cold {
    runtime: Runtime,
    gpu: AgentInfo,
    pool: PoolInfo,
    opts: HsaQueueOptions,
}

impl HsaBackend {
    /// Creates the queue and its completion signals on `gpu`.
    pub fn new(
        runtime: &Runtime,
        gpu: &AgentInfo,
        opts: HsaQueueOptions,
    ) -> Result<Self, HsaError> {
        let ring = match gpu.limits {
            Some(l) => opts
                .ring_packets
                .clamp(l.queue_min_size, l.queue_max_size)
                .next_power_of_two()
                .min(l.queue_max_size),
            None => opts.ring_packets,
        };
        let queue = runtime.create_queue(gpu, ring)?;
        // Created armed (1): a submit takes an armed one and stores nothing
        // before its doorbell (see `Live::armed`).
        let signals = (0..SIGNALS)
            .map(|_| runtime.create_signal(1))
            .collect::<Result<Vec<_>, _>>()?;
        let pool = runtime.kernarg_pool()?;
        Ok(HsaBackend {
            cold: Box::new(Cold {
                runtime: runtime.clone(),
                gpu: gpu.clone(),
                pool,
                opts,
            }),
            ring,
            watch: Arc::new(HsaWatch {
                live: Mutex::new(Live::new(queue, 0).all_armed()),
                signals,
                retired: Mutex::new(RetiredEpochs::default()),
                after_queue: Vec::new(),
            }),
        })
    }

    /// The HSA queue id of the current generation (fault injection, logs).
    pub fn queue_id(&self) -> u64 {
        lock(&self.watch.live).queue.id()
    }

    /// A second producer on the current queue (`AqlQueue::producer`): for a
    /// caller that submits its own packets beside this backend's, such as
    /// the submit benchmark's direct baseline on the same queue. A queue
    /// replaced after a fault is not followed: the producer keeps the old one.
    pub fn producer(&self) -> AqlQueue {
        lock(&self.watch.live).queue.producer()
    }

    /// Host memory the GPU may read, `len` bytes, with the block at an
    /// `align`-aligned offset inside it.
    fn host_block(
        &self,
        len: usize,
        align: usize,
        executable: bool,
    ) -> Result<(Allocation, usize), HsaBackendError> {
        let mem =
            self.cold
                .runtime
                .allocate(&self.cold.pool, len + align, AllocFlags { executable })?;
        mem.allow_access(&[&self.cold.gpu])?;
        let offset = (mem.addr().next_multiple_of(align as u64) - mem.addr()) as usize;
        Ok((mem, offset))
    }

    /// One step of waiting for earlier replays to make room (ring slots or
    /// a completion signal), with the lock released meanwhile.
    fn wait_for_room<'a>(
        &'a self,
        live: &mut MutexGuard<'a, Live>,
        start: &mut Option<Instant>,
        seq: u64,
    ) -> Result<(), HsaBackendError> {
        live.queue
            .check_error("while waiting for room to submit a replay")?;
        // Started on the first wait: reading the clock costs the hot path.
        let start = *start.get_or_insert_with(Instant::now);
        if start.elapsed() >= self.cold.opts.submit_timeout {
            let (read, write) = live.queue.indices();
            return Err(HsaBackendError::Timeout {
                what: format!(
                    "room to submit replay {seq} (ring read index {read}, write index {write}, ring of {} packets, {SIGNALS} completion signals)",
                    self.ring
                ),
                waited_ms: start.elapsed().as_millis(),
            });
        }
        unlocked(&self.watch.live, live, crate::loom::thread::yield_now);
        Ok(())
    }

    /// Publishes `ib`'s packets with the queue state locked; rings only
    /// when the ring is full (earlier segments must run to make room).
    /// The common case (a healthy queue, this replay's record slot and an
    /// armed signal free, one packet, room in the ring) is kept short and
    /// inline: after a wait its code and data are cold, and every line it
    /// does not touch is latency saved. Anything else takes `publish_slow`.
    #[inline(always)]
    fn publish_locked<'a>(
        &'a self,
        live: &mut MutexGuard<'a, Live>,
        ib: &HsaIb,
    ) -> Result<(Published, usize), HsaBackendError> {
        let seq = live.issued + 1;
        let record_free = seq.saturating_sub(SIGNALS as u64) <= live.known_done;
        if let ([PacketSlot(words)], true) = (&ib.packets[..], record_free) {
            if live.queue.check_error("").is_ok() {
                if let Some(sig) = live.take_armed() {
                    let packet = signalled(words, &self.watch.signals[sig]);
                    match live.queue.publish_words(&packet) {
                        Ok(id) => {
                            let ticket = Ticket {
                                epoch: live.epoch,
                                seq,
                            };
                            let doorbell = Some(id);
                            return Ok((Published { ticket, doorbell }, sig));
                        }
                        // Nothing was reserved: the slow path waits for room.
                        Err(HsaError::QueueFull { .. }) => live.put_back_armed(sig),
                        Err(err) => {
                            live.put_back_armed(sig);
                            return Err(err.into());
                        }
                    }
                }
            }
        }
        self.publish_slow(live, ib)
    }

    /// `publish_locked` in general: a faulted queue replaced, waits for a
    /// record slot, a signal or ring room, IBs of several packets.
    #[cold]
    #[inline(never)]
    fn publish_slow<'a>(
        &'a self,
        live: &mut MutexGuard<'a, Live>,
        ib: &HsaIb,
    ) -> Result<(Published, usize), HsaBackendError> {
        let mut start = None;
        self.replace_if_faulted(live)?;
        let seq = live.issued + 1;
        let signals = &self.watch.signals;
        // The record slot is free once the replay SIGNALS before is done.
        let reuse = seq.saturating_sub(SIGNALS as u64);
        while reuse > live.known_done {
            if live.done(signals, reuse) {
                live.known_done = reuse;
                break;
            }
            self.wait_for_room(live, &mut start, seq)?;
        }
        let sig = loop {
            match live.take_signal(signals) {
                Some((sig, armed)) => {
                    if !armed {
                        signals[sig].silent_store_relaxed(1);
                    }
                    break sig;
                }
                None => self.wait_for_room(live, &mut start, seq)?,
            }
        };
        let signal = &signals[sig];
        if ib.batch {
            // A public-AQL lane: every packet in one reservation, one ring.
            let handle = signal.handle().handle;
            let id = loop {
                match live.queue.publish_batch(&ib.packets, handle) {
                    Ok(id) => break id,
                    Err(HsaError::QueueFull { .. }) => {
                        // Packets published before (an earlier lane of
                        // this fan-out, not rung yet) must run to make
                        // room: ring up to the last of them.
                        let (_, write) = live.queue.indices();
                        if let Some(id) = write.checked_sub(1) {
                            live.queue.ring(id);
                        }
                        self.wait_for_room(live, &mut start, seq)?
                    }
                    Err(err) => {
                        // Still at 1: armed for the next submit.
                        live.put_back_armed(sig);
                        return Err(err.into());
                    }
                }
            };
            let ticket = Ticket {
                epoch: live.epoch,
                seq,
            };
            let doorbell = Some(id);
            return Ok((Published { ticket, doorbell }, sig));
        }
        let last = ib.packets.len() - 1;
        let mut unrung = None;
        for (i, PacketSlot(words)) in ib.packets.iter().enumerate() {
            let packet = if i == last {
                signalled(words, signal)
            } else {
                *words
            };
            // No room check up front (two more runtime calls per replay):
            // a full ring is rare and answered by waiting and retrying.
            loop {
                // The queue error was checked above under this lock.
                match live.queue.publish_words(&packet) {
                    Ok(id) => {
                        unrung = Some(id);
                        break;
                    }
                    Err(HsaError::QueueFull { .. }) => {
                        // Earlier segments must run to make room: ring them.
                        if let Some(id) = unrung.take() {
                            live.queue.ring(id);
                        }
                        self.wait_for_room(live, &mut start, seq)?;
                    }
                    Err(err) => {
                        if let Some(id) = unrung {
                            live.queue.ring(id);
                        }
                        return Err(err.into());
                    }
                }
            }
        }
        let published = Published {
            ticket: Ticket {
                epoch: live.epoch,
                seq,
            },
            doorbell: unrung,
        };
        Ok((published, sig))
    }

    /// Replaces a faulted queue (new generation), keeping what finished.
    fn replace_if_faulted(&self, live: &mut Live) -> Result<(), HsaBackendError> {
        let Err(fault) = live.queue.check_error("during an earlier replay") else {
            return Ok(());
        };
        if let HsaError::DeviceLost { .. } = fault {
            // The driver stopped every queue of the process on this GPU: a
            // new queue would never run. Fail now, keep the queue.
            return Err(fault.into());
        }
        let completed = live.completed(&self.watch.signals);
        lock(&self.watch.retired).retire(live.epoch, completed, fault.clone().into());
        let queue = self.cold.runtime.create_queue(&self.cold.gpu, self.ring)?;
        for s in &self.watch.signals {
            s.store_relaxed(1);
        }
        let epoch = live.epoch + 1;
        *live = Live::new(queue, epoch).all_armed();
        tracing::warn!(epoch = live.epoch, "queue replaced after a fault: {fault}");
        Ok(())
    }
}

impl QueueBackend for HsaBackend {
    type Program = HsaProgram;
    type Installed = HsaIb;
    type Error = HsaBackendError;
    type Watch = HsaWatch;
    type Writer = KernargBlock;

    fn watch(&self) -> Arc<HsaWatch> {
        Arc::clone(&self.watch)
    }

    fn install(&mut self, program: HsaProgram) -> Result<HsaIb, HsaBackendError> {
        match program {
            HsaProgram::Pm4(builder) => self.install_pm4(*builder),
            HsaProgram::Aql(builder) => self.install_aql(builder),
        }
    }

    fn layout(&self, ib: &HsaIb) -> IbLayout {
        let sites = ib.kernargs.sites();
        let kernarg_lens: Vec<u32> = sites.iter().map(|s| s.len).collect();
        let host = std::mem::size_of::<HsaIb>()
            + ib.packets.capacity() * std::mem::size_of::<PacketSlot>()
            + std::mem::size_of_val(sites)
            + kernarg_lens.capacity() * std::mem::size_of::<u32>();
        let device = ib.code.as_ref().map_or(0, Allocation::len) + ib.kernargs.device_bytes();
        IbLayout {
            kernarg_lens,
            shared_kernargs: !ib.kernargs.patchable(),
            dwords: ib.dwords,
            retained_bytes: host + device,
        }
    }

    fn label(&self, ib: &HsaIb) -> Option<std::sync::Arc<str>> {
        ib.label.clone()
    }

    fn writer(&self, ib: &HsaIb) -> KernargBlock {
        ib.kernargs.clone()
    }

    fn submit(&mut self, ib: &HsaIb) -> Result<Ticket, HsaBackendError> {
        // Publish and ring under one lock of the queue state.
        let mut live = lock(&self.watch.live);
        let (published, sig) = self.publish_locked(&mut live, ib)?;
        if let Some(id) = published.doorbell {
            live.queue.ring(id);
        }
        live.record(published.ticket.seq, sig);
        // After the doorbell: off the submit latency.
        live.rearm_finished(&self.watch.signals, REARM_PER_SUBMIT);
        Ok(published.ticket)
    }

    fn publish(&mut self, ib: &HsaIb) -> Result<Published, HsaBackendError> {
        let mut live = lock(&self.watch.live);
        let (published, sig) = self.publish_locked(&mut live, ib)?;
        live.record(published.ticket.seq, sig);
        Ok(published)
    }

    fn ring(&mut self, published: &Published) {
        let mut live = lock(&self.watch.live);
        // A queue replaced since (new epoch) never saw these packets.
        if let (Some(id), true) = (published.doorbell, published.ticket.epoch == live.epoch) {
            live.queue.ring(id);
        }
        live.rearm_finished(&self.watch.signals, REARM_PER_SUBMIT);
    }

    fn patch(
        &mut self,
        ib: &mut HsaIb,
        dispatch: usize,
        offset: usize,
        bytes: &[u8],
    ) -> Result<(), HsaBackendError> {
        // Straight into the memory the queue reads (no host image is kept).
        // SAFETY: the actor calls `patch` only when no replay of `ib` runs,
        // and the handle's direct writes are off while this patch is
        // queued or running (see `track`): nothing else touches the block.
        if unsafe { ib.kernargs.write_exclusive(dispatch, offset, bytes) }.is_ok() {
            return Ok(());
        }
        let sites = ib.kernargs.sites();
        Err(if !ib.kernargs.patchable() {
            PatchError::Shared
        } else if let Some(site) = sites.get(dispatch) {
            PatchError::OutOfRange {
                dispatch,
                offset,
                end: offset.saturating_add(bytes.len()),
                len: site.len,
            }
        } else {
            PatchError::NoSuchDispatch {
                dispatch,
                count: sites.len(),
            }
        }
        .into())
    }

    fn uninstall(&mut self, ib: HsaIb) -> Result<(), HsaBackendError> {
        drop(ib);
        Ok(())
    }
}

impl Scheduler<HsaBackend> {
    /// A scheduler with `queues` HSA queues on `gpu` (see
    /// `policy::queue_count` for how many to ask for).
    pub fn open_hsa(
        runtime: &Runtime,
        gpu: &AgentInfo,
        queues: usize,
        queue_opts: HsaQueueOptions,
        actor_opts: ActorOptions,
    ) -> Result<Self, SchedError> {
        let backends = (0..queues.max(1))
            .map(|actor| {
                HsaBackend::new(runtime, gpu, queue_opts).map_err(|err| SchedError::Backend {
                    actor,
                    during: "queue creation",
                    cause: HsaBackendError::from(err).into(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Scheduler::new(backends, actor_opts)
    }
}
