//! Unit tests of the vector ALU on hand-checked encodings (from llvm-mc-19,
//! kept as bytes so the tests need no tool): VOPD read-before-write, DPP
//! row shifts / quad_perm / DPP8 / masks, f16 rounding and op_sel, 64-bit
//! shifts, carries, comparisons, the f32 division sequence, lane ops.

use relaunch_isa::Isa;

use super::super::program::{self, Kind};
use super::super::wave::Wave;
use super::float::{f16_to_f32, f32_to_f16};

pub(super) fn isa(name: &str, wave64: bool) -> Isa {
    Isa::from_processor(name, wave64).unwrap()
}

/// Run the VALU instructions of `bytes` in order (an s_endpgm is appended).
pub(super) fn run(isa: Isa, bytes: &[u8], wave: &mut Wave) {
    let mut code = bytes.to_vec();
    let endpgm: u32 = match isa.family {
        relaunch_isa::Family::Gfx10 => 0xBF81_0000,
        _ => 0xBFB0_0000,
    };
    code.extend_from_slice(&endpgm.to_le_bytes());
    let prog = program::build(isa, 0, &code);
    for inst in &prog.insts {
        match inst.kind {
            Kind::Valu(_) => super::run(wave, inst)
                .unwrap_or_else(|e| panic!("{} failed: {e}", inst.decoded.mnemonic())),
            Kind::Ctrl(_) => break,
            _ => panic!("{} is not implemented", inst.decoded.mnemonic()),
        }
    }
}

/// A wave with MODE as compute kernels get it: denormals kept, round to
/// nearest even.
pub(super) fn wave(isa: Isa) -> Wave {
    let mut w = Wave::new(isa, 16);
    w.mode = 0xF0;
    w
}

pub(super) fn set(w: &mut Wave, reg: usize, f: impl Fn(usize) -> u32) {
    for l in 0..w.lanes {
        w.vgpr[reg][l] = f(l);
    }
}

#[test]
fn vopd_halves_read_before_either_writes() {
    // v_dual_mov_b32 v0, v1 :: v_dual_mov_b32 v1, v0 swaps v0 and v1.
    let i = isa("gfx1100", false);
    let mut w = wave(i);
    set(&mut w, 0, |l| l as u32);
    set(&mut w, 1, |l| 100 + l as u32);
    run(i, &[0x01, 0x01, 0x10, 0xca, 0x00, 0x01, 0x00, 0x00], &mut w);
    assert_eq!(w.vgpr[0][3], 103);
    assert_eq!(w.vgpr[1][3], 3);
    // v_dual_add_f32 v0, v1, v2 :: v_dual_mul_f32 v3, v0, v5: Y reads the
    // old v0.
    set(&mut w, 0, |_| 3f32.to_bits());
    set(&mut w, 1, |_| 1f32.to_bits());
    set(&mut w, 2, |_| 2f32.to_bits());
    set(&mut w, 5, |_| 10f32.to_bits());
    run(i, &[0x01, 0x05, 0x06, 0xc9, 0x00, 0x0b, 0x02, 0x00], &mut w);
    assert_eq!(f32::from_bits(w.vgpr[0][0]), 3.0);
    assert_eq!(f32::from_bits(w.vgpr[3][0]), 30.0);
}

#[test]
fn dpp_row_shift_with_bound_ctrl_reads_zero() {
    // v_add_nc_u32_dpp v0, v1, v2 row_shr:1 bound_ctrl:1
    let i = isa("gfx1100", false);
    let mut w = wave(i);
    set(&mut w, 1, |l| l as u32 + 1);
    set(&mut w, 2, |_| 1000);
    run(i, &[0xfa, 0x04, 0x00, 0x4a, 0x01, 0x11, 0x09, 0xff], &mut w);
    assert_eq!(w.vgpr[0][0], 1000, "lane 0 of row 0 reads 0");
    assert_eq!(w.vgpr[0][1], 1001);
    assert_eq!(w.vgpr[0][15], 1015);
    assert_eq!(w.vgpr[0][16], 1000, "lane 0 of row 1 reads 0");
    assert_eq!(w.vgpr[0][17], 1017);
}

