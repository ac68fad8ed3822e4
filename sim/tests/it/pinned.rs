//! A worker keeps the allocation map read-locked while it runs a kernel
//! (one lock instead of one per access) and lets waiting writers through
//! every few thousand instructions: a host thread allocating and freeing
//! while a kernel spins is not held up until the kernel ends.

use std::time::{Duration, Instant};

use relaunch_sim::device::SimConfig;
use relaunch_sim::memory::MemKind;
use relaunch_testsupport::asm;
use relaunch_testsupport::simkit::{one_group_packet, Rig};

const TARGET: &str = "gfx1100";
/// How long the kernel gets to start, and the allocations to go through
/// (a loaded 2-core host can be slow; a writer held until the kernel's
/// end would wait forever).
const LIMIT: Duration = Duration::from_secs(30);

#[test]
fn allocations_and_frees_go_through_while_a_kernel_spins() {
    if !asm::tools() {
        return;
    }
    let code = asm::spinning(TARGET);
    let rig = Rig::from_bytes(SimConfig::new(TARGET), &code);
    let lane = rig.lane();
    let out = rig.alloc(4);
    let kernarg = rig.alloc(8);
    let mem = &rig.dev.memory;
    mem.write_u64(kernarg, out).unwrap();
    lane.signal.1.store(1);
    lane.publish_raw(one_group_packet(
        rig.image.kernels[0].kd_addr,
        kernarg,
        lane.signal.0,
    ));
    let start = Instant::now();
    while mem.read_u32(out).unwrap() != 1 {
        assert!(start.elapsed() < LIMIT, "the kernel did not start");
        std::thread::sleep(Duration::from_millis(5));
    }
    let start = Instant::now();
    for _ in 0..20 {
        let a = mem.allocate(4096, MemKind::Device).unwrap();
        mem.free(a).unwrap();
    }
    let took = start.elapsed();
    // Still spinning: nothing completed it.
    assert_eq!(lane.signal.1.load(), 1);
    lane.queue.inactivate();
    assert!(
        took < LIMIT,
        "20 allocations and frees took {took:?} beside a running kernel"
    );
}
