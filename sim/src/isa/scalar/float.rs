//! The gfx11.5/gfx12 scalar float operations beyond add/sub/mul/fmac/min/
//! max and the integer conversions (those are in `exec`): the f32
//! roundings (s_ceil/floor/trunc/rndne_f32), the literal fmas
//! (s_fmaak_f32, s_fmamk_f32), gfx12's s_minimum/s_maximum_f32, the f16
//! to f32 conversions (s_cvt_f32_f16, s_cvt_hi_f32_f16), the f16 pair
//! s_cvt_pk_rtz_f16_f32 and the f16 compares (s_cmp_*_f16).
//!
//! MODE's f32 denormal bits flush inputs and outputs as for the VALU; the
//! roundings, min/max and the f16 widenings are exact, so FP_ROUND does
//! not change them; the fmas follow FP_ROUND like s_fmac_f32. An inline
//! float constant as an f16 operand is its f16 encoding. The operations
//! whose result is one f16 are in `half`.

use super::{f32_in, f32_out, fcompare, FCmp};
use crate::isa::fault::{Flow, IsaFault};
use crate::isa::operand::Dst;
use crate::isa::program::Inst;
use crate::isa::valu::float::{self, Denorm};
use crate::isa::valu::ops::FOp;
use crate::isa::valu::round::{self, Round};
use crate::isa::wave::Wave;

/// A scalar float operation of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SFloat {
    Ceil,
    Floor,
    Trunc,
    Rndne,
    /// D = S0 * S1 + K.
    Fmaak,
    /// D = S0 * K + S1.
    Fmamk,
    /// IEEE 754-2019 minimum/maximum: a NaN operand gives NaN, -0 < +0.
    Minimum,
    Maximum,
    /// S0's low (false) or high (true) f16 to f32.
    F32F16(bool),
    /// Two f32 to an f16 pair, rounding toward zero.
    PkRtzF16F32,
    CmpF16(FCmp),
}

/// The operation LLVM's mnemonic names, if this module has it.
pub(crate) fn prepare(name: &str) -> Option<SFloat> {
    use SFloat::*;
    Some(match name {
        "s_ceil_f32" => Ceil,
        "s_floor_f32" => Floor,
        "s_trunc_f32" => Trunc,
        "s_rndne_f32" => Rndne,
        "s_fmaak_f32" => Fmaak,
        "s_fmamk_f32" => Fmamk,
        "s_minimum_f32" => Minimum,
        "s_maximum_f32" => Maximum,
        "s_cvt_f32_f16" => F32F16(false),
        "s_cvt_hi_f32_f16" => F32F16(true),
        "s_cvt_pk_rtz_f16_f32" => PkRtzF16F32,
        _ => {
            let c = name.strip_prefix("s_cmp_")?.strip_suffix("_f16")?;
            CmpF16(super::fcmp(c)?)
        }
    })
}

/// f32 round to nearest, ties to even (a NaN quieted).
fn rndne(x: f32) -> f32 {
    x.round_ties_even()
}

/// IEEE 754-2019 minimum (`max` false) or maximum of two f32.
pub(crate) fn minimum_maximum(a: f32, b: f32, max: bool) -> f32 {
    if a.is_nan() || b.is_nan() {
        let n = if a.is_nan() { a } else { b };
        return float::quiet32(n);
    }
    if a == b {
        // Only the zeros' signs can differ: -0 orders below +0.
        let neg = if max {
            a.is_sign_negative() && b.is_sign_negative()
        } else {
            a.is_sign_negative() || b.is_sign_negative()
        };
        return if neg { -a.abs() } else { a.abs() };
    }
    if (a < b) != max {
        a
    } else {
        b
    }
}

/// An f16 source half widened, flushed when MODE's f16 field says so.
fn f16_in(mode: u32, h: u16) -> f32 {
    let x = float::f16_to_f32(h);
    if !Denorm::f16_of(mode).keep_in && h & 0x7C00 == 0 {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}

/// The literal of s_fmaak/s_fmamk (Src2 in the program).
fn literal(wave: &Wave, inst: &Inst) -> Result<u32, IsaFault> {
    wave.scalar(inst.src[2])
}

pub(crate) fn execute(wave: &mut Wave, inst: &Inst, op: SFloat) -> Result<Flow, IsaFault> {
    use SFloat::*;
    let m = wave.mode;
    let a = wave.scalar(inst.src[0])?;
    let r = match op {
        Ceil | Floor | Trunc | Rndne => {
            let x = f32_in(m, a);
            let v = match op {
                Ceil => x.ceil(),
                Floor => x.floor(),
                Trunc => x.trunc(),
                _ => rndne(x),
            };
            // The host keeps a NaN's payload; the result is a quiet NaN.
            f32_out(m, if v.is_nan() { float::quiet32(v) } else { v })
        }
        Fmaak | Fmamk => {
            let b = wave.scalar(inst.src[1])?;
            let k = literal(wave, inst)?;
            let (x, y, c) = match op {
                Fmaak => (a, b, k),
                _ => (a, k, b),
            };
            let (x, y, c) = (f32_in(m, x), f32_in(m, y), f32_in(m, c));
            let v = x.mul_add(y, c);
            f32_out(
                m,
                round::f32_directed(FOp::Fma, x, y, c, Round::f32_of(m), v),
            )
        }
        Minimum | Maximum => {
            let b = wave.scalar(inst.src[1])?;
            f32_out(
                m,
                minimum_maximum(f32_in(m, a), f32_in(m, b), op == Maximum),
            )
        }
        F32F16(hi) => {
            // An inline float constant is read as its f16 encoding.
            let h = if hi {
                (a >> 16) as u16
            } else {
                super::half::source16(wave, inst.src[0])?
            };
            f16_in(m, h).to_bits()
        }
        PkRtzF16F32 => {
            let b = wave.scalar(inst.src[1])?;
            let (x, y) = (f32_in(m, a), f32_in(m, b));
            crate::isa::valu::cvt::f16_rtz(x) | crate::isa::valu::cvt::f16_rtz(y) << 16
        }
        CmpF16(c) => {
            let (a, b) = (
                super::half::source16(wave, inst.src[0])?,
                super::half::source16(wave, inst.src[1])?,
            );
            wave.scc = fcompare(c, f16_in(m, a), f16_in(m, b));
            return Ok(Flow::Next);
        }
    };
    match inst.dst {
        Dst::None => Err(IsaFault::Operand {
            mnemonic: inst.decoded.mnemonic(),
            why: "a scalar float operation without a destination".into(),
        }),
        d => {
            wave.write_scalar(d, r)?;
            Ok(Flow::Next)
        }
    }
}

#[cfg(test)]
#[path = "float_tests.rs"]
mod tests;