#[test]
fn dpp_row_shift_without_bound_ctrl_keeps_the_lane() {
    // v_mov_b32_dpp v0, v1 row_shr:1 (no bound_ctrl): lanes 0 and 16 are
    // not written.
    let i = isa("gfx1100", false);
    let mut w = wave(i);
    set(&mut w, 0, |_| 7);
    set(&mut w, 1, |l| l as u32);
    run(i, &[0xfa, 0x02, 0x00, 0x7e, 0x01, 0x11, 0x01, 0xff], &mut w);
    assert_eq!(w.vgpr[0][0], 7);
    assert_eq!(w.vgpr[0][5], 4);
    assert_eq!(w.vgpr[0][16], 7);
    // An inactive source lane counts as invalid too.
    set(&mut w, 0, |_| 7);
    w.exec = !(1 << 4) & 0xFFFF_FFFF;
    run(i, &[0xfa, 0x02, 0x00, 0x7e, 0x01, 0x11, 0x01, 0xff], &mut w);
    assert_eq!(w.vgpr[0][5], 7, "lane 5 reads inactive lane 4");
    assert_eq!(w.vgpr[0][6], 5);
}

#[test]
fn dpp_quad_perm_dpp8_row_ror_and_row_mask() {
    let i = isa("gfx1100", false);
    let mut w = wave(i);
    set(&mut w, 1, |l| l as u32);
    // quad_perm:[3,2,1,0]
    run(i, &[0xfa, 0x02, 0x00, 0x7e, 0x01, 0x1b, 0x00, 0xff], &mut w);
    assert_eq!(&w.vgpr[0][..8], &[3, 2, 1, 0, 7, 6, 5, 4]);
    // dpp8:[7,6,5,4,3,2,1,0]
    run(i, &[0xe9, 0x02, 0x00, 0x7e, 0x01, 0x77, 0x39, 0x05], &mut w);
    assert_eq!(&w.vgpr[0][8..16], &[15, 14, 13, 12, 11, 10, 9, 8]);
    // row_ror:4 row_mask:0x1: row 0 rotated, row 1 untouched.
    set(&mut w, 0, |_| 99);
    run(i, &[0xfa, 0x02, 0x00, 0x7e, 0x01, 0x24, 0x01, 0x1f], &mut w);
    assert_eq!(w.vgpr[0][0], 12);
    assert_eq!(w.vgpr[0][4], 0);
    assert_eq!(w.vgpr[0][16], 99);
}

#[test]
fn dpp_in_wave64_rows_and_mbcnt() {
    let i = isa("gfx1030", true);
    let mut w = wave(i);
    // v_mbcnt_lo_u32_b32 v0, -1, 0 ; v_mbcnt_hi_u32_b32 v0, -1, v0
    run(
        i,
        &[
            0x00, 0x00, 0x65, 0xd7, 0xc1, 0x00, 0x01, 0x00, 0x00, 0x00, 0x66, 0xd7, 0xc1, 0x00,
            0x02, 0x00,
        ],
        &mut w,
    );
    for l in 0..64 {
        assert_eq!(w.vgpr[0][l], l as u32);
    }
    // v_mov_b32_dpp v0, v1 row_shr:1 bound_ctrl:1 across four rows.
    set(&mut w, 1, |l| l as u32 + 1);
    run(i, &[0xfa, 0x02, 0x00, 0x7e, 0x01, 0x11, 0x09, 0xff], &mut w);
    assert_eq!(w.vgpr[0][48], 0);
    assert_eq!(w.vgpr[0][63], 63);
    // v_readlane_b32 s1, v1, 40
    run(i, &[0x01, 0x00, 0x60, 0xd7, 0x01, 0x51, 0x01, 0x00], &mut w);
    assert_eq!(w.sgpr[1], 41);
}

