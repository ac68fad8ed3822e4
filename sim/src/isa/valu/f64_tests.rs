//! f64 operations on encodings from llvm-mc-19 (gfx1030, kept as bytes):
//! single rounding of fma, denormals kept and flushed, NaN, saturating
//! conversions, ldexp's rounding into denormals, clamp, the 64-bit literal
//! rule, and LLVM's f64 division sequence built from the step helpers.

use super::super::super::wave::Wave;
use super::super::tests::{isa, run, set, wave};
use super::{div_fixup, div_fmas, div_scale, ldexp, max, maximum, min, minimum};

const ADD: [u8; 8] = [0x00, 0x00, 0x64, 0xd5, 0x02, 0x09, 0x02, 0x00];
const MUL: [u8; 8] = [0x00, 0x00, 0x65, 0xd5, 0x02, 0x09, 0x02, 0x00];
const FMA: [u8; 8] = [0x00, 0x00, 0x4c, 0xd5, 0x02, 0x09, 0x1a, 0x04];
const ADD_CLAMP: [u8; 8] = [0x00, 0x80, 0x64, 0xd5, 0x02, 0x09, 0x02, 0x00];
/// v_add_f64 v[0:1], -v[2:3], |v[4:5]|
const ADD_NEG_ABS: [u8; 8] = [0x00, 0x02, 0x64, 0xd5, 0x02, 0x09, 0x02, 0x20];
/// v_add_f64 v[0:1], 0x40080000, v[4:5]: the literal is the high half (3.0).
const ADD_LIT: [u8; 12] = [
    0x00, 0x00, 0x64, 0xd5, 0xff, 0x08, 0x02, 0x00, 0x00, 0x00, 0x08, 0x40,
];
/// v_add_f64 v[0:1], 0.5, v[4:5]
const ADD_HALF: [u8; 8] = [0x00, 0x00, 0x64, 0xd5, 0xf0, 0x08, 0x02, 0x00];
const MIN: [u8; 8] = [0x00, 0x00, 0x66, 0xd5, 0x02, 0x09, 0x02, 0x00];
const MAX: [u8; 8] = [0x00, 0x00, 0x67, 0xd5, 0x02, 0x09, 0x02, 0x00];
const LDEXP: [u8; 8] = [0x00, 0x00, 0x68, 0xd5, 0x02, 0x09, 0x02, 0x00];
const CVT_F64_U32: [u8; 4] = [0x02, 0x2d, 0x00, 0x7e];
const CVT_F64_I32: [u8; 4] = [0x02, 0x09, 0x00, 0x7e];
const CVT_F64_F32: [u8; 4] = [0x02, 0x21, 0x00, 0x7e];
const CVT_F32_F64: [u8; 4] = [0x02, 0x1f, 0x00, 0x7e];
const CVT_I32_F64: [u8; 4] = [0x02, 0x07, 0x00, 0x7e];
const CVT_U32_F64: [u8; 4] = [0x02, 0x2b, 0x00, 0x7e];
const RCP: [u8; 4] = [0x02, 0x5f, 0x00, 0x7e];
const RSQ: [u8; 4] = [0x02, 0x63, 0x00, 0x7e];
const SQRT: [u8; 4] = [0x02, 0x69, 0x00, 0x7e];
const FLOOR: [u8; 4] = [0x02, 0x35, 0x00, 0x7e];
const FRACT: [u8; 4] = [0x02, 0x7d, 0x00, 0x7e];
const FREXP_MANT: [u8; 4] = [0x02, 0x7b, 0x00, 0x7e];
const FREXP_EXP: [u8; 4] = [0x02, 0x79, 0x00, 0x7e];
const RNDNE: [u8; 4] = [0x02, 0x33, 0x00, 0x7e];
const TRUNC: [u8; 4] = [0x02, 0x2f, 0x00, 0x7e];
const CEIL: [u8; 4] = [0x02, 0x31, 0x00, 0x7e];
/// v_cmp_lt_f64_e32 vcc_lo, 0x40080000, v[2:3]: 3.0 < v[2:3].
const CMP_LT_LIT: [u8; 8] = [0xff, 0x04, 0x42, 0x7c, 0x00, 0x00, 0x08, 0x40];

