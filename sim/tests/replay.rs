//! End to end through an AQL queue: encode with the encoders' IbBuilder,
//! submit one vendor PM4-IB packet, let the simulated packet processor run
//! it, and check results, violations, faults and recovery.

mod common;

use std::time::{Duration, Instant};

use common::*;
use relaunch_encoders::regs::off;
use relaunch_encoders::BoundaryKind;
use relaunch_sim::{FaultPlan, QueueErrorKind, SimQueue};

#[test]
fn counter_256_dispatches_with_rmw_boundaries_on_every_target() {
    for target in TARGETS {
        let rig = Rig::new(target, "counter", 7);
        let c = rig.alloc(4);
        let ib = counter_ib(&rig, c, 256, Some(BoundaryKind::Rmw));
        rig.replay(&ib).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 256, "{target}");
        rig.replay(&ib).unwrap();
        assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 512, "{target}");
        assert_eq!(rig.dev.take_violations().0, vec![]);
    }
}

#[test]
fn healthy_ibs_pass_under_twenty_seeds() {
    for seed in 0..20 {
        let rig = Rig::new("gfx1201", "produce_consume", seed);
        let (ib, _, out) = producer_consumer(&rig, Some(BoundaryKind::Rmw));
        rig.replay(&ib)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        rig.replay(&ib).unwrap();
        // out[i] += 3i twice.
        assert_eq!(rig.dev.memory.read_u32(out + 4 * 10).unwrap(), 60);
    }
}

fn broken(rig: &Rig, ib: &PlacedIb, kind: QueueErrorKind, needles: &[&str]) {
    let start = Instant::now();
    let err = rig.replay(ib).unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(5));
    let first = rig.first_error().unwrap();
    assert_eq!(first.kind, kind, "{first}");
    for n in needles {
        assert!(err.contains(n), "missing {n:?} in: {err}");
    }
    assert!(rig.queue.is_dead());
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
    let e = rig.first_error().unwrap();
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
    let dev = relaunch_sim::SimDevice::new(cfg).unwrap();
    let image = dev
        .load_code_object(&fixture("gfx1100", "produce_consume"))
        .unwrap();
    let queue = SimQueue::create(&dev, 64, None).unwrap();
    let signal = dev.signals.create(0);
    let rig = Rig {
        dev,
        image,
        queue,
        signal,
    };
    let (ib, _, _) = producer_consumer(&rig, None);
    rig.replay(&ib).unwrap();
    let (v, dropped) = rig.dev.take_violations();
    assert_eq!((v.len(), dropped), (1, 0));
    assert_eq!(v[0].rule, relaunch_sim::ordering::Rule::Race);
}

#[test]
fn injected_vm_fault_and_hang_fail_within_the_timeout_and_recover() {
    let rig = Rig::new("gfx1201", "counter", 2);
    let c = rig.alloc(4);
    let ib = counter_ib(&rig, c, 4, Some(BoundaryKind::Rmw));
    rig.replay(&ib).unwrap();
    rig.queue.inject(FaultPlan {
        vm_fault_at: Some(1),
        ..FaultPlan::default()
    });
    let err = rig.replay(&ib).unwrap_err();
    assert!(err.contains("injected VM fault"), "{err}");
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 4);

    // A new queue replays the same IB.
    let q2 = SimQueue::create(&rig.dev, 64, None).unwrap();
    let rig2 = Rig {
        dev: rig.dev.clone(),
        image: rig.image.clone(),
        queue: q2,
        signal: rig.dev.signals.create(0),
    };
    rig2.replay(&ib).unwrap();
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 8);

    // A hang: no error, the wait times out, the queue is destroyed cleanly.
    rig2.queue.inject(FaultPlan {
        hang_at: Some(1),
        ..FaultPlan::default()
    });
    rig2.publish(&ib);
    let start = Instant::now();
    let err = rig2.wait(Duration::from_millis(200)).unwrap_err();
    assert!(err.contains("timed out"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(2));
    rig2.queue.destroy();

    // Nothing leaks once everything is freed.
    rig.queue.destroy();
    rig.free(ib);
    rig.dev.memory.free(c).unwrap();
    rig.dev.unload(&rig.image).unwrap();
    assert!(rig.dev.signals.destroy(rig.signal.0));
    assert!(rig.dev.signals.destroy(rig2.signal.0));
    assert_eq!(rig.dev.memory.stats().live_allocations, 0);
    assert_eq!(rig.dev.memory.stats().live_bytes, 0);
    assert_eq!(rig.dev.signals.live(), 0);
}

