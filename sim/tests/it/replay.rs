//! End to end through an AQL queue: encode with the encoders' IbBuilder,
//! submit one vendor PM4-IB packet, let the simulated packet processor run
//! it, and check results, violations, faults and recovery.

use std::time::{Duration, Instant};

use relaunch_encoders::BoundaryKind;
use relaunch_facts::regs::off;
use relaunch_sim::{FaultPlan, QueueErrorKind};
use relaunch_testsupport::simkit::{
    linear, one_group_dispatch, packet_bytes, PlacedIb, Rig, TARGETS,
};

/// `n` single-work-item counter dispatches placed as one IB.
fn counter_ib(rig: &Rig, counter: u64, n: usize, boundary: Option<BoundaryKind>) -> PlacedIb {
    rig.place(rig.counter(counter, n, boundary, &linear(1, 1)))
}

/// produce(buf, 3) then consume(out, buf) placed as one IB; (ib, buf, out).
fn producer_consumer(rig: &Rig, boundary: Option<BoundaryKind>) -> (PlacedIb, u64, u64) {
    let (b, buf, out) = rig.producer_consumer(boundary);
    (rig.place(b), buf, out)
}

#[test]
fn counter_256_dispatches_with_rmw_boundaries_on_every_target() {
    for target in TARGETS {
        let rig = Rig::new(target, "counter", 7);
        let lane = rig.lane();
        let c = rig.alloc(4);
        let ib = counter_ib(&rig, c, 256, Some(BoundaryKind::Rmw));
        lane.replay(&ib).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 256, "{target}");
        lane.replay(&ib).unwrap();
        assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 512, "{target}");
        assert_eq!(rig.dev.take_violations().0, vec![]);
    }
}

#[test]
fn healthy_ibs_pass_under_twenty_seeds() {
    for seed in 0..20 {
        let rig = Rig::new("gfx1201", "produce_consume", seed);
        let lane = rig.lane();
        let (ib, _, out) = producer_consumer(&rig, Some(BoundaryKind::Rmw));
        lane.replay(&ib)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        lane.replay(&ib).unwrap();
        // out[i] += 3i twice.
        assert_eq!(rig.dev.memory.read_u32(out + 4 * 10).unwrap(), 60);
    }
}

fn broken(rig: &Rig, ib: &PlacedIb, kind: QueueErrorKind, needles: &[&str]) {
    let lane = rig.lane();
    let start = Instant::now();
    let err = lane.replay(ib).unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(5));
    let first = lane.first_error().unwrap();
    assert_eq!(first.kind, kind, "{first}");
    for n in needles {
        assert!(err.contains(n), "missing {n:?} in: {err}");
    }
    assert!(lane.queue.is_dead());
}

#[test]
fn missing_boundary_is_a_race() {
    let rig = Rig::new("gfx1100", "produce_consume", 1);
    let (ib, buf, _) = producer_consumer(&rig, None);
    broken(
        &rig,
        &ib,
        QueueErrorKind::Violation,
        &[
            "race at",
            &format!("{buf:#x}"),
            "dispatch 1 (consume)",
            "dispatch 0 (produce)",
        ],
    );
}

#[test]
fn boundary_without_invalidation_is_a_stale_read() {
    let rig = Rig::new("gfx1030", "produce_consume", 1);
    let (ib, _, _) = producer_consumer(&rig, Some(BoundaryKind::Wait));
    broken(
        &rig,
        &ib,
        QueueErrorKind::Violation,
        &["stale read", "GLV_INV"],
    );
}

#[test]
fn rsrc2_user_sgpr_mismatch_is_refused() {
    let rig = Rig::new("gfx1201", "counter", 1);
    let c = rig.alloc(4);
    let ib = counter_ib(&rig, c, 2, Some(BoundaryKind::Rmw));
    let mut dwords = ib.dwords.clone();
    // The first SET_SH_REG RSRC1/RSRC2 run: header, offset 0x212, rsrc1, rsrc2.
    let at = dwords
        .windows(2)
        .position(|w| w[0] >> 16 == 0xC002 && w[1] == off::COMPUTE_PGM_RSRC1 as u32)
        .unwrap();
    dwords[at + 3] += 1 << 1;
    let bad = rig.place_dwords(dwords, ib.kernargs);
    broken(
        &rig,
        &bad,
        QueueErrorKind::InvalidPacket,
        &["COMPUTE_PGM_RSRC2", "USER_SGPR count"],
    );
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 0);
}

