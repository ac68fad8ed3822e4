//! f64 operations and the conversions to and from f64 (`Op::D`).
//!
//! Add, mul, fma, min/max, ldexp, the roundings and the conversions are
//! exact IEEE on the host's f64 (round to nearest even; denormals kept or
//! flushed on input and output as MODE.FP_DENORM's f64/f16 field says, f32
//! results of v_cvt_f32_f64 by the f32 field). Conversions to integers
//! truncate, saturate out-of-range values (infinities included) and give 0
//! for NaN, as the RDNA ISA documents them. v_rcp_f64, v_rsq_f64 and
//! v_sqrt_f64 are documented to (2^29) ULP; here they are host math within
//! one ULP, so inside that bound (a GPU's result may differ in the low
//! bits). Directed rounding (MODE.FP_ROUND's f64 field, or any field for a
//! conversion) is refused by name.

use super::super::fault::IsaFault;
use super::super::operand::Src;
use super::super::program::Inst;
use super::super::wave::{Wave, MAX_LANES};
use super::float::{self, Denorm};
use super::fp::rounding_refused;
use super::ops::DOp;
use super::round::Round;
use super::{src, Prep};

const SIGN: u64 = 1 << 63;

#[cfg(test)]
#[path = "f64_tests.rs"]
mod tests;

/// What one source of an f64 operation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SrcTy {
    F64,
    F32,
    /// A 32-bit integer (signed or not: the operation says).
    B32,
}

impl DOp {
    /// The sources the operation reads, in order.
    pub fn sources(self) -> &'static [SrcTy] {
        use SrcTy::*;
        match self {
            DOp::Add | DOp::Mul | DOp::Min | DOp::Max | DOp::Minimum | DOp::Maximum => &[F64, F64],
            DOp::Fma | DOp::DivScale | DOp::DivFmas | DOp::DivFixup => &[F64, F64, F64],
            DOp::Ldexp => &[F64, B32],
            DOp::Rcp
            | DOp::Rsq
            | DOp::Sqrt
            | DOp::Floor
            | DOp::Ceil
            | DOp::Trunc
            | DOp::Rndne
            | DOp::Fract
            | DOp::FrexpMant
            | DOp::FrexpExp
            | DOp::F32F64
            | DOp::I32F64
            | DOp::U32F64 => &[F64],
            DOp::F64F32 => &[F32],
            DOp::F64I32 | DOp::F64U32 => &[B32],
        }
    }

    /// Whether the result is 64 bits wide (else one 32-bit register).
    pub fn writes_64(self) -> bool {
        !matches!(
            self,
            DOp::F32F64 | DOp::I32F64 | DOp::U32F64 | DOp::FrexpExp
        )
    }

    /// Whether the result is a float output modifiers apply to (f64, or
    /// the f32 of v_cvt_f32_f64).
    pub fn float_out(self) -> bool {
        !matches!(self, DOp::I32F64 | DOp::U32F64 | DOp::FrexpExp)
    }
}

