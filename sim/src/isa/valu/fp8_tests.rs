//! The fp8/bf8 conversions (`fp8`): every code, rounding against a
//! brute-force nearest-even search, overflow, NaN, subnormals, and the
//! instructions on llvm-mc-19's gfx1201 encodings (byte and word selects,
//! the kept half, neg, DPP).

use super::fp8::{from_f32, to_f32, Fmt};
use super::tests::{isa, run, set, wave};

const FMTS: [Fmt; 2] = [Fmt::Fp8, Fmt::Bf8];

fn is_nan_code(fmt: Fmt, c: u8) -> bool {
    match fmt {
        Fmt::Fp8 => c & 0x7F == 0x7F,
        Fmt::Bf8 => c & 0x7F > 0x7C,
    }
}

/// The code nearest `x` by brute force: the finite codes plus the code
/// just past the largest (its value the next power step), ties to the
/// even code; landing on that extra code is an overflow.
fn reference(fmt: Fmt, x: f32) -> u8 {
    let (max, over, next) = match fmt {
        Fmt::Fp8 => (0x7Eu8, 0x7Fu8, 480.0f64),
        Fmt::Bf8 => (0x7B, 0x7C, 65536.0),
    };
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    let a = f64::from(x.abs());
    let mut best = (f64::INFINITY, 0u8);
    for c in 0..=over {
        let v = if c == over {
            next
        } else {
            f64::from(to_f32(fmt, c))
        };
        let d = (a - v).abs();
        if d < best.0 || (d == best.0 && c & 1 == 0) {
            best = (d, c);
        }
    }
    let c = if best.1 > max { over } else { best.1 };
    sign | c
}

#[test]
fn every_code_round_trips_and_nans_stay_nan() {
    for fmt in FMTS {
        for c in 0..=255u8 {
            let x = to_f32(fmt, c);
            if is_nan_code(fmt, c) {
                assert_eq!(x.to_bits(), 0x7FC0_0000, "{fmt:?} {c:#x}");
                assert_eq!(from_f32(fmt, x), 0x7F);
            } else {
                assert_eq!(from_f32(fmt, x), c, "{fmt:?} {c:#x} = {x}");
            }
        }
    }
    assert_eq!(to_f32(Fmt::Fp8, 0x7E), 448.0);
    assert_eq!(to_f32(Fmt::Fp8, 0x01), 2f32.powi(-9));
    assert_eq!(to_f32(Fmt::Fp8, 0x08), 2f32.powi(-6));
    assert_eq!(to_f32(Fmt::Bf8, 0x7B), 57344.0);
    assert_eq!(to_f32(Fmt::Bf8, 0x7C), f32::INFINITY);
    assert_eq!(to_f32(Fmt::Bf8, 0xFC), f32::NEG_INFINITY);
    assert_eq!(to_f32(Fmt::Bf8, 0x01), 2f32.powi(-16));
    assert_eq!(to_f32(Fmt::Fp8, 0x80).to_bits(), 0x8000_0000);
}

#[test]
fn rounding_is_nearest_even_with_non_saturating_overflow() {
    let e4 = |x: f32| from_f32(Fmt::Fp8, x);
    let e5 = |x: f32| from_f32(Fmt::Bf8, x);
    // 1 + 1/16 is halfway between 1 (even) and 1.125.
    assert_eq!(e4(1.0625), 0x38);
    assert_eq!(e4(1.1875), 0x3A);
    assert_eq!(e4(1.0626), 0x39);
    // The largest finite, the tie above it (to the even 448) and past it.
    assert_eq!(e4(448.0), 0x7E);
    assert_eq!(e4(464.0), 0x7E);
    assert_eq!(e4(464.1), 0x7F);
    assert_eq!(e4(-1e6), 0xFF);
    assert_eq!(e4(f32::INFINITY), 0x7F);
    assert_eq!(e4(f32::NEG_INFINITY), 0xFF);
    // E5M2: the tie above 57344 goes to the even code, infinity.
    assert_eq!(e5(57344.0), 0x7B);
    assert_eq!(e5(61439.0), 0x7B);
    assert_eq!(e5(61440.0), 0x7C);
    assert_eq!(e5(f32::MAX), 0x7C);
    assert_eq!(e5(f32::NEG_INFINITY), 0xFC);
    // NaN keeps its sign.
    assert_eq!(e4(-f32::NAN), 0xFF);
    assert_eq!(e5(f32::NAN), 0x7F);
    // Subnormals: half the smallest ties to 0, 1.5 of it to 2 (even).
    assert_eq!(e4(2f32.powi(-10)), 0x00);
    assert_eq!(e4(3.0 * 2f32.powi(-10)), 0x02);
    assert_eq!(e4(-2f32.powi(-10)), 0x80);
    // 7.5 quanta ties up to 8, the smallest normal's code.
    assert_eq!(e4(7.5 * 2f32.powi(-9)), 0x08);
    assert_eq!(e5(3.5 * 2f32.powi(-16)), 0x04);
    // f32 denormals and zeros keep only their sign.
    assert_eq!(e4(f32::from_bits(1)), 0x00);
    assert_eq!(e5(-f32::from_bits(0x007F_FFFF)), 0x80);
    assert_eq!(e4(-0.0), 0x80);
}

