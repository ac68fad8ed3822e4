//! The real queue backend over `relaunch_device::hsa`: one AQL queue per
//! actor, a pool of long-lived completion signals, and installed IBs (PM4
//! segments in executable host memory plus a kernarg block).
//!
//! Completion: replay `seq` of a queue generation uses signal
//! `seq % SIGNALS`, armed to 1 on its last packet (earlier segments carry
//! no signal; every vendor packet has the barrier bit, so they complete in
//! order). A signal is re-armed only after its previous replay finished,
//! so "signal at 0, or slot reused since" means done. Signals are created
//! once per backend and reused; the 1 -> 0 convention is what a host
//! observing completion expects (the simulator checks release there).
//!
//! A queue fault kills the queue (HSA says: drop it, make a new one). The
//! next submit does that: the dead generation's outcomes are kept in
//! `RetiredEpochs` and a new queue (epoch + 1) takes over, so one fault
//! does not end the actor. Installed IBs stay valid: they are host memory.

use std::time::{Duration, Instant};

use parking_lot::Mutex;
use relaunch_device::hsa::{
    pm4_ib_packet, AgentInfo, AllocFlags, Allocation, AqlPacket, AqlQueue, HsaError, PoolInfo,
    Runtime, Signal,
};
use relaunch_encoders::{EncodedIb, IbBuilder};
use relaunch_hsa_sys as sys;

use crate::actor::ActorOptions;
use crate::backend::{
    failed_or_abandoned, CompletionWatch, IbLayout, QueueBackend, RetiredEpochs, Ticket, WatchError,
};
use crate::error::{BackendError, SchedError};
use crate::loom::Arc;
use crate::scheduler::Scheduler;

/// Completion signals per queue (replays in flight at once before a submit
/// waits for the oldest).
pub const SIGNALS: usize = 64;
/// Longest single wait slice, so queue faults are noticed promptly.
const SLICE: Duration = Duration::from_millis(5);
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

/// Failures specific to this backend (HSA and encoder errors pass through).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HsaBackendError {
    #[error("timed out after {waited_ms} ms waiting for {what}")]
    Timeout { what: String, waited_ms: u128 },
    #[error("the IB has {segments} segments but the queue ring holds {ring} packets; use a larger ring or fewer, larger segments")]
    RingTooSmall { segments: usize, ring: u32 },
    #[error("kernarg layout needs {bytes} bytes aligned to {align}: too large for this host")]
    KernargTooLarge { bytes: u64, align: u32 },
}

struct Live {
    queue: AqlQueue,
    epoch: u32,
    issued: u64,
    /// Replays of this generation known to have finished (a lower bound).
    known_done: u64,
}

/// Observes one backend's completions; shared with every `Completion`.
pub struct HsaWatch {
    live: Mutex<Live>,
    signals: Vec<Signal>,
    retired: Mutex<RetiredEpochs>,
}

impl HsaWatch {
    /// `Some(outcome)` if known without waiting; `None` while running.
    fn poll(&self, ticket: Ticket) -> Result<Option<()>, BackendError> {
        let mut live = self.live.lock();
        if ticket.epoch < live.epoch {
            return self.retired.lock().outcome(ticket).map(Some);
        }
        if ticket.epoch > live.epoch || ticket.seq == 0 || ticket.seq > live.issued {
            return Err(WatchError::NeverIssued {
                epoch: ticket.epoch,
                seq: ticket.seq,
                current: live.epoch,
                issued: live.issued,
            }
            .into());
        }
        if ticket.seq <= live.known_done || done_in(&self.signals, live.issued, ticket.seq) {
            // Remembered so the submit that reuses this signal need not
            // ask the runtime again.
            live.known_done = live.known_done.max(ticket.seq);
            return Ok(Some(()));
        }
        match live.queue.check_error("while a replay was running") {
            Ok(()) => Ok(None),
            Err(fault) => {
                let completed = completed_in(&self.signals, live.issued);
                Err(failed_or_abandoned(ticket, completed, &fault.into()))
            }
        }
    }
}

/// Replay `seq` finished: its signal reached 0, or the slot was re-armed
/// by a later replay (which happens only after `seq` finished).
fn done_in(signals: &[Signal], issued: u64, seq: u64) -> bool {
    seq + (SIGNALS as u64) <= issued || signals[(seq % SIGNALS as u64) as usize].load() <= 0
}

/// How many replays of the generation finished (they finish in order).
fn completed_in(signals: &[Signal], issued: u64) -> u64 {
    let first = issued.saturating_sub(SIGNALS as u64 - 1).max(1);
    (first..=issued)
        .find(|&seq| !done_in(signals, issued, seq))
        .map_or(issued, |seq| seq - 1)
}