#[test]
fn wrong_code_address_is_refused() {
    let rig = Rig::new("gfx1151", "counter", 1);
    let c = rig.alloc(4);
    let ib = counter_ib(&rig, c, 1, None);
    let mut dwords = ib.dwords.clone();
    let at = dwords
        .windows(2)
        .position(|w| w[0] >> 16 == 0xC002 && w[1] == off::COMPUTE_PGM_LO as u32)
        .unwrap();
    dwords[at + 2] += 1; // 256 bytes past the entry
    let bad = rig.place_dwords(dwords, ib.kernargs);
    broken(
        &rig,
        &bad,
        QueueErrorKind::InvalidPacket,
        &["no loaded kernel's code starts"],
    );
}

#[test]
fn kernarg_pointer_to_freed_memory_is_a_vm_fault() {
    let rig = Rig::new("gfx1010", "counter", 1);
    let c = rig.alloc(4);
    let ib = counter_ib(&rig, c, 3, Some(BoundaryKind::Rmw));
    rig.dev.memory.free(ib.kernargs).unwrap();
    broken(
        &rig,
        &ib,
        QueueErrorKind::VmFault,
        &["VM fault", "use after free"],
    );
    let e = rig.lane().first_error().unwrap();
    assert_eq!(
        e.status,
        relaunch_hsa_sys::HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION
    );
}

#[test]
fn missing_epilogue_is_an_unreleased_result() {
    let rig = Rig::new("gfx1201", "counter", 1);
    let c = rig.alloc(4);
    let ib = counter_ib(&rig, c, 3, Some(BoundaryKind::Rmw));
    let dwords = ib.dwords[..ib.dwords.len() - 10].to_vec();
    let bad = rig.place_dwords(dwords, ib.kernargs);
    broken(
        &rig,
        &bad,
        QueueErrorKind::Violation,
        &["unreleased result", &format!("{c:#x}")],
    );
}

#[test]
fn non_strict_mode_logs_violations_and_completes() {
    let mut cfg = relaunch_sim::SimConfig::new("gfx1100");
    cfg.strict = false;
    let rig = Rig::with_config(cfg, "produce_consume");
    let (ib, _, _) = producer_consumer(&rig, None);
    rig.lane().replay(&ib).unwrap();
    let (v, dropped) = rig.dev.take_violations();
    assert_eq!((v.len(), dropped), (1, 0));
    assert_eq!(v[0].rule, relaunch_sim::ordering::Rule::Race);
}

#[test]
fn injected_vm_fault_stops_every_queue_of_the_device() {
    let rig = Rig::new("gfx1201", "counter", 2);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&seen);
    rig.dev.add_fault_handler(std::sync::Arc::new(move |e| {
        sink.lock().unwrap().push(e.address);
        true
    }));
    let lane = rig.lane();
    let lane2 = rig.new_lane();
    let c = rig.alloc(4);
    let ib = counter_ib(&rig, c, 4, Some(BoundaryKind::Rmw));
    lane.replay(&ib).unwrap();
    lane.queue.inject(FaultPlan {
        vm_fault_at: Some(1),
        ..FaultPlan::default()
    });
    let err = lane.replay(&ib).unwrap_err();
    assert!(err.contains("injected VM fault"), "{err}");
    // Reported once through the system-event path, with the address.
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert_eq!(seen.lock().unwrap()[0], rig.dev.lost().unwrap().address);
    assert!(rig.dev.is_lost());
    // The other queue (and any new one) is stopped too: nothing runs.
    lane2.publish(&ib);
    let err = lane2.wait(Duration::from_millis(200)).unwrap_err();
    assert!(err.contains("timed out"), "{err}");
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 4);
    lane.queue.destroy();
    lane2.queue.destroy();
}

#[test]
fn injected_queue_error_and_hang_fail_within_the_timeout_and_recover() {
    let rig = Rig::new("gfx1201", "counter", 2);
    let lane = rig.lane();
    let c = rig.alloc(4);
    let ib = counter_ib(&rig, c, 4, Some(BoundaryKind::Rmw));
    lane.replay(&ib).unwrap();
    lane.queue.inject(FaultPlan {
        error_at: Some(1),
        ..FaultPlan::default()
    });
    let err = lane.replay(&ib).unwrap_err();
    assert!(err.contains("injected queue error"), "{err}");
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 4);

    // A new queue replays the same IB.
    let lane2 = rig.new_lane();
    lane2.replay(&ib).unwrap();
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 8);

    // A hang: no error, the wait times out, the queue is destroyed cleanly.
    lane2.queue.inject(FaultPlan {
        hang_at: Some(1),
        ..FaultPlan::default()
    });
    lane2.publish(&ib);
    let start = Instant::now();
    let err = lane2.wait(Duration::from_millis(200)).unwrap_err();
    assert!(err.contains("timed out"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(2));
    lane2.queue.destroy();

    // Nothing leaks once everything is freed.
    lane.queue.destroy();
    rig.free(ib);
    rig.dev.memory.free(c).unwrap();
    rig.dev.unload(&rig.image).unwrap();
    assert!(rig.dev.signals.destroy(lane.signal.0));
    assert!(rig.dev.signals.destroy(lane2.signal.0));
    assert_eq!(rig.dev.memory.stats().live_allocations, 0);
    assert_eq!(rig.dev.memory.stats().live_bytes, 0);
    assert_eq!(rig.dev.signals.live(), 0);
}

