//! Replays nobody waits for (issue 30, finding 5): an IB dropped while its
//! replay hangs hands the replay to a keep-alive helper, which used to
//! wait 120 s and then leak the modules it held, and with them the device,
//! its queue, the hung kernel and the IB's memory. `Gpu::abandon_unwaited`
//! (what the C ABI calls when a device's last handle is freed) abandons it
//! at once; then everything goes: allocations, signals and threads come
//! back to what they were before the device was opened. (Without the call
//! the helper abandons it after `REPLAY_TIMEOUT`: `settle`'s unit test.)
//!
//! One test in this binary: it counts the process's threads and the
//! simulator's process-wide allocations and signals.

use std::time::{Duration, Instant};

use relaunch::{Geometry, Gpu};
use relaunch_testsupport::{asm, process};

/// How long the kernel gets to start (a loaded 2-core host can be slow).
const START_LIMIT: Duration = Duration::from_secs(30);
/// How long teardown gets after the abandonment: the helper notices within
/// 20 ms; the rest is joining threads on a loaded host. Far below the 60 s
/// replay timeout, which must not be what ends the replay.
const TEARDOWN_LIMIT: Duration = Duration::from_secs(20);

fn live() -> (usize, usize) {
    (
        relaunch_sim::hsa::memory().stats().live_allocations,
        relaunch_sim::hsa::signals().live(),
    )
}

#[test]
fn abandoning_unwaited_replays_frees_what_they_kept() {
    if !asm::tools() {
        return;
    }
    // The simulated system's process-wide threads start with the first
    // device: start them before the baselines are taken.
    drop(Gpu::open("sim:gfx1201").unwrap());
    let threads = process::steady_threads(TEARDOWN_LIMIT);
    let baseline = live();

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
    let start = Instant::now();
    while out.read_u32(0).unwrap() != 1 {
        assert!(start.elapsed() < START_LIMIT, "the kernel did not start");
        std::thread::sleep(Duration::from_millis(5));
    }
    // Nobody waits: every handle but the GPU goes.
    drop((replay, ib, module, out));
    assert_eq!(gpu.abandon_unwaited(), 1, "one replay was running");
    assert_eq!(gpu.abandon_unwaited(), 0, "abandoned already");
    drop(gpu);

    let deadline = Instant::now() + TEARDOWN_LIMIT;
    while live() != baseline && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(live(), baseline, "(allocations, signals) leaked");
    let left = process::wait_threads_at_most(threads, TEARDOWN_LIMIT);
    assert!(
        left <= threads,
        "{left} threads left, {threads} before: {:?}",
        process::thread_names()
    );
}