impl CompletionWatch for HsaWatch {
    fn is_complete(&self, ticket: Ticket) -> Result<bool, BackendError> {
        Ok(self.poll(ticket)?.is_some())
    }

    fn wait(&self, ticket: Ticket, timeout: Duration) -> Result<(), BackendError> {
        let start = Instant::now();
        let slot = &self.signals[(ticket.seq % SIGNALS as u64) as usize];
        loop {
            if self.poll(ticket)?.is_some() {
                return Ok(());
            }
            let left = timeout.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(HsaBackendError::Timeout {
                    what: format!(
                        "replay {} of queue generation {} (completion signal value {})",
                        ticket.seq,
                        ticket.epoch,
                        slot.load()
                    ),
                    waited_ms: start.elapsed().as_millis(),
                }
                .into());
            }
            // A slice that ends early (done, re-armed, or spurious) is
            // re-checked by `poll` under the lock.
            let _ = slot.wait_below(1, left.min(SLICE), "replay completion");
        }
    }
}

/// An IB installed on an HSA queue.
pub struct HsaIb {
    encoded: EncodedIb,
    packets: Vec<sys::AmdPm4IbPacket>,
    kernargs: Option<(Allocation, usize)>,
    _code: Allocation,
}

/// One AQL queue of one GPU and the IBs retained on it.
pub struct HsaBackend {
    runtime: Runtime,
    gpu: AgentInfo,
    pool: PoolInfo,
    ring: u32,
    opts: HsaQueueOptions,
    watch: Arc<HsaWatch>,
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
        let signals = (0..SIGNALS)
            .map(|_| runtime.create_signal(0))
            .collect::<Result<Vec<_>, _>>()?;
        let pool = runtime.kernarg_pool()?;
        Ok(HsaBackend {
            runtime: runtime.clone(),
            gpu: gpu.clone(),
            pool,
            ring,
            opts,
            watch: Arc::new(HsaWatch {
                live: Mutex::new(Live {
                    queue,
                    epoch: 0,
                    issued: 0,
                    known_done: 0,
                }),
                signals,
                retired: Mutex::new(RetiredEpochs::default()),
            }),
        })
    }

    /// The HSA queue id of the current generation (fault injection, logs).
    pub fn queue_id(&self) -> u64 {
        self.watch.live.lock().queue.id()
    }

    /// Host memory the GPU may read, `len` bytes, with the block at an
    /// `align`-aligned offset inside it.
    fn host_block(
        &self,
        len: usize,
        align: usize,
        executable: bool,
    ) -> Result<(Allocation, usize), BackendError> {
        let mem = self
            .runtime
            .allocate(&self.pool, len + align, AllocFlags { executable })?;
        mem.allow_access(&[&self.gpu])?;
        let offset = (mem.addr().next_multiple_of(align as u64) - mem.addr()) as usize;
        Ok((mem, offset))
    }

    /// One step of waiting for earlier replays to make room (ring slots or
    /// a completion signal), with the lock released meanwhile.
    fn wait_for_room(
        &self,
        live: &mut parking_lot::MutexGuard<'_, Live>,
        start: Instant,
        seq: u64,
    ) -> Result<(), BackendError> {
        live.queue
            .check_error("while waiting for room to submit a replay")?;
        if start.elapsed() >= self.opts.submit_timeout {
            let (read, write) = live.queue.indices();
            return Err(HsaBackendError::Timeout {
                what: format!(
                    "room to submit replay {seq} (ring read index {read}, write index {write}, ring of {} packets, {SIGNALS} completion signals)",
                    self.ring
                ),
                waited_ms: start.elapsed().as_millis(),
            }
            .into());
        }
        parking_lot::MutexGuard::unlocked(live, std::thread::yield_now);
        Ok(())
    }

    /// Replaces a faulted queue (new generation), keeping what finished.
    fn replace_if_faulted(&self, live: &mut Live) -> Result<(), BackendError> {
        let Err(fault) = live.queue.check_error("during an earlier replay") else {
            return Ok(());
        };
        let completed = completed_in(&self.watch.signals, live.issued);
        self.watch
            .retired
            .lock()
            .retire(live.epoch, completed, fault.clone().into());
        live.queue = self.runtime.create_queue(&self.gpu, self.ring)?;
        for s in &self.watch.signals {
            s.store_relaxed(0);
        }
        live.epoch += 1;
        live.issued = 0;
        live.known_done = 0;
        tracing::warn!(epoch = live.epoch, "queue replaced after a fault: {fault}");
        Ok(())
    }
}

impl QueueBackend for HsaBackend {
    type Program = IbBuilder;
    type Installed = HsaIb;
    type Watch = HsaWatch;

    fn watch(&self) -> Arc<HsaWatch> {
        Arc::clone(&self.watch)
    }

