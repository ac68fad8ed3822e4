//! AQL queues of the simulated device: a ring of 64-byte packets in checked
//! memory, read/write indices, a doorbell signal, and one packet-processor
//! thread per queue.
//!
//! The processor reads a slot's header with acquire ordering; a slot whose
//! header is INVALID is not consumed. It does not rely on the doorbell alone:
//! it also polls, as a real CP may pick up a published header at any time;
//! for a moment after each packet it polls on a short timer instead of
//! sleeping, so a host that submits again soon does not pay for waking it
//! (see `Processor::linger`). The doorbell's writes are timestamped at the
//! write (`SimQueue::last_doorbell`), which is how benchmarks time a submit.
//! A consumed slot gets its body poisoned before its header is set INVALID,
//! so a producer that publishes a header before writing the body hands the
//! processor a poisoned body, which the packet check refuses by name.
//!
//! Queue-level errors (malformed packets, kernel faults, ordering
//! violations in strict mode, injected queue errors) are reported through
//! the queue's error callback; the queue then stops processing, as a real
//! queue does, and its completion signal is not decremented. Create a new
//! queue to go on. A VM fault is not a queue error: it stops every queue of
//! the device and goes to the device's system-event path (`crate::fault`),
//! as on ROCr; it is still listed in [`SimQueue::errors`].

mod front;
mod packets;
mod processor;

pub(crate) use front::Front;
pub(crate) use processor::Processor;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::Mutex;
use relaunch_hsa_sys::Status;

use crate::aql::POISON;
use crate::device::{SimDevice, SimError};
use crate::memory::MemKind;
use crate::ordering::clock::{self, VectorClock};
use crate::signal::{SimSignal, StoreStamp};

/// How often an idle processor re-checks the ring without a doorbell.
const POLL: Duration = Duration::from_millis(20);
/// How long a processor keeps polling the ring after a packet before it
/// sleeps until a doorbell (see `Processor::linger`).
const LINGER: Duration = Duration::from_millis(2);
/// The timer of those polls.
const LINGER_POLL: Duration = Duration::from_micros(20);
/// First dword of a consumed slot: INVALID header, poisoned format bytes.
const CONSUMED: u32 = 1 | (u32::from_le_bytes([0, 0, POISON, POISON]));
/// How many violations a strict-mode error message lists.
const LISTED_VIOLATIONS: usize = 4;

/// What kind of error stopped a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueErrorKind {
    VmFault,
    InvalidPacket,
    KernelFault,
    /// A wave executed `s_trap` and the runtime's trap handler stopped the
    /// queue (HSA status EXCEPTION, as for other kernel faults).
    Trap,
    Violation,
    Injected,
}

/// An error reported through the queue's error callback.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("queue {queue}, AQL packet {packet}: {message}")]
pub struct QueueError {
    pub kind: QueueErrorKind,
    /// The HSA status the callback receives.
    pub status: Status,
    pub queue: u64,
    pub packet: u64,
    pub message: String,
}

/// Why a packet failed: kind, HSA status, message.
type Failure = (QueueErrorKind, Status, String);

/// The error callback (the HSA layer wraps the C one).
pub type ErrorCallback = Arc<dyn Fn(&QueueError) + Send + Sync>;

/// Faults to inject, each at an AQL packet id.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaultPlan {
    /// Report a VM fault instead of executing this packet.
    pub vm_fault_at: Option<u64>,
    /// Stop processing at this packet without any report (a hang).
    pub hang_at: Option<u64>,
    /// Report a generic queue error instead of executing this packet.
    pub error_at: Option<u64>,
}

pub(crate) struct Shared {
    read_index: AtomicU64,
    write_index: AtomicU64,
    stop: AtomicBool,
    dead: AtomicBool,
    /// Set by `hsa_queue_inactivate`: the processor's memory accesses are
    /// refused from then on (work in flight is discarded) and nothing is
    /// reported or signalled.
    inactive: Arc<AtomicBool>,
    errors: Mutex<Vec<QueueError>>,
    faults: Mutex<FaultPlan>,
    /// The processor's happens-before agent (0 until it started) and, once
    /// it exited, its last clock: what `destroy` hands to the host.
    agent: AtomicU32,
    retired: Mutex<Option<VectorClock>>,
    callback: Option<ErrorCallback>,
}

impl Shared {
    pub(crate) fn new(callback: Option<ErrorCallback>) -> Arc<Self> {
        Arc::new(Shared {
            read_index: AtomicU64::new(0),
            write_index: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            dead: AtomicBool::new(false),
            inactive: Arc::new(AtomicBool::new(false)),
            errors: Mutex::new(Vec::new()),
            faults: Mutex::new(FaultPlan::default()),
            agent: AtomicU32::new(0),
            retired: Mutex::new(None),
            callback,
        })
    }

