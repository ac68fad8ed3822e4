//! The dispatch checks are the hardware's rules, not relaunch's emitted
//! values: an encoder IB edited into other values the hardware accepts
//! (another initiator combination, resource limits, RSRC1 scheduling
//! fields, an explicit zero start) still runs and counts, and values whose
//! effect is not modelled or that the code cannot run under are refused
//! naming the field.

use relaunch_encoders::decode::Decoder;
use relaunch_encoders::{BoundaryKind, Packet};
use relaunch_facts::packet::{op, type3};
use relaunch_facts::regs::off;
use relaunch_testsupport::simkit::{linear, Rig};

/// One counter dispatch over 64 work-items in wave32 groups of 32 on
/// gfx1201 (the emitted initiator is 0x8045); (rig, counter, dwords).
fn one_dispatch() -> (Rig, u64, Vec<u32>) {
    let rig = Rig::new("gfx1201", "counter", 0);
    let c = rig.alloc(4);
    let ib = rig.dwords(rig.counter(c, 1, Some(BoundaryKind::Rmw), &linear(64, 32)));
    (rig, c, ib)
}

fn reg_at(rig: &Rig, ib: &[u32], offset: u16) -> usize {
    crate::pm4::reg_position(ib, rig.dev.family(), offset)
}

/// Dword index of the DISPATCH_INITIATOR in the DISPATCH_DIRECT body.
fn initiator_at(rig: &Rig, ib: &[u32]) -> usize {
    let at = Decoder::new(ib, rig.dev.family())
        .map(|r| r.unwrap())
        .find(|(_, p)| matches!(p, Packet::DispatchDirect { .. }))
        .unwrap()
        .0;
    at + 4
}

#[test]
fn other_initiator_combinations_the_model_performs_run() {
    // ORDER_MODE clear (launch order only); DISABLE_DISP_PREMPT_EN (gfx11+).
    for initiator in [0x8005, 0x8045 | 1 << 17] {
        let (rig, c, mut ib) = one_dispatch();
        let at = initiator_at(&rig, &ib);
        ib[at] = initiator;
        assert_eq!(rig.run(&ib).unwrap(), vec![], "{initiator:#x}");
        assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 64, "{initiator:#x}");
    }
}

#[test]
fn initiator_bits_without_a_modelled_effect_are_refused_by_name() {
    for (bit, name) in [
        (14, "RESTORE"),
        (13, "TUNNEL_ENABLE"),
        (18, "INTERLEAVE_2D_EN"),
    ] {
        let (rig, c, mut ib) = one_dispatch();
        let at = initiator_at(&rig, &ib);
        ib[at] |= 1 << bit;
        let err = rig.run(&ib).unwrap_err().to_string();
        assert!(err.contains(name) && err.contains("not modelled"), "{err}");
        assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 0);
    }
}

#[test]
fn without_force_start_the_start_registers_are_read() {
    let (rig, c, mut ib) = one_dispatch();
    let at = initiator_at(&rig, &ib);
    ib[at] &= !(1 << 2);
    // Not written in this IB: refused like any register the dispatch reads.
    let err = rig.run(&ib).unwrap_err().to_string();
    assert!(
        err.contains("COMPUTE_START_X") && err.contains("not written"),
        "{err}"
    );
    // Written zero: the same launch.
    let mut started = vec![
        type3(op::SET_SH_REG, 4, true),
        u32::from(off::COMPUTE_START_X),
        0,
        0,
        0,
    ];
    started.extend_from_slice(&ib);
    assert_eq!(rig.run(&started).unwrap(), vec![]);
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 64);
    // Offset ids are not modelled.
    started[3] = 1;
    let err = rig.run(&started).unwrap_err().to_string();
    assert!(err.contains("COMPUTE_START dimension 1 is 1"), "{err}");
}

#[test]
fn resource_limits_are_accepted_by_meaning() {
    // WAVES_PER_SH 8, TG_PER_CU 4, SIMD_DEST_CNTL, CU_GROUP_COUNT 1: limits
    // a one-workgroup-at-a-time model always meets.
    let (rig, c, mut ib) = one_dispatch();
    let at = reg_at(&rig, &ib, off::COMPUTE_RESOURCE_LIMITS);
    ib[at] = 8 | 4 << 12 | 1 << 22 | 1 << 24;
    assert_eq!(rig.run(&ib).unwrap(), vec![]);
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 64);
    // A wave32 group of 32 is one wave: WAVES_PER_SH 1 still launches.
    ib[at] = 1;
    assert_eq!(rig.run(&ib).unwrap(), vec![]);
    // Reserved bits are refused.
    ib[at] = 1 << 30;
    let err = rig.run(&ib).unwrap_err().to_string();
    assert!(
        err.contains("COMPUTE_RESOURCE_LIMITS") && err.contains("reserved"),
        "{err}"
    );
}

#[test]
fn rsrc1_scheduling_fields_may_differ_wave_state_may_not() {
    let (rig, c, mut ib) = one_dispatch();
    let at = reg_at(&rig, &ib, off::COMPUTE_PGM_RSRC1);
    let code = ib[at];
    // PRIORITY 3 and one more VGPR granule: scheduling and allocation.
    ib[at] = (code | 3 << 10) + 1;
    assert_eq!(rig.run(&ib).unwrap(), vec![]);
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 64);
    // FLOAT_MODE (bits 12..19) changes the wave's MODE: refused by name.
    ib[at] = code ^ 1 << 16;
    let err = rig.run(&ib).unwrap_err().to_string();
    assert!(
        err.contains("COMPUTE_PGM_RSRC1") && err.contains("FLOAT_MODE"),
        "{err}"
    );
}
