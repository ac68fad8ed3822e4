//! PM4 written by ROCr, not by relaunch's encoder: the simulated device
//! holds every IB to the hardware's rules, so what the hardware runs, it
//! runs. The packets here are written out by hand in the form ROCr 5.2.3
//! builds them: `GpuAgent::InvalidateCodeCaches` on gfx10+ (an ACQUIRE_MEM
//! with the gfx10 GCR_CNTL), submitted by `AqlQueue::ExecutePM4` as a
//! vendor PM4-IB AQL packet without a completion signal, whose read index
//! ROCr then polls.

use std::time::{Duration, Instant};

use relaunch_encoders::BoundaryKind;
use relaunch_sim::ordering::Rule;
use relaunch_testsupport::simkit::{linear, Rig, TARGETS};

/// ROCr's gfx10+ code-object cache invalidation, dword by dword.
const ROCR_CACHE_INV: [u32; 8] = [
    0xC006_5800, // type 3, ACQUIRE_MEM (0x58), 7 body dwords, SHADER_TYPE 0
    0,           // COHER_CNTL: no CB/DB actions
    0xFFFF_FFFF, // COHER_SIZE
    0xFF,        // COHER_SIZE_HI (the kernel driver writes 0xFFFFFF here)
    0,           // COHER_BASE
    0,           // COHER_BASE_HI
    0,           // POLL_INTERVAL
    0x4381,      // GCR_CNTL: GLI_INV=1 | GLK_INV | GLV_INV | GL1_INV | GL2_INV
];

#[test]
fn rocr_cache_invalidation_ib_is_accepted_on_every_target() {
    for target in TARGETS {
        let rig = Rig::new(target, "counter", 0);
        assert_eq!(rig.run(&ROCR_CACHE_INV).unwrap(), vec![], "{target}");
    }
}

#[test]
fn rocr_acquire_makes_host_writes_visible_like_the_prologue() {
    let rig = Rig::new("gfx1030", "counter", 0);
    let c = rig.alloc(4);
    let ib = rig.dwords(rig.counter(c, 4, Some(BoundaryKind::Rmw), &linear(64, 32)));
    // Without an acquire first, the kernels read host writes through
    // caches nothing invalidated.
    let v = rig.run(&ib[8..]).unwrap();
    assert_eq!(
        v.iter().map(|v| v.rule).collect::<Vec<_>>(),
        vec![Rule::HostWriteNotAcquired]
    );
    // ROCr's acquire in place of relaunch's 8-dword prologue invalidates
    // K$, V$ and GL1 (and GL2) the same way.
    let mut with_rocr = ROCR_CACHE_INV.to_vec();
    with_rocr.extend_from_slice(&ib[8..]);
    assert_eq!(rig.run(&with_rocr).unwrap(), vec![]);
    // Both runs counted (the first one's violations do not stop it).
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 2 * 4 * 64);
}

#[test]
fn rocr_acquire_after_a_wait_removes_the_stale_read() {
    let rig = Rig::new("gfx1030", "produce_consume", 2);
    let (b, _, out) = rig.producer_consumer(Some(BoundaryKind::Wait));
    let ib = rig.dwords(b);
    let v = rig.run(&ib).unwrap();
    assert_eq!(
        v.iter().map(|v| v.rule).collect::<Vec<_>>(),
        vec![Rule::StaleRead]
    );
    // After the wait that follows the producer (CS_PARTIAL_FLUSH, EVENT
    // INDEX 4), invalidate as ROCr does: the consumer reads fresh data.
    let first_dispatch = ib.iter().position(|&d| d == 0xC003_1502).unwrap();
    let wait = first_dispatch
        + ib[first_dispatch..]
            .windows(2)
            .position(|w| w == [0xC000_4600, 0x407])
            .unwrap();
    let mut fixed = ib[..wait + 2].to_vec();
    fixed.extend_from_slice(&ROCR_CACHE_INV);
    fixed.extend_from_slice(&ib[wait + 2..]);
    assert_eq!(rig.run(&fixed).unwrap(), vec![]);
    // out[i] += 3i on each of the two runs.
    assert_eq!(rig.dev.memory.read_u32(out + 4 * 5).unwrap(), 30);
}

/// ROCr's vendor PM4-IB packet for `ib` (`AqlQueue::ExecutePM4`, gfx9+):
/// header 0 (vendor specific, no barrier or fences), format PM4_IB, the
/// INDIRECT_BUFFER jump, dw_cnt_remain 0xA, no completion signal.
fn rocr_pm4_ib_packet(ib: u64, dwords: u32) -> [u8; 64] {
    let words: [u32; 6] = [
        1 << 16,
        0xC002_3F00,
        ib as u32,
        (ib >> 32) as u32,
        dwords | 1 << 23,
        0xA,
    ];
    let mut p = [0u8; 64];
    for (i, w) in words.iter().enumerate() {
        p[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    p
}

#[test]
fn rocr_execute_pm4_packet_runs_on_a_gfx10_3_queue() {
    let rig = Rig::new("gfx1030", "counter", 0);
    let lane = rig.lane();
    let ib = rig.place_dwords(ROCR_CACHE_INV.to_vec(), 0);
    // Header 0 as ROCr writes it: no BARRIER. A cache-only IB may overlap
    // the packet before it without changing anything the model checks.
    let packet = rocr_pm4_ib_packet(ib.ib, ROCR_CACHE_INV.len() as u32);
    assert!(!relaunch_sim::aql::parse(&packet).unwrap().header.barrier);
    let id = lane.publish_raw(packet);
    // ROCr waits for the read index to pass the packet.
    let start = Instant::now();
    while lane.queue.load_read_index() <= id {
        assert!(lane.queue.errors().is_empty(), "{:?}", lane.queue.errors());
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "packet not consumed"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    // An error would be reported right after the read index moves.
    std::thread::sleep(Duration::from_millis(50));
    assert!(lane.queue.errors().is_empty(), "{:?}", lane.queue.errors());
    assert!(!lane.queue.is_dead());
    assert_eq!(rig.dev.take_violations().0, vec![]);
}

#[test]
fn a_barrier_less_ib_that_touches_memory_is_refused_naming_barrier() {
    let rig = Rig::new("gfx1030", "counter", 0);
    let lane = rig.lane();
    let c = rig.alloc(4);
    let ib = rig.place(rig.counter(c, 1, Some(BoundaryKind::Rmw), &linear(64, 32)));
    let mut packet = rocr_pm4_ib_packet(ib.ib, ib.dwords.len() as u32);
    packet[56..64].copy_from_slice(&lane.signal.0.to_le_bytes());
    lane.signal.1.store(1);
    lane.publish_raw(packet);
    let err = lane.wait(Duration::from_secs(5)).unwrap_err();
    assert!(
        err.contains("no BARRIER bit") && err.contains("DISPATCH_DIRECT"),
        "{err}"
    );
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 0, "nothing ran");
}
