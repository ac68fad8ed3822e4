//! f32, f16 and packed-f16 operations and the conversions. f32 runs on the
//! host's f32 (round to nearest even, denormals kept; flushed when MODE
//! says so); f16 results are computed exactly in f64 and rounded once.
//! Transcendentals use host math: v_exp/v_log are 2^x / log2 x, v_sin/v_cos
//! take their argument in turns (sin(2*pi*x)), v_rcp/v_rsq/v_sqrt are
//! correctly rounded; the hardware documents 1 ULP for these, so results
//! can differ from a GPU's in the last place.

use std::ops::Range;

use super::super::fault::IsaFault;
use super::super::operand::Dst;
use super::super::program::Inst;
use super::super::wave::{Lanes, Wave, MAX_LANES};
use super::float::{self, Denorm};
use super::ops::{FOp, Op};
use super::round::{self, Round};
use super::{cvt, half, src, Prep};

/// Execute an `Op::F`, `Op::H`, `Op::Pk` or `Op::Cvt` instruction.
pub fn execute(wave: &mut Wave, inst: &Inst, p: &Prep) -> Result<(), IsaFault> {
    let m = wave.mode;
    match p.op {
        Op::F(op) => f32_op(wave, inst, p, op),
        // f16 arithmetic follows the f64/f16 field only.
        Op::H(_) | Op::Pk(_) if Round::f16_of(m) != Round::NearestEven => Err(rounding_refused(
            wave,
            inst,
            "f16 results are only modelled rounded to nearest even",
        )),
        Op::H(op) => half::f16_op(wave, inst, p, op),
        Op::Pk(op) => half::packed(wave, inst, p, op),
        // Conversions read one width and write another: refused under any
        // directed mode rather than guessing which field applies.
        Op::Cvt(_) if m & 0xF != 0 => Err(rounding_refused(
            wave,
            inst,
            "conversions are only modelled rounded to nearest even",
        )),
        Op::Cvt(op) => cvt::convert(wave, inst, p, op),
        _ => unreachable_op(inst),
    }
}

/// An operation MODE.FP_ROUND asks to round in a way not modelled here.
#[cold]
pub(super) fn rounding_refused(wave: &Wave, inst: &Inst, why: &str) -> IsaFault {
    IsaFault::Unimplemented {
        mnemonic: format!(
            "{} with MODE.FP_ROUND = {:#x} ({why})",
            inst.decoded.mnemonic(),
            wave.mode & 0xF
        ),
        family: wave.isa.family,
    }
}

#[cold]
fn unreachable_op(inst: &Inst) -> Result<(), IsaFault> {
    Err(IsaFault::Operand {
        mnemonic: inst.decoded.mnemonic(),
        why: "not a floating-point operation".into(),
    })
}

pub fn f32_sources(op: FOp) -> usize {
    use FOp::*;
    match op {
        Rcp | RcpIflag | Rsq | Sqrt | Exp | Log | Sin | Cos | Floor | Ceil | Trunc | Rndne
        | Fract | FrexpMant | FrexpExp => 1,
        Fma | Fmamk | Fmaak | Min3 | Max3 | Minmax | Maxmin | Med3 | DivScale | DivFmas
        | DivFixup => 3,
        Add | Sub | Subrev | Mul | Fmac | Min | Max | Ldexp => 2,
    }
}

#[inline]
pub(super) fn f(v: u32) -> f32 {
    f32::from_bits(v)
}

#[inline]
fn med3f(a: f32, b: f32, c: f32) -> f32 {
    a.max(b).min(a.min(b).max(c))
}

/// x * 2^n, rounded once (the product is exact in f64).
#[inline]
fn ldexp32(x: f32, n: i32) -> f32 {
    let n = n.clamp(-400, 400);
    let a = f64::from_bits(((1023 + n / 2) as u64) << 52);
    let b = f64::from_bits(((1023 + (n - n / 2)) as u64) << 52);
    (f64::from(x) * a * b) as f32
}