#[test]
fn rounding_matches_a_brute_force_search() {
    // Deterministic spread of f32 patterns over every exponent that
    // reaches an 8-bit code (and past it), plus each code's neighbours.
    let mut seed = 0x1234_5678_9abc_def0u64;
    let mut xs = Vec::new();
    for _ in 0..20_000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let e = 100 + (seed >> 40) % 50;
        let bits = (seed as u32 & 0x807F_FFFF) | ((e as u32) << 23);
        xs.push(f32::from_bits(bits));
    }
    for fmt in FMTS {
        for c in 0..0x7Fu8 {
            let v = to_f32(fmt, c);
            if v.is_finite() {
                xs.extend([v, f32::from_bits(v.to_bits() + 1), -v]);
                if v != 0.0 {
                    xs.push(f32::from_bits(v.to_bits() - 1));
                }
            }
        }
    }
    for fmt in FMTS {
        for &x in &xs {
            assert_eq!(from_f32(fmt, x), reference(fmt, x), "{fmt:?} {x:e}");
        }
    }
}

#[test]
fn instructions_pick_bytes_and_words() {
    let i = isa("gfx1201", false);
    let mut w = wave(i);
    // Bytes: 0x38 = 1.0, 0x40 = 2.0, 0xC4 = -3.0 (E4M3); 0x7F is NaN.
    set(&mut w, 1, |_| 0x7FC4_4038);
    // v_cvt_f32_fp8_e32 v0, v1: byte 0.
    run(i, &[0x01, 0xd9, 0x00, 0x7e], &mut w);
    assert_eq!(f32::from_bits(w.vgpr[0][0]), 1.0);
    // byte_sel:1 (OPSEL = 2) and byte_sel:2 (OPSEL = 1).
    run(i, &[0x00, 0x10, 0xec, 0xd5, 0x01, 0x01, 0x00, 0x00], &mut w);
    assert_eq!(f32::from_bits(w.vgpr[0][0]), 2.0);
    run(i, &[0x00, 0x08, 0xec, 0xd5, 0x01, 0x01, 0x00, 0x00], &mut w);
    assert_eq!(f32::from_bits(w.vgpr[0][0]), -3.0);
    // v_cvt_f32_bf8_e64 v0, v1 byte_sel:3: 0x7F is a bf8 NaN too.
    run(i, &[0x00, 0x18, 0xed, 0xd5, 0x01, 0x01, 0x00, 0x00], &mut w);
    assert_eq!(w.vgpr[0][0], 0x7FC0_0000);
    // v_cvt_f32_bf8_e32 v0, v1: 0x38 in E5M2 is 0.5.
    run(i, &[0x01, 0xdb, 0x00, 0x7e], &mut w);
    assert_eq!(f32::from_bits(w.vgpr[0][0]), 0.5);
    // v_cvt_pk_f32_fp8_e32 v[2:3], v1: the low word's two bytes.
    run(i, &[0x01, 0xdd, 0x04, 0x7e], &mut w);
    assert_eq!(
        (f32::from_bits(w.vgpr[2][0]), f32::from_bits(w.vgpr[3][0])),
        (1.0, 2.0)
    );
    // v_cvt_pk_f32_bf8_e64 v[2:3], v1 op_sel:[1,0]: the high word.
    run(i, &[0x02, 0x08, 0xef, 0xd5, 0x01, 0x01, 0x00, 0x00], &mut w);
    assert_eq!(f32::from_bits(w.vgpr[2][0]), -4.0);
    assert!(f32::from_bits(w.vgpr[3][0]).is_nan());
    // v_cvt_f32_fp8_dpp v0, v1 quad_perm:[1,0,3,2]: lane 0 reads lane 1.
    set(&mut w, 1, |l| if l == 1 { 0x40 } else { 0x38 });
    run(i, &[0xfa, 0xd8, 0x00, 0x7e, 0x01, 0xb1, 0x00, 0xff], &mut w);
    assert_eq!(f32::from_bits(w.vgpr[0][0]), 2.0);
    assert_eq!(f32::from_bits(w.vgpr[0][1]), 1.0);
}

#[test]
fn packing_keeps_the_other_word() {
    let i = isa("gfx1201", true);
    let mut w = wave(i);
    set(&mut w, 0, |_| 0xAABB_CCDD);
    set(&mut w, 1, |_| 1.0f32.to_bits());
    set(&mut w, 2, |_| 1000.0f32.to_bits());
    // v_cvt_pk_fp8_f32 v0, v1, v2: 1000 overflows E4M3 to NaN.
    run(i, &[0x00, 0x00, 0x69, 0xd7, 0x01, 0x05, 0x02, 0x00], &mut w);
    assert_eq!(w.vgpr[0][63], 0xAABB_7F38);
    // v_cvt_pk_bf8_f32 v0, -v1, v2 op_sel:[0,0,1]: into the high word;
    // 1000 rounds to 1024 in E5M2 (0x64), -1.0 is 0xBC.
    run(i, &[0x00, 0x40, 0x6a, 0xd7, 0x01, 0x05, 0x02, 0x20], &mut w);
    assert_eq!(w.vgpr[0][63], 0x64BC_7F38);
}

#[test]
fn stochastic_rounding_and_clamp_are_refused_by_name() {
    let i = isa("gfx1201", false);
    let mut code = vec![0x00, 0x00, 0x6b, 0xd7, 0x01, 0x05, 0x02, 0x00];
    code.extend_from_slice(&0xBFB0_0000u32.to_le_bytes());
    let prog = super::super::program::build(i, 0, &code);
    assert_eq!(prog.unimplemented(), vec!["v_cvt_sr_fp8_f32".to_string()]);
    // The same pack with the clamp bit set (bit 15) is not given a meaning.
    let mut code = vec![0x00, 0x80, 0x69, 0xd7, 0x01, 0x05, 0x02, 0x00];
    code.extend_from_slice(&0xBFB0_0000u32.to_le_bytes());
    let prog = super::super::program::build(i, 0, &code);
    assert_eq!(prog.unimplemented().len(), 1);
}
