//! Execution of the integer, 64-bit, carry, conversion and cross-lane
//! operations; floating-point ones are in `fp`, comparisons in `cmp`.

use super::super::fault::IsaFault;
use super::super::operand::Src;
use super::super::program::Inst;
use super::super::wave::{pack_bits, unpack_bits, Lanes, Wave, MAX_LANES};
use super::ops::{CarryOp, IOp, LaneOp, Op, WOp};
use super::{cmp, dot, fp, src, Enc, Prep};

/// Execute a non-VOPD instruction.
pub fn execute(wave: &mut Wave, inst: &Inst, p: &Prep) -> Result<(), IsaFault> {
    match p.op {
        Op::I(op) => int(wave, inst, p, op),
        Op::F(_) | Op::H(_) | Op::Pk(_) | Op::Cvt(_) => fp::execute(wave, inst, p),
        Op::D(op) => super::f64::execute(wave, inst, p, op),
        Op::I16(op) => super::int16::execute(wave, inst, p, op),
        Op::Mix(op) => super::mix::execute(wave, inst, p, op),
        Op::W(op) => wide(wave, inst, p, op),
        Op::Carry(op) => carry(wave, inst, p, op),
        Op::Lane(op) => lane(wave, inst, op),
        Op::Cmp(c) => cmp::execute(wave, inst, p, c),
        Op::Dot(op) => dot::execute(wave, inst, p, op),
        Op::Wmma(op) => super::wmma::execute(wave, inst, p, op),
        Op::PkI(op) => super::packed_int::execute(wave, inst, p, op),
        Op::Fp8(op) => super::fp8::execute(wave, inst, p, op),
        Op::Nop => Ok(()),
    }
}

/// Read sources `0..n` as raw 32-bit lanes (DPP on source 0).
pub fn read32(
    wave: &Wave,
    inst: &Inst,
    p: &Prep,
    n: usize,
    s: &mut [Lanes; 3],
    mask: &mut u64,
) -> Result<(), IsaFault> {
    for (i, out) in s.iter_mut().enumerate().take(n) {
        src::read(wave, p, inst.src[i], i, false, out, mask)?;
    }
    Ok(())
}

/// The lane mask an instruction reads implicitly: VCC in the 32-bit
/// encodings, the third source in VOP3.
pub fn mask_source(wave: &Wave, inst: &Inst, p: &Prep) -> Result<u64, IsaFault> {
    match p.enc {
        Enc::Vop3 => wave.read_mask(inst.src[2]),
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3p | Enc::Vopd => Ok(wave.vcc()),
    }
}

fn sources(op: IOp) -> usize {
    use IOp::*;
    match op {
        Mov | Not | Bfrev | Clz | Ctz | Cls => 1,
        Add3 | LshlAdd | AddLshl | LshlOr | AndOr | Or3 | Xor3 | Alignbit | Alignbyte | BfeU
        | BfeI | Bfi | MadU24 | MadI24 | Min3U | Max3U | Med3U | Min3I | Max3I | Med3I | Xad
        | Perm | MinmaxU | MinmaxI | MaxminU | MaxminI => 3,
        _ => 2,
    }
}

#[inline]
fn sext24(v: u32) -> i64 {
    (((v << 8) as i32) >> 8) as i64
}

#[inline]
fn med3<T: Ord + Copy>(a: T, b: T, c: T) -> T {
    a.max(b).min(a.min(b).max(c))
}

/// v_perm_b32: each result byte picks a byte of {S0, S1} (S1 the low
/// four) by the selector byte of S2, or a constant.
fn perm(s0: u32, s1: u32, sel: u32) -> u32 {
    let bytes = (u64::from(s0) << 32) | u64::from(s1);
    let mut out = 0u32;
    for i in 0..4 {
        let k = (sel >> (8 * i)) & 0xFF;
        let b = match k {
            0..=7 => (bytes >> (8 * k)) as u8,
            // Sign of bytes 1, 3, 5, 7 spread over the byte.
            8..=11 => {
                let src = 2 * (k - 8) + 1;
                if (bytes >> (8 * src + 7)) & 1 != 0 {
                    0xFF
                } else {
                    0
                }
            }
            12 => 0,
            _ => 0xFF,
        };
        out |= u32::from(b) << (8 * i);
    }
    out
}