/// Execute an `Op::D` instruction.
pub fn execute(wave: &mut Wave, inst: &Inst, p: &Prep, op: DOp) -> Result<(), IsaFault> {
    let m = wave.mode;
    let conversion = matches!(
        op,
        DOp::F32F64 | DOp::F64F32 | DOp::F64I32 | DOp::F64U32 | DOp::I32F64 | DOp::U32F64
    );
    if conversion && m & 0xF != 0 {
        return Err(rounding_refused(
            wave,
            inst,
            "conversions are only modelled rounded to nearest even",
        ));
    }
    if Round::f16_of(m) != Round::NearestEven {
        return Err(rounding_refused(
            wave,
            inst,
            "f64 results are only modelled rounded to nearest even",
        ));
    }
    let lanes = wave.lanes;
    let d64 = Denorm::f16_of(m);
    let d32 = Denorm::f32_of(m);
    let mut s = [[0u64; MAX_LANES]; 3];
    for (i, ty) in op.sources().iter().enumerate() {
        read(wave, inst.src[i], *ty, &mut s[i])?;
        for v in s[i].iter_mut().take(lanes) {
            *v = match ty {
                SrcTy::F64 => {
                    let x = sign_mods(p, i, *v, SIGN);
                    if d64.keep_in {
                        x
                    } else {
                        flush64(x)
                    }
                }
                SrcTy::F32 => {
                    let x = sign_mods(p, i, *v, 1 << 31);
                    if d32.keep_in {
                        x
                    } else {
                        u64::from(float::flush32(f32::from_bits(x as u32)).to_bits())
                    }
                }
                SrcTy::B32 => *v,
            };
        }
    }
    let vcc = if op == DOp::DivFmas { wave.vcc() } else { 0 };
    let mut d = [0u64; MAX_LANES];
    let mut flags = 0u64;
    for l in 0..lanes {
        let (a, b, c) = (fl(s[0][l]), fl(s[1][l]), fl(s[2][l]));
        let r = match op {
            DOp::Add => (a + b).to_bits(),
            DOp::Mul => (a * b).to_bits(),
            DOp::Fma => a.mul_add(b, c).to_bits(),
            DOp::Min => min(a, b).to_bits(),
            DOp::Max => max(a, b).to_bits(),
            DOp::Minimum => minimum(a, b).to_bits(),
            DOp::Maximum => maximum(a, b).to_bits(),
            DOp::Ldexp => ldexp(a, s[1][l] as u32 as i32).to_bits(),
            DOp::Rcp => (1.0 / a).to_bits(),
            DOp::Rsq => rsq(a).to_bits(),
            DOp::Sqrt => a.sqrt().to_bits(),
            DOp::Floor => a.floor().to_bits(),
            DOp::Ceil => a.ceil().to_bits(),
            DOp::Trunc => a.trunc().to_bits(),
            DOp::Rndne => a.round_ties_even().to_bits(),
            DOp::Fract => fract(a).to_bits(),
            DOp::FrexpMant => frexp(a).0.to_bits(),
            DOp::FrexpExp => u64::from(frexp(a).1 as u32),
            DOp::DivScale => {
                let (v, flag) = div_scale(a, b, c);
                flags |= u64::from(flag) << l;
                v.to_bits()
            }
            DOp::DivFmas => div_fmas(a, b, c, vcc >> l & 1 != 0).to_bits(),
            DOp::DivFixup => div_fixup(a, b, c).to_bits(),
            // `as` rounds to nearest even, subnormal results included.
            DOp::F32F64 => u64::from((a as f32).to_bits()),
            DOp::F64F32 => f64::from(f32::from_bits(s[0][l] as u32)).to_bits(),
            DOp::F64I32 => f64::from(s[0][l] as u32 as i32).to_bits(),
            DOp::F64U32 => f64::from(s[0][l] as u32).to_bits(),
            // `as` truncates, saturates and maps NaN to 0, as documented.
            DOp::I32F64 => u64::from(a as i32 as u32),
            DOp::U32F64 => u64::from(a as u32),
        };
        d[l] = if !op.float_out() {
            r
        } else if op.writes_64() {
            let x = omod_clamp64(p, fl(r));
            if d64.keep_out {
                x.to_bits()
            } else {
                flush64(x.to_bits())
            }
        } else {
            let x = omod_clamp32(p, f32::from_bits(r as u32));
            let x = if d32.keep_out { x } else { float::flush32(x) };
            u64::from(x.to_bits())
        };
    }
    let written = wave.exec;
    if op.writes_64() {
        src::store64(wave, inst.dst, &d, u64::MAX)?;
    } else {
        let mut d32v = [0u32; MAX_LANES];
        for l in 0..lanes {
            d32v[l] = d[l] as u32;
        }
        src::store(wave, inst.dst, &d32v, u64::MAX)?;
    }
    if op == DOp::DivScale {
        wave.write_mask(inst.sdst, flags & written)?;
    }
    Ok(())
}

/// Source lanes: a 64-bit float operand takes a 32-bit literal as its high
/// half (the ISA's rule for 64-bit float literals); 32-bit sources as read.
pub(super) fn read(
    wave: &Wave,
    s: Src,
    ty: SrcTy,
    out: &mut [u64; MAX_LANES],
) -> Result<(), IsaFault> {
    match (ty, s) {
        (SrcTy::F64, Src::Literal(v)) => *out = [u64::from(v) << 32; MAX_LANES],
        (SrcTy::F64, _) => wave.read_lanes64(s, false, out)?,
        (SrcTy::F32 | SrcTy::B32, _) => {
            let mut v = [0u32; MAX_LANES];
            wave.read_lanes(s, &mut v)?;
            for l in 0..wave.lanes {
                out[l] = u64::from(v[l]);
            }
        }
    }
    Ok(())
}

