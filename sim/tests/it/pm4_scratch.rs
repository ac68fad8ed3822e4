//! The scratch ring of a direct PM4 dispatch comes from the registers its
//! IB programs (COMPUTE_TMPRING_SIZE, RSRC2.SCRATCH_EN and, on gfx11/gfx12,
//! COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI), checked by the hardware's rules:
//! a counter kernel whose descriptor enables scratch (its code never
//! touches it) runs with a valid ring and is refused, naming what is
//! wrong, without one, with slots too small or too few, and a ring
//! reaching past mapped memory is a VM fault. (Kernels that really use
//! scratch run through relaunch's encoder in `tests/it/pm4_scratch.rs` of
//! the root package.)

use relaunch_facts::packet::{op, type3};
use relaunch_facts::regs::off;
use relaunch_facts::scratch::tmpring_size;
use relaunch_sim::SimConfig;
use relaunch_testsupport::simkit::{linear, Rig};

use crate::pm4::reg_position;

/// Private bytes per work-item the edited descriptor declares.
const PRIVATE: u32 = 64;

/// A rig for `target` where the counter runs as its twin (the kernels
/// installed here with an edited descriptor have no code of their own).
fn rig(target: &str) -> Rig {
    relaunch_testsupport::twins::register_test_kernel_twins();
    Rig::with_config(SimConfig::new(target), "counter")
}

/// A counter IB (64 work-items, groups of 32) on `rig` whose kernel's
/// descriptor enables scratch with `PRIVATE` bytes, RSRC2.SCRATCH_EN set in
/// the IB, preceded by `prefix`.
fn scratch_counter(rig: &Rig, c: u64, prefix: &[u32]) -> Vec<u32> {
    let mut kd = rig.image.kernels[0].descriptor;
    kd.private_segment_fixed_size = PRIVATE;
    kd.compute_pgm_rsrc2 |= 1;
    let scratchy = rig.dev.install_kernel("counter", kd).unwrap();
    let entry = scratchy.kernels[0].code_entry;
    let mut ib = rig.dwords(rig.counter(c, 1, None, &linear(64, 32)));
    let family = rig.dev.family();
    let lo = reg_position(&ib, family, off::COMPUTE_PGM_LO);
    ib[lo] = (entry >> 8) as u32;
    ib[lo + 1] = (entry >> 40) as u32;
    let r2 = reg_position(&ib, family, off::COMPUTE_PGM_RSRC2);
    ib[r2] |= 1;
    let mut out = prefix.to_vec();
    out.extend(ib);
    out
}

fn set(offset: u16, values: &[u32]) -> Vec<u32> {
    let mut w = vec![
        type3(op::SET_SH_REG, values.len() as u32 + 1, true),
        u32::from(offset),
    ];
    w.extend_from_slice(values);
    w
}

/// TMPRING_SIZE with `waves` slots of `wave_bytes`, then the scratch base
/// at `base` (bits 47:8).
fn ring(rig: &Rig, waves: u32, wave_bytes: u64, base: u64) -> Vec<u32> {
    let family = rig.dev.family();
    let mut w = set(
        off::COMPUTE_TMPRING_SIZE,
        &[tmpring_size(family, waves, wave_bytes).unwrap()],
    );
    w.extend(set(
        off::COMPUTE_DISPATCH_SCRATCH_BASE_LO,
        &[(base >> 8) as u32, (base >> 40) as u32],
    ));
    w
}

/// A wave's need: PRIVATE bytes x 32 lanes (the counter is wave32).
const WAVE: u64 = PRIVATE as u64 * 32;

#[test]
fn a_valid_ring_from_the_ib_runs_the_dispatch() {
    for target in ["gfx1100", "gfx1201"] {
        let rig = rig(target);
        let c = rig.alloc(4);
        let backing = rig.alloc(4 * WAVE as usize);
        let ib = scratch_counter(&rig, c, &ring(&rig, 4, WAVE, backing));
        assert_eq!(rig.run(&ib).unwrap(), vec![], "{target}");
        assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 64, "{target}");
    }
}

#[test]
fn no_ring_or_no_base_is_refused_naming_the_register() {
    for target in ["gfx1100", "gfx1201"] {
        let rig = rig(target);
        let c = rig.alloc(4);
        let err = rig
            .run(&scratch_counter(&rig, c, &[]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("COMPUTE_TMPRING_SIZE") && err.contains("not written"),
            "{err}"
        );
        let tmpring = set(
            off::COMPUTE_TMPRING_SIZE,
            &[tmpring_size(rig.dev.family(), 4, WAVE).unwrap()],
        );
        let err = rig
            .run(&scratch_counter(&rig, c, &tmpring))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("COMPUTE_DISPATCH_SCRATCH_BASE_LO") && err.contains("not written"),
            "{err}"
        );
        assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 0);
    }
}

