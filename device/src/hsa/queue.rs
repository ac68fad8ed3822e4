//! `AqlQueue`: one hardware AQL queue, created once and reused. Submission
//! reserves a slot, writes the packet body, publishes the header word with
//! release ordering, then rings the doorbell; waits watch the completion
//! signal and the error the runtime reports through the queue callback.

use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use relaunch_hsa_sys as sys;

use super::agent::AgentInfo;
use super::packet::AqlPacket;
use super::runtime::{Runtime, RuntimeInner};
use super::signal::{Signal, WAIT_SLICE};
use super::HsaError;

/// How long a producer waits for a ring slot another producer's packets
/// still occupy before calling the queue stalled.
const SLOT_WAIT: Duration = Duration::from_secs(10);

/// First error status the runtime reported for a queue (0 = none), and
/// its description taken inside the callback. Read on every submit: a
/// line of its own, so no neighbouring heap object written by another
/// thread shares it (layout only).
#[derive(Debug)]
#[repr(align(64))]
struct ErrorSlot {
    status: AtomicU32,
    /// `hsa_status_string` of the first error, asked on the reporting
    /// thread as it reports: a runtime's detail for a status is process
    /// state (the simulator's last queue error), so asked later it may
    /// describe another queue's (another GPU's) error.
    message: std::sync::OnceLock<String>,
    hsa: Arc<sys::LoadedHsa>,
    /// Set once `abandon` inactivated the queue: nothing on it runs.
    inactivated: std::sync::atomic::AtomicBool,
}

/// The error slot's value for a queue relaunch abandoned (not an HSA
/// status: the runtime's own codes are far below it).
const ABANDONED: u32 = u32::MAX;

unsafe extern "C" fn on_queue_error(
    status: sys::Status,
    _source: *mut sys::Queue,
    data: *mut c_void,
) {
    if data.is_null() {
        return;
    }
    // SAFETY: `data` is the ErrorSlot of the queue being reported on, kept
    // by its QueueOwner until after hsa_queue_destroy returns, after which
    // the runtime no longer calls back.
    let slot = unsafe { &*data.cast::<ErrorSlot>() };
    // Described before the status is published, so a reader that sees the
    // status finds this queue's message. No panic may leave this function.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        slot.message
            .get_or_init(|| super::runtime::describe_status(&slot.hsa.api, status));
    }));
    // Keep the first error: later ones are usually consequences.
    let _ = slot
        .status
        .compare_exchange(0, status.max(1), Ordering::AcqRel, Ordering::Acquire);
}

/// An AQL queue on one GPU agent, seen by one producer: submitting needs
/// `&mut`. [`AqlQueue::producer`] makes another producer handle on the same
/// queue (HSA queues are multi-producer); the queue lives until the last
/// handle is dropped. repr(C), what `publish` reads first (layout only).
#[derive(Debug)]
#[repr(C)]
pub struct AqlQueue {
    /// Next write index (this producer's view; another producer moves the
    /// runtime's index past it, see `publish_words`).
    written: u64,
    /// Read index last seen; the processor's only grows past it.
    read_seen: u64,
    size: u32,
    queue: NonNull<sys::Queue>,
    inner: Arc<RuntimeInner>,
    error: Arc<ErrorSlot>,
    id: u64,
    /// The GPU agent (a memory fault on it loses this queue too).
    agent: sys::Agent,
    gpu: Arc<str>,
    /// Destroys the queue when the last producer goes.
    _owner: Arc<QueueOwner>,
}

/// The queue object itself; destroyed on drop, after which the runtime no
/// longer calls back into `error`.
#[derive(Debug)]
struct QueueOwner {
    queue: NonNull<sys::Queue>,
    inner: Arc<RuntimeInner>,
    // Dropped after the queue is destroyed (Drop runs before field drops).
    _error: Arc<ErrorSlot>,
    id: u64,
}

// SAFETY: the queue object may be used from any thread; each AqlQueue has
// one owner (a queue actor, a benchmark) and submission takes `&mut self`;
// producers on one queue coordinate through the runtime's atomic write index.
unsafe impl Send for AqlQueue {}
// SAFETY: QueueOwner only destroys the queue, once, from whichever thread
// drops the last reference.
unsafe impl Send for QueueOwner {}
// SAFETY: as above; shared references to it expose nothing.
unsafe impl Sync for QueueOwner {}

