//! HSA signals of the simulated device: a 64-bit value with blocking waits.
//! Handles are looked up in a table, so a stale or foreign handle is an
//! error rather than a wild pointer.
//!
//! Each signal keeps its value in an `amd_signal_t`-shaped image (ROCr's
//! layout, which device code relies on: ockl's `__ockl_hsa_signal_add`
//! treats a handle as that structure's address). A table made
//! [`SignalTable::in_memory`] registers every image with the device's
//! memory and hands out its address as the handle, as ROCr does, so a
//! kernel can update a signal the host waits on: it adds to the value,
//! stores the event id into the mailbox and raises an interrupt
//! (`s_sendmsg` MSG_INTERRUPT), which [`SignalTable::interrupt`] turns into
//! a wake-up of that signal's waiters.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, RwLock};

use crate::memory::{AllocOptions, DeviceMemory, MemKind};
use crate::ordering::clock::{self, VectorClock};

/// GPU-visible data, not IBs.
fn gpu_data() -> AllocOptions {
    AllocOptions {
        gpu_visible: true,
        executable: false,
    }
}

/// Doorbell writes remembered for the packets they cover (a bound: a queue
/// that falls this far behind its doorbell uses the oldest kept).
const RINGS_KEPT: usize = 4096;

/// How long a processor that picked a packet up before its doorbell was
/// written waits for that write (to learn what the host knew when it
/// submitted) before it assumes the host's clock of now.
const RING_WAIT: Duration = Duration::from_millis(100);

/// Comparison a waiter is waiting for (values of `hsa_signal_condition_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    Eq,
    Ne,
    Lt,
    Gte,
}

impl Condition {
    /// From the C enum value; `None` for anything else.
    pub fn from_raw(raw: u32) -> Option<Self> {
        Some(match raw {
            0 => Condition::Eq,
            1 => Condition::Ne,
            2 => Condition::Lt,
            3 => Condition::Gte,
            _ => return None,
        })
    }

    pub fn holds(self, value: i64, compare: i64) -> bool {
        match self {
            Condition::Eq => value == compare,
            Condition::Ne => value != compare,
            Condition::Lt => value < compare,
            Condition::Gte => value >= compare,
        }
    }
}

/// Records when a signal was last stored to (a queue's doorbell: the
/// moment of the write, before any waiter is woken), as nanoseconds since
/// [`StoreStamp::epoch`], plus how many stores there were.
#[derive(Debug, Default)]
pub struct StoreStamp {
    at_ns: AtomicU64,
    stores: AtomicU64,
    /// (value written, the writer's clock) per doorbell write, oldest first.
    rings: Mutex<VecDeque<(i64, Arc<VectorClock>)>>,
}

impl StoreStamp {
    /// The process-wide origin of the stamps.
    pub fn epoch() -> Instant {
        static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        *EPOCH.get_or_init(Instant::now)
    }

    /// Remember what the writer knew when it wrote `value` (before the
    /// value becomes visible, so a processor that sees it finds the entry).
    fn ring(&self, value: i64) {
        let mut rings = self.rings.lock();
        rings.push_back((value, clock::current_shared()));
        if rings.len() > RINGS_KEPT {
            rings.pop_front();
        }
    }

