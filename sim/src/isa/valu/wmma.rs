//! Wave matrix multiply-accumulate (VOP3P `v_wmma_*`, gfx11 and gfx12):
//! D = A x B + C over one 16x16 tile, A 16xK, B Kx16, spread over the
//! wave's lanes and VGPRs.
//!
//! Layouts (which lane and VGPR hold A[i][k], B[k][j], C/D[i][j]) are those
//! of AMD's RDNA3 / RDNA4 ISA guides as AMD's matrix instruction calculator
//! (ROCm/amd_matrix_instruction_calculator) states them:
//! - gfx11: A row i / B column j is in lane i (j), its K elements packed
//!   from bit 0 of VGPR 0 on (2 x f16, 4 x 8-bit or 8 x 4-bit per VGPR);
//!   lanes 16-31 (and 32-63 in wave64) must repeat lanes 0-15, which are
//!   the ones read here. C/D: VGPR i/2 in lane 16*(i%2)+j (wave32), VGPR
//!   i/4 in lane 16*(i%4)+j (wave64); 16-bit C/D in the half OPSEL[2]
//!   picks, the other half kept.
//! - gfx12, wave32: each lane holds half of a row's K: 16-bit elements in
//!   groups of four (lanes 0-15 k%8 < 4, lanes 16-31 the others), 8- and
//!   4-bit ones in two contiguous halves of K. C/D: VGPR i%8 in lane
//!   16*(i/8)+j; 16-bit C/D packed two rows per VGPR (row i in VGPR
//!   (i/2)%4, half i%2). Wave64 folds the wave32 layout: the upper half of
//!   the wave32 VGPRs moves to lanes 32-63 (one wave32 VGPR: lanes 0-31).
//!
//! Arithmetic: every product is exact (f16, bf16, fp8 and bf8 products fit
//! an f64), the sum of the K products and C is exact and rounded once, to
//! nearest even, to the result format (so within one rounding of any order
//! of additions the hardware may use; its internal order is not
//! documented). Denormal inputs are kept, results are not flushed (MODE's
//! denormal and round fields are not read). A NaN result is the canonical
//! quiet NaN. Integer forms are exact, wrapping to 32 bits, or saturating
//! with clamp; NEG[0]/NEG[1] make A/B signed, gfx11's NEG[2] without
//! clamp changes nothing (see `int_neg_c_ok`). f16/bf16 inputs: NEG/NEG_HI
//! [0]/[1] negate A/B elements in bits 15:0 / 31:16; NEG_HI[2] takes |C|,
//! then NEG[2] negates it. fp8 (OCP E4M3) and bf8 (E5M2) forms take no
//! modifiers.
//!
//! An inline-constant C (gfx12) is every element of C: zero for every
//! form, an integer for an i32 C, a float for an f32 or f16 C (as f16).
//! Refused (left unimplemented): other OPSEL or OPSEL_HI values, clamp on
//! the float forms, other inline constants as C, A or B not VGPRs, DPP,
//! and the sparse `v_swmmac_*` forms. With lanes of EXEC
//! clear the result is not defined by the ISA: refused when run.

use relaunch_isa::Family;

use super::super::fault::IsaFault;
use super::super::operand::{Dst, Src};
use super::super::program::Inst;
use super::super::wave::Wave;
use super::float::{f16_to_f32, f32_to_f16, f64_to_f16};
use super::{Dpp, Enc, Mods, Prep};

/// One WMMA form (`v_wmma_<acc>_16x16x<K>_<elements>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WmmaOp {
    F32F16,
    F32Bf16,
    F16F16,
    Bf16Bf16,
    I32Iu8,
    I32Iu4,
    /// gfx12 v_wmma_i32_16x16x32_iu4.
    I32Iu4K32,
    F32Fp8Fp8,
    F32Fp8Bf8,
    F32Bf8Fp8,
    F32Bf8Bf8,
}

/// An element type of A or B.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    F16,
    Bf16,
    Iu8,
    Iu4,
    Fp8,
    Bf8,
}

impl Elem {
    pub fn bits(self) -> usize {
        match self {
            Elem::F16 | Elem::Bf16 => 16,
            Elem::Iu8 | Elem::Fp8 | Elem::Bf8 => 8,
            Elem::Iu4 => 4,
        }
    }
}

/// The type of C and D.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acc {
    F32,
    F16,
    Bf16,
    I32,
}

