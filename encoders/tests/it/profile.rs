//! Profiled IBs: the timestamps `finish` splices in sit after the
//! prologue, around every dispatch (when asked) and after the epilogue;
//! with them taken out the IB is the unprofiled one, dword for dword, and
//! the dispatch sites still point at their DISPATCH_DIRECT.

use crate::common::*;
use relaunch_device::Family;
use relaunch_encoders::decode::Decoder;
use relaunch_encoders::profile::{dispatch_slots, DWORDS_PER_DISPATCH, IB_END_SLOT, IB_START_SLOT};
use relaunch_encoders::stream_order::{DONE_DWORDS, GATE_DWORDS};
use relaunch_encoders::timestamp::{DATA_SEL_TIMESTAMP, TIMESTAMP_DWORDS};
use relaunch_encoders::{
    BoundaryKind, EncodeError, EncodeOptions, EncodedIb, IbBuilder, Launch, Packet, Profile,
    StreamWords,
};

const L: Launch = Launch {
    grid: [64, 1, 1],
    block: [32, 1, 1],
    dynamic_group_bytes: 0,
};
const SLOTS: u64 = 0x7F20_0000_0000;
const KERNARGS: u64 = 0x7F10_0000_0000;

fn record(n: u32, stream: bool, profile: Option<Profile>) -> Result<EncodedIb, EncodeError> {
    let k = code("counter", Family::Gfx11, counter_kd(true), 0x7F00_0000_1040);
    let opts = EncodeOptions {
        max_segment_dwords: 256,
        ..EncodeOptions::default()
    };
    let mut b = if stream {
        let words = StreamWords {
            gate: 0x7F30_0000_0000,
        };
        IbBuilder::new_stream_ordered(
            relaunch_facts::TargetFacts::lookup("gfx1100").unwrap(),
            opts,
            words,
        )
        .unwrap()
    } else {
        IbBuilder::new(Family::Gfx11, opts)
    };
    for i in 0..n {
        if i % 3 == 1 {
            b.boundary(BoundaryKind::Rmw);
        }
        b.dispatch(&k, &L, &u64::from(i).to_le_bytes(), 8).unwrap();
    }
    // Set after recording, as the C API's profiled finalize does.
    b.set_profile(profile);
    b.finish(KERNARGS)
}

/// The IB's dwords with timestamp writes taken out, and the slots those
/// wrote in order, each with the index of the dispatch it follows.
fn strip(ib: &EncodedIb) -> (Vec<Vec<u32>>, Vec<(u64, usize)>) {
    let mut slots = Vec::new();
    let mut dispatches = 0;
    let segments = ib
        .segments
        .iter()
        .map(|seg| {
            let mut kept = Vec::new();
            for item in Decoder::new(&seg.dwords, ib.family) {
                let (at, packet) = item.expect("profiled IBs decode strictly");
                let len = packet_len(&seg.dwords, at);
                match packet {
                    Packet::ReleaseMem { address, .. }
                        if packet.release_data_sel() == Some(DATA_SEL_TIMESTAMP) =>
                    {
                        assert_eq!(len, TIMESTAMP_DWORDS);
                        slots.push(((address - SLOTS) / 8, dispatches));
                    }
                    Packet::DispatchDirect { .. } => {
                        dispatches += 1;
                        kept.extend_from_slice(&seg.dwords[at..at + len]);
                    }
                    _ => kept.extend_from_slice(&seg.dwords[at..at + len]),
                }
            }
            kept
        })
        .collect();
    (segments, slots)
}

fn packet_len(dwords: &[u32], at: usize) -> usize {
    (((dwords[at] >> 16) & 0x3FFF) + 2) as usize
}

#[test]
fn timestamps_bracket_the_ib_and_each_dispatch_and_nothing_else_moves() {
    for stream in [false, true] {
        let n = 40;
        let plain = record(n, stream, None).unwrap();
        assert!(plain.segments.len() > 2, "small segments: several of them");
        for per_dispatch in [false, true] {
            let profile = Profile {
                slots: SLOTS,
                per_dispatch,
            };
            let ib = record(n, stream, Some(profile)).unwrap();
            let (segments, slots) = strip(&ib);
            let plain_dwords: Vec<Vec<u32>> =
                plain.segments.iter().map(|s| s.dwords.clone()).collect();
            assert_eq!(
                segments, plain_dwords,
                "stream {stream}, per {per_dispatch}"
            );
            let mut want = vec![(IB_START_SLOT as u64, 0)];
            if per_dispatch {
                for i in 0..n as usize {
                    let (s, e) = dispatch_slots(i);
                    want.push((s as u64, i));
                    want.push((e as u64, i + 1));
                }
            }
            want.push((IB_END_SLOT as u64, n as usize));
            assert_eq!(slots, want);
            assert_eq!(slots.len(), profile.slot_count(n as usize));
            let extra = ib.total_dwords() - plain.total_dwords();
            let per = if per_dispatch { DWORDS_PER_DISPATCH } else { 0 };
            assert_eq!(extra, 2 * TIMESTAMP_DWORDS + per * n as usize);
            for (site, plain_site) in ib.sites.iter().zip(&plain.sites) {
                let d = &ib.segments[site.segment as usize].dwords;
                assert_eq!(d[site.dispatch_dword as usize], 0xC003_1502);
                assert_eq!(site.kernarg_offset, plain_site.kernarg_offset);
            }
            assert_eq!(ib.kernarg_image, plain.kernarg_image);
            // The start follows the prologue (and the gate wait); the end
            // precedes only the stream's gate close.
            let first = &ib.segments[0].dwords;
            let head = if stream { GATE_DWORDS + 8 } else { 8 };
            assert_eq!(first[head + 3], SLOTS as u32);
            let last = &ib.segments[ib.segments.len() - 1].dwords;
            let tail = if stream { DONE_DWORDS } else { 0 };
            let end = last.len() - tail - TIMESTAMP_DWORDS;
            assert_eq!(last[end + 3], (SLOTS + 8) as u32);
        }
    }
}

#[test]
fn bad_timestamp_slots_are_refused() {
    for slots in [0, SLOTS + 4] {
        let profile = Profile {
            slots,
            per_dispatch: false,
        };
        let err = record(2, false, Some(profile)).unwrap_err();
        assert!(
            matches!(err, EncodeError::BadTimestampSlots { .. }),
            "{err}"
        );
        assert!(err.to_string().contains("8-byte aligned"), "{err}");
    }
}

#[test]
fn a_segment_the_timestamps_would_overflow_is_refused_not_cut() {
    let k = code("counter", Family::Gfx12, counter_kd(true), 0x7F00_0000_1040);
    let mut b = IbBuilder::new(Family::Gfx12, EncodeOptions::default());
    // 58,252 counter dispatches fill one segment (docs/pm4.md); 16 more
    // dwords each cannot fit.
    for i in 0..58_000u64 {
        b.boundary(BoundaryKind::Rmw);
        b.dispatch(&k, &L, &i.to_le_bytes(), 8).unwrap();
    }
    b.set_profile(Some(Profile {
        slots: SLOTS,
        per_dispatch: true,
    }));
    let err = b.finish(KERNARGS).unwrap_err();
    assert!(
        matches!(err, EncodeError::ProfiledSegmentTooLong { segment: 0, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("max_segment_dwords"), "{err}");
}
