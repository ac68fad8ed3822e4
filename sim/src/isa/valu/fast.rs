//! The most frequent vector ALU forms, resolved at program build to one
//! function each: plain f32 (NEG allowed) and 32-bit integer operations
//! (the three-source VOP3 ones too) and the carry adds, with no DPP, SDWA
//! or other modifiers, a VGPR destination and sources
//! that are VGPRs, SGPRs or constants. Each runs over exactly the wave's
//! lanes (a constant count, so the lane loops vectorise) without the
//! general path's dispatch on operation, encoding and operand kinds; the
//! f32 and integer forms under an EXEC of one or two lanes (a serial loop
//! in a one-lane wave) compute just those lanes.
//! Same results as the general path (`exec`, `fp`): MODE other than
//! round-to-nearest-even with every f32 denormal kept goes there.

use super::super::fault::{Flow, IsaFault};
use super::super::operand::{Dst, Src};
use super::super::program::{Fast, Inst, Kind};
use super::super::wave::{pack_bits, unpack_bits, Lanes, Wave, MAX_LANES};
use super::cmp::{float_cond, int_cond};
use super::ops::{CarryOp, CmpTy, FOp, IOp, Op};
use super::{Dpp, Enc, Mods};

// Operation codes of the const-generic executors.
const ADD: u8 = 0;
const SUB: u8 = 1;
const SUBREV: u8 = 2;
const MUL: u8 = 3;
const MIN: u8 = 4;
const MAX: u8 = 5;
const FMAC: u8 = 6;
const FMA: u8 = 7;
const AND: u8 = 8;
const OR: u8 = 9;
const XOR: u8 = 10;
const LSHL: u8 = 11;
const LSHR: u8 = 12;
const ASHR: u8 = 13;
const MINI: u8 = 14;
const MAXI: u8 = 15;
const MOV: u8 = 16;
const CNDMASK: u8 = 17;
const MULU24: u8 = 18;
// Three-source integer forms (VOP3), from 32 on: they read a third source.
const ADD3: u8 = 32;
const LSHL_ADD: u8 = 33;
const ADD_LSHL: u8 = 34;
const LSHL_OR: u8 = 35;
const AND_OR: u8 = 36;
const OR3: u8 = 37;
const XOR3: u8 = 38;
// Compare operand types.
const CMP_U32: u8 = 0;
const CMP_I32: u8 = 1;
const CMP_F32: u8 = 2;

