//! Keeping code alive under a replay that is still running, and bounding
//! that replay.
//!
//! `hsa_executable_destroy` frees a module's code at once, and a replay in
//! flight that still points at it would fault. A retained IB (`Pm4Ib`) or
//! a graph's installed IBs (`GraphExec`, whose stream-ordered launches
//! return before the replay ends) dropped while the last replay runs hand
//! their modules (and the allocations their kernargs point into) here: a
//! helper thread waits for every lane of that replay to settle (finish,
//! fail or be abandoned with its queue) and only then drops them.
//! `Pm4MultiIb` needs none of this: its replays (Rust and `rl_pm4_replay_multi`)
//! wait before returning, and a lane that times out is abandoned (its queue
//! stopped), so nothing of it runs once the call returns.
//!
//! Nobody can wait for such a replay any more (the C ABI drops an IB's
//! unwaited `rl_pm4_replay_async` replays with it), so it gets the timeout
//! contract a waited replay gets: still running after [`REPLAY_TIMEOUT`],
//! it is abandoned (its queue stopped: it changes no memory and runs no
//! code any more), and then what it kept is dropped. [`Gpu::abandon_unwaited`]
//! abandons them at once; the C ABI calls it when a device's last handle
//! is freed, since then nothing could ever observe them. Only a replay that
//! cannot be abandoned (its queue refused to stop) keeps its modules'
//! code for ever: freeing code under a running GPU is worse than leaking it.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use relaunch_sched::hsa::HsaWatch;
use relaunch_sched::Completion;

use crate::gpu::Gpu;
use crate::pm4::REPLAY_TIMEOUT;

/// The lanes of one replay nobody waits for.
type Job = [Completion<HsaWatch>];

/// How often a helper thread looks again between waits, so an abandonment
/// by [`Gpu::abandon_unwaited`] is acted on promptly (a finishing replay
/// wakes it at once).
const SLICE: Duration = Duration::from_millis(20);

/// A GPU's replays nobody waits for (their helper threads hold them).
#[derive(Default)]
pub(crate) struct Unwaited {
    jobs: Mutex<Vec<Weak<Job>>>,
}

impl Unwaited {
    fn register(&self, job: &Arc<Job>) {
        let mut jobs = self.jobs.lock();
        jobs.retain(|j| j.strong_count() > 0);
        jobs.push(Arc::downgrade(job));
    }

    /// Abandons every lane still running; how many were.
    fn abandon_all(&self) -> usize {
        let jobs: Vec<Arc<Job>> = self.jobs.lock().iter().filter_map(Weak::upgrade).collect();
        jobs.iter().map(|job| abandon_running(job)).sum()
    }
}

/// Finished or failed (abandoned included): nothing runs that reads the
/// code any more.
fn running(c: &Completion<HsaWatch>) -> bool {
    matches!(c.is_complete(), Ok(false))
}

/// Abandons every lane of `job` still running; how many were.
fn abandon_running(job: &Job) -> usize {
    let mut count = 0;
    for c in job.iter().filter(|c| running(c)) {
        count += 1;
        // An abandonment is an error by design; any other is logged.
        match c.wait_or_abandon(Duration::ZERO) {
            Ok(()) | Err(relaunch_sched::SchedError::Abandoned { .. }) => {}
            Err(err) => tracing::warn!("abandoning a replay nobody waits for: {err}"),
        }
    }
    count
}

impl Gpu {
    /// Abandons at once every replay of this GPU that nobody can wait for
    /// any more: the last replay of an IB or graph dropped while it ran
    /// (otherwise abandoned [`REPLAY_TIMEOUT`] after the drop). Their
    /// queues are stopped, so they change no memory and run no code once
    /// this returns; the modules and allocations they kept are then
    /// dropped. For front ends at the point where no handle of the device
    /// is left (the C ABI: the last handle of an `RlGpu` freed). Returns
    /// how many replay lanes were still running.
    pub fn abandon_unwaited(&self) -> usize {
        self.inner.unwaited.abandon_all()
    }
}

