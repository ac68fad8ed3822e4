//! The gfx11.5/gfx12 scalar float operations whose result is one f16:
//! s_add/sub/mul/fmac_f16, s_min/max_f16 (gfx12: the _num forms),
//! s_ceil/floor/trunc/rndne_f16, s_cvt_f16_f32 and gfx12's
//! s_minimum/maximum_f16.
//!
//! The arithmetic is the vector ALU's (`valu::f16_lane`: computed exactly,
//! rounded once to nearest even; min/max give way to a non-NaN operand),
//! so a uniform value computed on either unit agrees. f16 denormal
//! flushing and directed f16 rounding are refused at run time with the
//! reason, as the vector ALU refuses them.
//!
//! The result is written to bits 15:0 and bits 31:16 are written zero.
//! The ISA's pseudo-code assigns only `D0.f16`; SALU writes whole SGPRs
//! (it has no half-register write as VGPRs have with OPSEL), and LLVM 19
//! masks the result with `s_and_b32 0xffff` before any 32-bit use of it
//! (checked with llc-19 for gfx1200), so compiled code does not depend on
//! the high half. Hand-written code reading it would see zeros here.

use super::{f32_in, float::minimum_maximum};
use crate::isa::fault::{Flow, IsaFault};
use crate::isa::operand::{inline_f16, Dst, Src};
use crate::isa::program::Inst;
use crate::isa::valu::f16_lane;
use crate::isa::valu::float::{self, Denorm};
use crate::isa::valu::ops::FOp;
use crate::isa::valu::round::Round;
use crate::isa::wave::Wave;

/// A scalar operation with a 16-bit float result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SHalf {
    /// The vector ALU's f16 operation of the same name.
    Lane(FOp),
    /// IEEE 754-2019 minimum/maximum: a NaN operand gives NaN, -0 < +0.
    Minimum,
    Maximum,
    /// f32 to f16, to nearest even.
    CvtF16F32,
}

impl SHalf {
    fn sources(self) -> usize {
        match self {
            SHalf::Lane(FOp::Ceil | FOp::Floor | FOp::Trunc | FOp::Rndne) | SHalf::CvtF16F32 => 1,
            SHalf::Lane(_) | SHalf::Minimum | SHalf::Maximum => 2,
        }
    }

    /// Whether MODE's rounding can change the result (min/max and the
    /// roundings to an integer are exact).
    fn rounds(self) -> bool {
        matches!(
            self,
            SHalf::Lane(FOp::Add | FOp::Sub | FOp::Mul | FOp::Fmac) | SHalf::CvtF16F32
        )
    }
}

/// The operation LLVM's mnemonic names, if this module has it.
pub(crate) fn prepare(name: &str) -> Option<SHalf> {
    use SHalf::*;
    Some(match name {
        "s_add_f16" => Lane(FOp::Add),
        "s_sub_f16" => Lane(FOp::Sub),
        "s_mul_f16" => Lane(FOp::Mul),
        "s_fmac_f16" => Lane(FOp::Fmac),
        "s_min_f16" | "s_min_num_f16" => Lane(FOp::Min),
        "s_max_f16" | "s_max_num_f16" => Lane(FOp::Max),
        "s_ceil_f16" => Lane(FOp::Ceil),
        "s_floor_f16" => Lane(FOp::Floor),
        "s_trunc_f16" => Lane(FOp::Trunc),
        "s_rndne_f16" => Lane(FOp::Rndne),
        "s_minimum_f16" => Minimum,
        "s_maximum_f16" => Maximum,
        "s_cvt_f16_f32" => CvtF16F32,
        _ => return None,
    })
}

/// A 16-bit float source: an inline float constant is its f16 encoding
/// (as for the vector ALU's 16-bit operands), anything else its low half.
pub(crate) fn source16(wave: &Wave, src: Src) -> Result<u16, IsaFault> {
    Ok(match src {
        Src::Float(b) => inline_f16(b),
        s => wave.scalar(s)? as u16,
    })
}

#[cold]
fn refused(wave: &Wave, inst: &Inst, why: String) -> IsaFault {
    IsaFault::Unimplemented {
        mnemonic: format!("{} {why}", inst.decoded.mnemonic()),
        family: wave.isa.family,
    }
}

pub(crate) fn execute(wave: &mut Wave, inst: &Inst, op: SHalf) -> Result<Flow, IsaFault> {
    let m = wave.mode;
    if !Denorm::f16_of(m).keeps_all() {
        return Err(refused(
            wave,
            inst,
            format!(
                "with f16 denormals flushed (MODE.FP_DENORM f64/f16 = {})",
                (m >> 6) & 3
            ),
        ));
    }
    // The conversion reads f32 and writes f16: refused under any directed
    // mode, as the vector ALU's conversions are.
    let directed = match op {
        SHalf::CvtF16F32 => m & 0xF != 0,
        _ => op.rounds() && Round::f16_of(m) != Round::NearestEven,
    };
    if directed {
        return Err(refused(
            wave,
            inst,
            format!(
                "with MODE.FP_ROUND = {:#x} (f16 results are only modelled rounded to nearest even)",
                m & 0xF
            ),
        ));
    }
    let Dst::Sgpr(d) = inst.dst else {
        return Err(IsaFault::Operand {
            mnemonic: inst.decoded.mnemonic(),
            why: format!("destination {:?} is not an SGPR", inst.dst),
        });
    };
    let half = |i: usize| -> Result<u16, IsaFault> {
        if i < op.sources() {
            source16(wave, inst.src[i])
        } else {
            Ok(0)
        }
    };
    let r: u16 = match op {
        SHalf::CvtF16F32 => float::f32_to_f16(f32_in(m, wave.scalar(inst.src[0])?)),
        SHalf::Minimum | SHalf::Maximum => {
            let v = minimum_maximum(
                float::f16_to_f32(half(0)?),
                float::f16_to_f32(half(1)?),
                op == SHalf::Maximum,
            );
            // An f16 value or a quiet NaN: exact back in f16.
            float::f32_to_f16(v)
        }
        SHalf::Lane(f) => {
            // s_fmac_f16 accumulates into D's low half.
            let acc = match f {
                FOp::Fmac => wave.sgpr[usize::from(d)] & 0xFFFF,
                _ => 0,
            };
            let (a, b) = (u32::from(half(0)?), u32::from(half(1)?));
            // Min/max hand back an operand's own bits: its low half.
            (f16_lane(f, a, b, 0, acc) & 0xFFFF) as u16
        }
    };
    wave.write_scalar(inst.dst, u32::from(r))?;
    Ok(Flow::Next)
}

#[cfg(test)]
#[path = "half_tests.rs"]
mod tests;
