//! Dot products: VOP3P `v_dot2_f32_f16`, `v_dot2_f32_bf16` and the integer
//! dots, gfx11+'s VOP3 `v_dot2_f16_f16`, and the VOP2 forms that accumulate
//! into their destination (`v_dot2c_f32_f16` / `v_dot2acc_f32_f16`,
//! `v_dot4c_i32_i8`).
//!
//! Semantics (RDNA2/RDNA3/RDNA4 ISA pseudo-code; LLVM's IntrinsicsAMDGPU.td
//! `fdot2`/`sdot4`/`sudot4`...): D = sum of the lane-wise products of the
//! packed elements of S0 and S1, plus S2. The integer forms are exact,
//! wrapping to 32 bits, or saturating to the result type with `clamp`; the
//! `iu` forms read S0/S1 as signed where neg_lo[0]/neg_lo[1] is set (LLVM
//! VOP3PInstructions.td: "Dot-iu instructions consider input as signed if
//! imod neg bits are set"). The float forms' internal rounding is not
//! documented: here every product is exact (f16 x f16 and bf16 x bf16 fit
//! in f64) and the sum of all terms is rounded once, to nearest even, to
//! the result type (so within one ulp of any order of rounded adds).
//!
//! Not given a meaning here (left unimplemented, so a kernel using them
//! stops naming the instruction): `v_dot2_bf16_bf16` (a bf16 result whose
//! rounding is reported to be toward zero on some parts, which one ulp of
//! bf16 is past the cross-check tolerance), DPP on any dot, op_sel or
//! neg_hi on an f32 S2, op_sel on the 8-/4-bit dots, a bf16 operand given
//! as a float inline constant (whether the hardware expands it as bf16 or
//! f16 is not established), an integer inline constant as a packed 16-bit
//! operand (whether it is splatted to both halves is not established),
//! f32/f16 denormal flushing and directed rounding (MODE).

use super::super::fault::IsaFault;
use super::super::operand::{inline_f16, Dst, Src};
use super::super::program::Inst;
use super::super::wave::{Lanes, Wave, MAX_LANES};
use super::float::Denorm;
use super::fp::omod_clamp;
use super::half::h;
use super::ops::DotOp;
use super::round::{two_sum, Round};
use super::{src, Dpp, Enc, Mods, Prep};

/// Whether the dot product gives the modifiers a meaning modelled here.
pub(super) fn modifiers_fit(op: DotOp, enc: Enc, m: &Mods, dpp: Dpp) -> bool {
    use DotOp::*;
    if dpp != Dpp::None || m.omod != 0 || m.abs & 0b011 != 0 {
        return false;
    }
    // An unpacked S2 in VOP3P: only neg_lo (its sign); op_sel_hi[2] set,
    // op_sel[2] clear, as LLVM always encodes it.
    let plain_s2 = m.opsel & 4 == 0 && m.opsel_hi & 4 != 0 && m.neg_hi & 4 == 0;
    match (op, enc) {
        (F32F16 | F32Bf16, Enc::Vop3p) => plain_s2,
        (I32I16 | U32U16, Enc::Vop3p) => plain_s2 && m.neg == 0,
        (I32I8 | U32U8 | I32I4 | U32U4, Enc::Vop3p) => {
            m.opsel == 0 && m.opsel_hi == 7 && m.neg == 0 && m.neg_hi == 0
        }
        (I32Iu8 | I32Iu4, Enc::Vop3p) => {
            m.opsel == 0 && m.opsel_hi == 7 && m.neg & 4 == 0 && m.neg_hi == 0
        }
        // op_sel[0]/[1] are not valid here (llvm-mc refuses them); [2]
        // picks S2's half, [3] the destination's. No clamp.
        (F16F16, Enc::Vop3) => m.opsel & 3 == 0 && m.neg & 3 == 0 && !m.clamp,
        (AccF32F16 | AccI32I8, Enc::Vop2) => *m == Mods::default(),
        _ => false,
    }
}

