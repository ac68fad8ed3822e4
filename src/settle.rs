//! Keeping code alive under a replay that is still running.
//!
//! `hsa_executable_destroy` frees a module's code at once, and a replay in
//! flight that still points at it would fault. A retained IB dropped while
//! its last replay runs hands its modules here: a helper thread waits for
//! that replay to settle (finish, fail or be abandoned with its queue) and
//! only then drops them. If it does not settle within the wait, the
//! modules are leaked: freeing code under a running GPU is worse.

use std::time::Duration;

use relaunch_sched::hsa_backend::HsaWatch;
use relaunch_sched::Completion;

/// How long the helper waits before giving up and leaking.
const SETTLE_WAIT: Duration = Duration::from_secs(120);

/// Drops `keep` once `last` settled (at once when it already has).
pub(crate) fn until_settled<T: Send + 'static>(last: Completion<HsaWatch>, keep: T) {
    // Finished or failed: nothing runs that reads the code any more.
    if !matches!(last.is_complete(), Ok(false)) {
        drop(keep);
        return;
    }
    let slot = std::sync::Arc::new(parking_lot::Mutex::new(Some(keep)));
    let theirs = std::sync::Arc::clone(&slot);
    let spawned = std::thread::Builder::new()
        .name("relaunch-keepalive".to_string())
        .spawn(move || {
            // A failed replay no longer runs; one that timed out may still.
            let settled = !matches!(
                last.wait(SETTLE_WAIT),
                Err(relaunch_sched::SchedError::Timeout { .. })
            ) && !matches!(last.is_complete(), Ok(false));
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