impl WmmaOp {
    /// The operation of an LLVM mnemonic.
    pub fn lookup(name: &str) -> Option<WmmaOp> {
        use WmmaOp::*;
        Some(match name {
            "v_wmma_f32_16x16x16_f16" => F32F16,
            "v_wmma_f32_16x16x16_bf16" => F32Bf16,
            "v_wmma_f16_16x16x16_f16" => F16F16,
            "v_wmma_bf16_16x16x16_bf16" => Bf16Bf16,
            "v_wmma_i32_16x16x16_iu8" => I32Iu8,
            "v_wmma_i32_16x16x16_iu4" => I32Iu4,
            "v_wmma_i32_16x16x32_iu4" => I32Iu4K32,
            "v_wmma_f32_16x16x16_fp8_fp8" => F32Fp8Fp8,
            "v_wmma_f32_16x16x16_fp8_bf8" => F32Fp8Bf8,
            "v_wmma_f32_16x16x16_bf8_fp8" => F32Bf8Fp8,
            "v_wmma_f32_16x16x16_bf8_bf8" => F32Bf8Bf8,
            _ => return None,
        })
    }

    /// (A's elements, B's elements, C/D, K).
    pub fn shape(self) -> (Elem, Elem, Acc, usize) {
        use WmmaOp::*;
        match self {
            F32F16 => (Elem::F16, Elem::F16, Acc::F32, 16),
            F32Bf16 => (Elem::Bf16, Elem::Bf16, Acc::F32, 16),
            F16F16 => (Elem::F16, Elem::F16, Acc::F16, 16),
            Bf16Bf16 => (Elem::Bf16, Elem::Bf16, Acc::Bf16, 16),
            I32Iu8 => (Elem::Iu8, Elem::Iu8, Acc::I32, 16),
            I32Iu4 => (Elem::Iu4, Elem::Iu4, Acc::I32, 16),
            I32Iu4K32 => (Elem::Iu4, Elem::Iu4, Acc::I32, 32),
            F32Fp8Fp8 => (Elem::Fp8, Elem::Fp8, Acc::F32, 16),
            F32Fp8Bf8 => (Elem::Fp8, Elem::Bf8, Acc::F32, 16),
            F32Bf8Fp8 => (Elem::Bf8, Elem::Fp8, Acc::F32, 16),
            F32Bf8Bf8 => (Elem::Bf8, Elem::Bf8, Acc::F32, 16),
        }
    }
}

/// Where one matrix element lives: VGPR offset from the operand's first,
/// lane, and bit offset in the dword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub vgpr: usize,
    pub lane: usize,
    pub shift: u32,
}

/// Fold a gfx12 wave32 place into wave64 (`n32` wave32 VGPRs): the upper
/// half of the VGPRs moves to lanes 32-63.
fn fold64(p: Place, n32: usize) -> Place {
    if n32 < 2 {
        return p;
    }
    let half = n32 / 2;
    Place {
        vgpr: p.vgpr % half,
        lane: 32 * (p.vgpr / half) + p.lane,
        shift: p.shift,
    }
}

/// The place of A[r][k] (or B[k][r]): `r` the row of A or column of B.
pub fn input_place(
    family: Family,
    wave64: bool,
    e: Elem,
    kdim: usize,
    r: usize,
    k: usize,
) -> Place {
    let bits = e.bits();
    match family {
        Family::Gfx11 => {
            let per = 32 / bits;
            Place {
                vgpr: k / per,
                lane: r,
                shift: (bits * (k % per)) as u32,
            }
        }
        Family::Gfx12 => {
            // Which half of the lanes, and the element's index in the lane.
            let (g, p) = if bits == 16 {
                ((k / 4) % 2, (k / 8) * 4 + k % 4)
            } else {
                let half = kdim / 2;
                (k / half, k % half)
            };
            let place = Place {
                vgpr: p * bits / 32,
                lane: 16 * g + r,
                shift: ((p * bits) % 32) as u32,
            };
            if wave64 {
                fold64(place, kdim * bits / 64)
            } else {
                place
            }
        }
        Family::Gfx10 => unreachable_family(),
    }
}

