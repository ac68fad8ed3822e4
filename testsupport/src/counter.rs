//! An in-memory queue backend that really executes "counter IBs": each
//! dispatch adds the u64 in its 8 kernarg bytes to one counter of a shared
//! [`CounterMemory`]. A packet-processor thread (or, under loom, a model
//! thread calling [`CounterGpu::step`]) runs replays in submission order.
//! It checks what the actor promises: a kernarg patch or uninstall while a
//! replay of that IB is in flight is recorded as a violation. Faults are
//! real (a counter index outside memory) or injected, and kill the queue
//! generation like a hardware fault; the next submit starts a new one.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use relaunch_sched::backend::{
    failed_or_abandoned, CompletionWatch, IbLayout, Published, QueueBackend, RetiredEpochs, Ticket,
    WatchError,
};
use relaunch_sched::sync::{self as loom, Arc, Condvar, Mutex};

/// One dispatch: add the little-endian u64 `kernarg` to `counters[counter]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterDispatch {
    pub counter: usize,
    pub kernarg: [u8; 8],
}

impl CounterDispatch {
    pub fn add(counter: usize, value: u64) -> Self {
        CounterDispatch {
            counter,
            kernarg: value.to_le_bytes(),
        }
    }
}

/// What gets installed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CounterProgram {
    pub dispatches: Vec<CounterDispatch>,
}

/// Most packets waiting in one test queue before `submit` waits for room.
pub const RING_PACKETS: usize = 256;

/// Errors of the test device, worded like the hardware's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CounterError {
    #[error("VM fault: dispatch {dispatch} of a replay wrote counter {counter}, outside the {len} counters; queue generation {epoch} is dead")]
    OutOfBounds {
        dispatch: usize,
        counter: usize,
        len: usize,
        epoch: u32,
    },
    #[error("injected fault on replay {seq} of queue generation {epoch}; the queue is dead")]
    Injected { epoch: u32, seq: u64 },
    #[error("timed out after {waited_ms} ms waiting for replay {seq} of queue generation {epoch}: {completed} of {issued} replays completed")]
    Timeout {
        epoch: u32,
        seq: u64,
        completed: u64,
        issued: u64,
        waited_ms: u128,
    },
    #[error("the test queue was closed")]
    Closed,
    #[error("could not start the test queue's packet-processor thread: {0}")]
    Spawn(String),
    /// How a replay ended, as the core's watch bookkeeping says.
    #[error(transparent)]
    Watch(#[from] WatchError),
    #[error("kernarg write of {len} bytes at offset {offset} outside dispatch {dispatch}'s 8-byte block")]
    OutOfBlock {
        dispatch: usize,
        offset: usize,
        len: usize,
    },
}

impl relaunch_sched::BackendFailure for CounterError {
    fn is_timeout(&self) -> bool {
        matches!(self, CounterError::Timeout { .. })
    }
}

/// Device memory shared by every queue of one test device.
#[derive(Debug)]
pub struct CounterMemory {
    counters: Mutex<Vec<u64>>,
    violations: Mutex<Vec<String>>,
}

impl CounterMemory {
    pub fn new(counters: usize) -> Arc<Self> {
        Arc::new(CounterMemory {
            counters: Mutex::new(vec![0; counters]),
            violations: Mutex::new(Vec::new()),
        })
    }

    pub fn read(&self, counter: usize) -> Option<u64> {
        loom::lock(&self.counters).get(counter).copied()
    }

    pub fn write(&self, counter: usize, value: u64) {
        if let Some(slot) = loom::lock(&self.counters).get_mut(counter) {
            *slot = value;
        }
    }

    /// Ordering violations seen so far (should stay empty).
    pub fn violations(&self) -> Vec<String> {
        loom::lock(&self.violations).clone()
    }

    fn violation(&self, what: String) {
        tracing::error!("test device violation: {what}");
        let mut list = loom::lock(&self.violations);
        if list.len() < 64 {
            list.push(what);
        }
    }
}

#[derive(Debug)]
struct IbState {
    kernargs: Vec<[u8; 8]>,
    in_flight: u32,
}

/// An installed counter IB.
#[derive(Debug)]
pub struct CounterIb {
    counters: Vec<usize>,
    state: Arc<Mutex<IbState>>,
}

#[derive(Debug)]
struct QueueState {
    pending: VecDeque<(Arc<Mutex<IbState>>, Vec<usize>, Ticket)>,
    epoch: u32,
    issued: u64,
    completed: u64,
    fault: Option<CounterError>,
    inject: u32,
    closed: bool,
    retired: RetiredEpochs<CounterError>,
}

/// The queue state shared by the backend, its packet processor and waiters.
#[derive(Debug)]
pub struct CounterWatch {
    state: Mutex<QueueState>,
    changed: Condvar,
    memory: Arc<CounterMemory>,
}

