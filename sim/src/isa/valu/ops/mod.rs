//! The vector ALU operations the interpreter executes, and the mapping from
//! LLVM's mnemonic (without the `_e32`/`_e64` encoding suffix) to them. A
//! mnemonic with no entry here is not implemented: the program keeps it as
//! an instruction that faults with its name when it runs.

/// 32-bit integer and bitwise operations (one value per lane, up to three
/// 32-bit sources). `*rev` operations take their operands swapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IOp {
    Mov,
    Not,
    Bfrev,
    /// v_ffbh_u32 / v_clz_i32_u32: leading zeros, -1 for 0.
    Clz,
    /// v_ffbl_b32 / v_ctz_i32_b32: trailing zeros, -1 for 0.
    Ctz,
    /// v_ffbh_i32 / v_cls_i32: leading sign bits, -1 for 0 and -1.
    Cls,
    Add,
    Sub,
    Subrev,
    /// v_add_nc_i32 / v_sub_nc_i32: clamp saturates as signed.
    AddI,
    SubI,
    And,
    Or,
    Xor,
    Xnor,
    Lshlrev,
    Lshrrev,
    Ashrrev,
    MinU,
    MaxU,
    MinI,
    MaxI,
    MulLo,
    MulHiU,
    MulHiI,
    MulU24,
    MulI24,
    MulHiU24,
    MulHiI24,
    Bcnt,
    MbcntLo,
    MbcntHi,
    Bfm,
    Cndmask,
    Add3,
    LshlAdd,
    AddLshl,
    LshlOr,
    AndOr,
    Or3,
    Xor3,
    Alignbit,
    Alignbyte,
    BfeU,
    BfeI,
    Bfi,
    MadU24,
    MadI24,
    Min3U,
    Max3U,
    Med3U,
    Min3I,
    Max3I,
    Med3I,
    Xad,
    Perm,
    /// v_minmax_u32 / v_minmax_i32: min(max(S0, S1), S2).
    MinmaxU,
    MinmaxI,
    /// v_maxmin_u32 / v_maxmin_i32: max(min(S0, S1), S2).
    MaxminU,
    MaxminI,
}

/// 16-bit integer operations (`int16`); `U`/`I` the signedness. (LLVM 19
/// assembles v_mov_b16 only in true16 syntax, `-mattr=+real-true16` for
/// its VOP3 form: the round-trip test assembles that way for what the
/// default syntax refuses.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum I16Op {
    /// v_mov_b16 (gfx11+ true16): the source half to the destination half.
    Mov,
    /// v_cndmask_b16 (gfx11+ VOP3): S1 where the lane mask S2 is set, else
    /// S0.
    Cndmask,
    Not,
    AddU,
    SubU,
    AddI,
    SubI,
    MadU,
    MadI,
    Lshlrev,
    Lshrrev,
    Ashrrev,
    MulLo,
    MinU,
    MaxU,
    MinI,
    MaxI,
    Min3U,
    Max3U,
    Med3U,
    Min3I,
    Max3I,
    Med3I,
    And,
    Or,
    Xor,
}

/// Floating-point operations, shared by f32 (`Op::F`) and f16 (`Op::H`,
/// `Op::Pk`); not every one exists in every width (the name table says
/// which).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FOp {
    Add,
    Sub,
    Subrev,
    Mul,
    Fma,
    /// D = S0 * S1 + D.
    Fmac,
    /// D = S0 * K + S1 (K the literal).
    Fmamk,
    /// D = S0 * S1 + K.
    Fmaak,
    Min,
    Max,
    Min3,
    Max3,
    /// v_minmax: min(max(S0, S1), S2).
    Minmax,
    /// v_maxmin: max(min(S0, S1), S2).
    Maxmin,
    Med3,
    Ldexp,
    Rcp,
    RcpIflag,
    Rsq,
    Sqrt,
    Exp,
    Log,
    Sin,
    Cos,
    Floor,
    Ceil,
    Trunc,
    Rndne,
    Fract,
    FrexpMant,
    FrexpExp,
    DivScale,
    DivFmas,
    DivFixup,
}

/// f64 operations and the conversions to and from f64 (`f64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DOp {
    Add,
    Mul,
    Fma,
    Min,
    Max,
    /// gfx12 v_minimum_f64 / v_maximum_f64: a NaN operand gives NaN.
    Minimum,
    Maximum,
    Ldexp,
    Rcp,
    Rsq,
    Sqrt,
    Floor,
    Ceil,
    Trunc,
    Rndne,
    Fract,
    FrexpMant,
    FrexpExp,
    DivScale,
    DivFmas,
    DivFixup,
    TrigPreop,
    F32F64,
    F64F32,
    F64I32,
    F64U32,
    I32F64,
    U32F64,
}