impl Runtime {
    /// Creates an AQL queue of `size` packets (a power of two within the
    /// agent's limits) on `gpu`.
    pub fn create_queue(&self, gpu: &AgentInfo, size: u32) -> Result<AqlQueue, HsaError> {
        let limits = gpu.limits.ok_or_else(|| HsaError::Invalid {
            what: "queue agent",
            problem: format!("{} is not a GPU (kernel) agent", gpu.name),
        })?;
        if !size.is_power_of_two() || size < limits.queue_min_size || size > limits.queue_max_size {
            return Err(HsaError::Invalid {
                what: "queue size",
                problem: format!(
                    "{size} packets; {} accepts powers of two from {} to {}",
                    gpu.name, limits.queue_min_size, limits.queue_max_size
                ),
            });
        }
        let error = Arc::new(ErrorSlot {
            status: AtomicU32::new(0),
            message: std::sync::OnceLock::new(),
            hsa: Arc::clone(&self.inner.hsa),
            inactivated: std::sync::atomic::AtomicBool::new(false),
        });
        let mut queue: *mut sys::Queue = std::ptr::null_mut();
        // SAFETY: GPU agent of this runtime; the callback does not unwind and
        // its data (the shared slot, kept by the queue's owner) outlives the
        // queue; u32::MAX segment sizes mean "no hint".
        let status = unsafe {
            (self.inner.api().queue_create)(
                gpu.handle,
                size,
                sys::HSA_QUEUE_TYPE_MULTI,
                Some(on_queue_error),
                Arc::as_ptr(&error).cast_mut().cast::<c_void>(),
                u32::MAX,
                u32::MAX,
                &mut queue,
            )
        };
        self.inner.check("hsa_queue_create", status)?;
        let queue = NonNull::new(queue).ok_or_else(|| HsaError::Call {
            call: "hsa_queue_create",
            status,
            message: "success with a null queue".to_string(),
        })?;
        // SAFETY: the runtime returned a live hsa_queue_t; we read its fields.
        let (ring_size, id, base) = unsafe {
            let q = queue.as_ref();
            (q.size, q.id, q.base_address)
        };
        let owner = Arc::new(QueueOwner {
            queue,
            inner: Arc::clone(&self.inner),
            _error: Arc::clone(&error),
            id,
        });
        let mut made = AqlQueue {
            agent: gpu.handle,
            gpu: Arc::from(gpu.label().as_str()),
            inner: Arc::clone(&self.inner),
            queue,
            error,
            size: ring_size,
            id,
            written: 0,
            read_seen: 0,
            _owner: owner,
        };
        if base.is_null()
            || (base as usize) % sys::AQL_PACKET_BYTES != 0
            || !ring_size.is_power_of_two()
        {
            return Err(HsaError::Call {
                call: "hsa_queue_create",
                status,
                message: format!("queue with an unusable ring (base {base:p}, size {ring_size})"),
            });
        }
        let (read, write) = made.indices();
        (made.read_seen, made.written) = (read, write);
        tracing::debug!(queue = id, size = ring_size, agent = %gpu.name, "AQL queue created");
        Ok(made)
    }
}

impl AqlQueue {
    /// Another producer on this queue, for a second submitter (a benchmark's
    /// baseline beside a queue actor). Each producer reserves slots through
    /// the runtime's atomic write index, so packets never collide; a
    /// producer that finds its slot still in use waits for it. The queue is
    /// destroyed when the last producer is dropped. Each producer rings the
    /// doorbell with its own packet ids, so producers that publish at the
    /// same time may ring out of order; relaunch's own users take turns
    /// (the benchmark alternates blocks of waited submits), which is the
    /// use this is checked for.
    pub fn producer(&self) -> AqlQueue {
        let (read, write) = self.indices();
        AqlQueue {
            written: write,
            read_seen: read,
            size: self.size,
            queue: self.queue,
            inner: Arc::clone(&self.inner),
            error: Arc::clone(&self.error),
            id: self.id,
            agent: self.agent,
            gpu: Arc::clone(&self.gpu),
            _owner: Arc::clone(&self._owner),
        }
    }

    /// The runtime's queue id.
    pub fn id(&self) -> u64 {
        self.id
    }
    /// Ring size in packets.
    pub fn size(&self) -> u32 {
        self.size
    }

    fn raw(&self) -> *const sys::Queue {
        self.queue.as_ptr()
    }

