//! Comparisons (VOPC and their VOP3 forms): a lane mask into VCC, an SGPR
//! pair (VOP3 SDST) or, for v_cmpx, EXEC. Lanes EXEC disables compare as
//! false.

use super::super::fault::IsaFault;
use super::super::program::Inst;
use super::super::wave::{Wave, MAX_LANES};
use super::float;
use super::ops::{Cmp, CmpTy};
use super::{src, Enc, Prep};

#[inline]
pub(super) fn int_cond<T: Ord>(cond: u8, a: T, b: T) -> bool {
    match cond {
        0 => false,
        1 => a < b,
        2 => a == b,
        3 => a <= b,
        4 => a > b,
        5 => a != b,
        6 => a >= b,
        _ => true,
    }
}

#[inline]
pub(super) fn float_cond(cond: u8, a: f64, b: f64) -> bool {
    use std::cmp::Ordering::{Equal, Greater, Less};
    // None: unordered (a NaN operand).
    let o = a.partial_cmp(&b);
    match cond {
        0 => false,
        1 => o == Some(Less),
        2 => o == Some(Equal),
        3 => matches!(o, Some(Less | Equal)),
        4 => o == Some(Greater),
        5 => matches!(o, Some(Less | Greater)),
        6 => matches!(o, Some(Greater | Equal)),
        7 => o.is_some(),
        8 => o.is_none(),
        9 => !matches!(o, Some(Greater | Equal)),
        10 => !matches!(o, Some(Less | Greater)),
        11 => o != Some(Greater),
        12 => !matches!(o, Some(Less | Equal)),
        13 => o != Some(Equal),
        14 => o != Some(Less),
        _ => true,
    }
}

pub fn execute(wave: &mut Wave, inst: &Inst, p: &Prep, c: Cmp) -> Result<(), IsaFault> {
    let lanes = wave.lanes;
    let mut result = 0u64;
    let mut wmask = u64::MAX;
    let wide = matches!(c.ty, CmpTy::U64 | CmpTy::I64 | CmpTy::F64);
    if wide {
        let signed = c.ty == CmpTy::I64;
        let mut a = [0u64; MAX_LANES];
        let mut b = [0u64; MAX_LANES];
        let f = c.ty == CmpTy::F64;
        read64(wave, inst.src[0], signed, f, &mut a)?;
        if c.class {
            let mut m = [0u32; MAX_LANES];
            wave.read_lanes(inst.src[1], &mut m)?;
            for l in 0..lanes {
                let x = f64::from_bits(sign64(p, 0, a[l]));
                let quiet = x.to_bits() & (1 << 51) != 0;
                if float::class_bit(x, quiet, x.is_subnormal()) & m[l] != 0 {
                    result |= 1 << l;
                }
            }
        } else {
            read64(wave, inst.src[1], signed, f, &mut b)?;
            for l in 0..lanes {
                let t = match c.ty {
                    CmpTy::U64 => int_cond(c.cond, a[l], b[l]),
                    CmpTy::I64 => int_cond(c.cond, a[l] as i64, b[l] as i64),
                    _ => float_cond(
                        c.cond,
                        f64::from_bits(sign64(p, 0, a[l])),
                        f64::from_bits(sign64(p, 1, b[l])),
                    ),
                };
                if t {
                    result |= 1 << l;
                }
            }
        }
    } else {
        let half = matches!(c.ty, CmpTy::U16 | CmpTy::I16 | CmpTy::F16);
        let mut a = [0u32; MAX_LANES];
        let mut b = [0u32; MAX_LANES];
        src::read(wave, p, inst.src[0], 0, half, &mut a, &mut wmask)?;
        // v_cmp_class's mask is a 32-bit integer source.
        src::read(
            wave,
            p,
            inst.src[1],
            1,
            half && !c.class,
            &mut b,
            &mut wmask,
        )?;
        let sign = if half { 0x8000 } else { 0x8000_0000 };
        if matches!(c.ty, CmpTy::F16 | CmpTy::F32) {
            src::sign_mods(p, 0, sign, &mut a, lanes);
            if !c.class {
                src::sign_mods(p, 1, sign, &mut b, lanes);
            }
        }
        for l in 0..lanes {
            let (x, y) = (a[l], b[l]);
            let t = match (c.ty, c.class) {
                (CmpTy::F32, true) => float::class32(f32::from_bits(x)) & y != 0,
                (CmpTy::F16, true) => float::class16(x as u16) & y != 0,
                (CmpTy::U32, _) => int_cond(c.cond, x, y),
                (CmpTy::I32, _) => int_cond(c.cond, x as i32, y as i32),
                (CmpTy::U16, _) => int_cond(c.cond, x as u16, y as u16),
                (CmpTy::I16, _) => int_cond(c.cond, x as u16 as i16, y as u16 as i16),
                (CmpTy::F32, false) => float_cond(
                    c.cond,
                    f64::from(f32::from_bits(x)),
                    f64::from(f32::from_bits(y)),
                ),
                (CmpTy::F16, false) => float_cond(
                    c.cond,
                    f64::from(float::f16_to_f32(x as u16)),
                    f64::from(float::f16_to_f32(y as u16)),
                ),
                _ => false,
            };
            if t {
                result |= 1 << l;
            }
        }
    }
    let result = result & wave.exec & wmask;
    if c.exec {
        // gfx10+ v_cmpx writes EXEC only.
        wave.set_exec(result);
        return Ok(());
    }
    match p.enc {
        Enc::Vop3 => wave.write_mask(inst.dst, result),
        Enc::Vopc | Enc::Vop1 | Enc::Vop2 | Enc::Vop3p | Enc::Vopd => {
            wave.set_vcc(result);
            Ok(())
        }
    }
}

/// abs/neg on bit 63 of a 64-bit float source.
#[inline]
/// A 64-bit source; an f64 operand takes a 32-bit literal as its high half.
fn read64(
    wave: &Wave,
    s: super::super::operand::Src,
    signed: bool,
    float: bool,
    out: &mut [u64; MAX_LANES],
) -> Result<(), IsaFault> {
    if float {
        return super::f64::read(wave, s, super::f64::SrcTy::F64, out);
    }
    wave.read_lanes64(s, signed, out)
}

fn sign64(p: &Prep, i: usize, v: u64) -> u64 {
    let mut v = v;
    if p.mods.abs >> i & 1 != 0 {
        v &= !(1 << 63);
    }
    if p.mods.neg >> i & 1 != 0 {
        v ^= 1 << 63;
    }
    v
}
