//! Waiting for a replay from Python: the GIL is released while waiting,
//! and every [`SLICE`] the wait takes it back to run signal handlers, so
//! Ctrl-C reaches a hung replay at once instead of after the 60 s replay
//! timeout. An exception from a handler (`KeyboardInterrupt`) abandons
//! the replay exactly as the timeout does (docs/architecture.md, "The
//! timeout contract"): its queue is stopped, it changes no memory after
//! the exception is raised, and the next replay runs on a new queue.

use std::time::{Duration, Instant};

use pyo3::prelude::*;

use crate::errors::call;

/// How long the GIL stays released between checks for signals.
const SLICE: Duration = Duration::from_millis(50);

/// Waits for `replay` (of `what`) up to `facade::REPLAY_TIMEOUT`,
/// interruptibly.
pub fn replay(py: Python<'_>, what: &str, replay: &facade::Replay) -> PyResult<()> {
    let deadline = Instant::now() + facade::REPLAY_TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return py.detach(|| {
                call(what, || {
                    replay.wait_or_abandon(Duration::ZERO).map_err(|e| {
                        e.context(format!("{what} waited {:?}", facade::REPLAY_TIMEOUT))
                    })
                })
            });
        }
        let done = py.detach(|| {
            call(what, || match replay.wait(left.min(SLICE)) {
                Ok(()) => Ok(true),
                // Still running: only this slice timed out.
                Err(e) => match replay.is_complete() {
                    Ok(false) => Ok(false),
                    _ => Err(e),
                },
            })
        })?;
        if done {
            return Ok(());
        }
        if let Err(interrupted) = py.check_signals() {
            // Given up as a timeout gives it up; whatever it reports then
            // (it may have just finished) is superseded by the interrupt.
            let _ = py.detach(|| replay.wait_or_abandon(Duration::ZERO));
            return Err(interrupted);
        }
    }
}
