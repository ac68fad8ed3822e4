//! Kernels that read their dispatch packet (add_scalar built as code object
//! v4): the packet the builder synthesized is checked against the dispatch.

use relaunch_encoders::dispatch_packet::KERNARG_ADDRESS_OFFSET;

use relaunch_testsupport::simkit::{linear, Rig};

/// add_scalar-v4 over 64 items in groups of 32 adding 7; (rig, acc, packet).
fn v4_add_scalar(seed: u64) -> (Rig, u64, u64, Vec<u32>) {
    let rig = Rig::new("gfx1100", "add_scalar-v4", seed);
    let acc = rig.alloc(256);
    let mut b = rig.builder();
    let mut explicit = acc.to_le_bytes().to_vec();
    explicit.extend(7u32.to_le_bytes());
    rig.dispatch(&mut b, "add_scalar", &linear(64, 32), &explicit);
    let (ib, base) = rig.finish(b);
    let packet = base + ib.dispatch_packet_range(0).unwrap().start as u64;
    (rig, acc, packet, ib.segments[0].dwords.clone())
}

#[test]
fn synthesized_packet_is_accepted_and_read_by_the_kernel() {
    let (rig, acc, _, ib) = v4_add_scalar(1);
    assert_eq!(rig.run(&ib).unwrap(), vec![]);
    for i in 0..64 {
        assert_eq!(rig.dev.memory.read_u32(acc + 4 * i).unwrap(), 7);
    }
}

#[test]
fn a_packet_that_does_not_match_the_dispatch_is_refused() {
    // Wrong workgroup size.
    let (rig, _, packet, ib) = v4_add_scalar(2);
    rig.dev
        .memory
        .write(packet + 4, &16u16.to_le_bytes())
        .unwrap();
    let err = rig.run(&ib).unwrap_err().to_string();
    assert!(
        err.contains("dispatch packet") && err.contains("workgroup_size_x is 0x10"),
        "{err}"
    );
    // Wrong kernarg address and a completion signal.
    let (rig, _, packet, ib) = v4_add_scalar(3);
    let off = packet + KERNARG_ADDRESS_OFFSET as u64;
    rig.dev.memory.write(off, &0x1000u64.to_le_bytes()).unwrap();
    rig.dev
        .memory
        .write(packet + 56, &5u64.to_le_bytes())
        .unwrap();
    let err = rig.run(&ib).unwrap_err().to_string();
    assert!(
        err.contains("kernarg_address is 0x1000") && err.contains("completion_signal is 0x5"),
        "{err}"
    );
}
