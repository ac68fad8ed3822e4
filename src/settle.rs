//! Keeping code alive under a replay that is still running.
//!
//! `hsa_executable_destroy` frees a module's code at once, and a replay in
//! flight that still points at it would fault. A retained IB (`Pm4Ib`) or
//! a graph's installed IBs (`GraphExec`, whose stream-ordered launches
//! return before the replay ends) dropped while the last replay runs hand
//! their modules (and the allocations their kernargs point into) here: a
//! helper thread waits for every lane of that replay to settle (finish,
//! fail or be abandoned with its queue) and only then drops them. If it does not settle within the wait, the
//! modules are leaked: freeing code under a running GPU is worse.
//! `Pm4MultiIb` needs none of this: its replays (Rust and `rl_pm4_replay_multi`)
//! wait before returning, and a lane that times out is abandoned (its queue
//! stopped), so nothing of it runs once the call returns.

use std::time::{Duration, Instant};

use relaunch_sched::hsa_backend::HsaWatch;
use relaunch_sched::Completion;

/// How long the helper waits before giving up and leaking.
const SETTLE_WAIT: Duration = Duration::from_secs(120);

/// Drops `keep` once every completion in `last` settled (at once when they
/// all have): the lanes of one replay, or a single IB's last replay.
pub(crate) fn until_settled<T: Send + 'static>(last: Vec<Completion<HsaWatch>>, keep: T) {
    // Finished or failed: nothing runs that reads the code any more.
    let running = |c: &Completion<HsaWatch>| matches!(c.is_complete(), Ok(false));
    if !last.iter().any(running) {
        drop(keep);
        return;
    }
    let slot = std::sync::Arc::new(parking_lot::Mutex::new(Some(keep)));
    let theirs = std::sync::Arc::clone(&slot);
    let spawned = std::thread::Builder::new()
        .name("relaunch-keepalive".to_string())
        .spawn(move || {
            let deadline = Instant::now() + SETTLE_WAIT;
            // A failed replay no longer runs; one that timed out may still.
            // Every lane is waited for, even after another one failed.
            let settled = last.iter().all(|c| {
                let left = deadline.saturating_duration_since(Instant::now());
                !matches!(
                    c.wait(left),
                    Err(relaunch_sched::SchedError::Timeout { .. })
                ) && !running(c)
            });
            let keep = theirs.lock().take();
            if settled {
                drop(keep);
            } else {
                tracing::error!("a replay did not settle; its modules' code is kept (leaked)");
                std::mem::forget(keep);
            }
        });
    if let Err(err) = spawned {
        tracing::error!("could not start the keep-alive thread ({err}); module code is leaked");
        std::mem::forget(slot.lock().take());
    }
}