fn set64(w: &mut Wave, reg: usize, f: impl Fn(usize) -> f64) {
    set(w, reg, |l| f(l).to_bits() as u32);
    set(w, reg + 1, |l| (f(l).to_bits() >> 32) as u32);
}

fn get64(w: &Wave, reg: usize, lane: usize) -> f64 {
    f64::from_bits(u64::from(w.vgpr[reg][lane]) | u64::from(w.vgpr[reg + 1][lane]) << 32)
}

/// Run `code` once per input: lane l gets `inputs[l]` in v[2:3] (and `b` in
/// v[4:5], `c` in v[6:7]); returns the wave.
fn lanes(code: &[u8], inputs: &[f64], b: f64, c: f64, mode: u32) -> Wave {
    let i = isa("gfx1030", false);
    let mut w = wave(i);
    w.mode = mode;
    set64(&mut w, 2, |l| inputs.get(l).copied().unwrap_or(0.0));
    set64(&mut w, 4, |_| b);
    set64(&mut w, 6, |_| c);
    run(i, code, &mut w);
    w
}

const KEEP: u32 = 0xF0;

#[test]
fn add_mul_fma_are_ieee_with_one_rounding() {
    let e = f64::EPSILON;
    let w = lanes(&FMA, &[1.0 + e], 1.0 - e, -1.0, KEEP);
    // The exact product 1 - 2^-104 minus 1; a separate multiply gives 0.
    assert_eq!(get64(&w, 0, 0), -(e * e));
    let w = lanes(&MUL, &[1.0 + e, f64::NAN, 1e300], 1.0 - e, 0.0, KEEP);
    assert_eq!(get64(&w, 0, 0), 1.0);
    assert!(get64(&w, 0, 1).is_nan());
    assert_eq!(get64(&w, 0, 2), 1e300 * (1.0 - e));
    let w = lanes(&ADD, &[0.1, f64::INFINITY, 1.0], 0.2, 0.0, KEEP);
    assert_eq!(get64(&w, 0, 0), 0.1 + 0.2);
    assert_eq!(get64(&w, 0, 1), f64::INFINITY);
    let w = lanes(&ADD_NEG_ABS, &[1.5], -4.0, 0.0, KEEP);
    assert_eq!(get64(&w, 0, 0), 2.5);
    let w = lanes(&ADD_LIT, &[0.0], 0.25, 0.0, KEEP);
    assert_eq!(get64(&w, 0, 0), 3.25);
    let w = lanes(&ADD_HALF, &[0.0], 0.25, 0.0, KEEP);
    assert_eq!(get64(&w, 0, 0), 0.75);
}

#[test]
fn denormals_are_kept_or_flushed_as_mode_says() {
    let tiny = f64::from_bits(1);
    let w = lanes(&ADD, &[tiny, -tiny], tiny, 0.0, KEEP);
    assert_eq!(get64(&w, 0, 0).to_bits(), 2);
    assert_eq!(get64(&w, 0, 1).to_bits(), 0);
    // f64/f16 field 0: inputs and outputs flushed (f32 kept).
    let w = lanes(&ADD, &[tiny, -tiny], 0.0, 0.0, 0x30);
    assert_eq!(get64(&w, 0, 0).to_bits(), 0);
    let w = lanes(
        &MUL,
        &[f64::MIN_POSITIVE, -f64::MIN_POSITIVE],
        0.5,
        0.0,
        0x30,
    );
    assert_eq!(get64(&w, 0, 0).to_bits(), 0);
    assert_eq!(
        get64(&w, 0, 1).to_bits(),
        1 << 63,
        "flushed to a signed zero"
    );
}

