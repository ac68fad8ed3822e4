//! The scalar ALU: SOP1, SOP2, SOPC and the ALU half of SOPK (constants,
//! compares, add/mul with a 16-bit immediate). One enum variant per
//! operation; LLVM's per-family spellings (`s_andn2_b32` on gfx10,
//! `s_and_not1_b32` on gfx11+, `s_add_co_u32` on gfx12) map to one variant.

use super::fault::{Flow, IsaFault};
use super::operand::{Dst, Src};
use super::program::Inst;
use super::wave::Wave;

/// A scalar ALU operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SOp {
    // SOP2, 32-bit
    AddU32,
    SubU32,
    AddI32,
    SubI32,
    AddcU32,
    SubbU32,
    AbsdiffI32,
    Lshl32,
    Lshr32,
    Ashr32,
    LshlAdd(u8),
    MinI32,
    MinU32,
    MaxI32,
    MaxU32,
    Logic32(Logic),
    BfeU32,
    BfeI32,
    Bfm32,
    MulI32,
    MulHiU32,
    MulHiI32,
    Cselect32,
    PackLl,
    PackLh,
    PackHh,
    PackHl,
    // SOP2, 64-bit
    Lshl64,
    Lshr64,
    Ashr64,
    Logic64(Logic),
    BfeU64,
    BfeI64,
    Bfm64,
    Cselect64,
    AddNcU64,
    SubNcU64,
    MulU64,
    // SOP2 f32 (gfx11.5+)
    AddF32,
    SubF32,
    MulF32,
    FmacF32,
    MinF32,
    MaxF32,
    // SOP1
    Mov32,
    Mov64,
    Cmov32,
    Cmov64,
    Not32,
    Not64,
    Brev32,
    Bcnt0_32,
    Bcnt0_64,
    Bcnt1_32,
    Bcnt1_64,
    Ff0_32,
    Ff1_32,
    Ff1_64,
    Clz32,
    Clz64,
    Cls32,
    Sext8,
    Sext16,
    Bitset0_32,
    Bitset1_32,
    Abs32,
    Saveexec(Logic, bool),
    GetPc,
    CvtF32I32,
    CvtF32U32,
    CvtI32F32,
    CvtU32F32,
    // SOPC
    Cmp(Cmp, bool),
    CmpU64Eq,
    CmpU64Lg,
    Bitcmp(bool, bool),
    CmpF32(FCmp),
    // SOPK
    Movk,
    Cmovk,
    Cmpk(Cmp, bool),
    Addk,
    Mulk,
}

/// A bitwise operation; `Saveexec` and the b32/b64 forms share it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Logic {
    And,
    Or,
    Xor,
    Nand,
    Nor,
    Xnor,
    /// a & !b
    AndNot1,
    /// a | !b
    OrNot1,
    /// !a & b
    AndNot0,
    /// !a | b
    OrNot0,
}

impl Logic {
    #[inline]
    fn apply(self, a: u64, b: u64) -> u64 {
        match self {
            Logic::And => a & b,
            Logic::Or => a | b,
            Logic::Xor => a ^ b,
            Logic::Nand => !(a & b),
            Logic::Nor => !(a | b),
            Logic::Xnor => !(a ^ b),
            Logic::AndNot1 => a & !b,
            Logic::OrNot1 => a | !b,
            Logic::AndNot0 => !a & b,
            Logic::OrNot0 => !a | b,
        }
    }
}

/// An integer comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Lg,
    Gt,
    Ge,
    Lt,
    Le,
}

/// A float comparison (the `n` forms are true for unordered operands).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FCmp {
    Lt,
    Eq,
    Le,
    Gt,
    Lg,
    Ge,
    O,
    U,
    Nge,
    Nlg,
    Ngt,
    Nle,
    Neq,
    Nlt,
}

fn logic(s: &str) -> Option<Logic> {
    Some(match s {
        "and" => Logic::And,
        "or" => Logic::Or,
        "xor" => Logic::Xor,
        "nand" => Logic::Nand,
        "nor" => Logic::Nor,
        "xnor" => Logic::Xnor,
        "andn2" | "and_not1" => Logic::AndNot1,
        "orn2" | "or_not1" => Logic::OrNot1,
        "andn1" | "and_not0" => Logic::AndNot0,
        "orn1" | "or_not0" => Logic::OrNot0,
        _ => return None,
    })
}

