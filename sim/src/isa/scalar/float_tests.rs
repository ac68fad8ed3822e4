//! The scalar float operations of `float` on llvm-mc-19's encodings (the
//! same bytes on gfx1151 and gfx1201; s_minimum/maximum_f32 are gfx12's):
//! rounding of halves, NaN and infinities, signed zeros, denormal flushing
//! by MODE, FP_ROUND on the fmas, the literal operand.

use relaunch_isa::Isa;

use super::super::execute;
use crate::isa::program::{self, Kind};
use crate::isa::wave::Wave;

/// Denormals kept, round to nearest even (as compute kernels start).
const MODE: u32 = 0xF0;

fn wave(target: &str) -> Wave {
    let mut w = Wave::new(Isa::from_processor(target, false).unwrap(), 16);
    w.mode = MODE;
    w
}

/// Run the one scalar instruction `bytes` encodes.
fn run(w: &mut Wave, bytes: &[u8]) {
    let mut code = bytes.to_vec();
    code.extend_from_slice(&0xBFB0_0000u32.to_le_bytes());
    let prog = program::build(w.isa, 0, &code);
    let inst = &prog.insts[0];
    assert_eq!(inst.decoded.len, bytes.len(), "{}", inst.decoded.mnemonic());
    let Kind::Salu(op) = inst.kind else {
        panic!(
            "{} is not a scalar ALU operation here",
            inst.decoded.mnemonic()
        );
    };
    execute(w, inst, op).unwrap();
}

/// s0 = op(s1) for each input.
fn unary(target: &str, bytes: &[u8], cases: &[(u32, u32)], mode: u32) {
    let mut w = wave(target);
    w.mode = mode;
    for &(x, want) in cases {
        w.sgpr[1] = x;
        run(&mut w, bytes);
        assert_eq!(w.sgpr[0], want, "{target} {bytes:x?} on {x:#x}");
    }
}

const TRUNC: [u8; 4] = [0x01, 0x62, 0x80, 0xbe];
const CEIL: [u8; 4] = [0x01, 0x60, 0x80, 0xbe];
const FLOOR: [u8; 4] = [0x01, 0x61, 0x80, 0xbe];
const RNDNE: [u8; 4] = [0x01, 0x63, 0x80, 0xbe];

fn b(x: f32) -> u32 {
    x.to_bits()
}

#[test]
fn roundings_of_halves_signs_and_specials() {
    let denormal = 0x8000_0001;
    for t in ["gfx1151", "gfx1201"] {
        let inf = f32::INFINITY;
        unary(
            t,
            &TRUNC,
            &[
                (b(2.7), b(2.0)),
                (b(-2.7), b(-2.0)),
                (b(-0.5), b(-0.0)),
                (b(inf), b(inf)),
                (b(1e30), b(1e30)),
                (0x7F80_0001, 0x7FC0_0001),
                (denormal, denormal & 0x8000_0000),
            ],
            MODE,
        );
        unary(
            t,
            &CEIL,
            &[(b(2.1), b(3.0)), (b(-2.9), b(-2.0)), (b(-0.5), b(-0.0))],
            MODE,
        );
        unary(
            t,
            &FLOOR,
            &[(b(2.9), b(2.0)), (b(-2.1), b(-3.0)), (b(0.5), b(0.0))],
            MODE,
        );
        // Ties go to the even integer.
        unary(
            t,
            &RNDNE,
            &[
                (b(2.5), b(2.0)),
                (b(3.5), b(4.0)),
                (b(-0.5), b(-0.0)),
                (b(-1.5), b(-2.0)),
                (b(f32::NEG_INFINITY), b(f32::NEG_INFINITY)),
            ],
            MODE,
        );
        // A denormal input is flushed when MODE says so: ceil of +tiny is
        // then 0, not 1.
        unary(t, &CEIL, &[(1, b(1.0))], MODE);
        unary(t, &CEIL, &[(1, b(0.0))], 0xC0);
    }
}

#[test]
fn literal_fmas_round_once_and_follow_fp_round() {
    // s_fmaak_f32 s0, s1, s2, 3.0 and s_fmamk_f32 s0, s1, 3.0, s2.
    let fmaak = [0x01, 0x02, 0x80, 0xa2, 0x00, 0x00, 0x40, 0x40];
    let fmamk = [0x01, 0x02, 0x00, 0xa3, 0x00, 0x00, 0x40, 0x40];
    for t in ["gfx1151", "gfx1201"] {
        let mut w = wave(t);
        w.sgpr[1] = b(2.0);
        w.sgpr[2] = b(5.0);
        run(&mut w, &fmaak);
        assert_eq!(f32::from_bits(w.sgpr[0]), 13.0);
        run(&mut w, &fmamk);
        assert_eq!(f32::from_bits(w.sgpr[0]), 11.0);
        // (1 + 2^-23) * (1 - 2^-23) + 3 = 4 - 2^-46: one rounding gives 4;
        // toward zero (FP_ROUND f32 = 3) the value just below.
        w.sgpr[1] = b(1.0 + f32::EPSILON);
        w.sgpr[2] = b(1.0 - f32::EPSILON);
        run(&mut w, &fmaak);
        assert_eq!(f32::from_bits(w.sgpr[0]), 4.0);
        w.mode = MODE | 3;
        run(&mut w, &fmaak);
        assert_eq!(w.sgpr[0], b(4.0) - 1);
    }
}

