//! Completions of the HSA backend's queue: [`HsaWatch`], which answers
//! "did replay N finish?" from any thread and waits for it, over the
//! completion-signal ring (`ring`: which signal each replay armed, and
//! when a signal may be armed again), kept under the watch's lock.

use std::time::{Duration, Instant};

use relaunch_device::hsa::{AqlQueue, Signal};

use super::ring::SignalRing;

use super::{HsaBackendError, SIGNALS};
use crate::backend::{failed_or_abandoned, CompletionWatch, RetiredEpochs, Ticket, WatchError};
use crate::loom::{lock, Mutex};

/// Longest single wait slice, so queue faults are noticed promptly.
const SLICE: Duration = Duration::from_millis(5);

/// The ring of the current queue generation, with its queue.
pub(crate) type Live = SignalRing<AqlQueue>;

/// Observes one backend's completions; shared with every `Completion`.
// Line-aligned (so the Arc's allocation is whole lines): the submit path's
// hot lines never share a line with a neighbouring heap object another
// thread writes, e.g. a simulator signal (layout only).
#[repr(C, align(64))]
pub struct HsaWatch {
    /// First: its pointer shares a line with the Arc counts and the lock.
    pub(crate) signals: Vec<Signal>,
    pub(crate) live: Mutex<Live>,
    pub(crate) retired: Mutex<RetiredEpochs<HsaBackendError>>,
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
        let mut guard = lock(&self.live);
        let live = &mut *guard;
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
    fn poll(&self, ticket: Ticket) -> Result<Option<()>, HsaBackendError> {
        let mut live = lock(&self.live);
        if ticket.epoch < live.epoch {
            return lock(&self.retired).outcome(ticket).map(Some);
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
            live.note_done(ticket.seq);
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
    type Error = HsaBackendError;

    fn is_complete(&self, ticket: Ticket) -> Result<bool, HsaBackendError> {
        Ok(self.poll(ticket)?.is_some())
    }

    fn wait(&self, ticket: Ticket, timeout: Duration) -> Result<(), HsaBackendError> {
        let start = Instant::now();
        loop {
            if self.poll(ticket)?.is_some() {
                return Ok(());
            }
            // Not done, so its record is current (poll checked the epoch).
            let sig = lock(&self.live).sig_of[(ticket.seq % SIGNALS as u64) as usize];
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
                });
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
    fn abandon(&self, ticket: Ticket) -> Result<bool, HsaBackendError> {
        // Finished or failed (a faulted queue reports its own error).
        if !self.poll(ticket).is_ok_and(|done| done.is_none()) {
            return Ok(false);
        }
        let live = lock(&self.live);
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