#[test]
fn f16_fma_op_sel_and_preserved_high_half() {
    let i = isa("gfx1100", false);
    let mut w = wave(i);
    let h = |x: f32| u32::from(f32_to_f16(x));
    // v_fma_f16 v0, v1, v2, v3 with (1 + 2^-10) * 1.5 + 0: a tie -> even.
    set(&mut w, 0, |_| 0xABCD_0000);
    set(&mut w, 1, |_| 0x3C01);
    set(&mut w, 2, |_| 0x3E00);
    set(&mut w, 3, |_| 0);
    run(i, &[0x00, 0x00, 0x48, 0xd6, 0x01, 0x05, 0x0e, 0x04], &mut w);
    assert_eq!(w.vgpr[0][0], 0xABCD_3E02, "high half kept, tie to even");
    // op_sel:[1,0,0,1]: src0 from v1's high half, result into v0's high half.
    set(&mut w, 0, |_| 0x0000_1234);
    set(&mut w, 1, |_| h(2.0) << 16);
    set(&mut w, 2, |_| h(3.0));
    set(&mut w, 3, |_| h(0.5));
    run(i, &[0x00, 0x48, 0x48, 0xd6, 0x01, 0x05, 0x0e, 0x04], &mut w);
    assert_eq!(w.vgpr[0][0], (h(6.5) << 16) | 0x1234);
    // v_cvt_f16_f32_e32 v0, v1 rounds to nearest even and keeps v0's high half.
    set(&mut w, 0, |_| 0xFFFF_0000);
    set(&mut w, 1, |_| (1.0f32 + 2f32.powi(-11)).to_bits());
    run(i, &[0x01, 0x15, 0x00, 0x7e], &mut w);
    assert_eq!(w.vgpr[0][0], 0xFFFF_3C00);
}

#[test]
fn packed_f16_negation_and_inline_constant() {
    let i = isa("gfx1100", false);
    let mut w = wave(i);
    let h = |x: f32| u32::from(f32_to_f16(x));
    // v_pk_add_f16 v0, v1, v2 neg_lo:[0,1] neg_hi:[0,1]: a - b per half.
    set(&mut w, 1, |_| h(5.0) | (h(1.0) << 16));
    set(&mut w, 2, |_| h(2.0) | (h(0.25) << 16));
    run(i, &[0x00, 0x42, 0x0f, 0xcc, 0x01, 0x05, 0x02, 0x58], &mut w);
    assert_eq!(f16_to_f32(w.vgpr[0][0] as u16), 3.0);
    assert_eq!(f16_to_f32((w.vgpr[0][0] >> 16) as u16), 0.75);
    // v_pk_fma_f16 v0, v1, v2, 1.0 op_sel_hi:[0,1,1]: the high result takes
    // v1's low half.
    set(&mut w, 1, |_| h(2.0) | (h(100.0) << 16));
    set(&mut w, 2, |_| h(3.0) | (h(4.0) << 16));
    run(i, &[0x00, 0x40, 0x0e, 0xcc, 0x01, 0x05, 0xca, 0x13], &mut w);
    assert_eq!(f16_to_f32(w.vgpr[0][0] as u16), 7.0);
    assert_eq!(f16_to_f32((w.vgpr[0][0] >> 16) as u16), 9.0);
}

#[test]
fn shifts_of_64_bits() {
    let i = isa("gfx1100", false);
    let mut w = wave(i);
    let x: u64 = 0x8000_0001_2345_6789;
    set(&mut w, 4, |_| x as u32);
    set(&mut w, 5, |_| (x >> 32) as u32);
    set(&mut w, 2, |l| l as u32 * 3);
    let get = |w: &Wave, l: usize| u64::from(w.vgpr[0][l]) | (u64::from(w.vgpr[1][l]) << 32);
    // v_lshlrev_b64 v[0:1], v2, v[4:5]: shift amount mod 64.
    run(i, &[0x00, 0x00, 0x3c, 0xd7, 0x02, 0x09, 0x02, 0x00], &mut w);
    for l in 0..32 {
        assert_eq!(get(&w, l), x << ((l * 3) & 63), "lane {l}");
    }
    // v_ashrrev_i64 v[0:1], 63, v[4:5]
    run(i, &[0x00, 0x00, 0x3e, 0xd7, 0xbf, 0x08, 0x02, 0x00], &mut w);
    assert_eq!(get(&w, 0), u64::MAX);
    // v_lshrrev_b64 v[0:1], 33, v[4:5]
    run(i, &[0x00, 0x00, 0x3d, 0xd7, 0xa1, 0x08, 0x02, 0x00], &mut w);
    assert_eq!(get(&w, 0), x >> 33);
}