#[test]
fn clamp_and_min_max() {
    let w = lanes(&ADD_CLAMP, &[2.0, -3.0, f64::NAN, 0.25], 0.0, 0.0, KEEP);
    assert_eq!(get64(&w, 0, 0), 1.0);
    assert_eq!(get64(&w, 0, 1), 0.0);
    assert_eq!(get64(&w, 0, 2), 0.0, "NaN clamps to 0");
    assert_eq!(get64(&w, 0, 3), 0.25);
    let w = lanes(&MIN, &[f64::NAN, 1.0, 0.0], -0.0, 0.0, KEEP);
    assert_eq!(get64(&w, 0, 0).to_bits(), (-0.0f64).to_bits());
    assert_eq!(get64(&w, 0, 1).to_bits(), (-0.0f64).to_bits());
    assert_eq!(get64(&w, 0, 2).to_bits(), (-0.0f64).to_bits());
    let w = lanes(&MAX, &[f64::NAN, -1.0, -0.0], 0.0, 0.0, KEEP);
    assert_eq!(get64(&w, 0, 0), 0.0);
    assert_eq!(get64(&w, 0, 2).to_bits(), 0);
    assert!(min(f64::NAN, f64::NAN).is_nan() && max(f64::NAN, f64::NAN).is_nan());
    // gfx12's minimum/maximum propagate NaN (quieted) and order zeros.
    let snan = f64::from_bits(0x7FF0_0000_0000_0001);
    assert_eq!(minimum(1.0, snan).to_bits(), 0x7FF8_0000_0000_0001);
    assert!(maximum(f64::NAN, 1.0).is_nan());
    assert_eq!(minimum(0.0, -0.0).to_bits(), 1 << 63);
    assert_eq!(maximum(-0.0, 0.0).to_bits(), 0);
    assert_eq!(maximum(-3.0, 2.0), 2.0);
}

#[test]
fn ldexp_rounds_once_into_denormals() {
    assert_eq!(ldexp(1.5, -1074).to_bits(), 2, "a tie goes to even");
    assert_eq!(ldexp(1.25, -1074).to_bits(), 1);
    assert_eq!(
        ldexp(1.0, -1075).to_bits(),
        0,
        "half the smallest ties to 0"
    );
    assert_eq!(ldexp(1.0 + f64::EPSILON, -1075).to_bits(), 1);
    assert_eq!(ldexp(f64::from_bits(1), 1074), 1.0);
    assert_eq!(ldexp(1.0, 1024), f64::INFINITY);
    assert_eq!(ldexp(-1.0, i32::MAX), f64::NEG_INFINITY);
    assert_eq!(ldexp(-1.0, i32::MIN).to_bits(), 1 << 63);
    assert!(ldexp(f64::NAN, 3).is_nan());
    // The largest denormal doubled is normal.
    let big_denorm = f64::from_bits((1 << 52) - 1);
    assert_eq!(ldexp(big_denorm, 1), big_denorm * 2.0);
    let i = isa("gfx1030", false);
    let mut w = wave(i);
    set64(&mut w, 2, |_| 3.0);
    set(&mut w, 4, |l| (l as i32 - 2) as u32);
    run(i, &LDEXP, &mut w);
    assert_eq!(get64(&w, 0, 0), 0.75);
    assert_eq!(get64(&w, 0, 5), 24.0);
}