/// The place of C[i][j] / D[i][j] (`shift` 16 for the high half of a
/// 16-bit element; on gfx11 OPSEL[2] picks the half instead).
pub fn acc_place(family: Family, wave64: bool, acc: Acc, i: usize, j: usize) -> Place {
    let wide = acc_bits(acc) == 32;
    match family {
        Family::Gfx11 => {
            let (vgpr, lane) = if wave64 {
                (i / 4, 16 * (i % 4) + j)
            } else {
                (i / 2, 16 * (i % 2) + j)
            };
            Place {
                vgpr,
                lane,
                shift: 0,
            }
        }
        Family::Gfx12 => {
            let lane = 16 * (i / 8) + j;
            let (place, n32) = if wide {
                (
                    Place {
                        vgpr: i % 8,
                        lane,
                        shift: 0,
                    },
                    8,
                )
            } else {
                (
                    Place {
                        vgpr: (i / 2) % 4,
                        lane,
                        shift: 16 * (i % 2) as u32,
                    },
                    4,
                )
            };
            if wave64 {
                fold64(place, n32)
            } else {
                place
            }
        }
        Family::Gfx10 => unreachable_family(),
    }
}

#[cold]
fn unreachable_family() -> ! {
    panic!("WMMA is prepared only on gfx11 and gfx12 (the gfx10 tables have no v_wmma rows)")
}

fn acc_bits(acc: Acc) -> usize {
    match acc {
        Acc::F32 | Acc::I32 => 32,
        Acc::F16 | Acc::Bf16 => 16,
    }
}

/// Whether the modifiers and operand fields (`d1`: the second dword) are
/// ones given a meaning here.
pub(super) fn fits(family: Family, op: WmmaOp, enc: Enc, m: &Mods, dpp: Dpp, d1: u32) -> bool {
    let (a, _, acc, _) = op.shape();
    let vgpr_ab = d1 & 0x1ff >= 256 && (d1 >> 9) & 0x1ff >= 256;
    let c_ok = match (d1 >> 18) & 0x1ff {
        256.. => true,
        // Inline constants (LLVM allows them for C): zero for every form,
        // integers for an i32 C, floats for an f32 or f16 C (read in C's
        // format); a bf16 C's float constants, and integers on a float C
        // (their bit patterns?), are not established.
        128 => true,
        129..=208 => acc == Acc::I32,
        240..=248 => matches!(acc, Acc::F32 | Acc::F16),
        _ => false,
    };
    if enc != Enc::Vop3p || dpp != Dpp::None || !vgpr_ab || !c_ok || m.opsel_hi != 7 || m.omod != 0
    {
        return false;
    }
    let opsel_ok = match (family, acc) {
        (Family::Gfx11, Acc::F16 | Acc::Bf16) => m.opsel & 3 == 0,
        (Family::Gfx11 | Family::Gfx12 | Family::Gfx10, _) => m.opsel == 0,
    };
    let rest_ok = match a {
        Elem::F16 | Elem::Bf16 => !m.clamp,
        Elem::Iu8 | Elem::Iu4 => m.neg_hi == 0 && (m.neg & 4 == 0 || int_neg_c_ok(family, m)),
        Elem::Fp8 | Elem::Bf8 => !m.clamp && m.neg == 0 && m.neg_hi == 0,
    };
    opsel_ok && rest_ok
}

/// NEG[2] on an integer form (gfx11 `neg_lo:[_,_,1]`, which LLVM 19
/// assembles there and calls an invalid encoding on gfx12). It cannot
/// negate C: Tensile's int8 kernels set it on every WMMA while chaining D
/// back into C across the K loop, which would then alternate signs. Its
/// other readings (ignored, or "C is signed" like NEG[0]/[1] for A/B) give
/// the same wrapping 32-bit sum, so without clamp the result is known;
/// with clamp they could differ and the documents do not say which holds,
/// so that stays refused.
fn int_neg_c_ok(family: Family, m: &Mods) -> bool {
    match family {
        Family::Gfx11 => !m.clamp,
        Family::Gfx12 | Family::Gfx10 => false,
    }
}