    /// What the host knew when it wrote the first doorbell value that
    /// covers packet `id` (HSA: the producer writes the packet id, or a
    /// later one, after publishing the packet). Writes for earlier packets
    /// are dropped. A packet picked up before its doorbell waits for it up
    /// to [`RING_WAIT`], then takes the host's clock of now (which only
    /// orders more, never less).
    pub fn covering(&self, id: u64) -> Arc<VectorClock> {
        let id = id.min(i64::MAX as u64) as i64;
        let deadline = Instant::now() + RING_WAIT;
        loop {
            {
                let mut rings = self.rings.lock();
                while rings.front().is_some_and(|r| r.0 < id) {
                    rings.pop_front();
                }
                if let Some((_, c)) = rings.front() {
                    return Arc::clone(c);
                }
            }
            if Instant::now() >= deadline {
                return clock::host();
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    fn record(&self) {
        let ns = Self::epoch().elapsed().as_nanos() as u64;
        self.at_ns.store(ns, Ordering::Relaxed);
        self.stores.fetch_add(1, Ordering::Release);
    }

    /// (time of the latest store, stores so far); `None` before the first.
    pub fn last(&self) -> Option<(Instant, u64)> {
        let stores = self.stores.load(Ordering::Acquire);
        (stores > 0).then(|| {
            let ns = self.at_ns.load(Ordering::Relaxed);
            (Self::epoch() + Duration::from_nanos(ns), stores)
        })
    }
}

/// `amd_signal_t` (ROCr's `amd_hsa_signal.h`): 64 bytes, 64-aligned.
/// Kernels read the fields Rust never does, through memory.
#[allow(dead_code)]
#[derive(Debug, Default)]
#[repr(C, align(64))]
struct SignalImage {
    kind: AtomicI64,
    value: AtomicI64,
    event_mailbox_ptr: AtomicU64,
    event_id: AtomicU32,
    reserved1: u32,
    start_ts: u64,
    end_ts: u64,
    queue_ptr: u64,
    /// `reserved3` in ROCr; here the signal's event mailbox (see
    /// [`SignalTable::in_memory`]).
    mailbox: AtomicU64,
}

/// `AMD_SIGNAL_KIND_USER`: a signal the host or a kernel stores to.
const AMD_SIGNAL_KIND_USER: i64 = 1;

/// The device memory a signal's image is registered with (released when
/// the signal goes).
#[derive(Debug)]
struct Registered {
    memory: Arc<DeviceMemory>,
    addr: u64,
}

/// One signal.
#[derive(Debug, Default)]
pub struct SimSignal {
    /// The value lives in here (`image.value`); boxed so its address,
    /// the handle of an in-memory signal, never moves.
    image: Box<SignalImage>,
    /// Released at [`SignalTable::destroy`] (or drop): from then on a
    /// kernel's access to the handle faults as a use after free, even if
    /// a holder still keeps the signal alive.
    registered: Mutex<Option<Registered>>,
    /// Every clock released into the signal (see `ordering::clock`); also
    /// the lock the condition variable waits with.
    lock: Mutex<VectorClock>,
    changed: Condvar,
    /// Set for doorbells: stores are timestamped.
    stamp: Option<Arc<StoreStamp>>,
}

impl SimSignal {
    pub fn new(initial: i64) -> Self {
        let image = Box::new(SignalImage {
            kind: AtomicI64::new(AMD_SIGNAL_KIND_USER),
            value: AtomicI64::new(initial),
            ..SignalImage::default()
        });
        SimSignal {
            image,
            registered: Mutex::new(None),
            lock: Mutex::new(VectorClock::default()),
            changed: Condvar::new(),
            stamp: None,
        }
    }

    /// Load (an acquire: the caller learns what every releaser knew). A
    /// doorbell's loads acquire nothing: the processor takes what the host
    /// knew per packet (`StoreStamp::covering`).
    pub fn load(&self) -> i64 {
        if self.stamp.is_some() {
            return self.image.value.load(Ordering::Acquire);
        }
        let known = self.lock.lock();
        let value = self.image.value.load(Ordering::Acquire);
        clock::acquire(&known);
        value
    }

    /// Store and wake waiters (a release: the caller's clock goes into the
    /// signal before the value is visible). A doorbell's value is written
    /// before the lock is taken: that lock only orders the wake-up against a
    /// waiter that is between its check and its sleep (it holds the lock
    /// then, so it either sees the new value or is asleep when we notify),
    /// and a doorbell write must not wait for a waiter's bookkeeping.
    pub fn store(&self, value: i64) {
        if let Some(stamp) = &self.stamp {
            // Stamped as the host's write: the bookkeeping after it is the
            // simulator's (hardware takes one MMIO store), not the host's.
            stamp.record();
            stamp.ring(value);
            self.image.value.store(value, Ordering::Release);
            let _guard = self.lock.lock();
            self.changed.notify_all();
            return;
        }
        let mut known = self.lock.lock();
        clock::release_into(&mut known);
        self.image.value.store(value, Ordering::Release);
        self.changed.notify_all();
    }

    /// Store without waking waiters (`hsa_signal_silent_store_relaxed`).
    pub fn silent_store(&self, value: i64) {
        if let Some(stamp) = &self.stamp {
            stamp.ring(value);
            self.image.value.store(value, Ordering::Release);
            return;
        }
        let mut known = self.lock.lock();
        clock::release_into(&mut known);
        self.image.value.store(value, Ordering::Release);
    }

    /// For a doorbell: what the host knew when it submitted packet `id`
    /// (see [`StoreStamp::covering`]); the host's clock for other signals.
    pub fn covering(&self, id: u64) -> Arc<VectorClock> {
        match &self.stamp {
            Some(stamp) => stamp.covering(id),
            None => clock::host(),
        }
    }

    /// Subtract and wake waiters; returns the new value.
    pub fn subtract(&self, delta: i64) -> i64 {
        let mut known = self.lock.lock();
        clock::release_into(&mut known);
        let new = self.image.value.fetch_sub(delta, Ordering::AcqRel) - delta;
        self.changed.notify_all();
        new
    }

    /// Wait until `condition(value, compare)` holds or `timeout` passes;
    /// returns the last value observed (the caller re-checks, as in HSA).
    pub fn wait(&self, condition: Condition, compare: i64, timeout: Duration) -> i64 {
        let deadline = Instant::now().checked_add(timeout);
        let mut guard = self.lock.lock();
        loop {
            let value = self.image.value.load(Ordering::Acquire);
            if condition.holds(value, compare) {
                if self.stamp.is_none() {
                    clock::acquire(&guard);
                }
                return value;
            }
            match deadline {
                Some(d) => {
                    if self.changed.wait_until(&mut guard, d).timed_out() {
                        if self.stamp.is_none() {
                            clock::acquire(&guard);
                        }
                        return self.image.value.load(Ordering::Acquire);
                    }
                }
                None => self.changed.wait(&mut guard),
            }
        }
    }
}

impl SimSignal {
    fn unregister(&self) {
        if let Some(r) = self.registered.lock().take() {
            let _ = r.memory.release(r.addr);
        }
    }
}

impl Drop for SimSignal {
    fn drop(&mut self) {
        // Before the image is freed: a kernel still holding the handle
        // then faults as a use after free instead of writing freed memory.
        self.unregister();
    }
}

/// The device's signals by handle.
#[derive(Debug, Default)]
pub struct SignalTable {
    next: AtomicU64,
    signals: RwLock<HashMap<u64, Arc<SimSignal>>>,
    /// Set by [`SignalTable::in_memory`]: images are registered here and
    /// handles are their addresses.
    memory: Option<Arc<DeviceMemory>>,
}

impl SignalTable {
    /// A table whose signals live in `memory` (see the module doc): the
    /// handle of a signal is its `amd_signal_t` address, which kernels may
    /// update. Each signal is an interrupt signal: its event mailbox (the
    /// word a kernel stores the event id into, a slot of the kernel
    /// driver's event page under ROCr) is the image's last 8 bytes, so
    /// nothing outlives the signal.
    pub fn in_memory(memory: Arc<DeviceMemory>) -> Self {
        SignalTable {
            memory: Some(memory),
            ..SignalTable::default()
        }
    }

    /// Create a signal; returns its (non-zero) handle and the signal.
    pub fn create(&self, initial: i64) -> (u64, Arc<SimSignal>) {
        self.insert(SimSignal::new(initial))
    }

    /// Create a signal whose stores are recorded in `stamp` (doorbells).
    pub fn create_stamped(&self, initial: i64, stamp: Arc<StoreStamp>) -> (u64, Arc<SimSignal>) {
        let mut signal = SimSignal::new(initial);
        signal.stamp = Some(stamp);
        self.insert(signal)
    }

    fn insert(&self, mut signal: SimSignal) -> (u64, Arc<SimSignal>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut handle = id;
        if let Some(memory) = &self.memory {
            let addr = &*signal.image as *const SignalImage as u64;
            // Event ids are 32-bit in `amd_signal_t`; ROCr starts at 1 too.
            signal.image.event_id.store(id as u32, Ordering::Relaxed);
            let mailbox = &signal.image.mailbox as *const AtomicU64 as u64;
            signal
                .image
                .event_mailbox_ptr
                .store(mailbox, Ordering::Relaxed);
            // SAFETY: the image is boxed inside the signal and released in
            // its Drop before the box is freed.
            let adopted = unsafe {
                memory.adopt(
                    addr,
                    std::mem::size_of::<SignalImage>(),
                    MemKind::HostFineGrained,
                    gpu_data(),
                )
            };
            if adopted.is_ok() {
                *signal.registered.get_mut() = Some(Registered {
                    memory: Arc::clone(memory),
                    addr,
                });
                handle = addr;
            }
        }
        let signal = Arc::new(signal);
        self.signals.write().insert(handle, Arc::clone(&signal));
        (handle, signal)
    }

    /// A kernel's interrupt (`s_sendmsg` MSG_INTERRUPT) carrying `data`
    /// (M0; ockl sends the low 8 bits of the event id): as the kernel
    /// driver does with a partial id, every signal whose event id matches
    /// those bits has its waiters woken, and each re-checks its value.
    pub fn interrupt(&self, data: u32) {
        for signal in self.signals.read().values() {
            if signal.image.event_id.load(Ordering::Relaxed) & 0xFF == data & 0xFF {
                let _guard = signal.lock.lock();
                signal.changed.notify_all();
            }
        }
    }

    pub fn get(&self, handle: u64) -> Option<Arc<SimSignal>> {
        self.signals.read().get(&handle).cloned()
    }

    /// Destroy; false when the handle is not live.
    pub fn destroy(&self, handle: u64) -> bool {
        let removed = self.signals.write().remove(&handle);
        removed.inspect(|s| s.unregister()).is_some()
    }

    pub fn live(&self) -> usize {
        self.signals.read().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_returns_when_condition_holds_or_times_out() {
        let table = SignalTable::default();
        let (h, s) = table.create(1);
        assert!(h != 0);
        let waiter = {
            let s = Arc::clone(&s);
            std::thread::spawn(move || s.wait(Condition::Eq, 0, Duration::from_secs(10)))
        };
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(s.subtract(1), 0);
        assert_eq!(waiter.join().unwrap(), 0);
        let start = Instant::now();
        assert_eq!(s.wait(Condition::Gte, 5, Duration::from_millis(20)), 0);
        assert!(start.elapsed() >= Duration::from_millis(20));
        assert!(table.destroy(h));
        assert!(!table.destroy(h));
        assert!(table.get(h).is_none());
        assert_eq!(table.live(), 0);
        assert_eq!(Condition::from_raw(9), None);
    }

    /// ockl's `__ockl_hsa_signal_add` on an in-memory signal: a 64-bit
    /// atomic add at the handle + 8, the event id into the mailbox, an
    /// interrupt; the interrupt wakes the host waiter.
    #[test]
    fn a_device_update_and_its_interrupt_wake_an_in_memory_signal_waiter() {
        let memory = Arc::new(DeviceMemory::new(1 << 20));
        let table = SignalTable::in_memory(Arc::clone(&memory));
        let (h, s) = table.create(0);
        let mailbox = memory.read_u64(h + 16).unwrap();
        let id = memory.read_u32(h + 24).unwrap();
        assert_eq!(mailbox, h + 56);
        assert_eq!(memory.read_u64(h).unwrap(), AMD_SIGNAL_KIND_USER as u64);
        let waiter = {
            let s = Arc::clone(&s);
            std::thread::spawn(move || s.wait(Condition::Ne, 0, Duration::from_secs(30)))
        };
        std::thread::sleep(Duration::from_millis(20));
        let start = Instant::now();
        memory.atomic_add_i64(h + 8, 1).unwrap();
        memory.store_u64_release(mailbox, u64::from(id)).unwrap();
        table.interrupt(id & 0xFF);
        assert_eq!(waiter.join().unwrap(), 1);
        assert!(start.elapsed() < Duration::from_secs(10));
        assert_eq!(s.load(), 1);
        // Destroyed: the device's accesses to the handle fault.
        assert!(table.destroy(h));
        assert!(memory.read_u64(h + 8).is_err());
    }
}