#[test]
fn conversions_round_saturate_and_zero_nan() {
    let i = isa("gfx1030", false);
    let mut w = wave(i);
    set(&mut w, 2, |l| [0xFFFF_FFFF, 0x8000_0000, 7][l % 3]);
    run(i, &CVT_F64_U32, &mut w);
    assert_eq!(get64(&w, 0, 0), 4_294_967_295.0);
    assert_eq!(get64(&w, 0, 1), 2_147_483_648.0);
    run(i, &CVT_F64_I32, &mut w);
    assert_eq!(get64(&w, 0, 0), -1.0);
    assert_eq!(get64(&w, 0, 1), -2_147_483_648.0);
    set(&mut w, 2, |l| [f32::NAN, -0.0, 1e-45][l % 3].to_bits());
    run(i, &CVT_F64_F32, &mut w);
    assert!(get64(&w, 0, 0).is_nan());
    assert_eq!(get64(&w, 0, 1).to_bits(), 1 << 63);
    assert_eq!(get64(&w, 0, 2), f64::from(f32::from_bits(1)));

    let ins = [
        3e10,
        -3e10,
        f64::NAN,
        -1.9,
        f64::INFINITY,
        f64::NEG_INFINITY,
        4_294_967_295.5,
    ];
    let w = lanes(&CVT_I32_F64, &ins, 0.0, 0.0, KEEP);
    let got: Vec<i32> = (0..7).map(|l| w.vgpr[0][l] as i32).collect();
    assert_eq!(
        got,
        [i32::MAX, i32::MIN, 0, -1, i32::MAX, i32::MIN, i32::MAX]
    );
    let w = lanes(&CVT_U32_F64, &ins, 0.0, 0.0, KEEP);
    let got: Vec<u32> = (0..7).map(|l| w.vgpr[0][l]).collect();
    assert_eq!(got, [u32::MAX, 0, 0, 0, u32::MAX, 0, u32::MAX]);

    let tie = 1.0 + 2f64.powi(-24);
    let ins = [tie, tie + 2f64.powi(-52), 1e39, 1e-46, f64::NAN, 1.5e-45];
    let w = lanes(&CVT_F32_F64, &ins, 0.0, 0.0, KEEP);
    let got: Vec<f32> = (0..6).map(|l| f32::from_bits(w.vgpr[0][l])).collect();
    assert_eq!(got[0], 1.0, "a tie rounds to even");
    assert_eq!(got[1], 1.0 + f32::EPSILON);
    assert_eq!(got[2], f32::INFINITY);
    assert_eq!(got[3].to_bits(), 0, "below half the smallest f32 denormal");
    assert!(got[4].is_nan());
    assert_eq!(got[5].to_bits(), 1);
    // f32 outputs flushed by the f32 field, f64 inputs kept by theirs.
    let w = lanes(&CVT_F32_F64, &[1.5e-45], 0.0, 0.0, 0xC0);
    assert_eq!(w.vgpr[0][0], 0);
}

#[test]
fn reciprocal_roots_and_roundings() {
    let ins = [3.0, 0.0, -0.0, f64::INFINITY, -1.0, f64::from_bits(1)];
    let w = lanes(&RCP, &ins, 0.0, 0.0, KEEP);
    // Within the documented 2^29 ULP (here: correctly rounded).
    assert_eq!(get64(&w, 0, 0), 1.0 / 3.0);
    assert_eq!(get64(&w, 0, 1), f64::INFINITY);
    assert_eq!(get64(&w, 0, 2), f64::NEG_INFINITY);
    assert_eq!(get64(&w, 0, 3), 0.0);
    assert_eq!(get64(&w, 0, 5), f64::INFINITY, "1/denormal overflows");
    let w = lanes(&RSQ, &ins, 0.0, 0.0, KEEP);
    let r = get64(&w, 0, 0);
    assert!((r - 1.0 / 3f64.sqrt()).abs() <= f64::EPSILON * r);
    assert_eq!(get64(&w, 0, 1), f64::INFINITY);
    assert_eq!(get64(&w, 0, 2), f64::NEG_INFINITY);
    assert!(get64(&w, 0, 4).is_nan());
    let w = lanes(&SQRT, &ins, 0.0, 0.0, KEEP);
    assert_eq!(get64(&w, 0, 0), 3f64.sqrt());
    assert_eq!(get64(&w, 0, 2).to_bits(), 1 << 63);
    assert!(get64(&w, 0, 4).is_nan());

    let ins = [-2.5, 2.5, 3.5, -0.25, f64::INFINITY, 1e300];
    let w = lanes(&FLOOR, &ins, 0.0, 0.0, KEEP);
    assert_eq!(get64(&w, 0, 0), -3.0);
    let w = lanes(&CEIL, &ins, 0.0, 0.0, KEEP);
    assert_eq!(get64(&w, 0, 0), -2.0);
    assert_eq!(get64(&w, 0, 3).to_bits(), (-0.0f64).to_bits());
    let w = lanes(&TRUNC, &ins, 0.0, 0.0, KEEP);
    assert_eq!(get64(&w, 0, 0), -2.0);
    let w = lanes(&RNDNE, &ins, 0.0, 0.0, KEEP);
    assert_eq!(
        [get64(&w, 0, 0), get64(&w, 0, 1), get64(&w, 0, 2)],
        [-2.0, 2.0, 4.0]
    );
    let w = lanes(&FRACT, &ins, 0.0, 0.0, KEEP);
    assert_eq!(get64(&w, 0, 0), 0.5);
    assert_eq!(get64(&w, 0, 3), 0.75);
    assert!(get64(&w, 0, 4).is_nan());
    assert_eq!(get64(&w, 0, 5), 0.0);
    let w = lanes(&FRACT, &[-1e-20], 0.0, 0.0, KEEP);
    assert_eq!(
        get64(&w, 0, 0),
        f64::from_bits(0x3FEF_FFFF_FFFF_FFFF),
        "kept below 1"
    );

    let ins = [12.0, -0.375, f64::from_bits(1), 0.0, f64::INFINITY];
    let w = lanes(&FREXP_MANT, &ins, 0.0, 0.0, KEEP);
    assert_eq!(get64(&w, 0, 0), 0.75);
    assert_eq!(get64(&w, 0, 1), -0.75);
    assert_eq!(get64(&w, 0, 2), 0.5);
    assert_eq!(get64(&w, 0, 4), f64::INFINITY);
    let w = lanes(&FREXP_EXP, &ins, 0.0, 0.0, KEEP);
    let got: Vec<i32> = (0..5).map(|l| w.vgpr[0][l] as i32).collect();
    assert_eq!(got, [4, -1, -1073, 0, 0]);
}