#[test]
fn mad_u64_u32_and_carries() {
    let i = isa("gfx1100", false);
    let mut w = wave(i);
    // v_mad_u64_u32 v[0:1], s0, v2, v3, v[4:5]
    set(&mut w, 2, |_| u32::MAX);
    set(&mut w, 3, |l| if l == 0 { u32::MAX } else { 2 });
    set(&mut w, 4, |_| u32::MAX);
    set(&mut w, 5, |l| if l == 0 { u32::MAX } else { 0 });
    run(i, &[0x00, 0x00, 0xfe, 0xd6, 0x02, 0x07, 0x12, 0x04], &mut w);
    let p0 = u128::from(u32::MAX) * u128::from(u32::MAX) + u128::from(u64::MAX);
    assert_eq!(w.vgpr[0][0], p0 as u32);
    assert_eq!(w.vgpr[1][0], (p0 >> 32) as u32);
    assert_eq!(w.sgpr[0], 1, "only lane 0 overflows 64 bits");
    // v_add_co_u32 v0, vcc_lo, v1, v2 ; v_add_co_ci_u32_e32 v3, vcc_lo, v4, v5, vcc_lo
    set(&mut w, 1, |l| if l % 2 == 0 { u32::MAX } else { 1 });
    set(&mut w, 2, |_| 1);
    set(&mut w, 4, |_| 10);
    set(&mut w, 5, |_| 20);
    run(
        i,
        &[
            0x00, 0x6a, 0x00, 0xd7, 0x01, 0x05, 0x02, 0x00, 0x04, 0x0b, 0x06, 0x40,
        ],
        &mut w,
    );
    assert_eq!(w.vgpr[0][0], 0);
    assert_eq!(w.vgpr[0][1], 2);
    assert_eq!(w.vgpr[3][0], 31);
    assert_eq!(w.vgpr[3][1], 30);
    assert_eq!(w.vcc(), 0, "the second add carries out nowhere");
}

#[test]
fn compares_into_sgpr_and_exec() {
    let i = isa("gfx1100", false);
    let mut w = wave(i);
    set(&mut w, 1, |l| l as u32);
    set(&mut w, 2, |_| 10);
    // v_cmp_lt_u32_e64 s0, v1, v2
    run(i, &[0x00, 0x00, 0x49, 0xd4, 0x01, 0x05, 0x02, 0x00], &mut w);
    assert_eq!(w.sgpr[0], 0x3FF);
    // v_cmpx_gt_u32_e32 v1, v2 writes EXEC (lanes 11..31), not VCC.
    w.set_vcc(0x55);
    run(i, &[0x01, 0x05, 0x98, 0x7d], &mut w);
    assert_eq!(w.exec, 0xFFFF_F800);
    assert_eq!(w.vcc(), 0x55);
    // v_cndmask_b32_e64 v0, v1, v2, s0 under the new EXEC.
    set(&mut w, 0, |_| 5);
    run(i, &[0x00, 0x00, 0x01, 0xd5, 0x01, 0x05, 0x02, 0x00], &mut w);
    assert_eq!(w.vgpr[0][0], 5, "inactive lane untouched");
    assert_eq!(w.vgpr[0][12], 12);
}

#[test]
fn division_sequence_is_correctly_rounded() {
    // LLVM's f32 division: div_scale x2, rcp, Newton steps, div_fmas,
    // div_fixup (v2 = v0 / v1).
    let seq: [u8; 72] = [
        0x03, 0x7c, 0xfc, 0xd6, 0x01, 0x03, 0x02, 0x04, 0x04, 0x6a, 0xfc, 0xd6, 0x00, 0x03, 0x02,
        0x04, 0x03, 0x55, 0x0a, 0x7e, 0x06, 0x00, 0x13, 0xd6, 0x03, 0x0b, 0xca, 0x23, 0x06, 0x0b,
        0x0a, 0x56, 0x04, 0x0b, 0x0c, 0x10, 0x07, 0x00, 0x13, 0xd6, 0x03, 0x0d, 0x12, 0x24, 0x07,
        0x0b, 0x0c, 0x56, 0x03, 0x00, 0x13, 0xd6, 0x03, 0x0d, 0x12, 0x24, 0x03, 0x00, 0x37, 0xd6,
        0x03, 0x0b, 0x1a, 0x04, 0x02, 0x00, 0x27, 0xd6, 0x03, 0x03, 0x02, 0x04,
    ];
    let i = isa("gfx1100", false);
    let mut w = wave(i);
    w.mode = 0xF0;
    let cases: [(f32, f32); 8] = [
        (1.0, 3.0),
        (7.0, 10.0),
        (-5.5, 0.1),
        (1e30, 1e-9),
        (1e-38, 3.0),
        (3.0, 0.0),
        (0.0, 0.0),
        (f32::MAX, 0.5),
    ];
    set(&mut w, 0, |l| cases[l % 8].0.to_bits());
    set(&mut w, 1, |l| cases[l % 8].1.to_bits());
    run(i, &seq, &mut w);
    for (l, (n, d)) in cases.iter().enumerate() {
        let got = f32::from_bits(w.vgpr[2][l]);
        let want = n / d;
        assert!(
            got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
            "{n} / {d}: {got} != {want}"
        );
    }
}