fn int(wave: &mut Wave, inst: &Inst, p: &Prep, op: IOp) -> Result<(), IsaFault> {
    let mut wmask = u64::MAX;
    let n = sources(op);
    let n_read = if op == IOp::Cndmask { 2 } else { n };
    // Only the moves take float modifiers.
    let sign = if matches!(op, IOp::Mov | IOp::Cndmask) {
        0x8000_0000
    } else {
        0
    };
    let vcc = if op == IOp::Cndmask {
        mask_source(wave, inst, p)?
    } else {
        0
    };
    let w: &Wave = wave;
    let [b0, b1, b2] = &mut [None, None, None];
    let sa = src::view(w, p, inst.src[0], 0, sign, false, b0, &mut wmask)?;
    let sb = if n_read > 1 {
        src::view(w, p, inst.src[1], 1, sign, false, b1, &mut wmask)?
    } else {
        &src::ZERO
    };
    let sc = if n_read > 2 {
        src::view(w, p, inst.src[2], 2, sign, false, b2, &mut wmask)?
    } else {
        &src::ZERO
    };
    let span = src::span(w, inst.dst, wmask);
    let mut d = [0u32; MAX_LANES];
    // Equal-length slices, so the lane loop has no bounds checks.
    let lo = span.start;
    let (sa, sb, sc) = (&sa[span.clone()], &sb[span.clone()], &sc[span.clone()]);
    macro_rules! map {
        (|$a:ident, $b:ident, $c:ident, $l:ident| $e:expr) => {{
            let dd = &mut d[span.clone()];
            for i in 0..dd.len() {
                let $l = lo + i;
                let ($a, $b, $c) = (sa[i], sb[i], sc[i]);
                dd[i] = $e;
            }
        }};
    }
    use IOp::*;
    match op {
        Mov => d[span.clone()].copy_from_slice(sa),
        Not => map!(|a, _b, _c, _l| !a),
        Bfrev => map!(|a, _b, _c, _l| a.reverse_bits()),
        Clz => map!(|a, _b, _c, _l| if a == 0 { u32::MAX } else { a.leading_zeros() }),
        Ctz => map!(|a, _b, _c, _l| if a == 0 { u32::MAX } else { a.trailing_zeros() }),
        Cls => map!(|a, _b, _c, _l| if a == 0 || a == u32::MAX {
            u32::MAX
        } else {
            (a ^ ((a as i32 >> 31) as u32)).leading_zeros()
        }),
        // Clamp saturates the unsigned result (the ISA's integer clamp).
        Add if p.mods.clamp => map!(|a, b, _c, _l| a.saturating_add(b)),
        Sub if p.mods.clamp => map!(|a, b, _c, _l| a.saturating_sub(b)),
        Subrev if p.mods.clamp => map!(|a, b, _c, _l| b.saturating_sub(a)),
        AddI if p.mods.clamp => map!(|a, b, _c, _l| (a as i32).saturating_add(b as i32) as u32),
        SubI if p.mods.clamp => map!(|a, b, _c, _l| (a as i32).saturating_sub(b as i32) as u32),
        Add | AddI => map!(|a, b, _c, _l| a.wrapping_add(b)),
        Sub | SubI => map!(|a, b, _c, _l| a.wrapping_sub(b)),
        Subrev => map!(|a, b, _c, _l| b.wrapping_sub(a)),
        And => map!(|a, b, _c, _l| a & b),
        Or => map!(|a, b, _c, _l| a | b),
        Xor => map!(|a, b, _c, _l| a ^ b),
        Xnor => map!(|a, b, _c, _l| !(a ^ b)),
        Lshlrev => map!(|a, b, _c, _l| b << (a & 31)),
        Lshrrev => map!(|a, b, _c, _l| b >> (a & 31)),
        Ashrrev => map!(|a, b, _c, _l| ((b as i32) >> (a & 31)) as u32),
        MinU => map!(|a, b, _c, _l| a.min(b)),
        MaxU => map!(|a, b, _c, _l| a.max(b)),
        MinI => map!(|a, b, _c, _l| (a as i32).min(b as i32) as u32),
        MaxI => map!(|a, b, _c, _l| (a as i32).max(b as i32) as u32),
        MulLo => map!(|a, b, _c, _l| a.wrapping_mul(b)),
        MulHiU => map!(|a, b, _c, _l| ((u64::from(a) * u64::from(b)) >> 32) as u32),
        MulHiI => map!(|a, b, _c, _l| ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32),
        MulU24 => map!(|a, b, _c, _l| (a & 0xFF_FFFF).wrapping_mul(b & 0xFF_FFFF)),
        MulI24 => map!(|a, b, _c, _l| (sext24(a) * sext24(b)) as u32),
        MulHiU24 => map!(
            |a, b, _c, _l| ((u64::from(a & 0xFF_FFFF) * u64::from(b & 0xFF_FFFF)) >> 32) as u32
        ),
        MulHiI24 => map!(|a, b, _c, _l| ((sext24(a) * sext24(b)) >> 32) as u32),
        Bcnt => map!(|a, b, _c, _l| a.count_ones().wrapping_add(b)),
        MbcntLo => map!(|a, b, _c, l| {
            let below = if l >= 32 { u32::MAX } else { (1u32 << l) - 1 };
            (a & below).count_ones().wrapping_add(b)
        }),
        MbcntHi => map!(|a, b, _c, l| {
            let below = if l <= 32 { 0 } else { (1u32 << (l - 32)) - 1 };
            (a & below).count_ones().wrapping_add(b)
        }),
        Bfm => map!(|a, b, _c, _l| (((1u64 << (a & 31)) - 1) as u32) << (b & 31)),
        Cndmask => map!(|a, b, _c, l| if vcc >> l & 1 != 0 { b } else { a }),
        Add3 => map!(|a, b, c, _l| a.wrapping_add(b).wrapping_add(c)),
        LshlAdd => map!(|a, b, c, _l| (a << (b & 31)).wrapping_add(c)),
        AddLshl => map!(|a, b, c, _l| a.wrapping_add(b) << (c & 31)),
        LshlOr => map!(|a, b, c, _l| (a << (b & 31)) | c),
        AndOr => map!(|a, b, c, _l| (a & b) | c),
        Or3 => map!(|a, b, c, _l| a | b | c),
        Xor3 => map!(|a, b, c, _l| a ^ b ^ c),
        Alignbit => map!(|a, b, c, _l| (((u64::from(a) << 32) | u64::from(b)) >> (c & 31)) as u32),
        Alignbyte => {
            map!(|a, b, c, _l| (((u64::from(a) << 32) | u64::from(b)) >> (8 * (c & 3))) as u32)
        }
        BfeU => map!(|a, b, c, _l| {
            let w = c & 31;
            if w == 0 {
                0
            } else {
                (a >> (b & 31)) & ((1u32 << w) - 1)
            }
        }),
        BfeI => map!(|a, b, c, _l| {
            let w = c & 31;
            if w == 0 {
                0
            } else {
                let f = (a >> (b & 31)) & ((1u32 << w) - 1);
                (((f << (32 - w)) as i32) >> (32 - w)) as u32
            }
        }),
        Bfi => map!(|a, b, c, _l| (a & b) | (!a & c)),
        MadU24 => map!(|a, b, c, _l| (a & 0xFF_FFFF).wrapping_mul(b & 0xFF_FFFF).wrapping_add(c)),
        MadI24 => map!(|a, b, c, _l| ((sext24(a) * sext24(b)) as u32).wrapping_add(c)),
        Min3U => map!(|a, b, c, _l| a.min(b).min(c)),
        Max3U => map!(|a, b, c, _l| a.max(b).max(c)),
        Med3U => map!(|a, b, c, _l| med3(a, b, c)),
        Min3I => map!(|a, b, c, _l| (a as i32).min(b as i32).min(c as i32) as u32),
        Max3I => map!(|a, b, c, _l| (a as i32).max(b as i32).max(c as i32) as u32),
        Med3I => map!(|a, b, c, _l| med3(a as i32, b as i32, c as i32) as u32),
        Xad => map!(|a, b, c, _l| (a ^ b).wrapping_add(c)),
        Perm => map!(|a, b, c, _l| perm(a, b, c)),
        MinmaxU => map!(|a, b, c, _l| a.max(b).min(c)),
        MaxminU => map!(|a, b, c, _l| a.min(b).max(c)),
        MinmaxI => map!(|a, b, c, _l| (a as i32).max(b as i32).min(c as i32) as u32),
        MaxminI => map!(|a, b, c, _l| (a as i32).min(b as i32).max(c as i32) as u32),
    }
    src::store(wave, inst.dst, &d, wmask)
}