#[test]
fn slots_too_small_or_too_few_are_refused() {
    let rig = rig("gfx1201");
    let c = rig.alloc(4);
    let backing = rig.alloc(8 * WAVE as usize);
    // 256-byte slots for a 2 KiB wave.
    let err = rig
        .run(&scratch_counter(&rig, c, &ring(&rig, 4, 256, backing)))
        .unwrap_err()
        .to_string();
    assert!(err.contains("overrun"), "{err}");
    // No slot at all.
    let err = rig
        .run(&scratch_counter(&rig, c, &ring(&rig, 0, WAVE, backing)))
        .unwrap_err()
        .to_string();
    assert!(err.contains("0 wave slots"), "{err}");
    // One slot holds this dispatch's one-wave workgroups.
    let ok = rig.run(&scratch_counter(&rig, c, &ring(&rig, 1, WAVE, backing)));
    assert_eq!(ok.unwrap(), vec![]);
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 64);
}

#[test]
fn a_ring_past_mapped_memory_is_a_vm_fault() {
    let rig = rig("gfx1100");
    let c = rig.alloc(4);
    let backing = rig.alloc(2 * WAVE as usize);
    // Four slots over a two-slot allocation.
    let err = rig
        .run(&scratch_counter(&rig, c, &ring(&rig, 4, WAVE, backing)))
        .unwrap_err();
    assert!(err.is_vm_fault(), "{err}");
    // A base nothing is mapped at.
    let err = rig
        .run(&scratch_counter(
            &rig,
            c,
            &ring(&rig, 4, WAVE, 0x7f00_0000_0000),
        ))
        .unwrap_err();
    assert!(err.is_vm_fault(), "{err}");
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 0);
}

#[test]
fn clearing_scratch_en_for_a_scratch_kernel_is_refused() {
    let rig = rig("gfx1100");
    let c = rig.alloc(4);
    let mut ib = scratch_counter(&rig, c, &[]);
    let r2 = reg_position(&ib, rig.dev.family(), off::COMPUTE_PGM_RSRC2);
    ib[r2] &= !1;
    let err = rig.run(&ib).unwrap_err().to_string();
    assert!(err.contains("SCRATCH_EN"), "{err}");
}

/// gfx10: the ring's base reaches the waves only through the user SGPRs
/// the IB wrote (the V# and flat scratch init of a -O0 HIP kernel, which
/// asks for both): as relaunch's encoder writes them the kernel runs
/// exactly; the two made to differ, or the V# alone moved off the
/// backing, is refused or faults.
#[test]
fn gfx10_takes_the_ring_from_the_v_sharp_and_flat_scratch_init() {
    let Some(co) = relaunch_testsupport::hip::hip_o0("spill_o0.hip", "gfx1030") else {
        return;
    };
    gfx10_spill(&co, 32);
}

/// The same in wave64: the V# the encoder writes has INDEX_STRIDE 64.
#[test]
fn gfx10_wave64_scratch_runs_from_the_ib_ring() {
    let Some(co) =
        relaunch_testsupport::hip::hip_o0_with("spill_o0.hip", "gfx1030", &["-mwavefrontsize64"])
    else {
        return;
    };
    gfx10_spill(&co, 64);
}

fn gfx10_spill(co: &[u8], block: u32) {
    let rig = Rig::from_bytes(SimConfig::new("gfx1030"), co);
    let (idx, out) = (rig.alloc(4 * 64), rig.alloc(4 * 64));
    for i in 0..64u64 {
        rig.dev
            .memory
            .write(idx + 4 * i, &(i as u32 * 7).to_le_bytes())
            .unwrap();
    }
    let mut explicit = idx.to_le_bytes().to_vec();
    explicit.extend_from_slice(&out.to_le_bytes());
    explicit.extend_from_slice(&64u32.to_le_bytes());
    let ib = {
        let mut b = rig.builder();
        rig.dispatch(&mut b, "spill_small", &linear(64, block), &explicit);
        rig.dwords(b)
    };
    assert_eq!(rig.run(&ib).unwrap(), vec![]);
    for i in 0..64u32 {
        let a = |k: u32| i * 3 + k * k;
        let j = i * 7;
        let (x, y) = (a(j % 8), a((j + 7) % 8));
        let want = x.wrapping_mul(31).wrapping_add(y ^ (x >> 3));
        assert_eq!(
            rig.dev.memory.read_u32(out + 4 * u64::from(i)).unwrap(),
            want,
            "{i}"
        );
    }
    // USER_DATA: V# 0..3, dispatch packet 4..5, kernarg 6..7, flat scratch init 8..9.
    let family = rig.dev.family();
    let init = reg_position(&ib, family, off::COMPUTE_USER_DATA_0 + 8);
    let mut moved = ib.clone();
    moved[init] += 256;
    let err = rig.run(&moved).unwrap_err().to_string();
    assert!(err.contains("differ"), "{err}");
    let srd = reg_position(&ib, family, off::COMPUTE_USER_DATA_0);
    let mut away = ib.clone();
    away[srd] = 0x1000;
    away[srd + 1] &= !0xFFFF;
    away[init] = 0x1000;
    away[init + 1] = 0;
    let err = rig.run(&away).unwrap_err();
    assert!(err.is_vm_fault(), "{err}");
}
