//! The timeout contract (#15 item 11): a replay that does not finish in
//! time is abandoned. Its queue is stopped, so it changes no memory after
//! the call returns; the next replay of the IB runs on a new queue; freeing
//! everything does not block on the stuck kernel; nothing leaks.
//!
//! One test in this binary: it counts the simulator's process-wide live
//! allocations.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use relaunch::{Geometry, Gpu};
use relaunch_sim::twins::{register_twin, registry};

const N: u32 = 64;
/// The scalar that makes the twin hang.
const HANG: u32 = 0xDEAD;

static RELEASE: AtomicBool = AtomicBool::new(false);
/// The hung twin's store after its release: 0 not yet, 1 landed, 2 refused.
static LATE_STORE: AtomicU8 = AtomicU8::new(0);

fn live_allocations() -> usize {
    relaunch_sim::hsa::memory().stats().live_allocations
}

#[test]
fn a_timed_out_replay_is_abandoned_its_queue_replaced_and_nothing_leaks() {
    let baseline = live_allocations();
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let fixture = relaunch_testsupport::fixture("gfx1201", "add_scalar");
    let module = gpu.load_module(&fixture).unwrap();
    // add_scalar as before, except that a scalar of HANG hangs until
    // released, then tries one more store.
    // The twin to wrap, registered explicitly (the simulator registers
    // none by default).
    relaunch_testsupport::twins::register_test_kernel_twins();
    let plain = registry().lookup("add_scalar").expect("add_scalar's twin");
    register_twin("add_scalar", move |wg| {
        if wg.arg_u32(8)? != HANG {
            return plain(wg);
        }
        let start = Instant::now();
        while !RELEASE.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(2));
        }
        let at = wg.arg_u64(0)?;
        let landed = wg.store_u32(at, 777);
        LATE_STORE.store(if landed.is_ok() { 1 } else { 2 }, Ordering::Release);
        landed
    });
    let geometry = Geometry {
        grid: [N, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
    };
    let acc = gpu.alloc(4 * N as usize, true).unwrap();
    let kernarg = |scalar: u32| {
        let mut explicit = acc.address().to_le_bytes().to_vec();
        explicit.extend_from_slice(&scalar.to_le_bytes());
        module
            .pack_kernargs("add_scalar", &explicit, &geometry)
            .unwrap()
    };
    let mut b = gpu.builder();
    b.dispatch(
        &module,
        "add_scalar",
        [N, 1, 1],
        [32, 1, 1],
        0,
        &kernarg(HANG),
    )
    .unwrap();
    let mut ib = gpu.finalize(b).unwrap();

    let err = ib
        .replay_within(Duration::from_millis(300))
        .expect_err("the hung replay must time out");
    let text = err.to_string();
    assert!(text.contains("abandoned"), "{text}");

    // The next replay runs on a new queue, without waiting for the hung one.
    ib.set_kernargs(0, 8, &5u32.to_le_bytes()).unwrap();
    let start = Instant::now();
    ib.replay_within(Duration::from_secs(20)).unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    for i in 0..N as usize {
        assert_eq!(acc.read_u32(4 * i).unwrap(), 5, "acc[{i}]");
    }

    // Freeing everything does not wait for the kernel that never returned.
    let start = Instant::now();
    drop((ib, module));
    // The abandoned kernel's late store does not land.
    RELEASE.store(true, Ordering::Release);
    let until = Instant::now() + Duration::from_secs(10);
    while LATE_STORE.load(Ordering::Acquire) == 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(
        LATE_STORE.load(Ordering::Acquire),
        2,
        "the late store landed"
    );
    assert_eq!(acc.read_u32(0).unwrap(), 5);
    drop(acc);
    drop(gpu);
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    let until = Instant::now() + Duration::from_secs(5);
    while live_allocations() != baseline && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(live_allocations(), baseline, "allocations leaked");
}