fn cmp(s: &str) -> Option<Cmp> {
    Some(match s {
        "eq" => Cmp::Eq,
        "lg" => Cmp::Lg,
        "gt" => Cmp::Gt,
        "ge" => Cmp::Ge,
        "lt" => Cmp::Lt,
        "le" => Cmp::Le,
        _ => return None,
    })
}

fn fcmp(s: &str) -> Option<FCmp> {
    Some(match s {
        "lt" => FCmp::Lt,
        "eq" => FCmp::Eq,
        "le" => FCmp::Le,
        "gt" => FCmp::Gt,
        "lg" => FCmp::Lg,
        "ge" => FCmp::Ge,
        "o" => FCmp::O,
        "u" => FCmp::U,
        "nge" => FCmp::Nge,
        "nlg" => FCmp::Nlg,
        "ngt" => FCmp::Ngt,
        "nle" => FCmp::Nle,
        "neq" => FCmp::Neq,
        "nlt" => FCmp::Nlt,
        _ => return None,
    })
}

/// The scalar ALU operation LLVM's mnemonic `name` names, if implemented.
pub(crate) fn prepare(name: &str) -> Option<SOp> {
    use SOp::*;
    let op = match name {
        "s_add_u32" | "s_add_co_u32" => AddU32,
        "s_sub_u32" | "s_sub_co_u32" => SubU32,
        "s_add_i32" | "s_add_co_i32" => AddI32,
        "s_sub_i32" | "s_sub_co_i32" => SubI32,
        "s_addc_u32" | "s_add_co_ci_u32" => AddcU32,
        "s_subb_u32" | "s_sub_co_ci_u32" => SubbU32,
        "s_absdiff_i32" => AbsdiffI32,
        "s_lshl_b32" => Lshl32,
        "s_lshr_b32" => Lshr32,
        "s_ashr_i32" => Ashr32,
        "s_lshl1_add_u32" => LshlAdd(1),
        "s_lshl2_add_u32" => LshlAdd(2),
        "s_lshl3_add_u32" => LshlAdd(3),
        "s_lshl4_add_u32" => LshlAdd(4),
        "s_min_i32" => MinI32,
        "s_min_u32" => MinU32,
        "s_max_i32" => MaxI32,
        "s_max_u32" => MaxU32,
        "s_bfe_u32" => BfeU32,
        "s_bfe_i32" => BfeI32,
        "s_bfm_b32" => Bfm32,
        "s_mul_i32" => MulI32,
        "s_mul_hi_u32" => MulHiU32,
        "s_mul_hi_i32" => MulHiI32,
        "s_cselect_b32" => Cselect32,
        "s_pack_ll_b32_b16" => PackLl,
        "s_pack_lh_b32_b16" => PackLh,
        "s_pack_hh_b32_b16" => PackHh,
        "s_pack_hl_b32_b16" => PackHl,
        "s_lshl_b64" => Lshl64,
        "s_lshr_b64" => Lshr64,
        "s_ashr_i64" => Ashr64,
        "s_bfe_u64" => BfeU64,
        "s_bfe_i64" => BfeI64,
        "s_bfm_b64" => Bfm64,
        "s_cselect_b64" => Cselect64,
        "s_add_nc_u64" => AddNcU64,
        "s_sub_nc_u64" => SubNcU64,
        "s_mul_u64" => MulU64,
        "s_add_f32" => AddF32,
        "s_sub_f32" => SubF32,
        "s_mul_f32" => MulF32,
        "s_fmac_f32" => FmacF32,
        "s_min_f32" | "s_min_num_f32" => MinF32,
        "s_max_f32" | "s_max_num_f32" => MaxF32,
        "s_mov_b32" => Mov32,
        "s_mov_b64" => Mov64,
        "s_cmov_b32" => Cmov32,
        "s_cmov_b64" => Cmov64,
        "s_not_b32" => Not32,
        "s_not_b64" => Not64,
        "s_brev_b32" => Brev32,
        "s_bcnt0_i32_b32" => Bcnt0_32,
        "s_bcnt0_i32_b64" => Bcnt0_64,
        "s_bcnt1_i32_b32" => Bcnt1_32,
        "s_bcnt1_i32_b64" => Bcnt1_64,
        "s_ff0_i32_b32" => Ff0_32,
        "s_ff1_i32_b32" | "s_ctz_i32_b32" => Ff1_32,
        "s_ff1_i32_b64" | "s_ctz_i32_b64" => Ff1_64,
        "s_flbit_i32_b32" | "s_clz_i32_u32" => Clz32,
        "s_flbit_i32_b64" | "s_clz_i32_u64" => Clz64,
        "s_flbit_i32" | "s_cls_i32" => Cls32,
        "s_sext_i32_i8" => Sext8,
        "s_sext_i32_i16" => Sext16,
        "s_bitset0_b32" => Bitset0_32,
        "s_bitset1_b32" => Bitset1_32,
        "s_abs_i32" => Abs32,
        "s_getpc_b64" => GetPc,
        "s_cvt_f32_i32" => CvtF32I32,
        "s_cvt_f32_u32" => CvtF32U32,
        "s_cvt_i32_f32" => CvtI32F32,
        "s_cvt_u32_f32" => CvtU32F32,
        "s_cmp_eq_u64" => CmpU64Eq,
        "s_cmp_lg_u64" => CmpU64Lg,
        "s_bitcmp0_b32" => Bitcmp(false, false),
        "s_bitcmp1_b32" => Bitcmp(true, false),
        "s_bitcmp0_b64" => Bitcmp(false, true),
        "s_bitcmp1_b64" => Bitcmp(true, true),
        "s_movk_i32" => Movk,
        "s_cmovk_i32" => Cmovk,
        "s_addk_i32" | "s_addk_co_i32" => Addk,
        "s_mulk_i32" => Mulk,
        _ => return prepare_pattern(name),
    };
    Some(op)
}