/// Execute one dot product.
pub(super) fn execute(wave: &mut Wave, inst: &Inst, p: &Prep, op: DotOp) -> Result<(), IsaFault> {
    use DotOp::*;
    mode_fits(wave, inst, op)?;
    let lanes = wave.lanes;
    let mut wmask = u64::MAX;
    let bf16 = op == F32Bf16;
    let mut a = [0u32; MAX_LANES];
    let mut b = [0u32; MAX_LANES];
    packed_source(wave, inst, p, op, 0, &mut a, &mut wmask)?;
    packed_source(wave, inst, p, op, 1, &mut b, &mut wmask)?;
    let mut c = [0u32; MAX_LANES];
    match op {
        AccF32F16 | AccI32I8 => {
            let Dst::Vgpr(r) = inst.dst else {
                return Err(operand("the accumulator must be a VGPR"));
            };
            c = *wave.v(r)?;
        }
        F16F16 => {
            src::read(wave, p, inst.src[2], 2, true, &mut c, &mut wmask)?;
            src::sign_mods(p, 2, 0x8000, &mut c, lanes);
        }
        _ => {
            wave.read_lanes(inst.src[2], &mut c)?;
            if matches!(op, F32F16 | F32Bf16) && p.mods.neg & 4 != 0 {
                for v in c.iter_mut().take(lanes) {
                    *v ^= 0x8000_0000;
                }
            }
        }
    }
    let m = &p.mods;
    let mut d = [0u32; MAX_LANES];
    for l in 0..lanes {
        d[l] = match op {
            F32F16 | AccF32F16 | F32Bf16 => {
                let (x, y) = (halves(p, op, 0, a[l]), halves(p, op, 1, b[l]));
                let v = if bf16 {
                    [bf(x[0]) * bf(y[0]), bf(x[1]) * bf(y[1])]
                } else {
                    [h(x[0]) * h(y[0]), h(x[1]) * h(y[1])]
                };
                let r = sum_rounded(v[0], v[1], f64::from(f32::from_bits(c[l])), F32) as f32;
                omod_clamp(p, r).to_bits()
            }
            F16F16 => {
                let (x, y) = (halves(p, op, 0, a[l]), halves(p, op, 1, b[l]));
                let r = sum_rounded(h(x[0]) * h(y[0]), h(x[1]) * h(y[1]), h(c[l]), F16);
                u32::from(super::float::f64_to_f16(r))
            }
            I32I16 | U32U16 => {
                let signed = op == I32I16;
                let (x, y) = (halves(p, op, 0, a[l]), halves(p, op, 1, b[l]));
                let e = |v: u32| {
                    if signed {
                        i64::from(v as u16 as i16)
                    } else {
                        i64::from(v)
                    }
                };
                let sum = e(x[0]) * e(y[0]) + e(x[1]) * e(y[1]);
                finish(sum, c[l], signed, m.clamp)
            }
            I32I8 | AccI32I8 | U32U8 | I32Iu8 => {
                let (sa, sb) = signedness(op, m);
                let sum = elements(a[l], b[l], 8, sa, sb);
                finish(sum, c[l], op != U32U8, m.clamp)
            }
            I32I4 | U32U4 | I32Iu4 => {
                let (sa, sb) = signedness(op, m);
                let sum = elements(a[l], b[l], 4, sa, sb);
                finish(sum, c[l], op != U32U4, m.clamp)
            }
        };
    }
    if op == F16F16 {
        let (dst, hi) = src::dst16(wave.isa.family, p, inst.dst);
        return src::store16(wave, dst, hi, &d, wmask);
    }
    src::store(wave, inst.dst, &d, wmask)
}