/// `$body` with `$k` bound to `$op` as a constant in every arm, so the
/// per-lane loop inside is compiled once per operation, without a
/// dispatch per lane.
macro_rules! each_fop {
    ($op:expr, |$k:ident| $body:expr) => {
        match $op {
            FOp::Add => {
                let $k = FOp::Add;
                $body
            }
            FOp::Sub => {
                let $k = FOp::Sub;
                $body
            }
            FOp::Subrev => {
                let $k = FOp::Subrev;
                $body
            }
            FOp::Mul => {
                let $k = FOp::Mul;
                $body
            }
            FOp::Fma => {
                let $k = FOp::Fma;
                $body
            }
            FOp::Fmac => {
                let $k = FOp::Fmac;
                $body
            }
            FOp::Fmamk => {
                let $k = FOp::Fmamk;
                $body
            }
            FOp::Fmaak => {
                let $k = FOp::Fmaak;
                $body
            }
            FOp::Min => {
                let $k = FOp::Min;
                $body
            }
            FOp::Max => {
                let $k = FOp::Max;
                $body
            }
            FOp::Min3 => {
                let $k = FOp::Min3;
                $body
            }
            FOp::Max3 => {
                let $k = FOp::Max3;
                $body
            }
            FOp::Minmax => {
                let $k = FOp::Minmax;
                $body
            }
            FOp::Maxmin => {
                let $k = FOp::Maxmin;
                $body
            }
            FOp::Med3 => {
                let $k = FOp::Med3;
                $body
            }
            FOp::Ldexp => {
                let $k = FOp::Ldexp;
                $body
            }
            FOp::Rcp => {
                let $k = FOp::Rcp;
                $body
            }
            FOp::RcpIflag => {
                let $k = FOp::RcpIflag;
                $body
            }
            FOp::Rsq => {
                let $k = FOp::Rsq;
                $body
            }
            FOp::Sqrt => {
                let $k = FOp::Sqrt;
                $body
            }
            FOp::Exp => {
                let $k = FOp::Exp;
                $body
            }
            FOp::Log => {
                let $k = FOp::Log;
                $body
            }
            FOp::Sin => {
                let $k = FOp::Sin;
                $body
            }
            FOp::Cos => {
                let $k = FOp::Cos;
                $body
            }
            FOp::Floor => {
                let $k = FOp::Floor;
                $body
            }
            FOp::Ceil => {
                let $k = FOp::Ceil;
                $body
            }
            FOp::Trunc => {
                let $k = FOp::Trunc;
                $body
            }
            FOp::Rndne => {
                let $k = FOp::Rndne;
                $body
            }
            FOp::Fract => {
                let $k = FOp::Fract;
                $body
            }
            FOp::FrexpMant => {
                let $k = FOp::FrexpMant;
                $body
            }
            FOp::FrexpExp => {
                let $k = FOp::FrexpExp;
                $body
            }
            FOp::DivScale => {
                let $k = FOp::DivScale;
                $body
            }
            FOp::DivFmas => {
                let $k = FOp::DivFmas;
                $body
            }
            FOp::DivFixup => {
                let $k = FOp::DivFixup;
                $body
            }
        }
    };
}

/// `f32_lane` over the lanes of `span`; `s[2]` is the third source, or
/// fmac's accumulator.
#[inline(always)]
fn f32_loop(op: FOp, span: Range<usize>, s: [&Lanes; 3], vcc: u64, d: &mut Lanes) {
    // Equal-length slices, so the lane loop has no bounds checks.
    let lo = span.start;
    let [a, b, c] = s.map(|v| &v[span.clone()]);
    let d = &mut d[span];
    for i in 0..d.len() {
        let k = f(c[i]);
        let l = lo + i;
        d[i] = f32_lane(op, f(a[i]), f(b[i]), k, k, vcc >> l & 1 != 0).to_bits();
    }
}

/// One f32 operation on lane values (sources already modified). `acc` is
/// the destination's old value (fmac), `k` the literal (fmamk/fmaak) and
/// `vcc` the lane's VCC bit (div_fmas).
#[inline(always)]
pub fn f32_lane(op: FOp, a: f32, b: f32, c: f32, acc: f32, vcc: bool) -> f32 {
    use FOp::*;
    match op {
        Add => a + b,
        Sub => a - b,
        Subrev => b - a,
        Mul => a * b,
        Fma => a.mul_add(b, c),
        Fmac => a.mul_add(b, acc),
        // c is the literal K: fmamk is S0 * K + S1, fmaak S0 * S1 + K.
        Fmamk => a.mul_add(c, b),
        Fmaak => a.mul_add(b, c),
        Min => a.min(b),
        Max => a.max(b),
        Min3 => a.min(b).min(c),
        Max3 => a.max(b).max(c),
        Minmax => a.max(b).min(c),
        Maxmin => a.min(b).max(c),
        Med3 => {
            if a.is_nan() || b.is_nan() || c.is_nan() {
                a.min(b).min(c)
            } else {
                med3f(a, b, c)
            }
        }
        Ldexp => ldexp32(a, b.to_bits() as i32),
        Rcp | RcpIflag => 1.0 / a,
        Rsq => (1.0 / f64::from(a).sqrt()) as f32,
        Sqrt => a.sqrt(),
        Exp => (f64::from(a)).exp2() as f32,
        Log => (f64::from(a)).log2() as f32,
        Sin => (f64::from(a) * std::f64::consts::TAU).sin() as f32,
        Cos => (f64::from(a) * std::f64::consts::TAU).cos() as f32,
        Floor => a.floor(),
        Ceil => a.ceil(),
        Trunc => a.trunc(),
        Rndne => a.round_ties_even(),
        Fract => {
            if a.is_infinite() {
                f32::NAN
            } else {
                (a - a.floor()).min(f32::from_bits(0x3F7F_FFFF))
            }
        }
        FrexpMant => {
            if a.is_nan() || a.is_infinite() || a == 0.0 {
                a
            } else {
                let (m, _) = frexp(a);
                m
            }
        }
        FrexpExp => {
            // Integer result, carried as bits.
            let e = if a.is_nan() || a.is_infinite() || a == 0.0 {
                0
            } else {
                frexp(a).1
            };
            f32::from_bits(e as u32)
        }
        DivScale => float::div_scale_f32(a, b, c).0,
        DivFmas => float::div_fmas_f32(a, b, c, vcc),
        DivFixup => float::div_fixup_f32(a, b, c),
    }
}