#[test]
fn compare_reads_a_literal_as_the_high_half() {
    let w = lanes(&CMP_LT_LIT, &[3.5, 2.5, f64::NAN], 0.0, 0.0, KEEP);
    assert_eq!(w.vcc() & 7, 1);
}

/// LLVM's f64 division: scale, reciprocal refined by two Newton steps, the
/// quotient, its residual, div_fmas and div_fixup.
fn divide(a: f64, b: f64) -> f64 {
    let (den, _) = div_scale(b, b, a);
    let mut rcp = 1.0 / den;
    let e = (-den).mul_add(rcp, 1.0);
    rcp = rcp.mul_add(e, rcp);
    let e = (-den).mul_add(rcp, 1.0);
    rcp = rcp.mul_add(e, rcp);
    let (num, vcc) = div_scale(a, b, a);
    let q = num * rcp;
    let r = (-den).mul_add(q, num);
    div_fixup(div_fmas(r, rcp, q, vcc), b, a)
}

#[test]
fn division_sequence_is_correctly_rounded() {
    let tiny = f64::from_bits(1);
    let cases = [
        (1.0, 3.0),
        (2.0, 7.0),
        (1e308, 1e-10),
        (1e-300, 1e300),
        (tiny, 3.0),
        (5e-324, 0.75),
        (1.0, tiny),
        (f64::MAX, f64::MIN_POSITIVE),
        (3.0, f64::MAX),
        (-7.0, 0.1),
        (1.0, 0.0),
        (0.0, 0.0),
        (f64::INFINITY, 2.0),
        (2.0, f64::INFINITY),
    ];
    for (a, b) in cases {
        let q = divide(a, b);
        let want = a / b;
        assert!(
            q.to_bits() == want.to_bits() || (q.is_nan() && want.is_nan()),
            "{a:e} / {b:e}: {q:e}, want {want:e}"
        );
    }
}

/// Deterministic pseudo-random f64 bit patterns (xorshift64).
fn patterns(seed: u64) -> impl FnMut() -> f64 {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        f64::from_bits(x)
    }
}

#[test]
fn division_sequence_over_the_exponent_range() {
    // Pseudo-random bit patterns: every exponent, denormals, both signs
    // (NaN and infinity patterns skipped).
    let mut next = patterns(0x9E37_79B9_7F4A_7C15);
    for _ in 0..20_000 {
        let (a, b) = (next(), next());
        if !a.is_finite() || !b.is_finite() {
            continue;
        }
        let (q, want) = (divide(a, b), a / b);
        assert!(
            q.to_bits() == want.to_bits() || (q.is_nan() && want.is_nan()),
            "{a:e} / {b:e}: {q:e}, want {want:e}"
        );
    }
}

