//! Completions of the HSA backend's queue: which completion signal each
//! replay armed, and [`HsaWatch`], which answers "did replay N finish?"
//! from any thread and waits for it.
//!
//! Completion: each replay arms one of `SIGNALS` completion signals to 1
//! on its last packet (earlier segments carry no signal; every vendor
//! packet has the barrier bit, so they complete in order). A signal is
//! re-armed only after the replay that last armed it finished, so "signal
//! at 0, or re-armed by a later replay" means done. A replay takes a
//! signal armed ahead (below) if there is one, else the signal of the
//! replay before it when that one finished, else the next free one.
//! `Live` records which signal replay `seq` armed
//! (`sig_of[seq % SIGNALS]`, valid while fewer than `SIGNALS` replays
//! followed it; a replay is issued only once the one `SIGNALS` before it
//! finished). Signals are created once per backend and reused; the 1 -> 0
//! convention is what a host observing completion expects (the simulator
//! checks release there).
//!
//! Arming ahead: signals are created holding 1, and after each doorbell
//! the signals of finished replays are set back to 1 (`rearm_finished`,
//! at most two per submit), so a submit usually takes an armed signal
//! (`armed` bitmask) and stores nothing before its doorbell: measured on
//! the simulator, that store was a third of the call-to-doorbell time. A
//! re-armed signal's `armed_by` is cleared: its replay is already known
//! finished (`known_done`).

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
    /// Signals already holding 1 and used by no replay (bit i: signal i),
    /// so a submit can take one without a store before its doorbell.
    pub(crate) armed: u64,
    /// Replays up to this one had their signals re-armed (or reused).
    pub(crate) rearmed_upto: u64,
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
            armed: 0,
            rearmed_upto: 0,
            last_sig: 0,
            queue,
            sig_of: [0; SIGNALS],
            armed_by: [0; SIGNALS],
        }
    }

    /// Every signal armed and unused (a new generation's signals hold 1).
    pub(crate) fn all_armed(mut self) -> Live {
        self.armed = u64::MAX;
        self
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

    /// [`Live::done`] for a signal already taken out of the list, whose
    /// current value is `value`.
    pub(crate) fn done_with_value(&self, seq: u64, value: i64) -> bool {
        if seq <= self.known_done || seq + (SIGNALS as u64) <= self.issued {
            return true;
        }
        value <= 0
    }

    /// How many replays of the generation finished (they finish in order).
    pub(crate) fn completed(&self, signals: &[Signal]) -> u64 {
        let first = self.issued.saturating_sub(SIGNALS as u64 - 1).max(1);
        (first..=self.issued)
            .find(|&seq| !self.done(signals, seq))
            .map_or(self.issued, |seq| seq - 1)
    }

    /// A signal for the next replay and whether it already holds 1: one
    /// armed in advance if any (the nearest after the previous replay's),
    /// else a free one to arm now; `None` if all are still running.
    #[inline]
    pub(crate) fn take_signal(&mut self, signals: &[Signal]) -> Option<(usize, bool)> {
        if let Some(i) = self.take_armed() {
            return Some((i, true));
        }
        self.free_signal(signals).map(|i| (i, false))
    }

    /// An armed signal, the nearest after the previous replay's; `None` if
    /// none is armed.
    #[inline]
    pub(crate) fn take_armed(&mut self) -> Option<usize> {
        if self.armed == 0 {
            return None;
        }
        let after = (self.last_sig as u32 + 1) % SIGNALS as u32;
        let i = (self.armed.rotate_right(after).trailing_zeros() + after) as usize % SIGNALS;
        self.armed &= !(1u64 << i);
        Some(i)
    }

    /// Returns a signal from `take_armed` that was not used after all.
    pub(crate) fn put_back_armed(&mut self, sig: usize) {
        self.armed |= 1u64 << sig;
    }

    /// Re-arms (to 1) the signals of finished replays, oldest first, at most
    /// `limit` of them: done after a doorbell, so the next submit finds an
    /// armed signal and stores nothing before ringing.
    pub(crate) fn rearm_finished(&mut self, signals: &[Signal], limit: usize) {
        // Records older than SIGNALS replays are overwritten: skip them.
        let oldest = self.issued.saturating_sub(SIGNALS as u64 - 1);
        let mut seq = self.rearmed_upto.max(oldest.saturating_sub(1)) + 1;
        let last = self.known_done.min(self.issued);
        let mut left = limit;
        while seq <= last && left > 0 {
            let sig = self.sig_of[(seq % SIGNALS as u64) as usize] as usize;
            if self.armed_by[sig] == seq && sig != self.last_sig as usize {
                signals[sig].silent_store_relaxed(1);
                self.armed_by[sig] = 0;
                self.armed |= 1u64 << sig;
                left -= 1;
            }
            self.rearmed_upto = seq;
            seq += 1;
        }
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
// Line-aligned (so the Arc's allocation is whole lines): the submit path's
// hot lines never share a line with a neighbouring heap object another
// thread writes, e.g. a simulator signal (layout only).
#[repr(C, align(64))]
pub struct HsaWatch {
    /// First: its pointer shares a line with the Arc counts and the lock.
    pub(crate) signals: Vec<Signal>,
    pub(crate) live: Mutex<Live>,
    pub(crate) retired: Mutex<RetiredEpochs>,
    /// Signals destroyed at teardown after the queue (declared after
    /// `live`, so they drop after it; filled by `Drop`).
    pub(crate) after_queue: Vec<Signal>,
}

impl Drop for HsaWatch {
    /// Teardown order: the queue goes before its signals (the fields drop
    /// after this: `signals`, emptied here, then `live` with the queue,
    /// then `after_queue`). A signal armed by a replay that has not
    /// finished may still be decremented by a packet the GPU is running,
    /// so it is leaked rather than destroyed.
    fn drop(&mut self) {
        let signals = std::mem::take(&mut self.signals);
        let live = self.live.get_mut();
        // On a lost GPU the driver stopped the queue, and an abandoned
        // queue was inactivated: either way nothing runs any more.
        let lost = live.queue.device_lost() || live.queue.is_inactivated();
        let mut leaked = 0;
        for (i, signal) in signals.into_iter().enumerate() {
            let seq = live.armed_by[i];
            let running = !lost && seq != 0 && !live.done_with_value(seq, signal.load());
            if running {
                leaked += 1;
                signal.leak();
            } else {
                self.after_queue.push(signal);
            }
        }
        if leaked > 0 {
            tracing::warn!(
                leaked,
                "queue torn down with replays unfinished: their completion signals are leaked"
            );
        }
    }
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

    /// Inactivates the queue of the ticket's generation (ROCr destroys the
    /// hardware queue: work in flight is discarded, so the replay changes no
    /// memory after this returns) and leaves it reporting a fault, so the
    /// next submit retires this generation and replaces the queue. Under
    /// the live lock: no submit publishes on the queue meanwhile.
    fn abandon(&self, ticket: Ticket) -> Result<bool, BackendError> {
        // Finished or failed (a faulted queue reports its own error).
        if !self.poll(ticket).is_ok_and(|done| done.is_none()) {
            return Ok(false);
        }
        let live = self.live.lock();
        // Settled meanwhile, or already replaced: nothing to stop.
        if ticket.epoch != live.epoch || live.done(&self.signals, ticket.seq) {
            return Ok(false);
        }
        live.queue.abandon()?;
        tracing::warn!(
            epoch = ticket.epoch,
            seq = ticket.seq,
            "replay abandoned after a timeout; its queue is inactivated and will be replaced"
        );
        Ok(true)
    }
}