/// Refuse MODE settings the exact model does not cover.
fn mode_fits(wave: &Wave, inst: &Inst, op: DotOp) -> Result<(), IsaFault> {
    use DotOp::*;
    let mode = wave.mode;
    let (f32_side, f16_side) = match op {
        F32F16 | AccF32F16 => (true, true),
        F32Bf16 => (true, false),
        F16F16 => (false, true),
        I32I16 | U32U16 | I32I8 | U32U8 | I32Iu8 | I32I4 | U32U4 | I32Iu4 | AccI32I8 => {
            return Ok(())
        }
    };
    let flushes = (f32_side && !Denorm::f32_of(mode).keeps_all())
        || (f16_side && !Denorm::f16_of(mode).keeps_all());
    let directed = (f32_side && Round::f32_of(mode) != Round::NearestEven)
        || (f16_side && Round::f16_of(mode) != Round::NearestEven);
    if flushes || directed {
        return Err(IsaFault::Unimplemented {
            mnemonic: format!(
                "{} with MODE {:#x} (dot products are modelled with denormals kept and \
                 rounding to nearest even only)",
                inst.decoded.mnemonic(),
                mode & 0xFF
            ),
            family: wave.isa.family,
        });
    }
    Ok(())
}

/// Source `i` (0 or 1) as packed 32-bit lanes. An inline float constant
/// for f16 elements is the f16 value in both halves, as for v_pk_* (see
/// `half::packed`); other inline constants for 16-bit elements (whether
/// the hardware splats them is not established) are refused. The 8- and
/// 4-bit dots read plain 32-bit operands.
fn packed_source(
    wave: &Wave,
    inst: &Inst,
    p: &Prep,
    op: DotOp,
    i: usize,
    out: &mut Lanes,
    mask: &mut u64,
) -> Result<(), IsaFault> {
    let refuse = |what: &str| {
        Err(IsaFault::Unimplemented {
            mnemonic: format!("{} with {what}", inst.decoded.mnemonic()),
            family: wave.isa.family,
        })
    };
    let halves16 = op.halves16();
    match inst.src[i] {
        Src::Float(_) if op == DotOp::F32Bf16 => {
            refuse("a float inline constant as a bf16 operand")
        }
        Src::Int(_) if halves16 => refuse("an integer inline constant as a packed 16-bit operand"),
        Src::Float(_) if halves16 && op.integer() => {
            refuse("a float inline constant as a packed 16-bit integer operand")
        }
        Src::Float(b) if halves16 => {
            let c = u32::from(inline_f16(b));
            *out = [c | (c << 16); MAX_LANES];
            Ok(())
        }
        s => src::read(wave, p, s, i, false, out, mask),
    }
}

impl DotOp {
    /// Integer elements (the others are f16 or bf16).
    fn integer(self) -> bool {
        use DotOp::*;
        match self {
            F32F16 | F32Bf16 | F16F16 | AccF32F16 => false,
            I32I16 | U32U16 | I32I8 | U32U8 | I32Iu8 | I32I4 | U32U4 | I32Iu4 | AccI32I8 => true,
        }
    }

    /// Two 16-bit elements per source dword (the others: four 8-bit or
    /// eight 4-bit ones).
    fn halves16(self) -> bool {
        use DotOp::*;
        match self {
            F32F16 | F32Bf16 | F16F16 | AccF32F16 | I32I16 | U32U16 => true,
            I32I8 | U32U8 | I32Iu8 | I32I4 | U32U4 | I32Iu4 | AccI32I8 => false,
        }
    }
}

/// The two 16-bit elements of packed source `i`, [low product's, high
/// product's]: VOP3P picks them with op_sel / op_sel_hi and negates them
/// with neg_lo / neg_hi (float forms only; `modifiers_fit` refuses neg on
/// the integer ones); the other encodings take them in order.
#[inline]
fn halves(p: &Prep, op: DotOp, i: usize, v: u32) -> [u32; 2] {
    if p.enc != Enc::Vop3p {
        return [v & 0xFFFF, v >> 16];
    }
    let m = &p.mods;
    let pick = |sel: u8| {
        if sel >> i & 1 != 0 {
            v >> 16
        } else {
            v & 0xFFFF
        }
    };
    let neg = |bits: u8| if bits >> i & 1 != 0 { 0x8000 } else { 0 };
    if op.integer() {
        return [pick(m.opsel), pick(m.opsel_hi)];
    }
    [pick(m.opsel) ^ neg(m.neg), pick(m.opsel_hi) ^ neg(m.neg_hi)]
}