    /// The recorded queue error, if any, as an error mentioning `during`;
    /// `HsaError::DeviceLost` first when a memory fault was reported for
    /// this queue's GPU (the driver stopped the queue: nothing on it runs).
    /// Inlined: the no-error case is two loads on every submit.
    #[inline]
    pub fn check_error(&self, during: &str) -> Result<(), HsaError> {
        let status = self.error.status.load(Ordering::Acquire);
        if status == 0 && !self.inner.faults.any() {
            return Ok(());
        }
        self.fault(status, during)
    }

    #[cold]
    fn fault(&self, status: u32, during: &str) -> Result<(), HsaError> {
        self.inner.check_lost(self.agent, &self.gpu, during)?;
        if status == 0 {
            return Ok(());
        }
        let message = match status {
            ABANDONED => "abandoned after a replay on it timed out (hsa_queue_inactivate: \
                          its work in flight was discarded)"
                .to_string(),
            _ => match self.error.message.get() {
                Some(message) => message.clone(),
                None => self.inner.describe(status),
            },
        };
        Err(HsaError::QueueFault {
            queue_id: self.id,
            status,
            message,
            during: during.to_string(),
        })
    }

    /// Gives the queue up after work on it did not finish in time: it is
    /// inactivated (ROCr destroys the hardware queue, so the work in flight
    /// is discarded and makes no more changes to memory; packets written
    /// later are ignored) and reports a queue fault from now on, so its
    /// owner replaces it. Every producer handle sees it. The ring stays
    /// allocated until the last handle is dropped. Idempotent.
    pub fn abandon(&self) -> Result<(), HsaError> {
        // Keep a runtime error that came first: it says more.
        let _ =
            self.error
                .status
                .compare_exchange(0, ABANDONED, Ordering::AcqRel, Ordering::Acquire);
        // SAFETY: live queue of a live runtime (this handle keeps both).
        let status = unsafe { (self.inner.api().queue_inactivate)(self.queue.as_ptr()) };
        match status {
            sys::HSA_STATUS_SUCCESS => {
                self.error.inactivated.store(true, Ordering::Release);
                Ok(())
            }
            _ => Err(HsaError::Call {
                call: "hsa_queue_inactivate",
                status,
                message: self.inner.describe(status),
            }),
        }
    }

    /// True once [`AqlQueue::abandon`] inactivated the queue: its work in
    /// flight was discarded, so nothing on it runs or signals any more.
    pub fn is_inactivated(&self) -> bool {
        self.error.inactivated.load(Ordering::Acquire)
    }

    /// True when this queue's GPU is lost (a memory fault was reported).
    pub fn device_lost(&self) -> bool {
        self.inner.faults.any() && self.inner.faults.lost(self.agent.handle).is_some()
    }

    /// (read index, write index) as the packet processor sees them.
    pub fn indices(&self) -> (u64, u64) {
        // SAFETY: live queue of a live runtime.
        unsafe {
            (
                (self.inner.api().queue_load_read_index_scacquire)(self.raw()),
                (self.inner.api().queue_load_write_index_relaxed)(self.raw()),
            )
        }
    }

    /// Submits one packet and returns its packet id: [`AqlQueue::publish`]
    /// then [`AqlQueue::ring`].
    pub fn submit(&mut self, packet: &AqlPacket) -> Result<u64, HsaError> {
        let id = self.publish(packet)?;
        self.ring(id);
        Ok(id)
    }

    /// Reserves the next slot, writes the packet body, then publishes its
    /// header with release ordering; returns the packet id. The doorbell is
    /// not rung: call [`AqlQueue::ring`] with this id (or a later one), so
    /// several queues can be published first and rung together. A packet
    /// processor may still pick a published packet up before the ring.
    pub fn publish(&mut self, packet: &AqlPacket) -> Result<u64, HsaError> {
        self.check_error("before submitting a packet")?;
        self.publish_words(&packet.words())
    }