    fn install(&mut self, builder: IbBuilder) -> Result<HsaIb, BackendError> {
        let layout = builder.kernarg_layout();
        let (kernargs, base) = if layout.bytes == 0 {
            (None, 0)
        } else {
            let bytes =
                usize::try_from(layout.bytes).map_err(|_| HsaBackendError::KernargTooLarge {
                    bytes: layout.bytes,
                    align: layout.align,
                })?;
            let (mem, offset) = self.host_block(bytes, layout.align as usize, false)?;
            let base = mem.addr() + offset as u64;
            (Some((mem, offset)), base)
        };
        let encoded = builder.finish(base)?;
        let mut kernargs = kernargs;
        if let Some((mem, offset)) = kernargs.as_mut() {
            mem.write(*offset, &encoded.kernarg_image)?;
        }
        let starts: Vec<usize> = encoded
            .segments
            .iter()
            .scan(0usize, |at, s| {
                let start = *at;
                *at = (start + s.dwords.len() * 4).next_multiple_of(SEGMENT_ALIGN);
                Some(start)
            })
            .collect();
        let total = encoded
            .segments
            .last()
            .map_or(4, |s| starts[starts.len() - 1] + s.dwords.len() * 4);
        if encoded.segments.len() > self.ring as usize {
            return Err(HsaBackendError::RingTooSmall {
                segments: encoded.segments.len(),
                ring: self.ring,
            }
            .into());
        }
        let (mut code, offset) = self.host_block(total, SEGMENT_ALIGN, true)?;
        let mut packets = Vec::with_capacity(encoded.segments.len());
        for (segment, start) in encoded.segments.iter().zip(&starts) {
            let bytes: Vec<u8> = segment
                .dwords
                .iter()
                .flat_map(|d| d.to_le_bytes())
                .collect();
            code.write(offset + start, &bytes)?;
            let addr = code.addr() + (offset + start) as u64;
            packets.push(pm4_ib_packet(
                addr,
                segment.dwords.len() as u32,
                sys::Signal::default(),
            )?);
        }
        tracing::debug!(
            dispatches = encoded.dispatch_count(),
            segments = packets.len(),
            dwords = encoded.total_dwords(),
            "IB installed"
        );
        Ok(HsaIb {
            encoded,
            packets,
            kernargs,
            _code: code,
        })
    }

    fn layout(&self, ib: &HsaIb) -> IbLayout {
        IbLayout {
            kernarg_lens: ib.encoded.sites.iter().map(|s| s.kernarg_len).collect(),
            shared_kernargs: ib.encoded.kernargs_shared,
            dwords: ib.encoded.total_dwords(),
        }
    }

    fn submit(&mut self, ib: &HsaIb) -> Result<Ticket, BackendError> {
        let start = Instant::now();
        let mut live = self.watch.live.lock();
        self.replace_if_faulted(&mut live)?;
        let seq = live.issued + 1;
        let signal = &self.watch.signals[(seq % SIGNALS as u64) as usize];
        // The signal is free once the replay SIGNALS before this one is done.
        let reuse = seq.saturating_sub(SIGNALS as u64);
        while reuse > live.known_done {
            if signal.load() <= 0 {
                live.known_done = reuse;
                break;
            }
            self.wait_for_room(&mut live, start, seq)?;
        }
        signal.silent_store_relaxed(1);
        let last = ib.packets.len() - 1;
        for (i, packet) in ib.packets.iter().enumerate() {
            let mut packet = *packet;
            if i == last {
                packet.completion_signal = signal.handle();
            }
            let packet = AqlPacket::Pm4Ib(packet);
            // No room check up front (two more runtime calls per replay):
            // a full ring is rare and answered by waiting and retrying.
            loop {
                match live.queue.submit(&packet) {
                    Ok(_) => break,
                    Err(HsaError::QueueFull { .. }) => self.wait_for_room(&mut live, start, seq)?,
                    Err(err) => return Err(err.into()),
                }
            }
        }
        live.issued = seq;
        Ok(Ticket {
            epoch: live.epoch,
            seq,
        })
    }

    fn patch(
        &mut self,
        ib: &mut HsaIb,
        dispatch: usize,
        offset: usize,
        bytes: &[u8],
    ) -> Result<(), BackendError> {
        let range = ib.encoded.patch_kernargs(dispatch, offset, bytes)?;
        if let Some((mem, base)) = ib.kernargs.as_mut() {
            mem.write(*base + range.start, &ib.encoded.kernarg_image[range])?;
        }
        Ok(())
    }

    fn uninstall(&mut self, ib: HsaIb) -> Result<(), BackendError> {
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
                    cause: err.into(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Scheduler::new(backends, actor_opts)
    }
}