#[test]
fn header_published_before_the_body_is_caught() {
    let rig = Rig::new("gfx1201", "counter", 2);
    let lane = rig.lane();
    let c = rig.alloc(4);
    let ib = counter_ib(&rig, c, 1, None);
    let p = relaunch_facts::aql::Pm4IbPacket::new(
        ib.ib,
        ib.dwords.len(),
        lane.signal.0,
        relaunch_facts::aql::FenceScope::System,
        relaunch_facts::aql::FenceScope::System,
    )
    .unwrap();
    lane.signal.1.store(1);
    let id = lane.queue.add_write_index(1);
    let slot = lane.queue.ring + 64 * id;
    // Wrong order: header first, doorbell, and the body only later.
    rig.dev
        .memory
        .store_u32_release(slot, p.header_word)
        .unwrap();
    lane.queue.ring_doorbell(id);
    std::thread::sleep(Duration::from_millis(100));
    rig.dev.memory.write(slot + 4, &p.body).unwrap();
    let err = lane.wait(Duration::from_secs(2)).unwrap_err();
    assert!(
        err.contains("header published before the body") || err.contains("INDIRECT_BUFFER"),
        "{err}"
    );
    assert_eq!(
        lane.first_error().unwrap().kind,
        QueueErrorKind::InvalidPacket
    );
}

fn dispatch_packet(rig: &Rig, kernarg: u64, fences: u16) -> [u8; 64] {
    use relaunch_hsa_sys::{packet_header, KernelDispatchPacket, HSA_PACKET_TYPE_KERNEL_DISPATCH};
    let kd = rig.image.kernels[0].kd_addr;
    packet_bytes(KernelDispatchPacket {
        header: packet_header(HSA_PACKET_TYPE_KERNEL_DISPATCH, true, fences, fences),
        grid_size_x: 64,
        ..one_group_dispatch(kd, kernarg, rig.lane().signal.0)
    })
}

#[test]
fn aql_kernel_dispatch_runs_the_twin_and_honours_header_fences() {
    let rig = Rig::new("gfx1030", "counter", 4);
    let lane = rig.lane();
    let c = rig.alloc(4);
    let ka = rig.alloc(8);
    rig.dev.memory.write_u64(ka, c).unwrap();
    lane.signal.1.store(1);
    lane.publish_raw(dispatch_packet(
        &rig,
        ka,
        relaunch_hsa_sys::HSA_FENCE_SCOPE_SYSTEM,
    ));
    lane.wait(Duration::from_secs(5)).unwrap();
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 64);
    // Without fences the kernarg read is not acquired and the result not released.
    lane.signal.1.store(1);
    lane.publish_raw(dispatch_packet(
        &rig,
        ka,
        relaunch_hsa_sys::HSA_FENCE_SCOPE_NONE,
    ));
    let err = lane.wait(Duration::from_secs(5)).unwrap_err();
    assert!(
        err.contains("host write not acquired") && err.contains("unreleased result"),
        "{err}"
    );
}

#[test]
fn barrier_and_waits_for_its_dependencies() {
    use relaunch_hsa_sys::{packet_header, BarrierAndPacket, Signal, HSA_PACKET_TYPE_BARRIER_AND};
    let rig = Rig::new("gfx1201", "counter", 4);
    let lane = rig.lane();
    let (dep, dep_signal) = rig.dev.signals.create(1);
    let mut deps = [Signal::default(); 5];
    deps[2] = Signal { handle: dep };
    let p = BarrierAndPacket {
        header: packet_header(HSA_PACKET_TYPE_BARRIER_AND, true, 0, 0),
        reserved0: 0,
        reserved1: 0,
        dep_signal: deps,
        reserved2: 0,
        completion_signal: Signal {
            handle: lane.signal.0,
        },
    };
    lane.signal.1.store(1);
    // SAFETY: BarrierAndPacket is a 64-byte repr(C) struct of integers.
    lane.publish_raw(unsafe { std::mem::transmute::<BarrierAndPacket, [u8; 64]>(p) });
    assert!(lane
        .wait(Duration::from_millis(60))
        .unwrap_err()
        .contains("timed out"));
    dep_signal.store(0);
    lane.wait(Duration::from_secs(5)).unwrap();
    // The queue goes on with the next packet.
    let c = rig.alloc(4);
    let ib = counter_ib(&rig, c, 2, Some(BoundaryKind::Rmw));
    lane.replay(&ib).unwrap();
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 2);
}