fn wide(wave: &mut Wave, inst: &Inst, p: &Prep, op: WOp) -> Result<(), IsaFault> {
    let lanes = wave.lanes;
    let mut d = [0u64; MAX_LANES];
    match op {
        WOp::Lshlrev64 | WOp::Lshrrev64 | WOp::Ashrrev64 => {
            let mut sh = [0u32; MAX_LANES];
            wave.read_lanes(inst.src[0], &mut sh)?;
            let mut v = [0u64; MAX_LANES];
            wave.read_lanes64(inst.src[1], op == WOp::Ashrrev64, &mut v)?;
            for l in 0..lanes {
                let k = sh[l] & 63;
                d[l] = match op {
                    WOp::Lshlrev64 => v[l] << k,
                    WOp::Lshrrev64 => v[l] >> k,
                    _ => ((v[l] as i64) >> k) as u64,
                };
            }
            src::store64(wave, inst.dst, &d, u64::MAX)
        }
        WOp::MadU64U32 | WOp::MadI64I32 => {
            let signed = op == WOp::MadI64I32;
            let mut a = [0u32; MAX_LANES];
            let mut b = [0u32; MAX_LANES];
            let mut c = [0u64; MAX_LANES];
            wave.read_lanes(inst.src[0], &mut a)?;
            wave.read_lanes(inst.src[1], &mut b)?;
            wave.read_lanes64(inst.src[2], signed, &mut c)?;
            let mut flag = 0u64;
            for l in 0..lanes {
                let over = if signed {
                    let prod = i128::from(a[l] as i32) * i128::from(b[l] as i32);
                    let sum = prod + i128::from(c[l] as i64);
                    d[l] = sum as u64;
                    sum != i128::from(sum as i64)
                } else {
                    let sum = u128::from(a[l]) * u128::from(b[l]) + u128::from(c[l]);
                    d[l] = sum as u64;
                    sum > u128::from(u64::MAX)
                };
                if over {
                    flag |= 1 << l;
                }
            }
            let _ = p;
            let exec = wave.exec;
            src::store64(wave, inst.dst, &d, u64::MAX)?;
            wave.write_mask(inst.sdst, flag & exec)
        }
    }
}

