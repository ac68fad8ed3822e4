//! Stream-ordered IBs: the simulated CP waits on the gate word for real
//! until the stream opens it (with a launch's sequence number), runs the IB
//! and closes the gate after the epilogue.

use std::time::Duration;

use relaunch_encoders::decode::decode;
use relaunch_encoders::stream_order::{self, StreamWords, GATE_CLOSED};
use relaunch_encoders::{EncodeOptions, IbBuilder, Packet};

use relaunch_sim::memory::MemKind;
use relaunch_testsupport::simkit::{linear, Rig};

fn words(rig: &Rig) -> StreamWords {
    let at = rig
        .dev
        .memory
        .allocate(64, MemKind::HostFineGrained)
        .unwrap();
    StreamWords { gate: at }
}

fn ordered_counter(rig: &Rig, counter: u64, w: StreamWords) -> Vec<u32> {
    let mut b =
        IbBuilder::new_stream_ordered(rig.dev.facts(), EncodeOptions::default(), w).unwrap();
    for _ in 0..3 {
        rig.dispatch(&mut b, "counter", &linear(64, 32), &counter.to_le_bytes());
    }
    rig.dwords(b)
}

#[test]
fn the_ib_waits_for_any_sequence_number_and_closes_the_gate_last() {
    let rig = Rig::new("gfx1201", "counter", 4);
    let c = rig.alloc(4);
    let w = words(&rig);
    let ib = ordered_counter(&rig, c, w);
    let packets = decode(&ib, rig.dev.family()).unwrap();
    assert!(matches!(
        packets[0],
        Packet::WaitRegMem { address, control, reference: GATE_CLOSED, mask: u32::MAX, .. }
            if address == w.gate && control == stream_order::gate_wait_control()
    ));
    assert!(
        matches!(packets.last(), Some(Packet::WriteData { address, data, .. }) if *address == w.gate && *data == [GATE_CLOSED])
    );
    let mem = &rig.dev.memory;
    // A sequence number past the 32-bit wrap's far side opens it like any other.
    for (round, seq) in [(1u32, 0xFFFF_FFFFu32), (2, 1)] {
        std::thread::scope(|s| {
            let opener = s.spawn(|| {
                std::thread::sleep(Duration::from_millis(50));
                // Nothing ran while the gate was shut.
                assert_eq!(mem.read_u32(c).unwrap(), (round - 1) * 3 * 64);
                mem.write(w.gate, &seq.to_le_bytes()).unwrap();
            });
            assert_eq!(rig.run(&ib).unwrap(), vec![]);
            opener.join().unwrap();
        });
        assert_eq!(mem.read_u32(c).unwrap(), round * 3 * 64);
        assert_eq!(
            mem.read_u32(w.gate).unwrap(),
            GATE_CLOSED,
            "the replay closed its gate"
        );
    }
}

#[test]
fn wait_encodings_other_than_a_memory_compare_are_refused() {
    let rig = Rig::new("gfx1100", "counter", 0);
    let w = words(&rig);
    // Open (sequence number 7): the wait under test is satisfied at once.
    rig.dev.memory.write(w.gate, &7u32.to_le_bytes()).unwrap();
    let wait = |control: u32, poll: u32| {
        let ib = [
            0xC005_3C00,
            control,
            w.gate as u32,
            (w.gate >> 32) as u32,
            GATE_CLOSED,
            u32::MAX,
            poll,
        ];
        rig.run(&ib).map(drop).map_err(|e| e.to_string())
    };
    let good = stream_order::gate_wait_control();
    assert_eq!(wait(good, 4), Ok(()));
    assert!(wait(good & !0x30, 4).unwrap_err().contains("on a register"));
    assert!(wait(good | 0x40, 4).unwrap_err().contains("OPERATION 1"));
    assert!(wait(good & !0x7, 4)
        .unwrap_err()
        .contains("compare function 0"));
    assert!(wait(good, 0).unwrap_err().contains("poll interval 0"));
}

#[test]
fn bad_words_are_refused_by_the_builder() {
    let e = IbBuilder::new_stream_ordered(
        relaunch_facts::TargetFacts::lookup("gfx1201").unwrap(),
        EncodeOptions::default(),
        StreamWords { gate: 6 },
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("gate word at 0x6"), "{e}");
}
