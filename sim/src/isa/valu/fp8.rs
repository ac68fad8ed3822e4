//! gfx12's 8-bit float conversions, OCP formats: fp8 is E4M3 (bias 7, no
//! infinities, S.1111.111 the NaN) and bf8 is E5M2 (bias 15, IEEE
//! infinities and NaNs).
//!
//! - v_cvt_f32_fp8/bf8 (VOP1, VOP3): one byte of S0 to f32, exact. VOP3's
//!   OPSEL[1:0] picks the byte with its bits swapped (LLVM's byte_sel 1
//!   is OPSEL = 2): 0 byte 0, 2 byte 1, 1 byte 2, 3 byte 3.
//! - v_cvt_pk_f32_fp8/bf8: the two bytes of S0's low word (OPSEL[0]: the
//!   high word) to two f32 in D, D+1.
//! - v_cvt_pk_fp8/bf8_f32: S0 and S1 (f32, abs/neg taken) to the low and
//!   high byte of D's low word (OPSEL[3]: the high word); the other word
//!   of D is kept.
//!
//! Rounding is to nearest even. Out of range is the OCP specification's
//! non-saturating conversion (the instructions take no clamp in LLVM 19's
//! syntax): a finite value that rounds past the largest finite (448 for
//! E4M3, 57344 for E5M2) and an infinity become NaN in E4M3 and infinity
//! in E5M2; NaN stays NaN (S.1111.111 in both formats, the sign kept). A
//! NaN read from an 8-bit source is the canonical f32 quiet NaN. The
//! stochastic-rounding forms (v_cvt_sr_fp8/bf8_f32; S1 the random word,
//! LLVM's byte_sel in OPSEL[3:2]) are not modelled: which bits of S1 the
//! hardware adds to the discarded mantissa bits is not established, and
//! the public descriptions at hand disagree (AMD's software emulations in
//! HIP/MIOpen add S1's low bits under a mask of the dropped bits, widened
//! in the denormal range; a ROCm comgr patch emulating the gfx1250 form
//! adds S1 >> 12, its high bits, to the f32 bit pattern), so they stay
//! refused by name.

use super::super::fault::IsaFault;
use super::super::operand::Dst;
use super::super::program::Inst;
use super::super::wave::{Wave, MAX_LANES};
use super::fp::rounding_refused;
use super::ops::Op;
use super::wmma::{fp8_e4m3, fp8_e5m2};
use super::{src, Enc, Mods, Prep};

/// An 8-bit float format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fmt {
    /// OCP E4M3.
    Fp8,
    /// OCP E5M2.
    Bf8,
}

/// A conversion between f32 and an 8-bit float.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fp8Op {
    /// One byte to f32.
    ToF32(Fmt),
    /// Two bytes (one word) to two f32.
    PkToF32(Fmt),
    /// Two f32 to two bytes (one word).
    PkFromF32(Fmt),
}

/// The operation of an fp8/bf8 conversion mnemonic.
pub fn lookup(name: &str) -> Option<Op> {
    use Fmt::*;
    use Fp8Op::*;
    Some(Op::Fp8(match name {
        "v_cvt_f32_fp8" => ToF32(Fp8),
        "v_cvt_f32_bf8" => ToF32(Bf8),
        "v_cvt_pk_f32_fp8" => PkToF32(Fp8),
        "v_cvt_pk_f32_bf8" => PkToF32(Bf8),
        "v_cvt_pk_fp8_f32" => PkFromF32(Fp8),
        "v_cvt_pk_bf8_f32" => PkFromF32(Bf8),
        _ => return None,
    }))
}

/// The modifiers each form gives a meaning: byte/word selects, and
/// abs/neg on the f32 sources; no clamp or omod.
pub fn modifiers_fit(op: Fp8Op, enc: Enc, m: &Mods) -> bool {
    if m.clamp || m.omod != 0 || m.neg_hi != 0 || enc == Enc::Vop3p {
        return false;
    }
    match op {
        Fp8Op::ToF32(_) => (m.abs | m.neg) == 0 && m.opsel & !0b11 == 0,
        Fp8Op::PkToF32(_) => (m.abs | m.neg) == 0 && m.opsel & !0b1 == 0,
        Fp8Op::PkFromF32(_) => (m.abs | m.neg) & !0b11 == 0 && m.opsel & !0b1000 == 0,
    }
}