impl CounterWatch {
    fn outcome(&self, q: &QueueState, ticket: Ticket) -> Result<bool, CounterError> {
        if ticket.epoch < q.epoch {
            return q.retired.outcome(ticket).map(|()| true);
        }
        if ticket.epoch > q.epoch || ticket.seq > q.issued || ticket.seq == 0 {
            return Err(WatchError::NeverIssued {
                epoch: ticket.epoch,
                seq: ticket.seq,
                current: q.epoch,
                issued: q.issued,
            }
            .into());
        }
        if q.completed >= ticket.seq {
            return Ok(true);
        }
        match &q.fault {
            Some(cause) => Err(failed_or_abandoned(ticket, q.completed, cause)),
            None => Ok(false),
        }
    }
}

impl CompletionWatch for CounterWatch {
    type Error = CounterError;

    fn is_complete(&self, ticket: Ticket) -> Result<bool, CounterError> {
        let q = loom::lock(&self.state);
        self.outcome(&q, ticket)
    }

    fn wait(&self, ticket: Ticket, timeout: Duration) -> Result<(), CounterError> {
        let start = Instant::now();
        let mut q = loom::lock(&self.state);
        loop {
            if self.outcome(&q, ticket)? {
                return Ok(());
            }
            let left = timeout.saturating_sub(start.elapsed());
            if left.is_zero() || q.closed {
                return Err(CounterError::Timeout {
                    epoch: ticket.epoch,
                    seq: ticket.seq,
                    completed: q.completed,
                    issued: q.issued,
                    waited_ms: start.elapsed().as_millis(),
                });
            }
            q = loom::wait_timeout(&self.changed, q, left);
        }
    }
}

/// Drives a test queue's packet processor by hand (loom models).
pub struct CounterGpu {
    watch: Arc<CounterWatch>,
}

impl CounterGpu {
    /// Runs the next replay, waiting for one; false once the queue closed.
    pub fn step(&self) -> bool {
        let w = &*self.watch;
        let mut q = loom::lock(&w.state);
        let (ib, counters, ticket) = loop {
            if let Some(packet) = q.pending.pop_front() {
                break packet;
            }
            if q.closed {
                return false;
            }
            q = loom::wait(&w.changed, q);
        };
        let injected = q.inject > 0;
        q.inject = q.inject.saturating_sub(1);
        drop(q);
        // Read kernargs and leave the IB before touching memory, so a
        // patch that follows completion never sees the IB as in flight.
        let values: Vec<u64> = {
            let mut s = loom::lock(&ib);
            s.in_flight -= 1;
            s.kernargs.iter().map(|k| u64::from_le_bytes(*k)).collect()
        };
        let mut fault: Option<CounterError> = injected.then_some(CounterError::Injected {
            epoch: ticket.epoch,
            seq: ticket.seq,
        });
        if fault.is_none() {
            let mut mem = loom::lock(&w.memory.counters);
            let len = mem.len();
            for (dispatch, (&counter, value)) in counters.iter().zip(values).enumerate() {
                match mem.get_mut(counter) {
                    Some(slot) => *slot = slot.wrapping_add(value),
                    None => {
                        fault = Some(CounterError::OutOfBounds {
                            dispatch,
                            counter,
                            len,
                            epoch: ticket.epoch,
                        });
                        break;
                    }
                }
            }
        }
        let mut q = loom::lock(&w.state);
        match fault {
            None => q.completed = ticket.seq,
            Some(cause) => {
                // A dead queue runs nothing more of its generation.
                for (ib, _, _) in q.pending.drain(..) {
                    loom::lock(&ib).in_flight -= 1;
                }
                q.fault = Some(cause);
            }
        }
        drop(q);
        w.changed.notify_all();
        true
    }
}

/// Writes a counter IB's kernargs (patches the actor runs and the handle's
/// direct ones), recording a violation if a replay of the IB is in flight.
fn write_kernargs(
    state: &Mutex<IbState>,
    memory: &CounterMemory,
    dispatch: usize,
    offset: usize,
    bytes: &[u8],
) -> Result<(), ()> {
    let mut s = loom::lock(state);
    if s.in_flight != 0 {
        memory.violation(format!(
            "kernarg patch of dispatch {dispatch} while {} replays of its IB were in flight",
            s.in_flight
        ));
    }
    let block = s.kernargs.get_mut(dispatch).ok_or(())?;
    let end = offset.checked_add(bytes.len()).filter(|&e| e <= 8);
    block[offset..end.ok_or(())?].copy_from_slice(bytes);
    Ok(())
}

/// The direct kernarg writer of a counter IB.
#[derive(Clone)]
pub struct CounterWriter {
    state: Arc<Mutex<IbState>>,
    memory: Arc<CounterMemory>,
}

impl relaunch_sched::backend::KernargWriter for CounterWriter {
    fn write(&mut self, dispatch: usize, offset: usize, bytes: &[u8]) -> Result<(), ()> {
        write_kernargs(&self.state, &self.memory, dispatch, offset, bytes)
    }
}

/// A test queue. Dropping it closes the queue (its processor thread ends).
pub struct CounterBackend {
    watch: Arc<CounterWatch>,
}

