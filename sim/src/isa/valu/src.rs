//! Reading a vector ALU instruction's sources (DPP on the first one, the
//! 16-bit half selection, abs/neg) and writing its destination under EXEC
//! and the DPP write mask.

use relaunch_isa::Family;

use super::super::fault::IsaFault;
use super::super::operand::{inline_f16, Dst, Src};
use super::super::wave::{Lanes, Wave, MAX_LANES};
use super::{Dpp, Enc, Prep};

/// The raw 32-bit lane values of `src`.
#[inline]
pub fn raw(wave: &Wave, src: Src, out: &mut Lanes) -> Result<(), IsaFault> {
    wave.read_lanes(src, out)
}

/// Apply DPP to the first source's raw values; returns the lanes that may
/// be written (all ones without DPP).
pub fn dpp(wave: &Wave, d: Dpp, vals: &mut Lanes) -> u64 {
    let n = wave.lanes;
    match d {
        Dpp::None => u64::MAX,
        Dpp::Row {
            ctrl,
            row_mask,
            bank_mask,
            bound_zero,
            fi,
        } => {
            let src = *vals;
            let mut enabled = 0u64;
            for l in 0..n {
                let row = l / 16;
                let bank = (l / 4) % 4;
                if row_mask >> row & 1 == 0 || bank_mask >> bank & 1 == 0 {
                    continue;
                }
                let from = row_source(ctrl, l);
                let readable = from.is_some_and(|s| fi || wave.exec >> s & 1 != 0);
                match from {
                    Some(s) if readable => {
                        vals[l] = src[s];
                        enabled |= 1 << l;
                    }
                    _ if bound_zero => {
                        vals[l] = 0;
                        enabled |= 1 << l;
                    }
                    _ => {}
                }
            }
            enabled
        }
        Dpp::Lane8 { sel, fi } => {
            let src = *vals;
            for (l, v) in vals.iter_mut().enumerate().take(n) {
                let s = (l & !7) | ((sel >> (3 * (l & 7))) & 7) as usize;
                *v = if fi || wave.exec >> s & 1 != 0 {
                    src[s]
                } else {
                    0
                };
            }
            u64::MAX
        }
    }
}

/// The source lane of DPP16 control `ctrl` for lane `l`, `None` when it
/// falls outside the row.
#[inline]
fn row_source(ctrl: u16, l: usize) -> Option<usize> {
    let base = l & !15;
    let i = l & 15;
    let c = ctrl as usize;
    match ctrl {
        0x000..=0x0FF => Some((l & !3) | ((c >> (2 * (l & 3))) & 3)),
        0x101..=0x10F => {
            let s = i + (c & 15);
            (s < 16).then_some(base + s)
        }
        0x111..=0x11F => i.checked_sub(c & 15).map(|s| base + s),
        0x121..=0x12F => Some(base + ((i + 16 - (c & 15)) & 15)),
        0x140 => Some(base + 15 - i),
        0x141 => Some((l & !7) + 7 - (l & 7)),
        0x150..=0x15F => Some(base + (c & 15)),
        0x160..=0x16F => Some(base + (i ^ (c & 15))),
        _ => None,
    }
}

/// Source `i`'s lane values as the operation reads them: DPP applied to
/// source 0, then for 16-bit operands the selected half in the low 16
/// bits. `mask` collects the DPP write mask.
#[inline]
pub fn read(
    wave: &Wave,
    p: &Prep,
    src: Src,
    i: usize,
    half16: bool,
    out: &mut Lanes,
    mask: &mut u64,
) -> Result<(), IsaFault> {
    if !half16 && (i != 0 || p.dpp == Dpp::None) {
        return wave.read_lanes(src, out);
    }
    let (src, hi) = split16(wave.isa.family, p, src, i, half16);
    match src {
        Src::Float(b) if half16 => *out = [u32::from(inline_f16(b)); MAX_LANES],
        _ => raw(wave, src, out)?,
    }
    if i == 0 && p.dpp != Dpp::None {
        *mask &= dpp(wave, p.dpp, out);
    }
    if half16 {
        if hi {
            for v in out.iter_mut().take(wave.lanes) {
                *v >>= 16;
            }
        } else {
            for v in out.iter_mut().take(wave.lanes) {
                *v &= 0xFFFF;
            }
        }
    }
    Ok(())
}

/// All-zero lanes: the value of a source an operation does not read.
pub static ZERO: Lanes = [0; MAX_LANES];

/// Source `i` as 32-bit lanes, borrowed from the register file when it is
/// an unmodified VGPR (no DPP, no abs/neg, no flush), else built in `buf`:
/// no per-instruction zero-fill or copy in the common case. `sign` is the
/// sign bit abs/neg act on (0: the operation takes no float modifiers);
/// `flush` flushes f32 denormals (after abs/neg). `mask` collects the DPP
/// write mask, as in [`read`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn view<'a>(
    wave: &'a Wave,
    p: &Prep,
    src: Src,
    i: usize,
    sign: u32,
    flush: bool,
    buf: &'a mut Option<Lanes>,
    mask: &mut u64,
) -> Result<&'a Lanes, IsaFault> {
    let mods = sign != 0 && (p.mods.abs | p.mods.neg) >> i & 1 != 0;
    let dpp = i == 0 && p.dpp != Dpp::None;
    let out = match src {
        Src::Vgpr(r) if !mods && !dpp && !flush => return wave.v(r),
        Src::Vgpr(r) => buf.insert(*wave.v(r)?),
        _ => buf.insert([wave.scalar(src)?; MAX_LANES]),
    };
    if dpp {
        *mask &= self::dpp(wave, p.dpp, out);
    }
    if mods {
        sign_mods(p, i, sign, out, wave.lanes);
    }
    if flush {
        for v in out.iter_mut().take(wave.lanes) {
            *v = super::float::flush32(f32::from_bits(*v)).to_bits();
        }
    }
    Ok(out)
}