/// The 8-bit value `v` as f32 (exact; NaN canonical).
pub fn to_f32(fmt: Fmt, v: u8) -> f32 {
    let x = match fmt {
        Fmt::Fp8 => fp8_e4m3(v),
        Fmt::Bf8 => fp8_e5m2(v),
    };
    if x.is_nan() {
        f32::from_bits(0x7FC0_0000)
    } else {
        // Every fp8/bf8 value is exact in f32.
        x as f32
    }
}

/// `x` to the 8-bit format, rounded to nearest even, non-saturating.
pub fn from_f32(fmt: Fmt, x: f32) -> u8 {
    // (mantissa bits, exponent bias, largest finite code, overflow code)
    let (m, bias, max, over) = match fmt {
        Fmt::Fp8 => (3, 7, 0x7E, 0x7F),
        Fmt::Bf8 => (2, 15, 0x7B, 0x7C),
    };
    let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
    if x.is_nan() {
        return sign | 0x7F;
    }
    if x.is_infinite() {
        return sign | over;
    }
    let a = f64::from(x.abs());
    let min_normal = 2f64.powi(1 - bias);
    let code = if a < min_normal {
        // Subnormal quanta of 2^(1 - bias - m); rounding up to 2^m lands on
        // the smallest normal's code.
        (a / 2f64.powi(1 - bias - m)).round_ties_even() as u32
    } else {
        let e = ((a.to_bits() >> 52) as i32) - 1023;
        let mut n = (a / 2f64.powi(e - m)).round_ties_even() as u32;
        let mut e = e;
        if n == 1 << (m + 1) {
            n = 1 << m;
            e += 1;
        }
        let field = e + bias;
        if field > 0x7F >> m {
            u32::MAX
        } else {
            (field as u32) << m | (n - (1 << m))
        }
    };
    if code > max {
        sign | over
    } else {
        sign | code as u8
    }
}

/// The byte VOP3's OPSEL[1:0] names (its two bits swapped).
fn byte_of(opsel: u8) -> u32 {
    let o = u32::from(opsel & 3);
    (o >> 1) | ((o & 1) << 1)
}

pub(super) fn execute(wave: &mut Wave, inst: &Inst, p: &Prep, op: Fp8Op) -> Result<(), IsaFault> {
    let lanes = wave.lanes;
    let mut wmask = u64::MAX;
    let mut s0 = [0u32; MAX_LANES];
    src::read(wave, p, inst.src[0], 0, false, &mut s0, &mut wmask)?;
    match op {
        Fp8Op::ToF32(fmt) => {
            let shift = 8 * byte_of(p.mods.opsel);
            let mut d = [0u32; MAX_LANES];
            for l in 0..lanes {
                d[l] = to_f32(fmt, (s0[l] >> shift) as u8).to_bits();
            }
            src::store(wave, inst.dst, &d, wmask)
        }
        Fp8Op::PkToF32(fmt) => {
            let shift = if p.mods.opsel & 1 != 0 { 16 } else { 0 };
            let mut d = [0u64; MAX_LANES];
            for l in 0..lanes {
                let w = s0[l] >> shift;
                let lo = to_f32(fmt, w as u8).to_bits();
                let hi = to_f32(fmt, (w >> 8) as u8).to_bits();
                d[l] = u64::from(hi) << 32 | u64::from(lo);
            }
            src::store64(wave, inst.dst, &d, wmask)
        }
        Fp8Op::PkFromF32(fmt) => {
            if wave.mode & 0xF != 0 {
                return Err(rounding_refused(
                    wave,
                    inst,
                    "fp8/bf8 conversions are only modelled rounded to nearest even",
                ));
            }
            let mut s1 = [0u32; MAX_LANES];
            src::read(wave, p, inst.src[1], 1, false, &mut s1, &mut wmask)?;
            src::sign_mods(p, 0, 0x8000_0000, &mut s0, lanes);
            src::sign_mods(p, 1, 0x8000_0000, &mut s1, lanes);
            let Dst::Vgpr(r) = inst.dst else {
                return Err(IsaFault::Operand {
                    mnemonic: String::new(),
                    why: "the destination of an fp8 pack is not a VGPR".into(),
                });
            };
            let old = *wave.v(r)?;
            let shift = if p.mods.opsel & 8 != 0 { 16 } else { 0 };
            let mut d = [0u32; MAX_LANES];
            for l in 0..lanes {
                let lo = u32::from(from_f32(fmt, f32::from_bits(s0[l])));
                let hi = u32::from(from_f32(fmt, f32::from_bits(s1[l])));
                let word = (hi << 8 | lo) << shift;
                d[l] = (old[l] & !(0xFFFF << shift)) | word;
            }
            src::store(wave, inst.dst, &d, wmask)
        }
    }
}