/// bf16 bits (low 16) as f64, exactly.
#[inline]
fn bf(v: u32) -> f64 {
    f64::from(f32::from_bits(v << 16))
}

/// Which of S0, S1 are read as signed.
fn signedness(op: DotOp, m: &Mods) -> (bool, bool) {
    use DotOp::*;
    match op {
        I32I8 | AccI32I8 | I32I4 | I32I16 => (true, true),
        U32U8 | U32U4 | U32U16 => (false, false),
        I32Iu8 | I32Iu4 => (m.neg & 1 != 0, m.neg & 2 != 0),
        F32F16 | F32Bf16 | F16F16 | AccF32F16 => (false, false),
    }
}

/// The sum of the products of the `bits`-wide elements of `a` and `b`.
#[inline]
fn elements(a: u32, b: u32, bits: u32, sa: bool, sb: bool) -> i64 {
    let get = |v: u32, k: u32, signed: bool| {
        let shift = 32 - bits;
        let raw = v << (shift - k * bits);
        if signed {
            i64::from((raw as i32) >> shift)
        } else {
            i64::from(raw >> shift)
        }
    };
    (0..32 / bits).map(|k| get(a, k, sa) * get(b, k, sb)).sum()
}

/// Add S2 and wrap to 32 bits, or saturate with clamp.
#[inline]
fn finish(sum: i64, c: u32, signed: bool, clamp: bool) -> u32 {
    let total = if signed {
        i128::from(sum) + i128::from(c as i32)
    } else {
        i128::from(sum) + i128::from(c)
    };
    match (clamp, signed) {
        (false, _) => total as u32,
        (true, true) => total.clamp(i128::from(i32::MIN), i128::from(i32::MAX)) as i32 as u32,
        (true, false) => total.clamp(0, i128::from(u32::MAX)) as u32,
    }
}

/// A binary floating-point result format.
#[derive(Debug, Clone, Copy)]
struct Fmt {
    /// Stored fraction bits.
    frac: i32,
    /// Exponent of the smallest normal.
    emin: i32,
    /// Exponent of the largest finite value.
    emax: i32,
}

const F32: Fmt = Fmt {
    frac: 23,
    emin: -126,
    emax: 127,
};
const F16: Fmt = Fmt {
    frac: 10,
    emin: -14,
    emax: 15,
};

/// `a + b + c` computed exactly and rounded once to `fmt` (nearest even),
/// returned as an f64 that holds the rounded value (or an infinity/NaN).
/// The terms are products of 11- or 8-bit significands and an f32/f16,
/// so none is an f64 denormal and every TwoSum below is exact.
fn sum_rounded(a: f64, b: f64, c: f64, fmt: Fmt) -> f64 {
    let naive = a + b + c;
    if !naive.is_finite() {
        return naive;
    }
    let (s1, e1) = two_sum(a, b);
    let (s2, e2) = two_sum(s1, c);
    let (t, e3) = two_sum(e1, e2);
    // The exact sum is s3 + e4 + e3, |e4 + e3| well under an f64 ulp of s3.
    let (s3, e4) = two_sum(s2, t);
    let rest = e4 + e3;
    if s3 == 0.0 {
        return if rest == 0.0 {
            naive
        } else {
            round_to(rest, 0.0, fmt)
        };
    }
    round_to(s3, rest, fmt)
}