/// The resolved form of `inst` (decoded for a wave of 64 lanes when
/// `wave64`), if it is one of those this module runs.
pub(crate) fn choose(wave64: bool, inst: &Inst) -> Option<Fast> {
    let Kind::Valu(p) = &inst.kind else {
        return None;
    };
    // Float forms also take NEG (a sign flip of a source, as the general
    // path applies it); nothing else modifies a source or the result.
    let neg_only = p.mods
        == Mods {
            neg: p.mods.neg,
            ..Mods::default()
        };
    let float = matches!(p.op, Op::F(_));
    if p.dpp != Dpp::None
        || p.vopd.is_some()
        || p.sdwa.is_some()
        || !(p.mods == Mods::default() || float && neg_only)
    {
        return None;
    }
    let plain = |s: Src| {
        matches!(
            s,
            Src::Vgpr(_) | Src::Sgpr(_) | Src::Int(_) | Src::Float(_) | Src::Literal(_)
        )
    };
    let srcs = |n: usize| inst.src[..n].iter().all(|&s| plain(s));
    macro_rules! pick {
        ($f:ident, $op:expr) => {
            Some(if wave64 {
                $f::<64, { $op }> as Fast
            } else {
                $f::<32, { $op }> as Fast
            })
        };
    }
    // The 32-bit compares (not class) into VCC, an SGPR mask or EXEC.
    if let Op::Cmp(c) = p.op {
        // (Modifiers were refused above: a compare is not a float form.)
        if c.class || !matches!(p.enc, Enc::Vopc | Enc::Vop3) || !srcs(2) {
            return None;
        }
        return match c.ty {
            CmpTy::U32 => pick!(cmp_op, CMP_U32),
            CmpTy::I32 => pick!(cmp_op, CMP_I32),
            CmpTy::F32 => pick!(cmp_op, CMP_F32),
            _ => None,
        };
    }
    if !matches!(p.enc, Enc::Vop1 | Enc::Vop2 | Enc::Vop3) || !matches!(inst.dst, Dst::Vgpr(_)) {
        return None;
    }
    match p.op {
        Op::F(op) => {
            let (code, n) = match op {
                FOp::Add => (ADD, 2),
                FOp::Sub => (SUB, 2),
                FOp::Subrev => (SUBREV, 2),
                FOp::Mul => (MUL, 2),
                FOp::Min => (MIN, 2),
                FOp::Max => (MAX, 2),
                FOp::Fmac => (FMAC, 2),
                FOp::Fma if p.enc == Enc::Vop3 => (FMA, 3),
                _ => return None,
            };
            // NEG of a source the form does not read (fmac's third).
            if !srcs(n) || p.mods.neg >> n != 0 {
                return None;
            }
            match code {
                ADD => pick!(f32_op, ADD),
                SUB => pick!(f32_op, SUB),
                SUBREV => pick!(f32_op, SUBREV),
                MUL => pick!(f32_op, MUL),
                MIN => pick!(f32_op, MIN),
                MAX => pick!(f32_op, MAX),
                FMAC => pick!(f32_op, FMAC),
                _ => pick!(f32_op, FMA),
            }
        }
        Op::I(op) => {
            let (code, n) = match op {
                IOp::Mov => (MOV, 1),
                IOp::Add | IOp::AddI => (ADD, 2),
                IOp::Sub | IOp::SubI => (SUB, 2),
                IOp::Subrev => (SUBREV, 2),
                IOp::MulLo => (MUL, 2),
                IOp::MulU24 => (MULU24, 2),
                IOp::MinU => (MIN, 2),
                IOp::MaxU => (MAX, 2),
                IOp::MinI => (MINI, 2),
                IOp::MaxI => (MAXI, 2),
                IOp::And => (AND, 2),
                IOp::Or => (OR, 2),
                IOp::Xor => (XOR, 2),
                IOp::Lshlrev => (LSHL, 2),
                IOp::Lshrrev => (LSHR, 2),
                IOp::Ashrrev => (ASHR, 2),
                // The 32-bit encoding's select reads VCC.
                IOp::Cndmask if p.enc == Enc::Vop2 => (CNDMASK, 2),
                IOp::Add3 => (ADD3, 3),
                IOp::LshlAdd => (LSHL_ADD, 3),
                IOp::AddLshl => (ADD_LSHL, 3),
                IOp::LshlOr => (LSHL_OR, 3),
                IOp::AndOr => (AND_OR, 3),
                IOp::Or3 => (OR3, 3),
                IOp::Xor3 => (XOR3, 3),
                _ => return None,
            };
            if !srcs(n) {
                return None;
            }
            match code {
                MOV => pick!(int_op, MOV),
                ADD => pick!(int_op, ADD),
                SUB => pick!(int_op, SUB),
                SUBREV => pick!(int_op, SUBREV),
                MUL => pick!(int_op, MUL),
                MULU24 => pick!(int_op, MULU24),
                MIN => pick!(int_op, MIN),
                MAX => pick!(int_op, MAX),
                MINI => pick!(int_op, MINI),
                MAXI => pick!(int_op, MAXI),
                AND => pick!(int_op, AND),
                OR => pick!(int_op, OR),
                XOR => pick!(int_op, XOR),
                LSHL => pick!(int_op, LSHL),
                LSHR => pick!(int_op, LSHR),
                ASHR => pick!(int_op, ASHR),
                ADD3 => pick!(int_op, ADD3),
                LSHL_ADD => pick!(int_op, LSHL_ADD),
                ADD_LSHL => pick!(int_op, ADD_LSHL),
                LSHL_OR => pick!(int_op, LSHL_OR),
                AND_OR => pick!(int_op, AND_OR),
                OR3 => pick!(int_op, OR3),
                XOR3 => pick!(int_op, XOR3),
                _ => pick!(int_op, CNDMASK),
            }
        }
        Op::Carry(op) => {
            // The carry in (VOP3: the third source) must be a plain mask.
            let with_in = matches!(
                op,
                CarryOp::AddCoCi | CarryOp::SubCoCi | CarryOp::SubrevCoCi
            );
            let n = if with_in && p.enc == Enc::Vop3 { 3 } else { 2 };
            if !srcs(n) {
                return None;
            }
            match op {
                CarryOp::AddCo => pick!(carry_op, ADD),
                CarryOp::SubCo => pick!(carry_op, SUB),
                CarryOp::SubrevCo => pick!(carry_op, SUBREV),
                CarryOp::AddCoCi => pick!(carry_op, ADD | 0x80),
                CarryOp::SubCoCi => pick!(carry_op, SUB | 0x80),
                CarryOp::SubrevCoCi => pick!(carry_op, SUBREV | 0x80),
            }
        }
        _ => None,
    }
}