/// Execute one WMMA.
pub(super) fn execute(wave: &mut Wave, inst: &Inst, p: &Prep, op: WmmaOp) -> Result<(), IsaFault> {
    if wave.exec != wave.full_mask() {
        return Err(operand(
            "WMMA with lanes of EXEC clear (the ISA defines it only with every lane on)",
        ));
    }
    let (Src::Vgpr(ra), Src::Vgpr(rb), Dst::Vgpr(rd)) = (inst.src[0], inst.src[1], inst.dst) else {
        return Err(operand("WMMA's A, B and D must be VGPRs"));
    };
    let family = wave.isa.family;
    let wave64 = wave.lanes == 64;
    let m = &p.mods;
    let (ea, eb, acc, kdim) = op.shape();
    let read = |wave: &Wave, base: u16, pl: Place, bits: usize| -> Result<u32, IsaFault> {
        let v = wave.v(base + pl.vgpr as u16)?[pl.lane];
        let mask = if bits == 32 {
            u32::MAX
        } else {
            (1u32 << bits) - 1
        };
        Ok((v >> pl.shift) & mask)
    };
    let mut a = vec![[0u32; 32]; 16];
    let mut b = vec![[0u32; 32]; 16];
    for r in 0..16 {
        for k in 0..kdim {
            a[r][k] = read(
                wave,
                ra,
                input_place(family, wave64, ea, kdim, r, k),
                ea.bits(),
            )?;
            b[r][k] = read(
                wave,
                rb,
                input_place(family, wave64, eb, kdim, r, k),
                eb.bits(),
            )?;
        }
    }
    // gfx11 16-bit C/D: OPSEL[2] picks the half.
    let half16 = match family {
        Family::Gfx11 if acc_bits(acc) == 16 => 16 * u32::from((m.opsel >> 2) & 1),
        Family::Gfx10 | Family::Gfx11 | Family::Gfx12 => 0,
    };
    let mut out = [[0u32; 16]; 16];
    for i in 0..16 {
        for j in 0..16 {
            let mut pl = acc_place(family, wave64, acc, i, j);
            pl.shift += half16;
            let c = match inst.src[2] {
                Src::Vgpr(rc) => read(wave, rc, pl, acc_bits(acc))?,
                other => inline_c(other, acc)?,
            };
            out[i][j] = element(op, m, &a[i], &b[j], c, kdim);
        }
    }
    for i in 0..16 {
        for j in 0..16 {
            let mut pl = acc_place(family, wave64, acc, i, j);
            pl.shift += half16;
            let reg = wave.v_mut(rd + pl.vgpr as u16)?;
            reg[pl.lane] = if acc_bits(acc) == 32 {
                out[i][j]
            } else {
                (reg[pl.lane] & !(0xffff << pl.shift)) | (out[i][j] << pl.shift)
            };
        }
    }
    Ok(())
}

/// D[i][j] from A's row `a`, B's column `b` (raw elements, k order) and
/// C's raw bits. Public to the tests through `super`.
pub(super) fn element(op: WmmaOp, m: &Mods, a: &[u32], b: &[u32], c: u32, kdim: usize) -> u32 {
    let (ea, eb, acc, _) = op.shape();
    if acc == Acc::I32 {
        let sa = m.neg & 1 != 0;
        let sb = m.neg & 2 != 0;
        let mut sum = i64::from(c as i32);
        for k in 0..kdim {
            sum += int_of(ea, a[k], sa) * int_of(eb, b[k], sb);
        }
        return if m.clamp {
            sum.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32
        } else {
            sum as i32 as u32
        };
    }
    let mut terms = [0f64; 33];
    for k in 0..kdim {
        let x = float_of(ea, a[k], m.neg & 1, m.neg_hi & 1, k)
            * float_of(eb, b[k], m.neg & 2, m.neg_hi & 2, k);
        terms[k] = x;
    }
    let mut cv = match acc {
        Acc::F32 => f64::from(f32::from_bits(c)),
        Acc::F16 => f64::from(f16_to_f32(c as u16)),
        Acc::Bf16 => f64::from(f32::from_bits(c << 16)),
        Acc::I32 => 0.0,
    };
    if m.neg_hi & 4 != 0 {
        cv = cv.abs();
    }
    if m.neg & 4 != 0 {
        cv = -cv;
    }
    terms[kdim] = cv;
    let x = exact_sum_odd(&terms[..=kdim]);
    match acc {
        Acc::F32 if x.is_nan() => 0x7fc0_0000,
        Acc::F32 => (round_sig(x, 24, -126) as f32).to_bits(),
        Acc::F16 if x.is_nan() => 0x7e00,
        Acc::F16 => u32::from(f64_to_f16(round_sig(x, 11, -14))),
        Acc::Bf16 if x.is_nan() => 0x7fc0,
        Acc::Bf16 => (round_sig(x, 8, -126) as f32).to_bits() >> 16,
        Acc::I32 => 0,
    }
}

/// An inline-constant C as C's raw element (what `fits` let through).
fn inline_c(src: Src, acc: Acc) -> Result<u32, IsaFault> {
    match (src, acc) {
        (Src::Int(0), _) => Ok(0),
        (Src::Int(i), Acc::I32) => Ok(i32::from(i) as u32),
        (Src::Float(bits), Acc::F32) => Ok(bits),
        (Src::Float(bits), Acc::F16) => Ok(u32::from(f32_to_f16(f32::from_bits(bits)))),
        _ => Err(operand(
            "this inline constant as WMMA's C has no established meaning",
        )),
    }
}