/// `x` (with `rest`, the exact value's remainder beyond it, breaking ties)
/// rounded to nearest even in `fmt`, as an f64.
fn round_to(x: f64, rest: f64, fmt: Fmt) -> f64 {
    let a = x.abs();
    let e = ((a.to_bits() >> 52) as i32) - 1023;
    let unit = e.max(fmt.emin) - fmt.frac;
    let pow2 = |k: i32| f64::from_bits(((1023 + k) as u64) << 52);
    let scaled = a * pow2(-unit);
    let whole = scaled.floor();
    let frac = scaled - whole;
    // Positive: the exact magnitude is above |x|.
    let beyond = if x < 0.0 { -rest } else { rest };
    let up = frac > 0.5 || (frac == 0.5 && (beyond > 0.0 || (beyond == 0.0 && whole % 2.0 == 1.0)));
    let q = if up { whole + 1.0 } else { whole };
    let v = q * pow2(unit);
    let max = (2.0 - pow2(-fmt.frac)) * pow2(fmt.emax);
    let v = if v > max { f64::INFINITY } else { v };
    v.copysign(x)
}

#[cold]
fn operand(why: &str) -> IsaFault {
    IsaFault::Operand {
        mnemonic: String::new(),
        why: why.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rounding_of_the_exact_sum() {
        // 1 + 2^-24 + 2^-24: exact 1 + 2^-23 (an f32); two f32 adds in
        // order would tie to 1 twice.
        let t = 2f64.powi(-24);
        assert_eq!(sum_rounded(1.0, t, t, F32), 1.0 + 2f64.powi(-23));
        // 1 + 2^-24 - 2^-80: just below the tie, rounds down to 1.
        assert_eq!(sum_rounded(1.0, t, -(2f64.powi(-80)), F32), 1.0);
        // 1 + 2^-24 + 2^-80: just above, rounds up.
        assert_eq!(
            sum_rounded(1.0, t, 2f64.powi(-80), F32),
            1.0 + 2f64.powi(-23)
        );
        // Ties to even: 1 + 3 * 2^-24 -> 1 + 2^-22.
        assert_eq!(sum_rounded(1.0, 2.0 * t, t, F32), 1.0 + 2f64.powi(-22));
        // f16: 2048 + 1 ties to 2048, + 1 + tiny goes up to 2050.
        assert_eq!(sum_rounded(2048.0, 1.0, 0.0, F16), 2048.0);
        assert_eq!(sum_rounded(2048.0, 1.0, 2f64.powi(-30), F16), 2050.0);
        // Overflow and the smallest f32 denormal.
        assert_eq!(
            sum_rounded(f64::from(f32::MAX), f64::from(f32::MAX), 0.0, F32),
            f64::INFINITY
        );
        let tiny = 2f64.powi(-149);
        assert_eq!(sum_rounded(tiny, 0.4 * tiny, 0.0, F32), tiny);
        assert_eq!(sum_rounded(tiny, -tiny, 0.0, F32), 0.0);
    }

    #[test]
    fn integer_elements_and_saturation() {
        // bytes of a: [1, -2, 3, -128], of b: [5, 6, -7, 2].
        let a = u32::from_le_bytes([1, 0xFE, 3, 0x80]);
        let b = u32::from_le_bytes([5, 6, 0xF9, 2]);
        // 5 - 12 - 21 - 256 = -284 signed x signed.
        assert_eq!(elements(a, b, 8, true, true), -284);
        // unsigned a x signed b: 5 + 254*6 + 3*-7 + 128*2 = 1764.
        assert_eq!(elements(a, b, 8, false, true), 1764);
        // nibbles: a = 0x0000_00F1 -> [1, -1, 0...], b = 0x0000_0023 -> [3, 2].
        assert_eq!(elements(0xF1, 0x23, 4, true, true), 1);
        assert_eq!(elements(0xF1, 0x23, 4, false, false), 3 + 30);
        assert_eq!(finish(10, i32::MAX as u32, true, true), i32::MAX as u32);
        assert_eq!(
            finish(10, i32::MAX as u32, true, false),
            (i32::MAX as u32).wrapping_add(10)
        );
        assert_eq!(finish(-10, 5, false, true), 0);
        assert_eq!(finish(1 << 33, 0, false, true), u32::MAX);
    }
}