#[test]
fn modifiers_clamp_omod_and_lane_ops() {
    let i = isa("gfx1100", false);
    let mut w = wave(i);
    set(&mut w, 1, |_| (-0.25f32).to_bits());
    set(&mut w, 2, |_| 0.5f32.to_bits());
    // v_sub_f32_e64 v0, |v1|, -v2 clamp: 0.25 + 0.5 = 0.75
    run(i, &[0x00, 0x81, 0x04, 0xd5, 0x01, 0x05, 0x02, 0x40], &mut w);
    assert_eq!(f32::from_bits(w.vgpr[0][0]), 0.75);
    // v_mul_f32_e64 v0, v1, v2 mul:2
    run(i, &[0x00, 0x00, 0x08, 0xd5, 0x01, 0x05, 0x02, 0x08], &mut w);
    assert_eq!(f32::from_bits(w.vgpr[0][0]), -0.25);
    // v_readlane_b32 s1, v1, 5 ; v_writelane_b32 v0, s1, 3 ; v_readfirstlane_b32 s2, v1
    set(&mut w, 1, |l| l as u32 * 10);
    set(&mut w, 0, |_| 0);
    w.exec = 0xFFFF_FFF0;
    run(
        i,
        &[
            0x01, 0x00, 0x60, 0xd7, 0x01, 0x0b, 0x01, 0x00, 0x00, 0x00, 0x61, 0xd7, 0x01, 0x06,
            0x01, 0x00, 0x01, 0x05, 0x04, 0x7e,
        ],
        &mut w,
    );
    assert_eq!(w.sgpr[1], 50);
    assert_eq!(w.vgpr[0][3], 50, "writelane ignores EXEC");
    assert_eq!(w.sgpr[2], 40, "first active lane is 4");
}

#[test]
fn sin_takes_turns() {
    let i = isa("gfx1100", false);
    let mut w = wave(i);
    set(&mut w, 1, |_| 0.25f32.to_bits());
    run(i, &[0x01, 0x6b, 0x00, 0x7e], &mut w);
    assert_eq!(f32::from_bits(w.vgpr[0][0]), 1.0);
}

#[test]
fn gfx11_vop1_high_half_operand() {
    // v_cvt_f32_f16_e32 v0, v1.h (VGPR field 129: bit 7 selects the half).
    let i = isa("gfx1100", false);
    let mut w = wave(i);
    set(&mut w, 1, |_| u32::from(f32_to_f16(2.5)) << 16);
    run(i, &[0x81, 0x17, 0x00, 0x7e], &mut w);
    assert_eq!(f32::from_bits(w.vgpr[0][0]), 2.5);
}

#[test]
fn implemented_lists_table_mnemonics() {
    use relaunch_isa::Family;
    for f in [Family::Gfx10, Family::Gfx11, Family::Gfx12] {
        let names = super::implemented(f);
        assert!(names.contains(&"v_add_f32_e32"), "{f:?}");
        assert!(names.contains(&"v_add_f32_e64"), "{f:?}");
        assert!(names.contains(&"v_cmp_lt_u32_e32"), "{f:?}");
        assert!(names.contains(&"v_readlane_b32"), "{f:?}");
        // WMMA on gfx11/gfx12 only; the sparse forms are not modelled.
        let wmma = names.iter().filter(|n| n.starts_with("v_wmma")).count();
        let want = match f {
            Family::Gfx10 => 0,
            Family::Gfx11 => 6,
            Family::Gfx12 => 11,
        };
        assert_eq!(wmma, want, "{f:?}");
        assert!(!names.iter().any(|n| n.starts_with("v_swmmac")), "{f:?}");
    }
    assert!(super::implemented(Family::Gfx11).contains(&"v_dual_fmac_f32"));
    assert!(super::implemented(Family::Gfx12).contains(&"v_mad_co_u64_u32"));
    // The dot products, per family as LLVM has them.
    let g10 = super::implemented(Family::Gfx10);
    for n in [
        "v_dot2_f32_f16",
        "v_dot2c_f32_f16",
        "v_dot4_i32_i8",
        "v_dot8_u32_u4",
    ] {
        assert!(g10.contains(&n), "gfx10 {n}");
    }
    for f in [Family::Gfx11, Family::Gfx12] {
        let names = super::implemented(f);
        for n in [
            "v_dot2_f32_bf16",
            "v_dot2_f16_f16",
            "v_dot4_i32_iu8",
            "v_dot8_i32_iu4",
        ] {
            assert!(names.contains(&n), "{f:?} {n}");
        }
        assert!(!names.contains(&"v_dot2_bf16_bf16"), "{f:?}");
    }
    assert!(super::implemented(Family::Gfx11).contains(&"v_dot2acc_f32_f16"));
}