/// Mantissa in [0.5, 1) and exponent.
fn frexp(x: f32) -> (f32, i32) {
    let v = f64::from(x);
    let bits = v.to_bits();
    let e = ((bits >> 52) & 0x7FF) as i32 - 1022;
    let m = f64::from_bits((bits & !(0x7FFu64 << 52)) | (1022u64 << 52));
    (m as f32, e)
}

pub(super) fn omod_clamp(p: &Prep, v: f32) -> f32 {
    let v = match p.mods.omod {
        1 => v * 2.0,
        2 => v * 4.0,
        3 => v * 0.5,
        _ => v,
    };
    if p.mods.clamp {
        // NaN clamps to 0 (DX10_CLAMP).
        if v.is_nan() {
            0.0
        } else {
            v.clamp(0.0, 1.0)
        }
    } else {
        v
    }
}

fn f32_op(wave: &mut Wave, inst: &Inst, p: &Prep, op: FOp) -> Result<(), IsaFault> {
    let rnd = Round::f32_of(wave.mode);
    if rnd != Round::NearestEven {
        if let Some(why) = round::f32_refusal(op) {
            return Err(rounding_refused(wave, inst, why));
        }
        if p.mods.omod != 0 {
            // The output multiply would round a second time.
            return Err(rounding_refused(
                wave,
                inst,
                "output modifier with directed rounding",
            ));
        }
    }
    let n = f32_sources(op);
    let mut wmask = u64::MAX;
    // v_ldexp's second source is an integer: no float modifiers.
    let float_srcs = if op == FOp::Ldexp { 1 } else { n };
    let dn = Denorm::f32_of(wave.mode);
    let w: &Wave = wave;
    let [b0, b1, b2] = &mut [None, None, None];
    // Source i as the operation reads it: abs/neg, then the input flush.
    let sign = |i: usize| if i < float_srcs { 0x8000_0000 } else { 0 };
    let flush = |i: usize| i < float_srcs && !dn.keep_in;
    let s0 = src::view(w, p, inst.src[0], 0, sign(0), flush(0), b0, &mut wmask)?;
    let s1 = if n > 1 {
        src::view(w, p, inst.src[1], 1, sign(1), flush(1), b1, &mut wmask)?
    } else {
        &src::ZERO
    };
    // fmac's accumulator is the destination (unmodified); it takes the
    // unused third source slot.
    let s2 = match (op, inst.dst) {
        (FOp::Fmac, Dst::Vgpr(r)) => w.v(r)?,
        (FOp::Fmac, _) => &src::ZERO,
        _ if n > 2 => src::view(w, p, inst.src[2], 2, sign(2), flush(2), b2, &mut wmask)?,
        _ => &src::ZERO,
    };
    let vcc = if op == FOp::DivFmas { w.vcc() } else { 0 };
    let span = src::span(w, inst.dst, wmask);
    let mut d = [0u32; MAX_LANES];
    each_fop!(op, |k| f32_loop(k, span.clone(), [s0, s1, s2], vcc, &mut d));
    if rnd != Round::NearestEven {
        for l in span.clone() {
            let r = round::f32_directed(op, f(s0[l]), f(s1[l]), f(s2[l]), rnd, f(d[l]));
            d[l] = r.to_bits();
        }
    }
    let mut flags = 0u64;
    if op == FOp::DivScale {
        for l in span.clone() {
            if float::div_scale_f32(f(s0[l]), f(s1[l]), f(s2[l])).1 {
                flags |= 1 << l;
            }
        }
    }
    // FrexpExp's result is an integer: no output modifiers.
    let plain = p.mods.omod == 0 && !p.mods.clamp && dn.keep_out;
    if !plain && op != FOp::FrexpExp {
        for v in &mut d[span] {
            let mut r = omod_clamp(p, f(*v));
            if !dn.keep_out {
                r = float::flush32(r);
            }
            *v = r.to_bits();
        }
    }
    let written = wave.exec & wmask;
    src::store(wave, inst.dst, &d, wmask)?;
    if op == FOp::DivScale {
        // VOP3SD-like: the scale flag goes to the SDST field (VCC by default).
        wave.write_mask(inst.sdst, flags & written)?;
    }
    Ok(())
}
