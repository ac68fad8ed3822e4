//! `Signal`: an HSA signal destroyed on drop, and timed waits that explain
//! themselves when they run out.

use std::sync::Arc;
use std::time::{Duration, Instant};

use relaunch_hsa_sys as sys;

use super::runtime::{Runtime, RuntimeInner};
use super::HsaError;

/// Longest single `hsa_signal_wait_*` slice, so queue errors and deadlines
/// are noticed promptly even if the runtime honours the hint loosely.
pub(crate) const WAIT_SLICE: Duration = Duration::from_millis(5);

/// An HSA signal (completion or doorbell-independent), destroyed on drop.
#[derive(Debug)]
pub struct Signal {
    pub(crate) inner: Arc<RuntimeInner>,
    handle: sys::Signal,
}

impl Runtime {
    /// Creates a signal with `initial` value, consumable by any agent.
    pub fn create_signal(&self, initial: i64) -> Result<Signal, HsaError> {
        let mut handle = sys::Signal::default();
        // SAFETY: initialised runtime; no consumer list (null, 0); valid out-pointer.
        let status =
            unsafe { (self.inner.api().signal_create)(initial, 0, std::ptr::null(), &mut handle) };
        self.inner.check("hsa_signal_create", status)?;
        Ok(Signal {
            inner: Arc::clone(&self.inner),
            handle,
        })
    }
}

impl Signal {
    /// The raw handle, e.g. for a packet's completion_signal field.
    pub fn handle(&self) -> sys::Signal {
        self.handle
    }

    /// Loads with acquire ordering.
    pub fn load(&self) -> i64 {
        // SAFETY: live signal of a live runtime.
        unsafe { (self.inner.api().signal_load_scacquire)(self.handle) }
    }

    /// Stores with release ordering (wakes waiters).
    pub fn store_release(&self, value: i64) {
        // SAFETY: live signal of a live runtime.
        unsafe { (self.inner.api().signal_store_screlease)(self.handle, value) }
    }

    /// Stores with relaxed ordering (wakes waiters).
    pub fn store_relaxed(&self, value: i64) {
        // SAFETY: live signal of a live runtime.
        unsafe { (self.inner.api().signal_store_relaxed)(self.handle, value) }
    }

    /// Stores without waking waiters: for re-arming a completion signal
    /// before its packet is submitted.
    pub fn silent_store_relaxed(&self, value: i64) {
        // SAFETY: live signal of a live runtime.
        unsafe { (self.inner.api().signal_silent_store_relaxed)(self.handle, value) }
    }

    /// One bounded wait for the value to drop below `below`; returns the
    /// value observed (may be early: callers re-check).
    pub(crate) fn wait_slice_below(&self, below: i64, slice: Duration) -> i64 {
        let ticks = (slice.as_nanos() * self.inner.timestamp_hz as u128 / 1_000_000_000)
            .clamp(1, u64::MAX as u128) as u64;
        // SAFETY: live signal of a live runtime; condition/wait-state are
        // valid enum values.
        unsafe {
            (self.inner.api().signal_wait_scacquire)(
                self.handle,
                sys::HSA_SIGNAL_CONDITION_LT,
                below,
                ticks,
                sys::HSA_WAIT_STATE_BLOCKED,
            )
        }
    }

    /// One bounded wait (at most `slice`) for the value to differ from
    /// `seen`; returns the value observed, which may still be `seen`
    /// (a listener's wake-up: callers loop and re-check).
    pub fn wait_changed(&self, seen: i64, slice: Duration) -> i64 {
        let ticks = (slice.as_nanos() * self.inner.timestamp_hz as u128 / 1_000_000_000)
            .clamp(1, u64::MAX as u128) as u64;
        // SAFETY: live signal of a live runtime; condition/wait-state are
        // valid enum values.
        unsafe {
            (self.inner.api().signal_wait_scacquire)(
                self.handle,
                sys::HSA_SIGNAL_CONDITION_NE,
                seen,
                ticks,
                sys::HSA_WAIT_STATE_BLOCKED,
            )
        }
    }

    /// Waits until the value is below `below`, for at most `timeout`.
    /// `what` names the wait in a timeout error.
    pub fn wait_below(&self, below: i64, timeout: Duration, what: &str) -> Result<i64, HsaError> {
        let start = Instant::now();
        loop {
            let remaining = timeout.saturating_sub(start.elapsed());
            let seen = self.wait_slice_below(below, remaining.min(WAIT_SLICE));
            if seen < below {
                return Ok(seen);
            }
            if start.elapsed() >= timeout {
                return Err(HsaError::Timeout {
                    what: format!(
                        "{what} (signal {:#x}) to drop below {below}",
                        self.handle.handle
                    ),
                    waited: start.elapsed(),
                    seen,
                    state: "nothing else was waited on".to_string(),
                });
            }
        }
    }
}

impl Signal {
    /// Gives the signal up without destroying it: for a signal a packet
    /// still running may decrement (destroying it under the GPU is worse
    /// than leaking it). The runtime reference it held is released.
    pub fn leak(self) {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used again and its Drop never runs, so the
        // Arc is read out exactly once and released here.
        drop(unsafe { std::ptr::read(&this.inner) });
    }
}

impl Drop for Signal {
    fn drop(&mut self) {
        // SAFETY: we own this signal; the runtime is alive (we hold its Arc).
        let status = unsafe { (self.inner.api().signal_destroy)(self.handle) };
        if status != sys::HSA_STATUS_SUCCESS {
            tracing::warn!(
                signal = self.handle.handle,
                "hsa_signal_destroy failed: {}",
                self.inner.describe(status)
            );
        }
    }
}