/// Source `src`'s first `N` lanes: borrowed from the register file for a
/// VGPR, else the uniform value spread over `buf` (left unset for a VGPR:
/// no per-instruction clearing of a buffer nothing reads).
#[inline(always)]
fn lanes<'a, const N: usize>(
    wave: &'a Wave,
    src: Src,
    buf: &'a mut Option<[u32; N]>,
) -> Result<&'a [u32; N], IsaFault> {
    match src {
        Src::Vgpr(r) => Ok(first::<N>(wave.v(r)?)),
        _ => Ok(buf.insert([wave.scalar(src)?; N])),
    }
}

/// The first `N` lanes of a register (`N` is 32 or 64).
#[inline(always)]
fn first<const N: usize>(v: &Lanes) -> &[u32; N] {
    const { assert!(N <= MAX_LANES) };
    match v.first_chunk::<N>() {
        Some(c) => c,
        None => unreachable!("N <= MAX_LANES"),
    }
}

/// Write `d` into VGPR `r` in the lanes EXEC enables.
#[inline(always)]
fn store<const N: usize>(wave: &mut Wave, r: u16, d: &[u32; N]) -> Result<(), IsaFault> {
    let exec = wave.exec;
    let full = super::super::wave::full_mask(N);
    let out = wave.v_mut(r)?;
    if exec == full {
        out[..N].copy_from_slice(d);
    } else {
        for l in crate::lanemask::set_lanes(exec & full) {
            out[l] = d[l];
        }
    }
    Ok(())
}

/// Lanes `exec` enables in a wave of `N`, when they are so few (a wave
/// narrowed to one lane, as a serial loop runs) that computing them one by
/// one beats computing all `N`; `None` otherwise, and for no lane at all
/// (the full form then faults on a missing register just the same).
#[inline(always)]
fn sparse<const N: usize>(exec: u64) -> Option<u64> {
    let live = exec & super::super::wave::full_mask(N);
    (live != 0 && live.count_ones() <= SPARSE).then_some(live)
}

/// At most this many lanes run one by one.
const SPARSE: u32 = 2;

/// Source `src` in lane `l`.
#[inline(always)]
fn lane(wave: &Wave, src: Src, l: usize) -> Result<u32, IsaFault> {
    match src {
        Src::Vgpr(r) => Ok(wave.v(r)?[l]),
        _ => wave.scalar(src),
    }
}

/// The general path, for what a form does not model (another MODE, a
/// wave of another size).
fn general(wave: &mut Wave, inst: &Inst) -> Result<Flow, Box<IsaFault>> {
    super::general(wave, inst)?;
    Ok(Flow::Next)
}

fn f32_op<const N: usize, const OP: u8>(
    wave: &mut Wave,
    inst: &Inst,
) -> Result<Flow, Box<IsaFault>> {
    // MODE.FP_ROUND (f32) nearest even and FP_DENORM (f32) keeping input
    // and output denormals: else the general path, which models the rest.
    let (Dst::Vgpr(r), true) = (inst.dst, wave.mode & 0x33 == 0x30 && wave.lanes == N) else {
        return general(wave, inst);
    };
    let neg = match &inst.kind {
        Kind::Valu(p) => p.mods.neg,
        _ => 0,
    };
    let flip = |i: u8| if neg >> i & 1 != 0 { 0x8000_0000u32 } else { 0 };
    let (fa, fb, fc) = (flip(0), flip(1), flip(2));
    if let Some(live) = sparse::<N>(wave.exec) {
        // Each source read in the first lane before anything is written,
        // in the order the full form reads them: the same faults.
        for l in crate::lanemask::set_lanes(live) {
            let x = lane(wave, inst.src[0], l)?;
            let y = lane(wave, inst.src[1], l)?;
            let z = match OP {
                FMAC => lane(wave, Src::Vgpr(r), l)?,
                FMA => lane(wave, inst.src[2], l)?,
                _ => 0,
            };
            wave.v_mut(r)?[l] = f32_lane::<OP>(x ^ fa, y ^ fb, z ^ fc);
        }
        return Ok(Flow::Next);
    }
    let (mut ba, mut bb, mut bc) = (None, None, None);
    let a = lanes::<N>(wave, inst.src[0], &mut ba)?;
    let b = lanes::<N>(wave, inst.src[1], &mut bb)?;
    let c = match OP {
        // fmac accumulates into its destination.
        FMAC => lanes::<N>(wave, Src::Vgpr(r), &mut bc)?,
        FMA => lanes::<N>(wave, inst.src[2], &mut bc)?,
        _ => bc.insert([0; N]),
    };
    let mut d = [0u32; N];
    for i in 0..N {
        d[i] = f32_lane::<OP>(a[i] ^ fa, b[i] ^ fb, c[i] ^ fc);
    }
    store::<N>(wave, r, &d)?;
    Ok(Flow::Next)
}