#[test]
fn scaled_fma_rounds_once() {
    use super::super::f64_steps::fma_scaled;
    // Unscaled it is the host's fma.
    let mut next = patterns(0x1234_5678_9ABC_DEF1);
    for _ in 0..20_000 {
        let (a, b, c) = (next(), next(), next());
        let (got, want) = (fma_scaled(a, b, c, 0), a.mul_add(b, c));
        assert!(
            got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
            "fma({a:e}, {b:e}, {c:e}): {got:e}, want {want:e}"
        );
    }
    // 1 + 2^-52 + 2^-53 (a tie at 53 bits, then again when denormalized)
    // scaled to the denormals: the exact value rounds once.
    let e = f64::EPSILON;
    let r = fma_scaled(1.0 + e, 1.0 + 0.5, 0.0, -1074);
    assert_eq!(r.to_bits(), 2);
    let r = fma_scaled(1.0, 1.0, 2f64.powi(-60), -1075);
    assert_eq!(r.to_bits(), 1, "above half the smallest denormal");
    assert_eq!(fma_scaled(1.0, 1.0, 0.0, -1075).to_bits(), 0);
    assert_eq!(fma_scaled(f64::MAX, 2.0, 0.0, -1), f64::MAX);
}

#[test]
fn gfx12_vop2_add_and_minimum() {
    let i = isa("gfx1201", false);
    let mut w = wave(i);
    set64(&mut w, 2, |l| [1.5, f64::NAN][l % 2]);
    set64(&mut w, 4, |_| -0.25);
    // v_add_f64_e32 v[0:1], v[2:3], v[4:5] (gfx12's VOP2 form)
    run(i, &[0x02, 0x09, 0x00, 0x04], &mut w);
    assert_eq!(get64(&w, 0, 0), 1.25);
    // v_minimum_f64 v[0:1], v[2:3], v[4:5]
    run(i, &[0x00, 0x00, 0x41, 0xd7, 0x02, 0x09, 0x02, 0x00], &mut w);
    assert_eq!(get64(&w, 0, 0), -0.25);
    assert!(get64(&w, 0, 1).is_nan());
}

#[test]
fn trig_preop_segments_of_two_over_pi() {
    use super::super::f64_steps::trig_preop;
    // Segment 0 is 2/pi truncated to 53 bits; the segments sum to 2/pi.
    let s0 = trig_preop(1.0, 0);
    assert!(s0 <= std::f64::consts::FRAC_2_PI);
    assert!(std::f64::consts::FRAC_2_PI - s0 <= f64::EPSILON);
    let s1 = trig_preop(1.0, 1);
    assert!(s1 > 0.0 && s1 < 2f64.powi(-53));
    let (hi, lo) = (s0 + s1, (s0 - (s0 + s1)) + s1);
    // Double-double 2/pi: 0x3FE45F306DC9C883, 0xBC86B01EC5417056 (the
    // rounded pair), so hi is the correctly rounded 2/pi.
    assert_eq!(hi.to_bits(), 0x3FE4_5F30_6DC9_C883);
    assert!(lo < 0.0);
    // A large S0 (exponent past 1077) moves the window by the excess.
    let big = f64::from_bits(1080u64 << 52);
    // shift 3: fraction bits 4..=56, scaled by 2^-56.
    assert_eq!(
        trig_preop(big, 0),
        0x2_F983_6E4E_4415u64 as f64 * 2f64.powi(-56)
    );
    assert_eq!(s0, 0x14_5F30_6DC9_C882u64 as f64 * 2f64.powi(-53));
    // Deep segments fall below the f64 range, past the table's 1201 bits
    // they are zero; a large S0 keeps them in range (scale + 128).
    assert!(trig_preop(1.0, 20) > 0.0);
    assert_eq!(trig_preop(1.0, 23), 0.0);
    let huge = f64::from_bits(1968u64 << 52);
    let r = ldexp(trig_preop(huge, 0), 53 + 891 - 128);
    assert!(r == r.trunc() && r > 0.0 && r < 2f64.powi(53), "{r:e}");
    let i = isa("gfx1030", false);
    let mut w = wave(i);
    set64(&mut w, 2, |_| 1.0);
    set(&mut w, 4, |l| l as u32);
    // v_trig_preop_f64 v[0:1], v[2:3], v4
    run(i, &[0x00, 0x00, 0x74, 0xd5, 0x02, 0x09, 0x02, 0x00], &mut w);
    assert_eq!(get64(&w, 0, 0), s0);
    assert_eq!(get64(&w, 0, 1), s1);
}
