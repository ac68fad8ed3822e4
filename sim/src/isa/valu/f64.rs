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
use super::f64_steps::{div_fixup, div_fmas, div_scale, trig_preop};
use super::float::{self, Denorm};
use super::fp::rounding_refused;
use super::ops::DOp;
use super::round::Round;
use super::{src, Prep};

pub(super) const SIGN: u64 = 1 << 63;

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
            DOp::Ldexp | DOp::TrigPreop => &[F64, B32],
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
            DOp::TrigPreop => trig_preop(a, s[1][l] as u32).to_bits(),
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
pub(super) fn fl(v: u64) -> f64 {
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