/// Encode `n` counter dispatches into segments of at most 256 dwords and
/// place each; returns them in submission order.
fn segmented_counter(rig: &Rig, counter: u64, n: usize) -> Vec<PlacedIb> {
    use relaunch_encoders::{EncodeOptions, IbBuilder};
    let opts = EncodeOptions {
        max_segment_dwords: 256,
        ..EncodeOptions::default()
    };
    let mut b = IbBuilder::for_target(rig.dev.facts(), opts);
    for _ in 0..n {
        rig.dispatch(&mut b, "counter", &linear(1, 1), &counter.to_le_bytes());
        b.boundary(BoundaryKind::Rmw);
    }
    rig.place_all(b)
}

#[test]
fn segmented_ib_releases_only_at_the_end_and_is_clean() {
    let rig = Rig::new("gfx1201", "counter", 5);
    let lane = rig.lane();
    let c = rig.alloc(4);
    let segments = segmented_counter(&rig, c, 100);
    assert!(segments.len() > 3, "{} segments", segments.len());
    lane.submit(&segments).unwrap();
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 100);
    lane.submit(&segments).unwrap();
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 200);
}

#[test]
fn segmented_ib_without_a_final_epilogue_is_reported_at_the_last_packet() {
    let rig = Rig::new("gfx1201", "counter", 5);
    let lane = rig.lane();
    let c = rig.alloc(4);
    let mut segments = segmented_counter(&rig, c, 100);
    let last = segments.pop().unwrap();
    let cut = last.dwords[..last.dwords.len() - 10].to_vec();
    segments.push(rig.place_dwords(cut, last.kernargs));
    let err = lane.submit(&segments).unwrap_err();
    assert!(err.contains("unreleased result"), "{err}");
    let e = lane.first_error().unwrap();
    assert_eq!(e.packet, segments.len() as u64 - 1, "{e}");
}

/// RSRC2.TRAP_PRESENT follows the runtime's rule (set exactly when the AQL
/// path would: a trap handler is installed, and the family has the bit),
/// not the descriptor (which leaves it 0 by contract).
#[test]
fn trap_present_follows_the_runtime_rule() {
    let rsrc2_at = |dwords: &[u32]| {
        dwords
            .windows(2)
            .position(|w| w[0] >> 16 == 0xC002 && w[1] == off::COMPUTE_PGM_RSRC1 as u32)
            .unwrap()
            + 3
    };
    let rig = Rig::new("gfx1100", "counter", 1);
    let c = rig.alloc(4);
    let ib = counter_ib(&rig, c, 1, None);
    let mut dwords = ib.dwords.clone();
    let at = rsrc2_at(&dwords);
    assert_ne!(
        dwords[at] & 1 << 6,
        0,
        "gfx11: the encoder sets TRAP_PRESENT"
    );
    dwords[at] &= !(1 << 6);
    let bad = rig.place_dwords(dwords, ib.kernargs);
    broken(
        &rig,
        &bad,
        QueueErrorKind::InvalidPacket,
        &["TRAP_PRESENT is 0 but must be 1"],
    );

    // A runtime without a trap handler: the bit must be clear.
    let mut cfg = relaunch_sim::SimConfig::new("gfx1030");
    cfg.trap_handler = false;
    let rig = Rig::with_config(cfg, "counter");
    let c = rig.alloc(4);
    let ib = counter_ib(&rig, c, 1, None);
    broken(
        &rig,
        &ib,
        QueueErrorKind::InvalidPacket,
        &["TRAP_PRESENT is 1 but must be 0"],
    );

    // gfx12 has no such bit (bit 6 is DYNAMIC_VGPR there): left clear.
    let rig = Rig::new("gfx1201", "counter", 1);
    let c = rig.alloc(4);
    let ib = counter_ib(&rig, c, 1, None);
    assert_eq!(ib.dwords[rsrc2_at(&ib.dwords)] & 1 << 6, 0);
    rig.lane().replay(&ib).unwrap();
}