impl CounterBackend {
    /// A queue whose packets run on `step` calls of the returned driver.
    pub fn manual(memory: Arc<CounterMemory>) -> (Self, CounterGpu) {
        let watch = Arc::new(CounterWatch {
            state: Mutex::new(QueueState {
                pending: VecDeque::new(),
                epoch: 0,
                issued: 0,
                completed: 0,
                fault: None,
                inject: 0,
                closed: false,
                retired: RetiredEpochs::default(),
            }),
            changed: Condvar::new(),
            memory,
        });
        let gpu = CounterGpu {
            watch: Arc::clone(&watch),
        };
        (CounterBackend { watch }, gpu)
    }

    /// A queue with its own packet-processor thread.
    #[cfg(not(loom))]
    pub fn new(memory: Arc<CounterMemory>) -> Result<Self, CounterError> {
        let (backend, gpu) = Self::manual(memory);
        loom::thread::Builder::new()
            .name("relaunch-test-queue".to_string())
            .spawn(move || while gpu.step() {})
            .map_err(|err| CounterError::Spawn(err.to_string()))?;
        Ok(backend)
    }

    /// The next `count` replays fault (as if the GPU hit a bad address).
    pub fn injector(&self) -> FaultInjector {
        FaultInjector {
            watch: Arc::clone(&self.watch),
        }
    }
}

/// Makes a test queue's next replays fault.
#[derive(Clone)]
pub struct FaultInjector {
    watch: Arc<CounterWatch>,
}

impl FaultInjector {
    pub fn fail_next(&self, count: u32) {
        loom::lock(&self.watch.state).inject += count;
    }
}

impl Drop for CounterBackend {
    fn drop(&mut self) {
        loom::lock(&self.watch.state).closed = true;
        self.watch.changed.notify_all();
    }
}

impl QueueBackend for CounterBackend {
    type Error = CounterError;
    type Program = CounterProgram;
    type Installed = CounterIb;
    type Watch = CounterWatch;
    type Writer = CounterWriter;

    fn watch(&self) -> Arc<CounterWatch> {
        Arc::clone(&self.watch)
    }

    fn install(&mut self, program: CounterProgram) -> Result<CounterIb, CounterError> {
        Ok(CounterIb {
            counters: program.dispatches.iter().map(|d| d.counter).collect(),
            state: Arc::new(Mutex::new(IbState {
                kernargs: program.dispatches.iter().map(|d| d.kernarg).collect(),
                in_flight: 0,
            })),
        })
    }

    fn layout(&self, ib: &CounterIb) -> IbLayout {
        IbLayout {
            kernarg_lens: vec![8; ib.counters.len()],
            shared_kernargs: false,
            dwords: ib.counters.len() * 8,
            retained_bytes: 0,
        }
    }

    /// Queues the replay for the processor; it may take it before the
    /// ring (a processor woken for other reasons sees it), like a CP polling.
    fn publish(&mut self, ib: &CounterIb) -> Result<Published, CounterError> {
        let w = &*self.watch;
        let mut q = loom::lock(&w.state);
        if let Some(cause) = q.fault.take() {
            let (epoch, completed) = (q.epoch, q.completed);
            q.retired.retire(epoch, completed, cause);
            q.epoch += 1;
            q.issued = 0;
            q.completed = 0;
            tracing::debug!(epoch = q.epoch, "test queue replaced after a fault");
        }
        while q.pending.len() >= RING_PACKETS {
            if q.closed {
                return Err(CounterError::Closed);
            }
            q = loom::wait(&w.changed, q);
        }
        q.issued += 1;
        let ticket = Ticket {
            epoch: q.epoch,
            seq: q.issued,
        };
        loom::lock(&ib.state).in_flight += 1;
        q.pending
            .push_back((Arc::clone(&ib.state), ib.counters.clone(), ticket));
        Ok(Published {
            ticket,
            doorbell: Some(ticket.seq),
        })
    }

    fn ring(&mut self, _published: &Published) {
        self.watch.changed.notify_all();
    }

    fn writer(&self, ib: &CounterIb) -> CounterWriter {
        CounterWriter {
            state: Arc::clone(&ib.state),
            memory: Arc::clone(&self.watch.memory),
        }
    }

    fn patch(
        &mut self,
        ib: &mut CounterIb,
        dispatch: usize,
        offset: usize,
        bytes: &[u8],
    ) -> Result<(), CounterError> {
        write_kernargs(&ib.state, &self.watch.memory, dispatch, offset, bytes).map_err(|()| {
            CounterError::OutOfBlock {
                dispatch,
                offset,
                len: bytes.len(),
            }
        })
    }

    fn uninstall(&mut self, ib: CounterIb) -> Result<(), CounterError> {
        let s = loom::lock(&ib.state);
        if s.in_flight != 0 {
            self.watch.memory.violation(format!(
                "IB freed while {} of its replays were in flight",
                s.in_flight
            ));
        }
        Ok(())
    }
}
