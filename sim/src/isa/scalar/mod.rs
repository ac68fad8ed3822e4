//! The scalar ALU: SOP1, SOP2, SOPC and the ALU half of SOPK (constants,
//! compares, add/mul with a 16-bit immediate). One enum variant per
//! operation; LLVM's per-family spellings (`s_andn2_b32` on gfx10,
//! `s_and_not1_b32` on gfx11+, `s_add_co_u32` on gfx12) map to one variant.

use super::fault::IsaFault;
use super::program::Inst;

mod exec;
mod float;
mod half;
pub(crate) use exec::execute;

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
    /// The other gfx11.5+ float operations (`float`).
    F(float::SFloat),
    /// The gfx11.5+ float operations with an f16 result (`half`).
    H(half::SHalf),
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
        _ => {
            return float::prepare(name)
                .map(F)
                .or_else(|| half::prepare(name).map(H))
                .or_else(|| prepare_pattern(name))
        }
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

/// The f32 denormal handling MODE asks for: inputs flushed to zero unless
/// FP_DENORM's f32 field keeps them (bit 4), outputs unless bit 5 does.
#[inline]
fn f32_in(mode: u32, bits: u32) -> f32 {
    let x = f32::from_bits(bits);
    if mode >> 4 & 1 == 0 && x.is_subnormal() {
        f32::from_bits(bits & 0x8000_0000)
    } else {
        x
    }
}

#[inline]
fn f32_out(mode: u32, x: f32) -> u32 {
    if mode >> 5 & 1 == 0 && x.is_subnormal() {
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
            "MODE.FP_ROUND is {:#x}: scalar conversions are only modelled rounded to nearest even",
            mode & 0xF
        ),
    }
}

// The forms the execution loop runs inline (`quick`).
mod quick;
pub(crate) use quick::quick;