fn carry(wave: &mut Wave, inst: &Inst, p: &Prep, op: CarryOp) -> Result<(), IsaFault> {
    let mut wmask = u64::MAX;
    let cin = match op {
        CarryOp::AddCoCi | CarryOp::SubCoCi | CarryOp::SubrevCoCi => mask_source(wave, inst, p)?,
        CarryOp::AddCo | CarryOp::SubCo | CarryOp::SubrevCo => 0,
    };
    // Sources borrowed from the register file where they can be (no copy).
    let w: &Wave = wave;
    let [b0, b1] = &mut [None, None];
    let s = [
        src::view(w, p, inst.src[0], 0, 0, false, b0, &mut wmask)?,
        src::view(w, p, inst.src[1], 1, 0, false, b1, &mut wmask)?,
    ];
    // Only the span of the written lanes: both results are masked by
    // EXEC, so lanes outside it never show (the sampler runs one lane).
    let span = src::span(w, inst.dst, wmask);
    let lo = span.start;
    let mut d = [0u32; MAX_LANES];
    // Carries in and out as one byte per lane: 32-bit compares and byte
    // stores vectorise, a per-lane variable shift of a 64-bit mask does not.
    let cins = if cin == 0 {
        [0; MAX_LANES]
    } else {
        unpack_bits(cin >> lo, span.len())
    };
    let mut couts = [0u8; MAX_LANES];
    // Equal-length slices, so the lane loop has no bounds checks.
    let n = span.len();
    let (sa, sb, cs) = (&s[0][span.clone()], &s[1][span.clone()], &cins[..n]);
    let (dd, co) = (&mut d[span], &mut couts[..n]);
    macro_rules! lanes {
        (|$a:ident, $b:ident, $c:ident| $e:expr) => {
            for i in 0..n {
                let ($a, $b, $c) = (sa[i], sb[i], u32::from(cs[i]));
                let (v, out): (u32, bool) = $e;
                dd[i] = v;
                co[i] = u8::from(out);
            }
        };
    }
    // With a carry of at most 1 only one of the two steps can wrap.
    match op {
        CarryOp::AddCo | CarryOp::AddCoCi => lanes!(|a, b, c| {
            let t = a.wrapping_add(b);
            let r = t.wrapping_add(c);
            (r, (t < a) | (r < t))
        }),
        CarryOp::SubCo | CarryOp::SubCoCi => lanes!(|a, b, c| {
            let t = a.wrapping_sub(b);
            (t.wrapping_sub(c), (b > a) | (c > t))
        }),
        CarryOp::SubrevCo | CarryOp::SubrevCoCi => lanes!(|a, b, c| {
            let t = b.wrapping_sub(a);
            (t.wrapping_sub(c), (a > b) | (c > t))
        }),
    }
    // Bytes past the span are zero: no lane beyond it is set.
    let cout = pack_bits(&couts, n) << lo;
    let written = wave.exec & wmask;
    src::store(wave, inst.dst, &d, wmask)?;
    match p.enc {
        Enc::Vop3 => wave.write_mask(inst.sdst, cout & written),
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3p | Enc::Vopd => {
            wave.set_vcc(cout & written);
            Ok(())
        }
    }
}