/// abs then neg of source `i` on its sign bit.
fn sign_mods(p: &Prep, i: usize, v: u64, sign: u64) -> u64 {
    let mut v = v;
    if p.mods.abs >> i & 1 != 0 {
        v &= !sign;
    }
    if p.mods.neg >> i & 1 != 0 {
        v ^= sign;
    }
    v
}

#[inline]
fn fl(v: u64) -> f64 {
    f64::from_bits(v)
}

/// An f64 denormal flushed to a zero of its sign.
fn flush64(v: u64) -> u64 {
    if fl(v).is_subnormal() {
        v & SIGN
    } else {
        v
    }
}

fn omod_clamp64(p: &Prep, v: f64) -> f64 {
    let v = match p.mods.omod {
        1 => v * 2.0,
        2 => v * 4.0,
        3 => v * 0.5,
        _ => v,
    };
    if !p.mods.clamp {
        v
    } else if v.is_nan() {
        // NaN clamps to 0 (DX10_CLAMP).
        0.0
    } else {
        v.clamp(0.0, 1.0)
    }
}

fn omod_clamp32(p: &Prep, v: f32) -> f32 {
    omod_clamp64(p, f64::from(v)) as f32
}

/// The smaller operand; a NaN operand gives the other (IEEE minNum), and
/// -0 is below +0.
pub fn min(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}

/// The larger operand; a NaN operand gives the other (IEEE maxNum), and
/// +0 is above -0.
pub fn max(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a > b || (a == b && b.is_sign_negative()) {
        a
    } else {
        b
    }
}

/// IEEE 754-2019 minimum: a NaN operand gives a quiet NaN, -0 is below +0.
pub fn minimum(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        fl((if a.is_nan() { a } else { b }).to_bits() | 1 << 51)
    } else {
        min(a, b)
    }
}

/// IEEE 754-2019 maximum: a NaN operand gives a quiet NaN, +0 is above -0.
pub fn maximum(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        fl((if a.is_nan() { a } else { b }).to_bits() | 1 << 51)
    } else {
        max(a, b)
    }
}

/// x * 2^n rounded once to nearest even (subnormal results included).
pub fn ldexp(x: f64, n: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    // Past +-2200 every finite input overflows or underflows entirely.
    let n = n.clamp(-2200, 2200);
    let bits = x.to_bits();
    let sign = bits & SIGN;
    let (mut mant, mut exp) = ((bits & ((1 << 52) - 1)), ((bits >> 52) & 0x7FF) as i32);
    if exp == 0 {
        // Normalize a denormal: the value is mant * 2^-1074.
        let shift = mant.leading_zeros() as i32 - 11;
        mant <<= shift;
        exp = 1 - shift;
    }
    mant |= 1 << 52;
    let e = exp + n;
    if e >= 0x7FF {
        return f64::from_bits(sign | 0x7FF0_0000_0000_0000);
    }
    if e >= 1 {
        return f64::from_bits(sign | ((e as u64) << 52) | (mant & ((1 << 52) - 1)));
    }
    // Subnormal or zero: shift right by 1 - e, rounding to nearest even.
    let shift = (1 - e) as u32;
    if shift > 54 {
        return f64::from_bits(sign);
    }
    let kept = mant >> shift;
    let rest = mant & ((1u64 << shift) - 1);
    let half = 1u64 << (shift - 1);
    let up = rest > half || (rest == half && kept & 1 == 1);
    // A carry into bit 52 gives the smallest normal, which the bits say.
    f64::from_bits(sign | (kept + u64::from(up)))
}