// Dot products. Encodings from llvm-mc-19; values worked by hand.

/// v1 = f16 (1.5, -2.0), v2 = f16 (2.0, 0.25), v3 = `c` (an f32).
fn dot_inputs(w: &mut Wave, c: f32) {
    set(w, 1, |_| 0xC000_3E00);
    set(w, 2, |_| 0x3400_4000);
    set(w, 3, |_| c.to_bits());
}

fn f32_at(w: &Wave, reg: usize) -> f32 {
    f32::from_bits(w.vgpr[reg][0])
}

#[test]
fn dot2_f32_f16_sums_both_products_and_s2() {
    // v_dot2_f32_f16 v0, v1, v2, v3: 1.5*2 + -2*0.25 + 10 = 12.5.
    for t in ["gfx1030", "gfx1100", "gfx1201"] {
        let i = isa(t, false);
        let mut w = wave(i);
        dot_inputs(&mut w, 10.0);
        run(i, &[0x00, 0x40, 0x13, 0xcc, 0x01, 0x05, 0x0e, 0x1c], &mut w);
        assert_eq!(f32_at(&w, 0), 12.5, "{t}");
    }
    // op_sel:[1,0,0] op_sel_hi:[0,1,1] neg_lo:[0,1,1]: the low product
    // takes v1's high half and -v2.lo, the high one v1.lo and v2.hi, S2
    // negated: -2*-2 + 1.5*0.25 - 10 = -5.625.
    let i = isa("gfx1100", false);
    let mut w = wave(i);
    dot_inputs(&mut w, 10.0);
    run(i, &[0x00, 0x48, 0x13, 0xcc, 0x01, 0x05, 0x0e, 0xd4], &mut w);
    assert_eq!(f32_at(&w, 0), -5.625);
    // One rounding of the exact sum: 1*1 + 2^-12*2^-12 + 2^-24 is exactly
    // 1 + 2^-23 (adding in f32 one term at a time would tie down to 1.0).
    set(&mut w, 1, |_| 0x0C00_3C00);
    set(&mut w, 2, |_| 0x0C00_3C00);
    set(&mut w, 3, |_| 0x3380_0000);
    run(i, &[0x00, 0x40, 0x13, 0xcc, 0x01, 0x05, 0x0e, 0x1c], &mut w);
    assert_eq!(w.vgpr[0][0], 0x3F80_0001);
}

#[test]
fn dot2_f32_bf16_and_its_clamp() {
    // v1 = bf16 (3.0, 1.0), v2 = bf16 (0.5, -1.0): 1.5 - 1 + S2.
    let i = isa("gfx1201", false);
    let mut w = wave(i);
    set(&mut w, 1, |_| 0x3F80_4040);
    set(&mut w, 2, |_| 0xBF80_3F00);
    set(&mut w, 3, |_| 0.25f32.to_bits());
    // v_dot2_f32_bf16 v0, v1, v2, v3
    run(i, &[0x00, 0x40, 0x1a, 0xcc, 0x01, 0x05, 0x0e, 0x1c], &mut w);
    assert_eq!(f32_at(&w, 0), 0.75);
    // ... clamp: 2.5 -> 1.0, -4.5 -> 0.0.
    let clamp = [0x00, 0xc0, 0x1a, 0xcc, 0x01, 0x05, 0x0e, 0x1c];
    set(&mut w, 3, |_| 2f32.to_bits());
    run(i, &clamp, &mut w);
    assert_eq!(f32_at(&w, 0), 1.0);
    set(&mut w, 3, |_| (-5f32).to_bits());
    run(i, &clamp, &mut w);
    assert_eq!(w.vgpr[0][0], 0);
}