fn lane(wave: &mut Wave, inst: &Inst, op: LaneOp) -> Result<(), IsaFault> {
    let n = wave.lanes;
    match op {
        LaneOp::Readlane => {
            let Src::Vgpr(r) = inst.src[0] else {
                return Err(not_vgpr(inst.src[0]));
            };
            let l = wave.scalar(inst.src[1])? as usize & (n - 1);
            let v = wave.v(r)?[l];
            wave.write_scalar(inst.dst, v)
        }
        LaneOp::Readfirstlane => {
            let l = if wave.exec == 0 {
                0
            } else {
                wave.exec.trailing_zeros() as usize
            };
            let v = wave.lane(inst.src[0], l)?;
            wave.write_scalar(inst.dst, v)
        }
        LaneOp::Writelane => {
            let super::super::operand::Dst::Vgpr(r) = inst.dst else {
                return Err(not_vgpr(inst.src[0]));
            };
            let v = wave.scalar(inst.src[0])?;
            let l = wave.scalar(inst.src[1])? as usize & (n - 1);
            wave.v_mut(r)?[l] = v;
            Ok(())
        }
        LaneOp::Swap => {
            let (Src::Vgpr(a), super::super::operand::Dst::Vgpr(d)) = (inst.src[0], inst.dst)
            else {
                return Err(not_vgpr(inst.src[0]));
            };
            let (va, vd) = (*wave.v(a)?, *wave.v(d)?);
            let exec = wave.exec;
            let active = move |l: usize| exec >> l & 1 != 0;
            let out_d = wave.v_mut(d)?;
            for l in (0..n).filter(|&l| active(l)) {
                out_d[l] = va[l];
            }
            let out_a = wave.v_mut(a)?;
            for l in (0..n).filter(|&l| active(l)) {
                out_a[l] = vd[l];
            }
            Ok(())
        }
        LaneOp::Movrels => movrel(wave, inst, true, false),
        LaneOp::Movreld => movrel(wave, inst, false, true),
        LaneOp::Movrelsd => movrel(wave, inst, true, true),
        LaneOp::Permlane16 => permlane(wave, inst, false),
        LaneOp::Permlanex16 => permlane(wave, inst, true),
    }
}