/// The families of names with a part in the middle (logic, compares,
/// saveexec).
fn prepare_pattern(name: &str) -> Option<SOp> {
    let rest = name.strip_prefix("s_")?;
    if let Some(r) = rest.strip_prefix("cmpk_") {
        let (c, ty) = r.split_once('_')?;
        return Some(SOp::Cmpk(cmp(c)?, signed_ty(ty)?));
    }
    if let Some(r) = rest.strip_prefix("cmp_") {
        let (c, ty) = r.split_once('_')?;
        return match ty {
            "f32" => Some(SOp::CmpF32(fcmp(c)?)),
            _ => Some(SOp::Cmp(cmp(c)?, signed_ty(ty)?)),
        };
    }
    if let Some(l) = rest.strip_suffix("_saveexec_b32") {
        return Some(SOp::Saveexec(logic(l)?, false));
    }
    if let Some(l) = rest.strip_suffix("_saveexec_b64") {
        return Some(SOp::Saveexec(logic(l)?, true));
    }
    if let Some(l) = rest.strip_suffix("_b32") {
        return Some(SOp::Logic32(logic(l)?));
    }
    if let Some(l) = rest.strip_suffix("_b64") {
        return Some(SOp::Logic64(logic(l)?));
    }
    None
}

fn signed_ty(ty: &str) -> Option<bool> {
    match ty {
        "i32" => Some(true),
        "u32" => Some(false),
        _ => None,
    }
}

#[inline]
fn compare<T: PartialOrd>(c: Cmp, a: T, b: T) -> bool {
    match c {
        Cmp::Eq => a == b,
        Cmp::Lg => a != b,
        Cmp::Gt => a > b,
        Cmp::Ge => a >= b,
        Cmp::Lt => a < b,
        Cmp::Le => a <= b,
    }
}