#[test]
fn header_published_before_the_body_is_caught() {
    let rig = Rig::new("gfx1201", "counter", 2);
    let c = rig.alloc(4);
    let ib = counter_ib(&rig, c, 1, None);
    let p = relaunch_encoders::aql::Pm4IbPacket::new(
        ib.ib,
        ib.dwords.len(),
        rig.signal.0,
        relaunch_encoders::aql::FenceScope::System,
        relaunch_encoders::aql::FenceScope::System,
    )
    .unwrap();
    rig.signal.1.store(1);
    let id = rig.queue.add_write_index(1);
    let slot = rig.queue.ring + 64 * id;
    // Wrong order: header first, doorbell, and the body only later.
    rig.dev
        .memory
        .store_u32_release(slot, p.header_word)
        .unwrap();
    rig.queue.ring_doorbell(id);
    std::thread::sleep(Duration::from_millis(100));
    rig.dev.memory.write(slot + 4, &p.body).unwrap();
    let err = rig.wait(Duration::from_secs(2)).unwrap_err();
    assert!(
        err.contains("header published before the body") || err.contains("INDIRECT_BUFFER"),
        "{err}"
    );
    assert_eq!(
        rig.first_error().unwrap().kind,
        QueueErrorKind::InvalidPacket
    );
}

/// Publish a raw 64-byte AQL packet (body first, header last).
fn publish_raw(rig: &Rig, packet: [u8; 64]) -> u64 {
    let id = rig.queue.add_write_index(1);
    let slot = rig.queue.ring + 64 * (id % u64::from(rig.queue.size));
    rig.dev.memory.write(slot + 4, &packet[4..]).unwrap();
    let header = u32::from_le_bytes([packet[0], packet[1], packet[2], packet[3]]);
    rig.dev.memory.store_u32_release(slot, header).unwrap();
    rig.queue.ring_doorbell(id);
    id
}

fn dispatch_packet(rig: &Rig, kernarg: u64, fences: u16) -> [u8; 64] {
    use relaunch_hsa_sys::{
        packet_header, KernelDispatchPacket, Signal, HSA_PACKET_TYPE_KERNEL_DISPATCH,
    };
    let k = &rig.image.kernels[0];
    let p = KernelDispatchPacket {
        header: packet_header(HSA_PACKET_TYPE_KERNEL_DISPATCH, true, fences, fences),
        setup: 1,
        workgroup_size_x: 32,
        workgroup_size_y: 1,
        workgroup_size_z: 1,
        reserved0: 0,
        grid_size_x: 64,
        grid_size_y: 1,
        grid_size_z: 1,
        private_segment_size: 0,
        group_segment_size: 0,
        kernel_object: k.kd_addr,
        kernarg_address: kernarg,
        reserved2: 0,
        completion_signal: Signal {
            handle: rig.signal.0,
        },
    };
    // SAFETY: KernelDispatchPacket is a 64-byte repr(C) struct of integers.
    unsafe { std::mem::transmute::<KernelDispatchPacket, [u8; 64]>(p) }
}

#[test]
fn aql_kernel_dispatch_runs_the_twin_and_honours_header_fences() {
    let rig = Rig::new("gfx1030", "counter", 4);
    let c = rig.alloc(4);
    let ka = rig.alloc(8);
    rig.dev.memory.write_u64(ka, c).unwrap();
    rig.signal.1.store(1);
    publish_raw(
        &rig,
        dispatch_packet(&rig, ka, relaunch_hsa_sys::HSA_FENCE_SCOPE_SYSTEM),
    );
    rig.wait(Duration::from_secs(5)).unwrap();
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 64);
    // Without fences the kernarg read is not acquired and the result not released.
    rig.signal.1.store(1);
    publish_raw(
        &rig,
        dispatch_packet(&rig, ka, relaunch_hsa_sys::HSA_FENCE_SCOPE_NONE),
    );
    let err = rig.wait(Duration::from_secs(5)).unwrap_err();
    assert!(
        err.contains("host write not acquired") && err.contains("unreleased result"),
        "{err}"
    );
}

