//! No IB ceiling: long recordings split into segments at dispatch boundaries.

use crate::common;

use common::*;
use relaunch_device::Family;
use relaunch_encoders::{decode, BoundaryKind, EncodeOptions, IbBuilder, Launch, Packet};
use relaunch_facts::packet::MAX_IB_DWORDS;

const L: Launch = Launch {
    grid: [1, 1, 1],
    block: [1, 1, 1],
    dynamic_group_bytes: 0,
};

#[test]
fn two_hundred_thousand_dispatches_split_and_decode_back() {
    let k = code("counter", Family::Gfx12, counter_kd(true), 0x7F00_0000_1040);
    let mut b = IbBuilder::new(Family::Gfx12, EncodeOptions::default());
    let n = 200_000u32;
    for i in 0..n {
        b.boundary(BoundaryKind::Rmw);
        b.dispatch(&k, &L, &(i as u64).to_le_bytes(), 8).unwrap();
    }
    let ib = b.finish(0x7F10_0000_0000).unwrap();
    assert!(ib.segments.len() >= 4, "{} segments", ib.segments.len());
    let mut dispatches = 0u32;
    let mut expected_first = 0;
    for (i, seg) in ib.segments.iter().enumerate() {
        assert!(
            seg.dwords.len() <= MAX_IB_DWORDS as usize,
            "segment {i} too long"
        );
        assert_eq!(seg.first_dispatch, expected_first);
        expected_first += seg.dispatch_count;
        let packets = decode(&seg.dwords, ib.family).unwrap();
        // Every segment opens with the prologue acquire; only the last ends
        // with the epilogue write-back.
        assert!(matches!(
            packets[0],
            Packet::AcquireMem {
                gcr_cntl: 0x380,
                ..
            }
        ));
        let last_is_epilogue = matches!(
            packets.last(),
            Some(Packet::AcquireMem {
                gcr_cntl: 0x8000,
                ..
            })
        );
        assert_eq!(last_is_epilogue, i + 1 == ib.segments.len(), "segment {i}");
        let here = packets
            .iter()
            .filter(|p| matches!(p, Packet::DispatchDirect { .. }))
            .count() as u32;
        assert_eq!(here, seg.dispatch_count);
        dispatches += here;
    }
    assert_eq!(dispatches, n);
    // Counter shape, RMW boundary after each: 18 dwords each, ~58k per segment.
    let per = ib.segments[0].dispatch_count;
    assert!(
        (58_000..=58_300).contains(&per),
        "{per} dispatches in a full segment"
    );

    // Every dispatch, in every segment, sees full state and its own kernarg block.
    let seen = replay(&ib);
    assert_eq!(seen.len(), n as usize);
    for (i, s) in seen.iter().enumerate().step_by(997) {
        let ka = 0x7F10_0000_0000u64 + ib.sites[i].kernarg_offset as u64;
        assert_eq!(s.reg(0x240), ka as u32);
        assert_eq!(s.reg(0x241), (ka >> 32) as u32);
        assert_eq!(s.reg(0x20D), 0x7F);
        assert_eq!(
            ib.kernarg_image[ib.kernarg_range(i as u32).unwrap()],
            (i as u64).to_le_bytes()
        );
    }
}

#[test]
fn small_segments_re_establish_state() {
    let k = code("k", Family::Gfx10, counter_kd(true), 0x1040);
    let opts = EncodeOptions {
        max_segment_dwords: 300,
        ..EncodeOptions::default()
    };
    let mut b = IbBuilder::new(Family::Gfx10, opts);
    for _ in 0..100 {
        b.boundary(BoundaryKind::Wait);
        b.dispatch(&k, &L, &[0; 8], 8).unwrap();
    }
    let ib = b.finish(0x4000).unwrap();
    assert!(ib.segments.len() > 3);
    assert!(ib
        .segments
        .iter()
        .all(|s| s.dwords.len() <= 300 && s.dispatch_count > 0));
    let seen = replay(&ib);
    assert_eq!(seen.len(), 100);
    for s in &seen {
        assert_eq!(s.reg(0x212), 0x60AF_0000);
        assert_eq!(s.reg(0x207), 1);
    }
}