/// The lanes an operation must compute for `dst` under EXEC & `mask`, as
/// a range: the span of the written lanes for a VGPR (lanes outside it
/// are never stored), every lane for an SGPR destination (which takes
/// lane 0 whatever EXEC is).
#[inline]
pub fn span(wave: &Wave, dst: Dst, mask: u64) -> std::ops::Range<usize> {
    match dst {
        Dst::Vgpr(_) => {
            let m = wave.exec & mask & wave.full_mask();
            if m == 0 {
                0..0
            } else {
                m.trailing_zeros() as usize..64 - m.leading_zeros() as usize
            }
        }
        _ => 0..wave.lanes,
    }
}

/// For a 16-bit operand: which register and half. VOP3 selects the half
/// with op_sel; gfx11+ VOP1/VOP2/VOPC name the high half with bit 7 of the
/// VGPR field (so v128+ there are v0.h+).
fn split16(f: Family, p: &Prep, src: Src, i: usize, half16: bool) -> (Src, bool) {
    if !half16 {
        return (src, false);
    }
    match p.enc {
        Enc::Vop3 => (src, p.mods.opsel >> i & 1 != 0),
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc => match src {
            Src::Vgpr(r) if r >= 128 && f.facts().isa.vgpr_high_halves => {
                (Src::Vgpr(r - 128), true)
            }
            _ => (src, false),
        },
        Enc::Vop3p | Enc::Vopd => (src, false),
    }
}

/// The 16-bit destination: register and whether the high half is written.
pub fn dst16(f: Family, p: &Prep, dst: Dst) -> (Dst, bool) {
    match p.enc {
        Enc::Vop3 => (dst, p.mods.opsel & 8 != 0),
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc => match dst {
            Dst::Vgpr(r) if r >= 128 && f.facts().isa.vgpr_high_halves => {
                (Dst::Vgpr(r - 128), true)
            }
            _ => (dst, false),
        },
        Enc::Vop3p | Enc::Vopd => (dst, false),
    }
}

/// abs then neg on the sign bit `sign` of source `i`.
#[inline]
pub fn sign_mods(p: &Prep, i: usize, sign: u32, vals: &mut Lanes, lanes: usize) {
    let abs = p.mods.abs >> i & 1 != 0;
    let neg = p.mods.neg >> i & 1 != 0;
    if !abs && !neg {
        return;
    }
    let clear = if abs { !sign } else { u32::MAX };
    let flip = if neg { sign } else { 0 };
    for v in vals.iter_mut().take(lanes) {
        *v = (*v & clear) ^ flip;
    }
}

/// Write 32-bit lane values to `dst`: a VGPR under EXEC & `mask`, or (the
/// v_s_* and v_readlane forms) an SGPR from the first lane.
#[inline]
pub fn store(wave: &mut Wave, dst: Dst, vals: &Lanes, mask: u64) -> Result<(), IsaFault> {
    match dst {
        Dst::Vgpr(r) => {
            let m = wave.exec & mask;
            let lanes = wave.lanes;
            let full = wave.full_mask();
            let reg = wave.v_mut(r)?;
            if m == full {
                // Constant lengths: inlined moves, not a call to memcpy.
                if lanes == 32 {
                    reg[..32].copy_from_slice(&vals[..32]);
                } else {
                    *reg = *vals;
                }
            } else {
                for l in crate::lanemask::set_lanes(m & full) {
                    reg[l] = vals[l];
                }
            }
            Ok(())
        }
        other => wave.write_scalar(other, vals[0]),
    }
}

/// Write 16-bit lane values (low bits of `vals`) into one half of `dst`,
/// keeping the other half (gfx10+ 16-bit results preserve the rest).
pub fn store16(
    wave: &mut Wave,
    dst: Dst,
    hi: bool,
    vals: &Lanes,
    mask: u64,
) -> Result<(), IsaFault> {
    let Dst::Vgpr(r) = dst else {
        return wave.write_scalar(dst, vals[0] & 0xFFFF);
    };
    let m = wave.exec & mask;
    let lanes = wave.lanes;
    let reg = wave.v_mut(r)?;
    for l in 0..lanes {
        if m >> l & 1 != 0 {
            let h = vals[l] & 0xFFFF;
            reg[l] = if hi {
                (reg[l] & 0xFFFF) | (h << 16)
            } else {
                (reg[l] & 0xFFFF_0000) | h
            };
        }
    }
    Ok(())
}

/// Write 64-bit lane values into `dst`, `dst+1` under EXEC & `mask`.
pub fn store64(
    wave: &mut Wave,
    dst: Dst,
    vals: &[u64; MAX_LANES],
    mask: u64,
) -> Result<(), IsaFault> {
    let Dst::Vgpr(r) = dst else {
        return wave.write_scalar64(dst, vals[0]);
    };
    wave.v(r + 1)?;
    let m = wave.exec & mask;
    for l in 0..wave.lanes {
        if m >> l & 1 != 0 {
            wave.vgpr[r as usize][l] = vals[l] as u32;
            wave.vgpr[r as usize + 1][l] = (vals[l] >> 32) as u32;
        }
    }
    Ok(())
}