    /// Ask the processor to stop (it exits at its next poll).
    pub(crate) fn stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    /// Inactivate: later memory accesses of the processor are refused.
    pub(crate) fn inactivate(&self) {
        self.inactive.store(true, Ordering::Release);
        self.dead.store(true, Ordering::Release);
    }

    pub(crate) fn errors(&self) -> Vec<QueueError> {
        self.errors.lock().clone()
    }

    /// Retire the processor's happens-before agent (after it stopped).
    pub(crate) fn retire(&self) {
        let agent = self.agent.load(Ordering::Acquire);
        if agent != 0 {
            clock::retire_queue(agent, self.retired.lock().as_ref());
        }
    }
}

/// One AQL queue and its packet processor.
pub struct SimQueue {
    pub id: u64,
    /// Ring base address (device memory).
    pub ring: u64,
    /// The queue's `amd_queue_t` image (what a kernel's queue pointer gets).
    amd_queue: u64,
    /// Ring size in packets (a power of two).
    pub size: u32,
    /// Doorbell signal handle.
    pub doorbell: u64,
    device: Arc<SimDevice>,
    doorbell_signal: Arc<SimSignal>,
    /// When the doorbell was last written (benchmarks time submission up to
    /// the doorbell write, not the processor's wake-up after it).
    doorbell_stamp: Arc<StoreStamp>,
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for SimQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimQueue")
            .field("id", &self.id)
            .field("ring", &self.ring)
            .field("size", &self.size)
            .finish()
    }
}

impl SimQueue {
    /// Create a queue of `size` packets (a power of two, 64..=131072).
    pub fn create(
        device: &Arc<SimDevice>,
        size: u32,
        callback: Option<ErrorCallback>,
    ) -> Result<Arc<SimQueue>, SimError> {
        if !size.is_power_of_two() || !(64..=131_072).contains(&size) {
            return Err(SimError::Queue(format!(
                "size {size} must be a power of two in 64..=131072"
            )));
        }
        let bytes = size as usize * 64;
        let ring = device.memory.allocate(bytes, MemKind::QueueRing)?;
        // Every slot starts consumed: poisoned body, INVALID header.
        device.memory.write(ring, &vec![POISON; bytes])?;
        for slot in 0..u64::from(size) {
            device
                .memory
                .store_u32_release(ring + 64 * slot, CONSUMED)?;
        }
        let doorbell_stamp = Arc::new(StoreStamp::default());
        let (doorbell, doorbell_signal) = device
            .signals
            .create_stamped(-1, Arc::clone(&doorbell_stamp));
        let shared = Shared::new(callback);
        let id = device.next_queue_id();
        let amd_queue = front::amd_queue_image(device, ring, size, doorbell, id)?;
        let front = front::SimFront {
            amd_queue,
            shared: Arc::clone(&shared),
            doorbell: Arc::clone(&doorbell_signal),
            signals: Arc::clone(&device.signals),
            scratch: Mutex::new(None),
            memory: Arc::clone(&device.memory),
        };
        let processor = Processor::new(
            Arc::clone(device),
            Arc::clone(&shared),
            Arc::new(front),
            id,
            ring,
            size,
        );
        let thread = std::thread::Builder::new()
            .name(format!("relaunch-sim-q{id}"))
            .spawn(move || processor.run())
            .map_err(|e| {
                let _ = device.memory.free(ring);
                let _ = device.memory.free(amd_queue);
                device.signals.destroy(doorbell);
                SimError::Queue(format!("could not start the packet processor thread: {e}"))
            })?;
        tracing::debug!(id, ring, size, "sim queue created");
        Ok(Arc::new(SimQueue {
            id,
            ring,
            amd_queue,
            size,
            doorbell,
            device: Arc::clone(device),
            doorbell_signal,
            doorbell_stamp,
            shared,
            thread: Mutex::new(Some(thread)),
        }))
    }

    pub fn load_read_index(&self) -> u64 {
        self.shared.read_index.load(Ordering::Acquire)
    }
    pub fn load_write_index(&self) -> u64 {
        self.shared.write_index.load(Ordering::Acquire)
    }
    pub fn store_write_index(&self, value: u64) {
        self.shared.write_index.store(value, Ordering::Release);
    }
    /// Reserve `n` slots; returns the previous write index.
    pub fn add_write_index(&self, n: u64) -> u64 {
        self.shared.write_index.fetch_add(n, Ordering::AcqRel)
    }
    pub fn cas_write_index(&self, expected: u64, value: u64) -> u64 {
        match self.shared.write_index.compare_exchange(
            expected,
            value,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(v) | Err(v) => v,
        }
    }

