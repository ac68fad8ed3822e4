//! A kernel twin that never returns must not make destroying its queue
//! (and so freeing the GPU) block forever (#15 item 11, bounded joins).

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use relaunch_sim::twins::register_twin;
use relaunch_testsupport::simkit::{linear, Rig};

static RELEASE: AtomicBool = AtomicBool::new(false);
/// What the twin's store after its release did: 0 not yet, 1 landed,
/// 2 refused.
static LATE_STORE: AtomicU8 = AtomicU8::new(0);

#[test]
fn destroying_a_queue_stuck_in_a_twin_returns_within_the_bound() {
    let rig = Rig::new("gfx1100", "counter", 0);
    // The hanging twin stands in for the counter kernel's machine code.
    register_twin("counter", |wg| {
        let at = wg.arg_u64(0)?;
        // "Never" returns: until the test lets it go, at most a minute.
        let start = Instant::now();
        while !RELEASE.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let landed = wg.store_u32(at, 99);
        LATE_STORE.store(if landed.is_ok() { 1 } else { 2 }, Ordering::Release);
        landed
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
    // The destroyed queue's work is discarded: the late store is refused.
    let start = Instant::now();
    while LATE_STORE.load(Ordering::Acquire) == 0 && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        LATE_STORE.load(Ordering::Acquire),
        2,
        "the late store landed"
    );
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 0);
}
