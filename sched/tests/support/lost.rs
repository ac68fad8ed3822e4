//! What both device-lost tests (simulator and scripted ROCr table) check
//! after a GPU is lost; included by `#[path]` (a file in a folder is not a
//! test of its own).

use std::time::{Duration, Instant};

use relaunch_sched::backend::QueueBackend;
use relaunch_sched::scheduler::MultiIb;

/// Five more replays of `multi` on the lost GPU: each fails with
/// device-lost within 1 s and names the faulting address `wild`.
pub fn later_replays_fail_at_once<B: QueueBackend>(multi: &MultiIb<B>, wild: u64, wait: Duration) {
    for _ in 0..5 {
        let started = Instant::now();
        let err = match multi.replay() {
            Err(e) => e,
            Ok(c) => c.wait(wait).unwrap_err(),
        };
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "took {:?}",
            started.elapsed()
        );
        assert!(err.is_device_lost(), "{err}");
        assert!(err.to_string().contains(&format!("{wild:#x}")), "{err}");
    }
}