#[test]
fn barrier_and_waits_for_its_dependencies() {
    use relaunch_hsa_sys::{packet_header, BarrierAndPacket, Signal, HSA_PACKET_TYPE_BARRIER_AND};
    let rig = Rig::new("gfx1201", "counter", 4);
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
            handle: rig.signal.0,
        },
    };
    rig.signal.1.store(1);
    // SAFETY: BarrierAndPacket is a 64-byte repr(C) struct of integers.
    publish_raw(&rig, unsafe {
        std::mem::transmute::<BarrierAndPacket, [u8; 64]>(p)
    });
    assert!(rig
        .wait(Duration::from_millis(60))
        .unwrap_err()
        .contains("timed out"));
    dep_signal.store(0);
    rig.wait(Duration::from_secs(5)).unwrap();
    // The queue goes on with the next packet.
    let c = rig.alloc(4);
    let ib = counter_ib(&rig, c, 2, Some(BoundaryKind::Rmw));
    rig.replay(&ib).unwrap();
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 2);
}

/// Encode `n` counter dispatches into segments of at most 256 dwords and
/// place each; returns them in submission order.
fn segmented_counter(rig: &Rig, counter: u64, n: usize) -> Vec<PlacedIb> {
    use relaunch_encoders::{EncodeOptions, IbBuilder, Launch};
    let opts = EncodeOptions {
        max_segment_dwords: 256,
        ..EncodeOptions::default()
    };
    let mut b = IbBuilder::new(rig.dev.family(), opts);
    let launch = Launch {
        grid: [1, 1, 1],
        block: [1, 1, 1],
        dynamic_group_bytes: 0,
    };
    for _ in 0..n {
        b.dispatch(&rig.code("counter"), &launch, &counter.to_le_bytes(), 8)
            .unwrap();
        b.boundary(BoundaryKind::Rmw);
    }
    let layout = b.kernarg_layout();
    let kernargs = rig
        .dev
        .memory
        .allocate(
            layout.bytes as usize,
            relaunch_sim::memory::MemKind::HostFineGrained,
        )
        .unwrap();
    let ib = b.finish(kernargs).unwrap();
    rig.dev.memory.write(kernargs, &ib.kernarg_image).unwrap();
    ib.segments
        .iter()
        .map(|s| rig.place_dwords(s.dwords.clone(), kernargs))
        .collect()
}

/// Submit every segment with one completion signal armed at their count.
fn replay_segments(rig: &Rig, segments: &[PlacedIb]) -> Result<(), String> {
    use relaunch_encoders::aql::{FenceScope, Pm4IbPacket};
    rig.signal.1.store(segments.len() as i64);
    for ib in segments {
        let p = Pm4IbPacket::new(
            ib.ib,
            ib.dwords.len(),
            rig.signal.0,
            FenceScope::System,
            FenceScope::System,
        )
        .unwrap();
        let id = rig.queue.add_write_index(1);
        let slot = rig.queue.ring + 64 * (id % u64::from(rig.queue.size));
        rig.dev.memory.write(slot + 4, &p.body).unwrap();
        rig.dev
            .memory
            .store_u32_release(slot, p.header_word)
            .unwrap();
        rig.queue.ring_doorbell(id);
    }
    rig.wait(Duration::from_secs(20))
}

#[test]
fn segmented_ib_releases_only_at_the_end_and_is_clean() {
    let rig = Rig::new("gfx1201", "counter", 5);
    let c = rig.alloc(4);
    let segments = segmented_counter(&rig, c, 100);
    assert!(segments.len() > 3, "{} segments", segments.len());
    replay_segments(&rig, &segments).unwrap();
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 100);
    replay_segments(&rig, &segments).unwrap();
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 200);
}

#[test]
fn segmented_ib_without_a_final_epilogue_is_reported_at_the_last_packet() {
    let rig = Rig::new("gfx1201", "counter", 5);
    let c = rig.alloc(4);
    let mut segments = segmented_counter(&rig, c, 100);
    let last = segments.pop().unwrap();
    let cut = last.dwords[..last.dwords.len() - 10].to_vec();
    segments.push(rig.place_dwords(cut, last.kernargs));
    let err = replay_segments(&rig, &segments).unwrap_err();
    assert!(err.contains("unreleased result"), "{err}");
    let e = rig.first_error().unwrap();
    assert_eq!(e.packet, segments.len() as u64 - 1, "{e}");
}