#[inline]
fn fcompare(c: FCmp, a: f32, b: f32) -> bool {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let u = a.is_nan() || b.is_nan();
    match c {
        FCmp::Lt => a < b,
        FCmp::Eq => a == b,
        FCmp::Le => a <= b,
        FCmp::Gt => a > b,
        FCmp::Lg => !u && a != b,
        FCmp::Ge => a >= b,
        FCmp::O => !u,
        FCmp::U => u,
        FCmp::Nge => !matches!(a.partial_cmp(&b), Some(Greater | Equal)),
        FCmp::Nlg => u || a == b,
        FCmp::Ngt => a.partial_cmp(&b) != Some(Greater),
        FCmp::Nle => !matches!(a.partial_cmp(&b), Some(Less | Equal)),
        FCmp::Neq => a != b,
        FCmp::Nlt => a.partial_cmp(&b) != Some(Less),
    }
}

/// The f32 denormal handling MODE asks for: inputs and outputs flushed to
/// zero unless FP_DENORM's f32 field allows them.
#[inline]
fn f32_in(mode: u32, bits: u32) -> f32 {
    let x = f32::from_bits(bits);
    if mode >> 4 & 3 == 0 && x.is_subnormal() {
        f32::from_bits(bits & 0x8000_0000)
    } else {
        x
    }
}

#[inline]
fn f32_out(mode: u32, x: f32) -> u32 {
    if mode >> 4 & 3 == 0 && x.is_subnormal() {
        x.to_bits() & 0x8000_0000
    } else {
        x.to_bits()
    }
}

/// IEEE-754 minNum/maxNum as the scalar float ALU computes them: a NaN
/// operand yields the other one.
#[inline]
fn fmin(a: f32, b: f32) -> f32 {
    a.min(b)
}

#[inline]
fn fmax(a: f32, b: f32) -> f32 {
    a.max(b)
}

/// f32 -> i32 the way the hardware converts: NaN gives 0, out-of-range
/// values saturate (Rust's `as` has exactly these semantics).
#[inline]
fn cvt_i32(x: f32) -> u32 {
    x as i32 as u32
}

#[inline]
fn cvt_u32(x: f32) -> u32 {
    x as u32
}

#[cold]
fn rounding_fault(inst: &Inst, mode: u32) -> IsaFault {
    IsaFault::Operand {
        mnemonic: inst.decoded.mnemonic(),
        why: format!(
            "MODE.FP_ROUND is {:#x}: only round-to-nearest-even is modelled for scalar float ops",
            mode & 0xF
        ),
    }
}