    /// [`AqlQueue::publish`] for a packet already laid out as its 16
    /// dwords (header in word 0), without the queue-error check: for a
    /// caller that checked [`AqlQueue::check_error`] under the same lock
    /// and keeps packets prebuilt (a retained IB's replay).
    pub fn publish_words(&mut self, words: &[u32; 16]) -> Result<u64, HsaError> {
        let write = self.written;
        if write.wrapping_sub(self.read_seen) >= self.size as u64 {
            // Only re-read the processor's index when the cached one says
            // full: it only grows, so a stale value errs on the safe side.
            self.read_seen = self.load_read_index();
            let in_flight = write.wrapping_sub(self.read_seen);
            if in_flight >= self.size as u64 {
                return Err(HsaError::QueueFull {
                    queue_id: self.id,
                    in_flight,
                    size: self.size,
                });
            }
        }
        // SAFETY: live queue. With no other producer the reserved id equals
        // `write` and its slot was checked free above.
        let id = unsafe { (self.inner.api().queue_add_write_index_scacq_screl)(self.raw(), 1) };
        if id != write {
            self.await_slot(id)?;
        }
        self.written = id + 1;
        // SAFETY: base_address is the 64-byte-aligned ring of `size` packets
        // (checked at creation); the slot index is reduced modulo size.
        let slot = unsafe {
            let base = self.queue.as_ref().base_address.cast::<u32>();
            base.add((id & (self.size as u64 - 1)) as usize * 16)
        };
        // Body first: the packet processor may read the slot as soon as the
        // header stops saying INVALID.
        for (i, word) in words.iter().enumerate().skip(1) {
            // SAFETY: `slot + i` for i < 16 is inside this packet's slot;
            // volatile because another agent reads it.
            unsafe { std::ptr::write_volatile(slot.add(i), *word) };
        }
        // On x86 a release store orders ordinary stores, not write-combined
        // ones: with the ring in device memory (HSA_ALLOCATE_QUEUE_DEV_MEM=1)
        // ROCr fences first. Always fenced: the fence cost nothing
        // measurable (`submit_p50_ns` A/B, device/README.md), and relaunch
        // cannot see where the runtime put the ring.
        store_fence();
        // SAFETY: the slot's first dword is 4-byte aligned and only accessed
        // atomically by the packet processor; Release orders the body before it.
        unsafe { AtomicU32::from_ptr(slot) }.store(words[0], Ordering::Release);
        tracing::trace!(queue = self.id, packet = id, "AQL packet published");
        Ok(id)
    }

    /// Publishes `packets` (each 16 dwords, header in word 0) as one batch:
    /// reserves all their slots with one write-index update (so no other
    /// producer's packet lands between them), writes every body, then
    /// publishes the headers in order, each with release ordering; the
    /// last packet gets `completion` as its completion signal. Returns the
    /// last packet's id; the doorbell is not rung ([`AqlQueue::ring`]).
    /// `QueueFull` (nothing reserved) when the ring lacks room for all of
    /// them right now; a batch larger than the ring can never fit.
    pub fn publish_batch<P: AsRef<[u32; 16]>>(
        &mut self,
        packets: &[P],
        completion: u64,
    ) -> Result<u64, HsaError> {
        let n = packets.len() as u64;
        if n == 0 || n > u64::from(self.size) {
            return Err(HsaError::Invalid {
                what: "AQL packet batch",
                problem: format!(
                    "{n} packets for a ring of {} (a batch holds 1..=ring size packets)",
                    self.size
                ),
            });
        }
        let write = self.written;
        if write.wrapping_sub(self.read_seen) + n > u64::from(self.size) {
            self.read_seen = self.load_read_index();
            let in_flight = write.wrapping_sub(self.read_seen);
            if in_flight + n > u64::from(self.size) {
                return Err(HsaError::QueueFull {
                    queue_id: self.id,
                    in_flight,
                    size: self.size,
                });
            }
        }
        // SAFETY: live queue. With no other producer the reserved ids are
        // write..write+n, whose slots were checked free above.
        let first = unsafe { (self.inner.api().queue_add_write_index_scacq_screl)(self.raw(), n) };
        if first != write {
            // Another producer moved the index: wait until our last slot
            // is free (the earlier ones are then free too).
            self.await_slot(first + n - 1)?;
        }
        self.written = first + n;
        let mask = self.size as u64 - 1;
        // SAFETY: base_address is the 64-byte-aligned ring of `size` packets
        // (checked at creation); slot indexes are reduced modulo size.
        let slot = |id: u64| unsafe {
            let base = self.queue.as_ref().base_address.cast::<u32>();
            base.add((id & mask) as usize * 16)
        };
        let last = packets.len() - 1;
        for (i, packet) in packets.iter().enumerate() {
            let s = slot(first + i as u64);
            let words = packet.as_ref();
            for (w, word) in words.iter().enumerate().skip(1) {
                let word = match (i == last, w) {
                    (true, 14) => completion as u32,
                    (true, 15) => (completion >> 32) as u32,
                    _ => *word,
                };
                // SAFETY: `s + w` for w < 16 is inside this packet's slot;
                // volatile because another agent reads it.
                unsafe { std::ptr::write_volatile(s.add(w), word) };
            }
        }
        // Bodies before any header (see `publish_words`).
        store_fence();
        for (i, packet) in packets.iter().enumerate() {
            let s = slot(first + i as u64);
            // SAFETY: the slot's first dword is 4-byte aligned and only
            // accessed atomically by the packet processor; Release orders
            // the bodies (and earlier headers) before it.
            unsafe { AtomicU32::from_ptr(s) }.store(packet.as_ref()[0], Ordering::Release);
        }
        tracing::trace!(
            queue = self.id,
            first,
            packets = n,
            "AQL packet batch published"
        );
        Ok(first + n - 1)
    }