#[test]
fn minimum_and_maximum_propagate_nan_and_order_zeros() {
    let min = [0x01, 0x02, 0x80, 0xa7];
    let max = [0x01, 0x02, 0x00, 0xa8];
    let mut w = wave("gfx1201");
    let cases = [
        (b(1.0), b(2.0), b(1.0), b(2.0)),
        (b(-0.0), b(0.0), b(-0.0), b(0.0)),
        (b(0.0), b(-0.0), b(-0.0), b(0.0)),
        (b(1.0), 0x7F80_0001, 0x7FC0_0001, 0x7FC0_0001),
        (0x7FC0_0000, b(1.0), 0x7FC0_0000, 0x7FC0_0000),
        (b(f32::NEG_INFINITY), b(-1.0), b(f32::NEG_INFINITY), b(-1.0)),
    ];
    for (x, y, lo, hi) in cases {
        w.sgpr[1] = x;
        w.sgpr[2] = y;
        run(&mut w, &min);
        assert_eq!(w.sgpr[0], lo, "minimum({x:#x}, {y:#x})");
        run(&mut w, &max);
        assert_eq!(w.sgpr[0], hi, "maximum({x:#x}, {y:#x})");
    }
}

#[test]
fn f16_conversions_and_compares() {
    let lo = [0x01, 0x69, 0x80, 0xbe];
    let hi = [0x01, 0x6a, 0x80, 0xbe];
    let pk_rtz = [0x01, 0x02, 0x00, 0xa4];
    let lt = [0x01, 0x02, 0x51, 0xbf];
    let unordered = [0x01, 0x02, 0x58, 0xbf];
    for t in ["gfx1151", "gfx1201"] {
        let mut w = wave(t);
        // 0x3C00 = 1.0, 0xC500 = -5.0; the f16 denormal 0x0001 is 2^-24.
        w.sgpr[1] = 0xC500_3C00;
        run(&mut w, &lo);
        assert_eq!(f32::from_bits(w.sgpr[0]), 1.0);
        run(&mut w, &hi);
        assert_eq!(f32::from_bits(w.sgpr[0]), -5.0);
        w.sgpr[1] = 0x7C00_0001;
        run(&mut w, &lo);
        assert_eq!(f32::from_bits(w.sgpr[0]), 2f32.powi(-24));
        run(&mut w, &hi);
        assert_eq!(f32::from_bits(w.sgpr[0]), f32::INFINITY);
        w.mode = 0x30;
        run(&mut w, &lo);
        assert_eq!(w.sgpr[0], 0, "f16 denormal flushed by MODE");
        w.mode = MODE;
        // Toward zero: 1/3 and -65520 (past the largest f16) stay finite.
        w.sgpr[1] = b(1.0 / 3.0);
        w.sgpr[2] = b(-65520.0);
        run(&mut w, &pk_rtz);
        assert_eq!(w.sgpr[0], 0xFBFF_3555);
        // s_cmp_lt_f16 s1, s2 / s_cmp_u_f16 on the low halves.
        w.sgpr[1] = 0xFFFF_3C00;
        w.sgpr[2] = 0x0000_4000;
        run(&mut w, &lt);
        assert!(w.scc);
        run(&mut w, &unordered);
        assert!(!w.scc);
        w.sgpr[2] = 0x7E00;
        run(&mut w, &lt);
        assert!(!w.scc);
        run(&mut w, &unordered);
        assert!(w.scc);
    }
}

#[test]
fn sixteen_bit_results_are_implemented() {
    // s_add_f16 s0, s1, s2 and s_trunc_f16 s0, s1 (gfx1201): implemented
    // since `half` (their semantics are tested there).
    let w = wave("gfx1201");
    for bytes in [[0x01, 0x02, 0x80, 0xa4], [0x01, 0x6d, 0x80, 0xbe]] {
        let mut code = bytes.to_vec();
        code.extend_from_slice(&0xBFB0_0000u32.to_le_bytes());
        let prog = program::build(w.isa, 0, &code);
        assert!(prog.unimplemented().is_empty());
    }
}
