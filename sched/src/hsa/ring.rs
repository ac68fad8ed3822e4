//! The completion-signal ring: which of the queue's `SIGNALS` completion
//! signals each replay armed, and when a signal may be armed again. The
//! bookkeeping (`SignalRing`) sits under the watch's lock; the GPU (or
//! the simulator) decrements signals concurrently. Generic over the signal
//! and the queue it travels with, so the loom model
//! (`tests/loom.rs`, `loom_signal_ring_*`) drives the very same code with
//! loom atomics for signals.
//!
//! Completion: each replay arms one signal to 1 on its last packet
//! (earlier segments carry no signal; every vendor packet has the barrier
//! bit, so they complete in order). A signal is re-armed only after the
//! replay that last armed it finished, so "signal at 0, or re-armed by a
//! later replay" means done. A replay takes a signal armed ahead (below)
//! if there is one, else the signal of the replay before it when that one
//! finished, else the next free one. The ring records which signal replay
//! `seq` armed (`sig_of[seq % SIGNALS]`, valid while fewer than `SIGNALS`
//! replays followed it; a replay is issued only once the one `SIGNALS`
//! before it finished). Signals are created once per backend and reused;
//! the 1 -> 0 convention is what a host observing completion expects (the
//! simulator checks release there).
//!
//! Arming ahead: signals are created holding 1, and after each doorbell
//! the signals of finished replays are set back to 1 (`rearm_finished`,
//! at most two per submit), so a submit usually takes an armed signal
//! (`armed` bitmask) and stores nothing before its doorbell: measured on
//! the simulator, that store was a third of the call-to-doorbell time. A
//! re-armed signal's `armed_by` is cleared: its replay is already known
//! finished (`known_done`).

use relaunch_device::hsa::Signal;

/// Completion signals per queue (replays in flight at once before a submit
/// waits for the oldest).
pub const SIGNALS: usize = 64;
// `SignalRing::armed` is one u64 bitmask over the signals (and `sig_of`
// keeps signal indexes as u8).
const _: () = assert!(SIGNALS == 64);

/// What the ring needs of a completion signal.
pub trait RingSignal {
    /// The current value (acquire: a value the GPU wrote after finishing a
    /// replay shows that replay's writes).
    fn load(&self) -> i64;
    /// Sets the value without waking waiters (re-arming a finished signal).
    fn silent_store_relaxed(&self, value: i64);
}

impl RingSignal for Signal {
    #[inline(always)]
    fn load(&self) -> i64 {
        Signal::load(self)
    }

    #[inline(always)]
    fn silent_store_relaxed(&self, value: i64) {
        Signal::silent_store_relaxed(self, value);
    }
}

/// The ring's bookkeeping for one queue generation, with that queue (`Q`).
// repr(C) here and below: what a submit reads first sits together, next
// to the Arc count a `Completion` bumps (layout only).
#[repr(C)]
pub struct SignalRing<Q> {
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
    pub queue: Q,
    /// The signal replay `seq` armed, at `seq % SIGNALS`.
    pub(crate) sig_of: [u8; SIGNALS],
    /// The replay that last armed each signal (0: none this generation).
    pub(crate) armed_by: [u64; SIGNALS],
}

impl<Q> SignalRing<Q> {
    /// Generation `epoch` on `queue`, no signal armed ahead (every signal
    /// free, at 0 or finished).
    pub fn new(queue: Q, epoch: u32) -> Self {
        SignalRing {
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
    pub fn all_armed(mut self) -> Self {
        self.armed = u64::MAX;
        self
    }

    /// Only the signals in `mask` (bit i: signal i) armed ahead, the rest
    /// free: for models and tests that want a signal reused within a few
    /// replays.
    pub fn with_armed(mut self, mask: u64) -> Self {
        self.armed = mask;
        self
    }

    /// Replays issued in this generation.
    pub fn issued(&self) -> u64 {
        self.issued
    }

    /// Records that replay `seq` armed signal `sig` (under the same lock as
    /// its publish).
    #[inline(always)]
    pub fn record(&mut self, seq: u64, sig: usize) {
        self.issued = seq;
        self.sig_of[(seq % SIGNALS as u64) as usize] = sig as u8;
        self.last_sig = sig as u8;
        self.armed_by[sig] = seq;
    }

    /// Replay `seq` (issued, this generation) finished: known, or its
    /// record was overwritten (only after it finished), or its signal was
    /// re-armed by a later replay (likewise), or its signal reached 0.
    pub fn done(&self, signals: &[impl RingSignal], seq: u64) -> bool {
        if seq <= self.known_done || seq + (SIGNALS as u64) <= self.issued {
            return true;
        }
        let sig = self.sig_of[(seq % SIGNALS as u64) as usize] as usize;
        self.armed_by[sig] != seq || signals[sig].load() <= 0
    }

    /// [`SignalRing::done`] for a signal already taken out of the list,
    /// whose current value is `value`.
    pub fn done_with_value(&self, seq: u64, value: i64) -> bool {
        if seq <= self.known_done || seq + (SIGNALS as u64) <= self.issued {
            return true;
        }
        value <= 0
    }

    /// How many replays of the generation finished (they finish in order).
    pub fn completed(&self, signals: &[impl RingSignal]) -> u64 {
        let first = self.issued.saturating_sub(SIGNALS as u64 - 1).max(1);
        (first..=self.issued)
            .find(|&seq| !self.done(signals, seq))
            .map_or(self.issued, |seq| seq - 1)
    }

    /// A signal for the next replay and whether it already holds 1: one
    /// armed in advance if any (the nearest after the previous replay's),
    /// else a free one to arm now; `None` if all are still running.
    #[inline]
    pub fn take_signal(&mut self, signals: &[impl RingSignal]) -> Option<(usize, bool)> {
        if let Some(i) = self.take_armed() {
            return Some((i, true));
        }
        self.free_signal(signals).map(|i| (i, false))
    }

    /// An armed signal, the nearest after the previous replay's; `None` if
    /// none is armed.
    #[inline]
    pub fn take_armed(&mut self) -> Option<usize> {
        if self.armed == 0 {
            return None;
        }
        let after = (self.last_sig as u32 + 1) % SIGNALS as u32;
        let i = (self.armed.rotate_right(after).trailing_zeros() + after) as usize % SIGNALS;
        self.armed &= !(1u64 << i);
        Some(i)
    }

    /// Returns a signal from `take_armed` that was not used after all.
    pub fn put_back_armed(&mut self, sig: usize) {
        self.armed |= 1u64 << sig;
    }

    /// Re-arms (to 1) the signals of finished replays, oldest first, at most
    /// `limit` of them: done after a doorbell, so the next submit finds an
    /// armed signal and stores nothing before ringing.
    pub fn rearm_finished(&mut self, signals: &[impl RingSignal], limit: usize) {
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

    /// Notes that replay `seq` is known finished (a poll saw it).
    pub fn note_done(&mut self, seq: u64) {
        self.known_done = self.known_done.max(seq);
    }

    /// A signal free to arm (its last replay finished), preferring the one
    /// the previous replay used; `None` if all are still running.
    pub fn free_signal(&mut self, signals: &[impl RingSignal]) -> Option<usize> {
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