    /// Another producer published since our last packet, so slot `id` (ours
    /// now: the runtime reserved it) was not checked free. Waits until the
    /// processor has consumed the packet that slot held a ring ago. Giving
    /// up would leave a hole the processor stalls on, so this only fails
    /// when the queue is broken (an error reported, or no progress at all).
    #[cold]
    fn await_slot(&mut self, id: u64) -> Result<(), HsaError> {
        let start = Instant::now();
        loop {
            self.read_seen = self.load_read_index();
            if id.wrapping_sub(self.read_seen) < self.size as u64 {
                return Ok(());
            }
            self.check_error("waiting for a ring slot another producer left in use")?;
            if start.elapsed() >= SLOT_WAIT {
                return Err(HsaError::Timeout {
                    what: format!(
                        "ring slot of packet {id} on queue {} to be consumed",
                        self.id
                    ),
                    waited: start.elapsed(),
                    seen: self.read_seen as i64,
                    state: format!(
                        "queue read index {}, {} packets in flight on a ring of {}",
                        self.read_seen,
                        id.wrapping_sub(self.read_seen),
                        self.size
                    ),
                });
            }
            std::thread::yield_now();
        }
    }

    /// Rings the doorbell with `packet_id` (the last packet published): the
    /// packet processor goes on up to and including that packet.
    pub fn ring(&self, packet_id: u64) {
        // SAFETY: live queue; the doorbell signal belongs to it.
        unsafe {
            let doorbell = self.queue.as_ref().doorbell_signal;
            (self.inner.api().signal_store_screlease)(doorbell, packet_id as i64);
        }
    }

    fn load_read_index(&self) -> u64 {
        // SAFETY: live queue of a live runtime.
        unsafe { (self.inner.api().queue_load_read_index_scacquire)(self.raw()) }
    }

    /// Waits until `signal` drops below `below` (a completion signal armed
    /// at N reaches 0 after N packets), checking the queue's error state
    /// between slices. A timeout names the signal, the value seen and the
    /// queue's indices.
    pub fn wait(&self, signal: &Signal, below: i64, timeout: Duration) -> Result<i64, HsaError> {
        let start = Instant::now();
        let what = || {
            format!(
                "completion signal {:#x} on queue {} to drop below {below}",
                signal.handle().handle,
                self.id
            )
        };
        loop {
            self.check_error(&format!("while waiting for {}", what()))?;
            let remaining = timeout.saturating_sub(start.elapsed());
            let seen = signal.wait_slice_below(below, remaining.min(WAIT_SLICE));
            if seen < below {
                // A fault may have completed the signal with an error: report it.
                self.check_error(&format!("while waiting for {}", what()))?;
                return Ok(seen);
            }
            if start.elapsed() >= timeout {
                let (read, write) = self.indices();
                return Err(HsaError::Timeout {
                    what: what(),
                    waited: start.elapsed(),
                    seen,
                    state: format!("queue read index {read}, write index {write}"),
                });
            }
        }
    }
}

/// Orders every earlier store, write-combined ones included, before later
/// stores (x86 `sfence`; elsewhere a sequentially consistent fence).
#[inline]
fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: sfence has no preconditions; SSE is baseline on x86_64.
    #[allow(unused_unsafe)]
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
    #[cfg(not(target_arch = "x86_64"))]
    std::sync::atomic::fence(Ordering::SeqCst);
}

impl Drop for QueueOwner {
    fn drop(&mut self) {
        // SAFETY: the last handle on this queue is gone; the runtime is alive
        // (we hold its Arc); the error slot is still allocated during this call.
        let status = unsafe { (self.inner.api().queue_destroy)(self.queue.as_ptr()) };
        if status != sys::HSA_STATUS_SUCCESS {
            tracing::warn!(
                queue = self.id,
                "hsa_queue_destroy failed: {}",
                self.inner.describe(status)
            );
        }
    }
}