fn rsq(a: f64) -> f64 {
    if a == 0.0 {
        // 1/sqrt(-0) is -inf, as 1/-0 is.
        return if a.is_sign_negative() {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    1.0 / a.sqrt()
}

/// x - floor(x), kept below 1 (the largest f64 under 1); infinities give
/// NaN, as inf - inf does.
fn fract(a: f64) -> f64 {
    if a.is_infinite() {
        f64::NAN
    } else if a.is_nan() {
        a
    } else {
        (a - a.floor()).min(f64::from_bits(0x3FEF_FFFF_FFFF_FFFF))
    }
}

/// Mantissa in [0.5, 1) with the sign, and exponent; NaN, infinities and
/// zeros give themselves and 0.
fn frexp(a: f64) -> (f64, i32) {
    if a.is_nan() || a.is_infinite() || a == 0.0 {
        return (a, 0);
    }
    let mut bits = a.to_bits();
    let mut bias = 0;
    if a.is_subnormal() {
        bits = (a * 2f64.powi(64)).to_bits();
        bias = 64;
    }
    let e = ((bits >> 52) & 0x7FF) as i32 - 1022 - bias;
    let m = fl((bits & !(0x7FFu64 << 52)) | (1022u64 << 52));
    (m, e)
}

/// The biased exponent field of an f64.
#[inline]
fn exponent(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7FF) as i32
}

/// v_div_scale_f64: `s0` the value to scale (the numerator or the
/// denominator), `s1` the denominator, `s2` the numerator; the result and
/// the lane's VCC bit (v_div_fmas must rescale). The ISA's f64 thresholds:
/// exponent distance 768, numerator exponent 53, scale 2^128.
pub fn div_scale(s0: f64, s1: f64, s2: f64) -> (f64, bool) {
    let up = |v: f64| ldexp(v, 128);
    if s2 == 0.0 || s1 == 0.0 {
        return (f64::NAN, false);
    }
    let quotient_denorm = (s2 / s1).is_subnormal();
    let rcp_denorm = (1.0 / s1).is_subnormal();
    if exponent(s2) - exponent(s1) >= 768 {
        // The quotient is near the f64 maximum: scale the denominator.
        (if s0 == s1 { up(s0) } else { s0 }, true)
    } else if s1.is_subnormal() {
        (up(s0), false)
    } else if rcp_denorm && quotient_denorm {
        // A huge denominator: scaled down (up would overflow), so the
        // quotient comes out 2^128 large and div_fmas scales it back.
        (if s0 == s1 { ldexp(s0, -128) } else { s0 }, true)
    } else if rcp_denorm {
        (ldexp(s0, -128), false)
    } else if quotient_denorm {
        (if s0 == s2 { up(s0) } else { s0 }, true)
    } else if exponent(s2) <= 53 {
        // A tiny numerator.
        (up(s0), false)
    } else {
        (s0, false)
    }
}

/// v_div_fmas_f64: fma, rescaled by 2^128 or 2^-128 (by the quotient's
/// exponent, `s2`) when the lane's VCC bit is set; rounded once.
pub fn div_fmas(s0: f64, s1: f64, s2: f64, vcc: bool) -> f64 {
    if !vcc {
        return s0.mul_add(s1, s2);
    }
    // The ISA's 2^k * fma(...): the scaled exact value, rounded once (a
    // quotient scaled into the denormals must not round twice).
    let k = if exponent(s2) > 1023 { 128 } else { -128 };
    fma_scaled(s0, s1, s2, k)
}

/// (sign, integer mantissa, exponent) of a finite non-zero f64.
fn parts(x: f64) -> (bool, u64, i32) {
    let b = x.to_bits();
    let e = ((b >> 52) & 0x7FF) as i32;
    let m = b & ((1 << 52) - 1);
    if e == 0 {
        (b & SIGN != 0, m, -1074)
    } else {
        (b & SIGN != 0, m | 1 << 52, e - 1075)
    }
}

/// `m` (a 128-bit integer whose bit 0 may be a sticky bit) shifted right
/// by `n`, the bits shifted out kept as a sticky bit.
fn shr_sticky(m: u128, n: u32) -> u128 {
    if n == 0 {
        m
    } else if n >= 128 {
        u128::from(m != 0)
    } else {
        (m >> n) | u128::from(m & ((1u128 << n) - 1) != 0)
    }
}

/// (a * b + c) * 2^k rounded once to nearest even.
pub fn fma_scaled(a: f64, b: f64, c: f64, k: i32) -> f64 {
    let r = a.mul_add(b, c);
    if !a.is_finite() || !b.is_finite() || !c.is_finite() || a == 0.0 || b == 0.0 {
        // Specials and exact sums: the host's fma is right, the scale exact
        // or a rounding of an exact c.
        return ldexp(r, k);
    }
    let (sa, ma, ea) = parts(a);
    let (sb, mb, eb) = parts(b);
    let (sp, mp, ep) = (sa != sb, u128::from(ma) * u128::from(mb), ea + eb);
    // Both terms placed so the larger top bit sits at bit 125 (room for a
    // carry), the rest of the smaller term kept as a sticky bit.
    let top = |m: u128, e: i32| 127 - m.leading_zeros() as i32 + e;
    let (sc, mc, ec) = if c == 0.0 {
        (sp, 0u128, ep)
    } else {
        let (s, m, e) = parts(c);
        (s, u128::from(m), e)
    };
    let hi = if mc == 0 {
        top(mp, ep)
    } else {
        top(mp, ep).max(top(mc, ec))
    };
    let base = hi - 125;
    let place = |m: u128, e: i32| {
        if e >= base {
            m << (e - base) as u32
        } else {
            shr_sticky(m, (base - e) as u32)
        }
    };
    let (p, q) = (place(mp, ep), place(mc, ec));
    let (neg, m) = if sp == sc {
        (sp, p + q)
    } else if p >= q {
        (sp, p - q)
    } else {
        (sc, q - p)
    };
    if m == 0 {
        return r;
    }
    round_exact(neg, m, base + k)
}

/// sign * m * 2^e rounded to the nearest f64 (ties to even); bit 0 of `m`
/// may be a sticky bit below the kept precision.
fn round_exact(neg: bool, m: u128, e: i32) -> f64 {
    let sign = if neg { SIGN } else { 0 };
    let t = 127 - m.leading_zeros() as i32;
    // The exponent of the lowest kept bit: 53 bits, or the denormal grid.
    let low = (t + e - 52).max(-1074);
    let shift = low - e;
    let kept = if shift <= 0 {
        (m << (-shift) as u32) as u64
    } else {
        // Everything below half the lowest kept bit's weight rounds to 0.
        let n = shift as u32;
        if n > 128 {
            0
        } else {
            let q = if n == 128 { 0 } else { m >> n };
            let rest = if n == 128 { m } else { m & ((1u128 << n) - 1) };
            let half = 1u128 << (n - 1);
            let up = rest > half || (rest == half && q & 1 == 1);
            (q + u128::from(up)) as u64
        }
    };
    // kept is at most 2^53: a carry out of 53 bits moves the exponent.
    let (kept, low) = if kept == 1 << 53 {
        (1u64 << 52, low + 1)
    } else {
        (kept, low)
    };
    if kept >= 1 << 52 {
        let exp = low + 52 + 1023;
        if exp >= 0x7FF {
            return f64::from_bits(sign | 0x7FF0_0000_0000_0000);
        }
        f64::from_bits(sign | (exp as u64) << 52 | (kept & ((1 << 52) - 1)))
    } else {
        // Denormal (low is -1074 here).
        f64::from_bits(sign | kept)
    }
}

/// v_div_fixup_f64: the special cases of n/d around the quotient `s0`
/// (`s1` the denominator, `s2` the numerator).
pub fn div_fixup(s0: f64, s1: f64, s2: f64) -> f64 {
    let neg = s1.is_sign_negative() != s2.is_sign_negative();
    let signed = |v: f64| if neg { -v.abs() } else { v.abs() };
    let quiet = |v: f64| fl(v.to_bits() | (1 << 51));
    if s2.is_nan() {
        quiet(s2)
    } else if s1.is_nan() {
        quiet(s1)
    } else if (s1 == 0.0 && s2 == 0.0) || (s1.is_infinite() && s2.is_infinite()) {
        fl(0xFFF8_0000_0000_0000)
    } else if s1 == 0.0 || s2.is_infinite() {
        signed(f64::INFINITY)
    } else if s1.is_infinite() || s2 == 0.0 || exponent(s2) - exponent(s1) < -1075 {
        // Zero, or a quotient below the smallest denormal.
        signed(0.0)
    } else if exponent(s1) == 0x7FF || s0.is_nan() {
        signed(f64::INFINITY)
    } else {
        signed(s0)
    }
}

/// Whether the modifiers have a modelled meaning: abs/neg only on float
/// sources, clamp and omod only on float results, no DPP (a 64-bit source
/// is a register pair) and no op_sel.
pub(super) fn modifiers_fit(op: DOp, m: &super::Mods, dpp: super::Dpp) -> bool {
    if dpp != super::Dpp::None || m.opsel != 0 || m.opsel_hi != 0 || m.neg_hi != 0 {
        return false;
    }
    let float_srcs = op
        .sources()
        .iter()
        .enumerate()
        .filter(|(_, t)| !matches!(t, SrcTy::B32))
        .fold(0u8, |acc, (i, _)| acc | 1 << i);
    if (m.abs | m.neg) & !float_srcs != 0 {
        return false;
    }
    op.float_out() || (!m.clamp && m.omod == 0)
}