#[test]
fn dot2_f16_f16_takes_s2_and_writes_the_halves_op_sel_names() {
    // v_dot2_f16_f16 v0, v1, v2, v3 op_sel:[0,0,1,1]: f16 (1, 2) . (3, 0.5)
    // + v3.h (0.5) = 4.5 (0x4480) into v0.h, v0.l kept.
    let i = isa("gfx1100", false);
    let mut w = wave(i);
    set(&mut w, 0, |_| 0x0000_1234);
    set(&mut w, 1, |_| 0x4000_3C00);
    set(&mut w, 2, |_| 0x3800_4200);
    set(&mut w, 3, |_| 0x3800_7777);
    run(i, &[0x00, 0x60, 0x66, 0xd6, 0x01, 0x05, 0x0e, 0x04], &mut w);
    assert_eq!(w.vgpr[0][0], 0x4480_1234);
}

#[test]
fn integer_dots_signedness_op_sel_and_saturation() {
    // Bytes of v1: [1, -2, 3, -128]; of v2: [5, 6, -7, 2]; v3 = 1000.
    let bytes = |w: &mut Wave| {
        set(w, 1, |_| u32::from_le_bytes([1, 0xFE, 3, 0x80]));
        set(w, 2, |_| u32::from_le_bytes([5, 6, 0xF9, 2]));
        set(w, 3, |_| 1000);
    };
    // gfx1030 v_dot4_i32_i8: 5 - 12 - 21 - 256 + 1000 = 716.
    let i = isa("gfx1030", false);
    let mut w = wave(i);
    bytes(&mut w);
    run(i, &[0x00, 0x40, 0x16, 0xcc, 0x01, 0x05, 0x0e, 0x1c], &mut w);
    assert_eq!(w.vgpr[0][0], 716);
    // v_dot2_i32_i16 op_sel:[1,0,0] op_sel_hi:[0,1,1]: v1 = (3, -4),
    // v2 = (100, -1): -4*100 + 3*-1 + 7 = -396.
    set(&mut w, 1, |_| 0xFFFC_0003);
    set(&mut w, 2, |_| 0xFFFF_0064);
    set(&mut w, 3, |_| 7);
    run(i, &[0x00, 0x48, 0x14, 0xcc, 0x01, 0x05, 0x0e, 0x14], &mut w);
    assert_eq!(w.vgpr[0][0] as i32, -396);
    // v_dot2_u32_u16 clamp: 2 * 65535^2 saturates.
    set(&mut w, 1, |_| u32::MAX);
    set(&mut w, 2, |_| u32::MAX);
    set(&mut w, 3, |_| 0);
    run(i, &[0x00, 0xc0, 0x15, 0xcc, 0x01, 0x05, 0x0e, 0x1c], &mut w);
    assert_eq!(w.vgpr[0][0], u32::MAX);

    // gfx1100 v_dot4_i32_iu8 neg_lo:[1,1,0] (both signed): 716;
    // neg_lo:[0,1,0] (v1 unsigned): 5 + 254*6 - 21 + 256 + 1000 = 2764.
    let i = isa("gfx1100", false);
    let mut w = wave(i);
    bytes(&mut w);
    run(i, &[0x00, 0x40, 0x16, 0xcc, 0x01, 0x05, 0x0e, 0x7c], &mut w);
    assert_eq!(w.vgpr[0][0], 716);
    run(i, &[0x00, 0x40, 0x16, 0xcc, 0x01, 0x05, 0x0e, 0x5c], &mut w);
    assert_eq!(w.vgpr[0][0], 2764);

    // gfx1201 v_dot8_u32_u4 clamp: 8 * 15*15 + 0xFFFF_FF00 saturates.
    let i = isa("gfx1201", false);
    let mut w = wave(i);
    set(&mut w, 1, |_| u32::MAX);
    set(&mut w, 2, |_| u32::MAX);
    set(&mut w, 3, |_| 0xFFFF_FF00);
    run(i, &[0x00, 0xc0, 0x19, 0xcc, 0x01, 0x05, 0x0e, 0x1c], &mut w);
    assert_eq!(w.vgpr[0][0], u32::MAX);
    // v_dot8_i32_iu4 neg_lo:[1,1,0]: all -1 nibbles against the signed
    // nibbles of 0x12345678 (-8, 7, 6, 5, 4, 3, 2, 1; sum 20): -20.
    set(&mut w, 2, |_| 0x1234_5678);
    set(&mut w, 3, |_| 0);
    run(i, &[0x00, 0x40, 0x18, 0xcc, 0x01, 0x05, 0x0e, 0x7c], &mut w);
    assert_eq!(w.vgpr[0][0] as i32, -20);
}