/// Drops `keep` once every completion in `last` settled (at once when they
/// all have): the lanes of one replay, or a single IB's last replay.
pub(crate) fn until_settled<T: Send + 'static>(
    gpu: &Gpu,
    last: Vec<Completion<HsaWatch>>,
    keep: T,
) {
    until_settled_within(gpu, last, keep, REPLAY_TIMEOUT);
}

/// [`until_settled`], abandoning what still runs after `limit`.
fn until_settled_within<T: Send + 'static>(
    gpu: &Gpu,
    last: Vec<Completion<HsaWatch>>,
    keep: T,
    limit: Duration,
) {
    if !last.iter().any(running) {
        drop(keep);
        return;
    }
    let job: Arc<Job> = last.into();
    gpu.inner.unwaited.register(&job);
    let slot = Arc::new(Mutex::new(Some(keep)));
    let theirs = Arc::clone(&slot);
    let spawned = std::thread::Builder::new()
        .name("relaunch-keepalive".to_string())
        .spawn(move || {
            let deadline = Instant::now() + limit;
            // Every lane is waited for, even after another one failed.
            while let Some(lane) = job.iter().find(|c| running(c)) {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                // Timeouts and failures alike are judged by `running`.
                let _ = lane.wait(left.min(SLICE));
            }
            let abandoned = abandon_running(&job);
            if abandoned > 0 {
                tracing::warn!(
                    abandoned,
                    timeout = ?limit,
                    "a replay nobody waits for was still running after the timeout; abandoned"
                );
            }
            let keep = theirs.lock().take();
            if job.iter().any(running) {
                tracing::error!(
                    "a replay could not be abandoned; its modules' code is kept (leaked)"
                );
                std::mem::forget(keep);
            } else {
                drop(keep);
            }
        });
    if let Err(err) = spawned {
        tracing::error!("could not start the keep-alive thread ({err}); module code is leaked");
        std::mem::forget(slot.lock().take());
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use relaunch_testsupport::asm;

    use crate::{Geometry, Gpu};

    const LIMIT: Duration = Duration::from_millis(300);

    /// A replay nobody waits for that is still running after the limit is
    /// abandoned by the helper, which then drops what it kept (the
    /// production limit is `REPLAY_TIMEOUT`, 60 s; 300 ms here).
    #[test]
    fn a_replay_still_running_after_the_limit_is_abandoned_and_its_keep_dropped() {
        if !asm::tools() {
            return;
        }
        let gpu = Gpu::open("sim:gfx1201").unwrap();
        let module = gpu.load_module(&asm::spinning("gfx1201")).unwrap();
        let out = gpu.alloc(4, true).unwrap();
        let geometry = Geometry {
            grid: [32, 1, 1],
            block: [32, 1, 1],
            dynamic_group_bytes: 0,
        };
        let kernarg = module
            .pack_kernargs("spin", &out.address().to_le_bytes(), &geometry)
            .unwrap();
        let mut b = gpu.builder();
        b.dispatch(&module, "spin", [32, 1, 1], [32, 1, 1], 0, &kernarg)
            .unwrap();
        let ib = gpu.finalize(b).unwrap();
        let replay = ib.replay_async().unwrap();
        let kept = Arc::new(());
        let start = Instant::now();
        super::until_settled_within(
            &gpu,
            vec![replay.completion.clone()],
            Arc::clone(&kept),
            LIMIT,
        );
        // Generous: the helper acts at 300 ms, then within a 20 ms slice.
        while Arc::strong_count(&kept) > 1 && start.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(Arc::strong_count(&kept), 1, "the keep was not dropped");
        // The helper's deadline counts from inside the call.
        assert!(start.elapsed() >= LIMIT, "dropped before the limit");
        let err = replay.wait(Duration::ZERO).unwrap_err().to_string();
        assert!(err.contains("abandoned"), "{err}");
        assert_eq!(gpu.abandon_unwaited(), 0, "nothing left running");
    }
}