fn int_of(e: Elem, v: u32, signed: bool) -> i64 {
    let bits = e.bits() as u32;
    if signed {
        i64::from(((v << (32 - bits)) as i32) >> (32 - bits))
    } else {
        i64::from(v)
    }
}

/// The value of one float element; `neg`/`neg_hi` (this source's bits of
/// NEG/NEG_HI) negate 16-bit elements in bits 15:0 / 31:16 of a VGPR.
fn float_of(e: Elem, v: u32, neg: u8, neg_hi: u8, k: usize) -> f64 {
    let x = match e {
        Elem::F16 => f64::from(f16_to_f32(v as u16)),
        Elem::Bf16 => f64::from(f32::from_bits(v << 16)),
        Elem::Fp8 => fp8_e4m3(v as u8),
        Elem::Bf8 => fp8_e5m2(v as u8),
        Elem::Iu8 | Elem::Iu4 => f64::from(v),
    };
    // 16-bit elements alternate halves with k on both families.
    let flip = if k % 2 == 0 { neg } else { neg_hi };
    if flip != 0 {
        -x
    } else {
        x
    }
}

/// OCP FP8 E4M3: bias 7, no infinities, S.1111.111 is NaN.
pub fn fp8_e4m3(v: u8) -> f64 {
    let sign = if v & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = i32::from((v >> 3) & 0xf);
    let m = f64::from(v & 7);
    if e == 15 && m == 7.0 {
        return f64::NAN;
    }
    sign * if e == 0 {
        m * 2f64.powi(-9)
    } else {
        (8.0 + m) * 2f64.powi(e - 10)
    }
}

/// OCP FP8 E5M2 (bf8): bias 15, infinities and NaNs as IEEE.
pub fn fp8_e5m2(v: u8) -> f64 {
    let sign = if v & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = i32::from((v >> 2) & 0x1f);
    let m = f64::from(v & 3);
    sign * match (e, m == 0.0) {
        (31, true) => f64::INFINITY,
        (31, false) => f64::NAN,
        (0, _) => m * 2f64.powi(-16),
        _ => (4.0 + m) * 2f64.powi(e - 17),
    }
}

/// The exact sum of `terms` (each an exact f64), rounded to f64 with
/// round-to-odd, so that rounding it once more to a format of at most 51
/// significant bits gives the correctly rounded sum (Boldo & Melquiond).
/// Infinities and NaNs give the IEEE sum.
pub fn exact_sum_odd(terms: &[f64]) -> f64 {
    let naive: f64 = terms.iter().sum();
    if !naive.is_finite() {
        return naive;
    }
    // Shewchuk's non-overlapping partials (exact).
    let mut partials: Vec<f64> = Vec::with_capacity(terms.len());
    for &t in terms {
        let mut x = t;
        let mut n = 0;
        for idx in 0..partials.len() {
            let mut y = partials[idx];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                partials[n] = lo;
                n += 1;
            }
            x = hi;
        }
        partials.truncate(n);
        partials.push(x);
    }
    // From the largest down: the first inexact addition leaves the sign
    // of what the sum still lacks in `lo`.
    let mut hi = partials.pop().unwrap_or(0.0);
    let mut lo = 0.0;
    while let Some(y) = partials.pop() {
        let x = hi;
        hi = x + y;
        lo = y - (hi - x);
        if lo != 0.0 {
            break;
        }
    }
    if lo != 0.0 && hi.to_bits() & 1 == 0 {
        // Round to odd: the odd neighbour on the side of the exact sum.
        let toward_zero = (lo < 0.0) == (hi > 0.0);
        let bits = hi.to_bits();
        hi = f64::from_bits(if toward_zero { bits - 1 } else { bits + 1 });
    }
    hi
}

/// `x` rounded to nearest even with `p` significant bits and the smallest
/// normal exponent `emin` (denormals below it); overflow is left to the
/// caller's conversion (which gives infinity).
pub fn round_sig(x: f64, p: i32, emin: i32) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let e = ((x.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let ulp = 2f64.powi(e.max(emin) - (p - 1));
    (x / ulp).round_ties_even() * ulp
}

fn operand(why: &str) -> IsaFault {
    IsaFault::Operand {
        mnemonic: String::new(),
        why: why.to_string(),
    }
}