/// Execute one scalar ALU instruction.
pub(crate) fn execute(wave: &mut Wave, inst: &Inst, op: SOp) -> Result<Flow, IsaFault> {
    use SOp::*;
    let [s0, s1, _] = inst.src;
    let d = inst.dst;
    let a = || wave.scalar(s0);
    let b = || wave.scalar(s1);
    let mut scc = wave.scc;
    // 32-bit results; 64-bit ones return early.
    let r: u32 = match op {
        AddU32 => {
            let (v, c) = a()?.overflowing_add(b()?);
            scc = c;
            v
        }
        SubU32 => {
            let (v, c) = a()?.overflowing_sub(b()?);
            scc = c;
            v
        }
        AddI32 => {
            let (v, o) = (a()? as i32).overflowing_add(b()? as i32);
            scc = o;
            v as u32
        }
        SubI32 => {
            let (v, o) = (a()? as i32).overflowing_sub(b()? as i32);
            scc = o;
            v as u32
        }
        AddcU32 => {
            let s = u64::from(a()?) + u64::from(b()?) + u64::from(wave.scc);
            scc = s >> 32 != 0;
            s as u32
        }
        SubbU32 => {
            let (x, y) = (u64::from(a()?), u64::from(b()?) + u64::from(wave.scc));
            scc = y > x;
            x.wrapping_sub(y) as u32
        }
        AbsdiffI32 => {
            let v = (a()? as i32).wrapping_sub(b()? as i32).wrapping_abs() as u32;
            scc = v != 0;
            v
        }
        Lshl32 => set(&mut scc, a()? << (b()? & 31)),
        Lshr32 => set(&mut scc, a()? >> (b()? & 31)),
        Ashr32 => set(&mut scc, ((a()? as i32) >> (b()? & 31)) as u32),
        LshlAdd(n) => {
            let s = (u64::from(a()?) << n) + u64::from(b()?);
            scc = s >> 32 != 0;
            s as u32
        }
        MinI32 => {
            let (x, y) = (a()? as i32, b()? as i32);
            scc = x < y;
            x.min(y) as u32
        }
        MinU32 => {
            let (x, y) = (a()?, b()?);
            scc = x < y;
            x.min(y)
        }
        MaxI32 => {
            let (x, y) = (a()? as i32, b()? as i32);
            scc = x > y;
            x.max(y) as u32
        }
        MaxU32 => {
            let (x, y) = (a()?, b()?);
            scc = x > y;
            x.max(y)
        }
        Logic32(l) => set(&mut scc, l.apply(u64::from(a()?), u64::from(b()?)) as u32),
        BfeU32 | BfeI32 => {
            let (x, c) = (a()?, b()?);
            let (off, width) = (c & 31, (c >> 16) & 0x7F);
            let v = if width == 0 {
                0
            } else if op == BfeU32 {
                ((u64::from(x) >> off) & ((1u64 << width.min(32)) - 1)) as u32
            } else {
                let w = width.min(32);
                let f = (u64::from(x) >> off) & ((1u64 << w) - 1);
                (((f << (64 - w)) as i64) >> (64 - w)) as u32
            };
            set(&mut scc, v)
        }
        Bfm32 => (((1u64 << (a()? & 31)) - 1) as u32).wrapping_shl(b()? & 31),
        MulI32 => (a()? as i32).wrapping_mul(b()? as i32) as u32,
        MulHiU32 => ((u64::from(a()?) * u64::from(b()?)) >> 32) as u32,
        MulHiI32 => ((i64::from(a()? as i32) * i64::from(b()? as i32)) >> 32) as u32,
        Cselect32 => {
            if wave.scc {
                a()?
            } else {
                b()?
            }
        }
        PackLl => (a()? & 0xFFFF) | (b()? << 16),
        PackLh => (a()? & 0xFFFF) | (b()? & 0xFFFF_0000),
        PackHh => (a()? >> 16) | (b()? & 0xFFFF_0000),
        PackHl => (a()? >> 16) | (b()? << 16),
        AddF32 | SubF32 | MulF32 | FmacF32 | MinF32 | MaxF32 => {
            let m = wave.mode;
            if m & 0xF != 0 {
                return Err(rounding_fault(inst, m));
            }
            let (x, y) = (f32_in(m, a()?), f32_in(m, b()?));
            let v = match op {
                AddF32 => x + y,
                SubF32 => x - y,
                MulF32 => x * y,
                FmacF32 => {
                    let acc = match d {
                        Dst::Sgpr(n) => f32_in(m, wave.sgpr[n as usize]),
                        _ => f32_in(m, wave.scalar(Src::Null)?),
                    };
                    x.mul_add(y, acc)
                }
                MinF32 => fmin(x, y),
                _ => fmax(x, y),
            };
            f32_out(m, v)
        }
        Mov32 => a()?,
        Cmov32 => {
            if !wave.scc {
                return Ok(Flow::Next);
            }
            a()?
        }
        Not32 => set(&mut scc, !a()?),
        Brev32 => a()?.reverse_bits(),
        Bcnt0_32 => set(&mut scc, a()?.count_zeros()),
        Bcnt1_32 => set(&mut scc, a()?.count_ones()),
        Bcnt0_64 => set(&mut scc, wave.scalar64(s0, false)?.count_zeros()),
        Bcnt1_64 => set(&mut scc, wave.scalar64(s0, false)?.count_ones()),
        Ff0_32 => first_bit(!a()? as u64 & 0xFFFF_FFFF),
        Ff1_32 => first_bit(u64::from(a()?)),
        Ff1_64 => first_bit(wave.scalar64(s0, false)?),
        Clz32 => {
            let x = a()?;
            if x == 0 {
                u32::MAX
            } else {
                x.leading_zeros()
            }
        }
        Clz64 => {
            let x = wave.scalar64(s0, false)?;
            if x == 0 {
                u32::MAX
            } else {
                x.leading_zeros()
            }
        }
        Cls32 => {
            let x = a()? as i32;
            if x == 0 || x == -1 {
                u32::MAX
            } else {
                (if x < 0 { !x } else { x }).leading_zeros()
            }
        }
        Sext8 => a()? as i8 as i32 as u32,
        Sext16 => a()? as i16 as i32 as u32,
        Bitset0_32 | Bitset1_32 => {
            let bit = a()? & 31;
            let cur = match d {
                Dst::Sgpr(n) => wave.sgpr[n as usize],
                _ => 0,
            };
            if op == Bitset0_32 {
                cur & !(1 << bit)
            } else {
                cur | (1 << bit)
            }
        }
        Abs32 => set(&mut scc, (a()? as i32).wrapping_abs() as u32),
        CvtF32I32 | CvtF32U32 | CvtI32F32 | CvtU32F32 => {
            let m = wave.mode;
            if m & 0xF != 0 {
                return Err(rounding_fault(inst, m));
            }
            match op {
                CvtF32I32 => f32_out(m, a()? as i32 as f32),
                CvtF32U32 => f32_out(m, a()? as f32),
                CvtI32F32 => cvt_i32(f32_in(m, a()?)),
                _ => cvt_u32(f32_in(m, a()?)),
            }
        }
        Cmp(c, signed) => {
            let (x, y) = (a()?, b()?);
            wave.scc = if signed {
                compare(c, x as i32, y as i32)
            } else {
                compare(c, x, y)
            };
            return Ok(Flow::Next);
        }
        CmpU64Eq | CmpU64Lg => {
            let eq = wave.scalar64(s0, false)? == wave.scalar64(s1, false)?;
            wave.scc = eq == (op == CmpU64Eq);
            return Ok(Flow::Next);
        }
        Bitcmp(one, wide) => {
            let bit = b()?;
            let v = if wide {
                wave.scalar64(s0, false)? >> (bit & 63) & 1
            } else {
                u64::from(a()? >> (bit & 31) & 1)
            };
            wave.scc = (v == 1) == one;
            return Ok(Flow::Next);
        }
        CmpF32(c) => {
            let m = wave.mode;
            wave.scc = fcompare(c, f32_in(m, a()?), f32_in(m, b()?));
            return Ok(Flow::Next);
        }
        Movk => simm(inst) as u32,
        Cmovk => {
            if !wave.scc {
                return Ok(Flow::Next);
            }
            simm(inst) as u32
        }
        Cmpk(c, signed) => {
            let x = sopk_reg(wave, inst)?;
            let k = simm(inst);
            wave.scc = if signed {
                compare(c, x as i32, k as i32)
            } else {
                compare(c, x, k as u32 & 0xFFFF)
            };
            return Ok(Flow::Next);
        }
        Addk => {
            let x = sopk_reg(wave, inst)? as i32;
            let (v, o) = x.overflowing_add(simm(inst) as i32);
            scc = o;
            v as u32
        }
        Mulk => (sopk_reg(wave, inst)? as i32).wrapping_mul(simm(inst) as i32) as u32,
        Lshl64 | Lshr64 | Ashr64 | Logic64(_) | BfeU64 | BfeI64 | Bfm64 | Cselect64 | AddNcU64
        | SubNcU64 | MulU64 | Mov64 | Cmov64 | Not64 | Saveexec(..) | GetPc => {
            return execute64(wave, inst, op)
        }
    };
    wave.write_scalar(d, r)?;
    wave.scc = scc;
    Ok(Flow::Next)
}