/// One lane of `f32_op` (sources already negated as NEG says).
#[inline(always)]
fn f32_lane<const OP: u8>(a: u32, b: u32, c: u32) -> u32 {
    let (x, y, z) = (f32::from_bits(a), f32::from_bits(b), f32::from_bits(c));
    match OP {
        ADD => x + y,
        SUB => x - y,
        SUBREV => y - x,
        MUL => x * y,
        MIN => x.min(y),
        MAX => x.max(y),
        _ => x.mul_add(y, z),
    }
    .to_bits()
}

fn int_op<const N: usize, const OP: u8>(
    wave: &mut Wave,
    inst: &Inst,
) -> Result<Flow, Box<IsaFault>> {
    let (Dst::Vgpr(r), true) = (inst.dst, wave.lanes == N) else {
        return general(wave, inst);
    };
    let vcc = if OP == CNDMASK { wave.vcc() } else { 0 };
    if let Some(live) = sparse::<N>(wave.exec) {
        // Sources read in the full form's order before any write.
        for l in crate::lanemask::set_lanes(live) {
            let x = lane(wave, inst.src[0], l)?;
            let y = if OP == MOV {
                0
            } else {
                lane(wave, inst.src[1], l)?
            };
            let z = if OP >= ADD3 {
                lane(wave, inst.src[2], l)?
            } else {
                0
            };
            wave.v_mut(r)?[l] = int_lane::<OP>(x, y, z, vcc >> l & 1 != 0);
        }
        return Ok(Flow::Next);
    }
    let (mut ba, mut bb) = (None, None);
    let a = lanes::<N>(wave, inst.src[0], &mut ba)?;
    let b = if OP == MOV {
        bb.insert([0; N])
    } else {
        lanes::<N>(wave, inst.src[1], &mut bb)?
    };
    let mut bc = None;
    let c = if OP >= ADD3 {
        lanes::<N>(wave, inst.src[2], &mut bc)?
    } else {
        bc.insert([0; N])
    };
    let mut d = [0u32; N];
    for i in 0..N {
        d[i] = int_lane::<OP>(a[i], b[i], c[i], vcc >> i & 1 != 0);
    }
    store::<N>(wave, r, &d)?;
    Ok(Flow::Next)
}

/// One lane of `int_op`; `sel` the lane's VCC bit (v_cndmask).
#[inline(always)]
fn int_lane<const OP: u8>(x: u32, y: u32, z: u32, sel: bool) -> u32 {
    match OP {
        MOV => x,
        ADD => x.wrapping_add(y),
        SUB => x.wrapping_sub(y),
        SUBREV => y.wrapping_sub(x),
        MUL => x.wrapping_mul(y),
        MULU24 => (x & 0xFF_FFFF).wrapping_mul(y & 0xFF_FFFF),
        MIN => x.min(y),
        MAX => x.max(y),
        MINI => (x as i32).min(y as i32) as u32,
        MAXI => (x as i32).max(y as i32) as u32,
        AND => x & y,
        OR => x | y,
        XOR => x ^ y,
        LSHL => y << (x & 31),
        LSHR => y >> (x & 31),
        ASHR => ((y as i32) >> (x & 31)) as u32,
        ADD3 => x.wrapping_add(y).wrapping_add(z),
        LSHL_ADD => (x << (y & 31)).wrapping_add(z),
        ADD_LSHL => x.wrapping_add(y) << (z & 31),
        LSHL_OR => (x << (y & 31)) | z,
        AND_OR => (x & y) | z,
        OR3 => x | y | z,
        XOR3 => x ^ y ^ z,
        _ => {
            if sel {
                y
            } else {
                x
            }
        }
    }
}

