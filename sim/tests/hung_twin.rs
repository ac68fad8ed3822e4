//! A kernel twin that never returns must not make destroying its queue
//! (and so freeing the GPU) block forever (#15 item 11, bounded joins).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use relaunch_sim::testkit::{linear, Rig};
use relaunch_sim::twins::register_twin;

static RELEASE: AtomicBool = AtomicBool::new(false);

#[test]
fn destroying_a_queue_stuck_in_a_twin_returns_within_the_bound() {
    let rig = Rig::new("gfx1100", "counter", 0);
    // Registered after the rig (which installs the built-in twins).
    register_twin("counter", |_wg| {
        // "Never" returns: until the test lets it go, at most a minute.
        let start = Instant::now();
        while !RELEASE.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    });
    let c = rig.alloc(4);
    let lane = rig.lane();
    let ib = rig.place(rig.counter(c, 1, None, &linear(1, 1)));
    lane.publish(&ib);
    // The processor is inside the twin now (or about to be).
    assert!(lane.wait(Duration::from_millis(200)).is_err());
    let start = Instant::now();
    lane.queue.destroy();
    let took = start.elapsed();
    RELEASE.store(true, Ordering::Release);
    assert!(
        took < relaunch_sim::queue::DESTROY_JOIN_LIMIT + Duration::from_secs(3),
        "destroy blocked {took:?}"
    );
}