/// v_permlane16_b32 / v_permlanex16_b32 (VOP3 only): lane `16r + i`
/// reads the lane of row `r` (x16: row `r ^ 1`, the other row of its
/// 32-lane half) that nibble `i` of the 64-bit selector {src2, src1}
/// names. OP_SEL[0] is FI and OP_SEL[1] BOUND_CTRL, as for DPP: an
/// inactive source lane is read only with FI; otherwise it gives 0 with
/// BOUND_CTRL and leaves the destination lane unwritten without.
fn permlane(wave: &mut Wave, inst: &Inst, cross: bool) -> Result<(), IsaFault> {
    let (Src::Vgpr(a), super::super::operand::Dst::Vgpr(d)) = (inst.src[0], inst.dst) else {
        return Err(not_vgpr(inst.src[0]));
    };
    let sel = u64::from(wave.scalar(inst.src[1])?) | u64::from(wave.scalar(inst.src[2])?) << 32;
    let (fi, bound_zero) = (inst.words[0] >> 11 & 1 != 0, inst.words[0] >> 12 & 1 != 0);
    let src = *wave.v(a)?;
    let (exec, n) = (wave.exec, wave.lanes);
    let out = wave.v_mut(d)?;
    for l in (0..n).filter(|&l| exec >> l & 1 != 0) {
        let row = if cross { (l / 16) ^ 1 } else { l / 16 };
        let from = row * 16 + (sel >> (4 * (l % 16)) & 0xF) as usize;
        if fi || exec >> from & 1 != 0 {
            out[l] = src[from];
        } else if bound_zero {
            out[l] = 0;
        }
    }
    Ok(())
}

/// The M0-relative moves: M0 (unsigned) is added to the VGPR number of the
/// source (movrels, movrelsd) and/or of the destination (movreld,
/// movrelsd); an index past the VGPRs RSRC1 allocated faults (the
/// interpreter's VGPR check) rather than reaching another wave's registers.
fn movrel(wave: &mut Wave, inst: &Inst, from_rel: bool, to_rel: bool) -> Result<(), IsaFault> {
    let super::super::operand::Dst::Vgpr(d) = inst.dst else {
        return Err(not_vgpr(inst.src[0]));
    };
    let index = |base: u16, m0: u32| -> Result<u16, IsaFault> {
        u16::try_from(u32::from(base) + m0).map_err(|_| IsaFault::Operand {
            mnemonic: String::new(),
            why: format!("v{base} + M0 ({m0}) is past every VGPR"),
        })
    };
    let m0 = wave.m0;
    let value: [u32; MAX_LANES] = if from_rel {
        let Src::Vgpr(a) = inst.src[0] else {
            return Err(not_vgpr(inst.src[0]));
        };
        *wave.v(index(a, m0)?)?
    } else {
        let mut v = [0u32; MAX_LANES];
        for (l, x) in v.iter_mut().enumerate().take(wave.lanes) {
            *x = wave.lane(inst.src[0], l)?;
        }
        v
    };
    let target = if to_rel { index(d, m0)? } else { d };
    let (exec, n) = (wave.exec, wave.lanes);
    let out = wave.v_mut(target)?;
    for l in (0..n).filter(|&l| exec >> l & 1 != 0) {
        out[l] = value[l];
    }
    Ok(())
}

#[cold]
fn not_vgpr(src: Src) -> IsaFault {
    IsaFault::Operand {
        mnemonic: String::new(),
        why: format!("expected a VGPR operand, found {src:?}"),
    }
}