fn execute64(wave: &mut Wave, inst: &Inst, op: SOp) -> Result<Flow, IsaFault> {
    use SOp::*;
    let [s0, s1, _] = inst.src;
    let d = inst.dst;
    let a = |w: &Wave| w.scalar64(s0, false);
    let mut scc = wave.scc;
    let r: u64 = match op {
        Lshl64 => set64(&mut scc, a(wave)? << (wave.scalar(s1)? & 63)),
        Lshr64 => set64(&mut scc, a(wave)? >> (wave.scalar(s1)? & 63)),
        Ashr64 => set64(
            &mut scc,
            ((wave.scalar64(s0, true)? as i64) >> (wave.scalar(s1)? & 63)) as u64,
        ),
        Logic64(l) => set64(&mut scc, l.apply(a(wave)?, wave.scalar64(s1, false)?)),
        BfeU64 | BfeI64 => {
            let (x, c) = (a(wave)?, wave.scalar(s1)?);
            let (off, width) = (c & 63, ((c >> 16) & 0x7F).min(64));
            let v = if width == 0 {
                0
            } else {
                let f = (u128::from(x) >> off) as u64;
                let f = if width == 64 {
                    f
                } else {
                    f & ((1u64 << width) - 1)
                };
                if op == BfeI64 && width < 64 {
                    ((f << (64 - width)) as i64 >> (64 - width)) as u64
                } else {
                    f
                }
            };
            set64(&mut scc, v)
        }
        Bfm64 => {
            let (w, o) = (wave.scalar(s0)? & 63, wave.scalar(s1)? & 63);
            (((1u128 << w) - 1) as u64).wrapping_shl(o)
        }
        Cselect64 => {
            if wave.scc {
                a(wave)?
            } else {
                wave.scalar64(s1, false)?
            }
        }
        AddNcU64 => a(wave)?.wrapping_add(wave.scalar64(s1, false)?),
        SubNcU64 => a(wave)?.wrapping_sub(wave.scalar64(s1, false)?),
        MulU64 => a(wave)?.wrapping_mul(wave.scalar64(s1, false)?),
        Mov64 => a(wave)?,
        Cmov64 => {
            if !wave.scc {
                return Ok(Flow::Next);
            }
            a(wave)?
        }
        Not64 => set64(&mut scc, !a(wave)?),
        Saveexec(l, wide) => {
            let old = wave.exec;
            let src = if wide {
                a(wave)?
            } else {
                u64::from(wave.scalar(s0)?)
            };
            wave.set_exec(l.apply(src, old));
            wave.scc = wave.exec != 0;
            if wide {
                wave.write_scalar64(d, old)?;
            } else {
                wave.write_scalar(d, old as u32)?;
            }
            return Ok(Flow::Next);
        }
        GetPc => return Err(getpc_fault(inst)),
        _ => unreachable_op(op),
    };
    wave.write_scalar64(d, r)?;
    wave.scc = scc;
    Ok(Flow::Next)
}