    /// Ring the doorbell with a packet id (what `hsa_signal_store_*` on the
    /// doorbell handle does).
    pub fn ring_doorbell(&self, packet_id: u64) {
        self.doorbell_signal.store(packet_id as i64);
    }

    /// When the doorbell was last written, taken at the write and before
    /// the packet processor is woken, with the number of writes so far;
    /// `None` before the first. Benchmarks compare it with an `Instant`
    /// taken at their call to measure call -> doorbell.
    pub fn last_doorbell(&self) -> Option<(std::time::Instant, u64)> {
        self.doorbell_stamp.last()
    }

    /// Faults to inject from now on.
    pub fn inject(&self, plan: FaultPlan) {
        *self.shared.faults.lock() = plan;
    }

    /// Errors reported so far.
    pub fn errors(&self) -> Vec<QueueError> {
        self.shared.errors.lock().clone()
    }

    /// True once an error stopped the queue and was reported (callback or
    /// system event returned), or the queue was inactivated.
    pub fn is_dead(&self) -> bool {
        self.shared.dead.load(Ordering::Acquire)
    }

    /// `hsa_queue_inactivate`: stop the queue now without waiting for it.
    /// As ROCr does (it destroys the hardware queue), work in flight is
    /// discarded: a packet still running has every later memory access
    /// refused, and is neither reported nor signalled; a kernel on the
    /// interpreter stops within `isa`'s check interval (a twin that never
    /// returns cannot be stopped, only cut off from memory); the processor
    /// then exits and packets written later are ignored. The ring stays
    /// until `destroy`. Idempotent.
    pub fn inactivate(&self) {
        self.shared.inactive.store(true, Ordering::Release);
        self.shared.dead.store(true, Ordering::Release);
        self.doorbell_signal.store(i64::MIN);
        tracing::debug!(queue = self.id, "sim queue inactivated");
    }

    /// True once the queue was inactivated.
    pub fn is_inactive(&self) -> bool {
        self.shared.inactive.load(Ordering::Acquire)
    }

    /// Stop the processor and free the ring and doorbell. Idempotent.
    pub fn destroy(&self) {
        let Some(thread) = self.thread.lock().take() else {
            return;
        };
        self.shared.stop.store(true, Ordering::Release);
        self.doorbell_signal.store(i64::MIN);
        if self.is_inactive() {
            // Its processor can no longer touch memory (see `inactivate`):
            // nothing to wait for, even if a twin it runs never returns.
            drop(thread);
        } else if !join_bounded(thread, DESTROY_JOIN_LIMIT) {
            // A kernel (twin) that never returns keeps the processor
            // busy: abandon it rather than block the caller (and so
            // `hsa_queue_destroy`, `rl_gpu_free`) forever. Like ROCr's destroy (the hardware queue goes, work in flight
            // with it): the packet's later accesses are refused, so the
            // ring can be freed under it.
            self.shared.inactive.store(true, Ordering::Release);
            tracing::error!(
                queue = self.id,
                limit = ?DESTROY_JOIN_LIMIT,
                "sim packet processor still running a packet at queue destroy; its work is discarded"
            );
        }
        // The queue does nothing more: a later packet elsewhere touching
        // what it touched (memory freed and reused) is not a race with it.
        let agent = self.shared.agent.load(Ordering::Acquire);
        if agent != 0 {
            clock::retire_queue(agent, self.shared.retired.lock().as_ref());
        }
        let _ = self.device.memory.free(self.ring);
        let _ = self.device.memory.free(self.amd_queue);
        self.device.signals.destroy(self.doorbell);
        tracing::debug!(id = self.id, "sim queue destroyed");
    }
}

/// How long destroying a queue waits for its processor to finish the
/// packet it is running.
pub const DESTROY_JOIN_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Join `thread` if it finishes within `limit`; false (thread detached)
/// otherwise. Nothing in the simulator joins a thread without a bound.
pub(crate) fn join_bounded(thread: JoinHandle<()>, limit: std::time::Duration) -> bool {
    let deadline = std::time::Instant::now() + limit;
    while !thread.is_finished() {
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    if thread.join().is_err() {
        tracing::error!("sim packet processor panicked");
    }
    true
}

impl Drop for SimQueue {
    fn drop(&mut self) {
        self.destroy();
    }
}

#[cfg(test)]
mod tests;
