//! Timestamp RELEASE_MEMs on the simulator: the modelled clock brackets
//! an IB's dispatches, grows with their number, stays monotonic across
//! IBs, and malformed timestamp packets are refused.

use relaunch_encoders::emit;
use relaunch_encoders::timestamp::{emit_timestamp, timestamp_data_cntl, timestamp_event_cntl};
use relaunch_encoders::writer::DwordWriter;
use relaunch_encoders::BoundaryKind;
use relaunch_facts::packet::release_data;

use relaunch_sim::memory::MemKind;
use relaunch_sim::pm4::timestamp::TIMESTAMP_FREQUENCY_HZ;
use relaunch_testsupport::simkit::{linear, Rig};

/// `n` counter dispatches with a timestamp after the prologue (to
/// `slots`) and one before the epilogue (to `slots + 8`).
fn profiled_counter(rig: &Rig, counter: u64, n: usize, slots: u64) -> Vec<u32> {
    let ib = rig.dwords(rig.counter(counter, n, Some(BoundaryKind::Rmw), &linear(64, 32)));
    let (prologue, epilogue) = (8, 10);
    let mut w = DwordWriter::new();
    w.reserve(prologue).extend(&ib[..prologue]);
    emit_timestamp(&mut w, slots);
    let body = &ib[prologue..ib.len() - epilogue];
    w.reserve(body.len()).extend(body);
    emit_timestamp(&mut w, slots + 8);
    w.reserve(epilogue).extend(&ib[ib.len() - epilogue..]);
    w.into_vec()
}

fn read_u64(rig: &Rig, addr: u64) -> u64 {
    let lo = rig.dev.memory.read_u32(addr).unwrap();
    let hi = rig.dev.memory.read_u32(addr + 4).unwrap();
    u64::from(lo) | u64::from(hi) << 32
}

fn span(rig: &Rig, n: usize) -> (u64, u64) {
    let c = rig.alloc(4);
    let slots = rig
        .dev
        .memory
        .allocate(16, MemKind::HostFineGrained)
        .unwrap();
    let dwords = profiled_counter(rig, c, n, slots);
    assert_eq!(rig.run(&dwords).unwrap(), vec![], "clean");
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 64 * n as u32);
    (read_u64(rig, slots), read_u64(rig, slots + 8))
}

#[test]
fn a_span_covers_its_dispatches_and_grows_with_them() {
    let rig = Rig::new("gfx1201", "counter", 3);
    let (s2, e2) = span(&rig, 2);
    let (s8, e8) = span(&rig, 8);
    assert!(e2 > s2 && e8 > s8, "{s2}..{e2}, {s8}..{e8}");
    assert!(e8 - s8 > e2 - s2, "8 dispatches take longer than 2");
    assert!(s8 > e2, "the clock is monotonic across IBs");
    // Each dispatch here is 2 workgroups: at least 2 us per dispatch.
    let us = (e8 - s8) as f64 * 1e6 / TIMESTAMP_FREQUENCY_HZ as f64;
    assert!(us >= 8.0 * 2.0, "{us} us");
}

#[test]
fn malformed_timestamps_are_refused() {
    let rig = Rig::new("gfx1100", "counter", 0);
    let c = rig.alloc(4);
    let slots = rig
        .dev
        .memory
        .allocate(16, MemKind::HostFineGrained)
        .unwrap();
    let ib = rig.dwords(rig.counter(c, 1, None, &linear(64, 32)));
    for (data_cntl, address, why) in [
        (
            timestamp_data_cntl() | release_data::DST_SEL.place(1),
            slots,
            "DST_SEL 1",
        ),
        (timestamp_data_cntl(), slots + 4, "8-byte aligned"),
    ] {
        let mut w = DwordWriter::new();
        w.reserve(8).extend(&ib[..8]);
        emit::release_mem(&mut w, timestamp_event_cntl(), data_cntl, address, 0);
        w.reserve(ib.len() - 8).extend(&ib[8..]);
        let err = rig.run(&w.into_vec()).unwrap_err();
        assert!(err.to_string().contains(why), "{err}");
    }
}