#[test]
fn vop2_dots_accumulate_into_the_destination() {
    // gfx1030 v_dot2c_f32_f16 v0, v1, v2 with v0 = 10: 12.5.
    let i = isa("gfx1030", false);
    let mut w = wave(i);
    dot_inputs(&mut w, 0.0);
    set(&mut w, 0, |_| 10f32.to_bits());
    run(i, &[0x01, 0x05, 0x00, 0x04], &mut w);
    assert_eq!(f32_at(&w, 0), 12.5);
    // v_dot4c_i32_i8 v0, v1, v2 with v0 = 1000: 716.
    set(&mut w, 1, |_| u32::from_le_bytes([1, 0xFE, 3, 0x80]));
    set(&mut w, 2, |_| u32::from_le_bytes([5, 6, 0xF9, 2]));
    set(&mut w, 0, |_| 1000);
    run(i, &[0x01, 0x05, 0x00, 0x1a], &mut w);
    assert_eq!(w.vgpr[0][0], 716);
    // gfx1100 v_dot2acc_f32_f16 v0, 1.0, v2: f16 1.0 in both halves,
    // 2 + 0.25 + 10 = 12.25.
    let i = isa("gfx1100", false);
    let mut w = wave(i);
    dot_inputs(&mut w, 0.0);
    set(&mut w, 0, |_| 10f32.to_bits());
    run(i, &[0xf2, 0x04, 0x00, 0x04], &mut w);
    assert_eq!(f32_at(&w, 0), 12.25);
}

#[test]
fn dots_without_an_established_meaning_are_refused() {
    let cases: [(&str, &[u8]); 3] = [
        // v_dot2_bf16_bf16 (rounding not established).
        ("gfx1100", &[0x00, 0x00, 0x67, 0xd6, 0x01, 0x05, 0x0e, 0x04]),
        // v_dot2_f32_f16 ... neg_hi:[0,0,1] (neg_hi on an f32 S2).
        ("gfx1100", &[0x00, 0x44, 0x13, 0xcc, 0x01, 0x05, 0x0e, 0x1c]),
        // v_dot4_u32_u8 ... neg_lo:[1,0,0] (no meaning for unsigned).
        ("gfx1100", &[0x00, 0x40, 0x17, 0xcc, 0x01, 0x05, 0x0e, 0x3c]),
    ];
    for (t, bytes) in cases {
        let prog = program::build(isa(t, false), 0, bytes);
        assert!(
            matches!(prog.insts[0].kind, Kind::Unimplemented),
            "{t}: {} should be refused",
            prog.insts[0].decoded.mnemonic()
        );
    }
    // v_dot2_f32_f16 v0, 1, v2, v3: an integer inline constant as packed
    // f16 halves is refused when it runs.
    let i = isa("gfx1100", false);
    let mut w = wave(i);
    dot_inputs(&mut w, 1.0);
    let prog = program::build(i, 0, &[0x00, 0x40, 0x13, 0xcc, 0x81, 0x04, 0x0e, 0x1c]);
    let err = super::run(&mut w, &prog.insts[0]).unwrap_err().to_string();
    assert!(err.contains("integer inline constant"), "{err}");
    // Flushed f32 denormals (MODE.FP_DENORM f32 = 0): refused naming MODE.
    let i = isa("gfx1100", false);
    let mut w = wave(i);
    w.mode = 0xC0;
    dot_inputs(&mut w, 1.0);
    let prog = program::build(i, 0, &[0x00, 0x40, 0x13, 0xcc, 0x01, 0x05, 0x0e, 0x1c]);
    let err = super::run(&mut w, &prog.insts[0]).unwrap_err().to_string();
    assert!(
        err.contains("v_dot2_f32_f16") && err.contains("MODE"),
        "{err}"
    );
}
