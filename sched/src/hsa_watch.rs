//! Completions of the HSA backend's queue: which completion signal each
//! replay armed, and [`HsaWatch`], which answers "did replay N finish?"
//! from any thread and waits for it.
//!
//! Completion: each replay arms one of `SIGNALS` completion signals to 1
//! on its last packet (earlier segments carry no signal; every vendor
//! packet has the barrier bit, so they complete in order). A signal is
//! re-armed only after the replay that last armed it finished, so "signal
//! at 0, or re-armed by a later replay" means done. A replay takes the
//! signal of the replay before it when that one finished (the common case
//! of a caller that waits: the same signal stays warm in every cache),
//! else the next free one. `Live` records which signal replay `seq` armed
//! (`sig_of[seq % SIGNALS]`, valid while fewer than `SIGNALS` replays
//! followed it; a replay is issued only once the one `SIGNALS` before it
//! finished). Signals are created once per backend and reused; the 1 -> 0
//! convention is what a host observing completion expects (the simulator
//! checks release there).

use std::time::{Duration, Instant};

use parking_lot::Mutex;
use relaunch_device::hsa::{AqlQueue, Signal};

use crate::backend::{failed_or_abandoned, CompletionWatch, RetiredEpochs, Ticket, WatchError};
use crate::error::BackendError;
use crate::hsa_backend::{HsaBackendError, SIGNALS};

/// Longest single wait slice, so queue faults are noticed promptly.
const SLICE: Duration = Duration::from_millis(5);

// repr(C) here and below: what a submit reads first sits together, next
// to the Arc count a `Completion` bumps (layout only).
#[repr(C)]
pub(crate) struct Live {
    pub(crate) issued: u64,
    /// Replays of this generation known to have finished (a lower bound).
    pub(crate) known_done: u64,
    pub(crate) epoch: u32,
    /// The signal replay `issued` armed (kept here, beside the counters,
    /// so the common reuse needs no other cache line).
    pub(crate) last_sig: u8,
    pub(crate) queue: AqlQueue,
    /// The signal replay `seq` armed, at `seq % SIGNALS`.
    pub(crate) sig_of: [u8; SIGNALS],
    /// The replay that last armed each signal (0: none this generation).
    pub(crate) armed_by: [u64; SIGNALS],
}

impl Live {
    pub(crate) fn new(queue: AqlQueue, epoch: u32) -> Live {
        Live {
            issued: 0,
            known_done: 0,
            epoch,
            last_sig: 0,
            queue,
            sig_of: [0; SIGNALS],
            armed_by: [0; SIGNALS],
        }
    }

    /// Replay `seq` (issued, this generation) finished: known, or its
    /// record was overwritten (only after it finished), or its signal was
    /// re-armed by a later replay (likewise), or its signal reached 0.
    pub(crate) fn done(&self, signals: &[Signal], seq: u64) -> bool {
        if seq <= self.known_done || seq + (SIGNALS as u64) <= self.issued {
            return true;
        }
        let sig = self.sig_of[(seq % SIGNALS as u64) as usize] as usize;
        self.armed_by[sig] != seq || signals[sig].load() <= 0
    }

    /// How many replays of the generation finished (they finish in order).
    pub(crate) fn completed(&self, signals: &[Signal]) -> u64 {
        let first = self.issued.saturating_sub(SIGNALS as u64 - 1).max(1);
        (first..=self.issued)
            .find(|&seq| !self.done(signals, seq))
            .map_or(self.issued, |seq| seq - 1)
    }

    /// A signal free to arm (its last replay finished), preferring the one
    /// the previous replay used; `None` if all are still running.
    pub(crate) fn free_signal(&mut self, signals: &[Signal]) -> Option<usize> {
        let prev = self.last_sig as usize;
        if self.issued <= self.known_done {
            // Everything finished, the previous replay's signal included.
            return Some(prev);
        }
        // One already known free costs no runtime call; replays finish in
        // order, so the one after `prev` is the likeliest.
        let order = || (1..=SIGNALS).map(|k| (prev + k) % SIGNALS);
        if let Some(i) = order().find(|&i| self.armed_by[i] <= self.known_done) {
            return Some(i);
        }
        for i in order() {
            if signals[i].load() <= 0 {
                // It finished, and everything before it did too.
                self.known_done = self.known_done.max(self.armed_by[i]);
                return Some(i);
            }
        }
        None
    }
}

/// Observes one backend's completions; shared with every `Completion`.
#[repr(C)]
pub struct HsaWatch {
    pub(crate) live: Mutex<Live>,
    pub(crate) signals: Vec<Signal>,
    pub(crate) retired: Mutex<RetiredEpochs>,
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
        if live.done(&self.signals, ticket.seq) {
            // Remembered so the submit that reuses this signal need not
            // ask the runtime again.
            live.known_done = live.known_done.max(ticket.seq);
            return Ok(Some(()));
        }
        match live.queue.check_error("while a replay was running") {
            Ok(()) => Ok(None),
            Err(fault) => {
                let completed = live.completed(&self.signals);
                Err(failed_or_abandoned(ticket, completed, &fault.into()))
            }
        }
    }
}

impl CompletionWatch for HsaWatch {
    fn is_complete(&self, ticket: Ticket) -> Result<bool, BackendError> {
        Ok(self.poll(ticket)?.is_some())
    }

    fn wait(&self, ticket: Ticket, timeout: Duration) -> Result<(), BackendError> {
        let start = Instant::now();
        loop {
            if self.poll(ticket)?.is_some() {
                return Ok(());
            }
            // Not done, so its record is current (poll checked the epoch).
            let sig = self.live.lock().sig_of[(ticket.seq % SIGNALS as u64) as usize];
            let slot = &self.signals[sig as usize];
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
