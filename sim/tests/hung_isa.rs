//! An abandoned hung kernel stops running (issue 30, finding 4). A kernel
//! the interpreter runs that loops forever without touching memory used
//! to keep its queue's thread busy after the queue was given up (memory
//! refusals only end kernels that access memory). Now the interpreter
//! checks its queue's inactivation at every workgroup and every
//! `CHECK_EVERY` instructions, on both fronts: the simulator's own queues
//! (`SimQueue::inactivate`, what `hsa_queue_inactivate` does) and the
//! runtime-built rings of the driver front (ROCr's inactivate destroys
//! the driver's queue).
//!
//! One test in this binary: it measures the whole process's CPU time.

use std::sync::Arc;
use std::time::{Duration, Instant};

use relaunch_sim::device::SimConfig;
use relaunch_sim::driver::{queue::amd_signal, Driver, QueueKind};
use relaunch_sim::memory::{DeviceMemory, MemKind};
use relaunch_testsupport::simkit::{one_group_packet, Rig};
use relaunch_testsupport::{asm, process};

const TARGET: &str = "gfx1100";
/// How long the kernel gets to start (a loaded 2-core host can be slow).
const START_LIMIT: Duration = Duration::from_secs(30);
/// Time given to the interpreter to notice, before measuring: its check
/// comes every few thousand instructions (well under a millisecond), so
/// half a second is ample even on a loaded host.
const GRACE: Duration = Duration::from_millis(500);
/// The window CPU time is measured over after abandonment.
const WINDOW: Duration = Duration::from_secs(2);
/// Most CPU time the whole process may use over `WINDOW` once the kernel
/// was abandoned: a spinning interpreter uses about the whole window (one
/// core); an idle process (sleeping processor threads polling every 20 ms)
/// uses a few milliseconds. A tenth of the window separates the two with
/// a wide margin either way.
const IDLE_CPU: Duration = Duration::from_millis(200);

/// CPU time the process uses over `WINDOW`.
fn cpu_over_window() -> Duration {
    process::cpu_over(WINDOW)
}

/// Wait until `out` holds 1: the kernel started (its first store landed).
fn wait_started(mem: &DeviceMemory, out: u64) {
    let start = Instant::now();
    while mem.read_u32(out).unwrap() != 1 {
        assert!(start.elapsed() < START_LIMIT, "the kernel did not start");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The simulator's own queue, inactivated while the kernel spins.
fn sim_front(code: &[u8]) {
    let rig = Rig::from_bytes(SimConfig::new(TARGET), code);
    let lane = rig.lane();
    let out = rig.alloc(4);
    let kernarg = rig.alloc(8);
    rig.dev.memory.write_u64(kernarg, out).unwrap();
    lane.signal.1.store(1);
    let kd = rig.image.kernels[0].kd_addr;
    lane.publish_raw(one_group_packet(kd, kernarg, lane.signal.0));
    wait_started(&rig.dev.memory, out);
    let spinning = cpu_over_window();
    lane.queue.inactivate();
    std::thread::sleep(GRACE);
    let abandoned = cpu_over_window();
    println!(
        "sim front: CPU over {WINDOW:?}: {spinning:?} spinning, {abandoned:?} after inactivation"
    );
    assert!(
        abandoned < IDLE_CPU,
        "the inactivated queue's kernel still runs: {abandoned:?} of CPU over {WINDOW:?}"
    );
    // Discarded: never signalled, nothing reported.
    assert_eq!(lane.signal.1.load(), 1);
    assert!(lane.queue.errors().is_empty(), "{:?}", lane.queue.errors());
}

/// A ring the runtime built (ROCr's), destroyed while the kernel spins.
fn driver_front(code: &[u8]) {
    let driver = Driver::open(vec![SimConfig::new(TARGET)]).unwrap();
    let gpu = Arc::clone(driver.gpu(1).unwrap());
    let image = gpu.load_code_object(code).unwrap();
    let mem = Arc::clone(driver.device_memory());
    let alloc = |len: usize| mem.allocate(len, MemKind::Driver).unwrap();
    let ring_bytes = 64 * 64;
    let ring = alloc(ring_bytes);
    for slot in 0..64u64 {
        // Every slot INVALID until published.
        mem.store_u32_release(ring + 64 * slot, 1).unwrap();
    }
    // `amd_queue_t` zeroed: no inactive signal, so nothing is reported.
    let amd_queue = alloc(256);
    let signal = alloc(64);
    mem.write_u64(signal + amd_signal::VALUE, 1).unwrap();
    let (out, kernarg) = (alloc(4), alloc(8));
    mem.write_u64(kernarg, out).unwrap();
    let created = driver
        .create_queue(1, QueueKind::ComputeAql, ring, ring_bytes as u64, amd_queue)
        .unwrap();
    let (queue, doorbell) = (created.id, created.doorbell);
    let packet = one_group_packet(image.kernels[0].kd_addr, kernarg, signal);
    mem.write(ring + 4, &packet[4..]).unwrap();
    let header = u32::from_le_bytes(packet[..4].try_into().unwrap());
    mem.store_u32_release(ring, header).unwrap();
    mem.store_u64_release(doorbell, 0).unwrap();
    wait_started(&mem, out);
    let spinning = cpu_over_window();
    let start = Instant::now();
    driver.destroy_queue(queue).unwrap();
    let took = start.elapsed();
    std::thread::sleep(GRACE);
    let abandoned = cpu_over_window();
    println!(
        "driver front: CPU over {WINDOW:?}: {spinning:?} spinning, {abandoned:?} after destroy \
         (destroy took {took:?})"
    );
    assert!(
        abandoned < IDLE_CPU,
        "the destroyed queue's kernel still runs: {abandoned:?} of CPU over {WINDOW:?}"
    );
    // Discarding does not wait out the join bound (the processor exits
    // within its 20 ms idle poll; the bound is 100 times that).
    assert!(
        took < relaunch_sim::queue::DESTROY_JOIN_LIMIT,
        "destroy waited {took:?} for the processor"
    );
    // The driver's destroy discards work in flight: never signalled.
    assert_eq!(mem.read_u64(signal + amd_signal::VALUE).unwrap(), 1);
    assert!(driver.queue_errors().is_empty());
    driver.close();
}

#[test]
fn an_abandoned_hung_kernel_stops_running_on_both_fronts() {
    if !asm::tools() {
        return;
    }
    let code = asm::spinning(TARGET);
    sim_front(&code);
    driver_front(&code);
}