/// The mixed-precision fmas (`mix`): the result an f32, or an f16 into the
/// low or high half.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MixOp {
    F32,
    Lo,
    Hi,
}

/// Conversions and packing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CvtOp {
    F32U32,
    F32I32,
    U32F32,
    I32F32,
    F16F32,
    F32F16,
    F32Ubyte(u8),
    /// v_cvt_flr_i32_f32 / v_cvt_floor_i32_f32.
    FloorI32F32,
    /// v_cvt_rpi_i32_f32 / v_cvt_nearest_i32_f32: floor(x + 0.5).
    NearestI32F32,
    /// Two f32 to a pair of f16, rounding toward zero.
    PkRtzF16F32,
    /// Two f16 (the low halves, op_sel may pick high ones) into one dword.
    PackB32F16,
    F16U16,
    F16I16,
    U16F16,
    I16F16,
}

/// Operations with a 64-bit lane value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WOp {
    Lshlrev64,
    Lshrrev64,
    Ashrrev64,
    /// D64 = S0 * S1 + S2 (u32 x u32 + u64), carry out to SDST.
    MadU64U32,
    /// D64 = S0 * S1 + S2 (i32 x i32 + i64), overflow to SDST.
    MadI64I32,
}

/// Additions with a carry out (VCC or SDST) and optionally a carry in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CarryOp {
    AddCo,
    SubCo,
    SubrevCo,
    AddCoCi,
    SubCoCi,
    SubrevCoCi,
}

/// Dot products (see `dot`): `F32F16` is v_dot2_f32_f16, `I32Iu8`
/// v_dot4_i32_iu8 (signedness from neg_lo), the `Acc` forms the VOP2 ones
/// that add to their destination. v_dot2_bf16_bf16 has no entry (its
/// rounding is not established).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DotOp {
    F32F16,
    F32Bf16,
    F16F16,
    /// v_dot2c_f32_f16 (gfx10.3) / v_dot2acc_f32_f16 (gfx11).
    AccF32F16,
    I32I16,
    U32U16,
    I32I8,
    U32U8,
    I32Iu8,
    I32I4,
    U32U4,
    I32Iu4,
    /// v_dot4c_i32_i8 (gfx10.3).
    AccI32I8,
}

/// Cross-lane reads and writes to and from SGPRs, and the operations that
/// name VGPRs at run time or write two (executed in `exec::lane`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaneOp {
    Readlane,
    Readfirstlane,
    Writelane,
    /// v_swap_b32: vdst and the src0 VGPR exchange values.
    Swap,
    /// v_movrels_b32: vdst = VGPR[src0 + M0].
    Movrels,
    /// v_movreld_b32: VGPR[vdst + M0] = src0.
    Movreld,
    /// v_movrelsd_b32: VGPR[vdst + M0] = VGPR[src0 + M0].
    Movrelsd,
    /// v_permlane16_b32: a gather within each row of 16 lanes.
    Permlane16,
    /// v_permlanex16_b32: the same gather from the other row of the
    /// lane's 32-lane half.
    Permlanex16,
}

/// The operand type of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpTy {
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    F16,
    F32,
    F64,
}

/// One comparison: `cond` is the opcode's condition index (floats: f lt eq
/// le gt lg ge o u nge nlg ngt nle neq nlt tru; integers: f lt eq le gt ne
/// ge t), `class` for v_cmp_class, `exec` for the v_cmpx forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cmp {
    pub ty: CmpTy,
    pub cond: u8,
    pub class: bool,
    pub exec: bool,
}

/// A vector ALU operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    I(IOp),
    /// 16-bit integer halves.
    I16(I16Op),
    F(FOp),
    /// Scalar f16 (low halves; op_sel picks halves in VOP3).
    H(FOp),
    /// Packed f16 pairs (VOP3P).
    Pk(FOp),
    /// v_fma_mix* (VOP3P).
    Mix(MixOp),
    Cvt(CvtOp),
    /// f64 arithmetic and conversions.
    D(DOp),
    W(WOp),
    Carry(CarryOp),
    Lane(LaneOp),
    Cmp(Cmp),
    Dot(DotOp),
    /// v_wmma_* (see `wmma`).
    Wmma(super::wmma::WmmaOp),
    /// Packed 16-bit integer pairs (VOP3P, `packed_int`).
    PkI(I16Op),
    /// The gfx12 fp8/bf8 conversions (`fp8`).
    Fp8(super::fp8::Fp8Op),
    Nop,
}

mod names;

pub use names::{base_name, lookup};