#[cold]
fn getpc_fault(inst: &Inst) -> IsaFault {
    IsaFault::Unimplemented {
        mnemonic: inst.decoded.mnemonic(),
        family: relaunch_isa::Family::Gfx11,
    }
}

#[cold]
fn unreachable_op(op: SOp) -> ! {
    panic!("scalar op {op:?} routed to the 64-bit executor by mistake")
}

#[inline]
fn set(scc: &mut bool, v: u32) -> u32 {
    *scc = v != 0;
    v
}

#[inline]
fn set64(scc: &mut bool, v: u64) -> u64 {
    *scc = v != 0;
    v
}

#[inline]
fn first_bit(x: u64) -> u32 {
    if x == 0 {
        u32::MAX
    } else {
        x.trailing_zeros()
    }
}

/// SOPK's sign-extended 16-bit immediate.
#[inline]
fn simm(inst: &Inst) -> i64 {
    i64::from(inst.words[0] as u16 as i16)
}

/// The register SOPK compares and adds to (its SDST field).
#[inline]
fn sopk_reg(wave: &Wave, inst: &Inst) -> Result<u32, IsaFault> {
    match inst.dst {
        Dst::None => wave.scalar(inst.src[2]),
        Dst::Sgpr(n) => Ok(wave.sgpr[n as usize]),
        Dst::M0 => Ok(wave.m0),
        Dst::ExecLo => Ok(wave.exec as u32),
        Dst::ExecHi => Ok((wave.exec >> 32) as u32),
        Dst::Null => Ok(0),
        Dst::Vgpr(_) | Dst::Unsupported(_) => Err(IsaFault::Operand {
            mnemonic: inst.decoded.mnemonic(),
            why: "SOPK register field is not a scalar register".into(),
        }),
    }
}