/// The carry adds and subtracts; `OP & 0x80` reads a carry in.
fn carry_op<const N: usize, const OP: u8>(
    wave: &mut Wave,
    inst: &Inst,
) -> Result<Flow, Box<IsaFault>> {
    let (Kind::Valu(p), Dst::Vgpr(r), true) = (&inst.kind, inst.dst, wave.lanes == N) else {
        return general(wave, inst);
    };
    let vop3 = p.enc == Enc::Vop3;
    let cin = match (OP & 0x80 != 0, vop3) {
        (false, _) => 0,
        (true, true) => wave.read_mask(inst.src[2])?,
        (true, false) => wave.vcc(),
    };
    let (mut ba, mut bb) = (None, None);
    let a = lanes::<N>(wave, inst.src[0], &mut ba)?;
    let b = lanes::<N>(wave, inst.src[1], &mut bb)?;
    // Carries as one byte per lane (see `carry` in `exec`).
    let cins = if OP & 0x80 != 0 {
        unpack_bits(cin, N)
    } else {
        [0; MAX_LANES]
    };
    let mut couts = [0u8; MAX_LANES];
    let mut d = [0u32; N];
    for i in 0..N {
        let c = u32::from(cins[i]);
        let (x, y) = match OP & 0x7F {
            SUBREV => (b[i], a[i]),
            _ => (a[i], b[i]),
        };
        // The carry (borrow) out of bit 31, from the operands' and the
        // result's top bits: a full adder's (subtractor's) last stage.
        let (v, out) = match OP & 0x7F {
            ADD => {
                let s = x.wrapping_add(y).wrapping_add(c);
                (s, (x & y) | ((x | y) & !s))
            }
            _ => {
                let s = x.wrapping_sub(y).wrapping_sub(c);
                (s, (!x & y) | (!(x ^ y) & s))
            }
        };
        d[i] = v;
        couts[i] = (out >> 31) as u8;
    }
    let cout = pack_bits(&couts, N) & wave.exec;
    store::<N>(wave, r, &d)?;
    if vop3 {
        wave.write_mask(inst.sdst, cout)?;
    } else {
        wave.set_vcc(cout);
    }
    Ok(Flow::Next)
}

/// The 32-bit compares: `TY` the operand type, the condition from the
/// prepared op; lanes EXEC disables compare as false.
fn cmp_op<const N: usize, const TY: u8>(
    wave: &mut Wave,
    inst: &Inst,
) -> Result<Flow, Box<IsaFault>> {
    // An f32 compare flushes denormal inputs under MODE.FP_DENORM: the
    // general path models that.
    let keeps = TY != CMP_F32 || wave.mode & 0x30 == 0x30;
    let (Kind::Valu(p), true) = (&inst.kind, keeps && wave.lanes == N) else {
        return general(wave, inst);
    };
    let Op::Cmp(c) = p.op else {
        return general(wave, inst);
    };
    let (mut ba, mut bb) = (None, None);
    let a = lanes::<N>(wave, inst.src[0], &mut ba)?;
    let b = lanes::<N>(wave, inst.src[1], &mut bb)?;
    let mut bits = [0u8; MAX_LANES];
    for i in 0..N {
        let (x, y) = (a[i], b[i]);
        bits[i] = u8::from(match TY {
            CMP_U32 => int_cond(c.cond, x, y),
            CMP_I32 => int_cond(c.cond, x as i32, y as i32),
            _ => float_cond(
                c.cond,
                f64::from(f32::from_bits(x)),
                f64::from(f32::from_bits(y)),
            ),
        });
    }
    let result = pack_bits(&bits, N) & wave.exec;
    if c.exec {
        // gfx10+ v_cmpx writes EXEC only.
        wave.set_exec(result);
    } else if p.enc == Enc::Vop3 {
        wave.write_mask(inst.dst, result)?;
    } else {
        wave.set_vcc(result);
    }
    Ok(Flow::Next)
}
