//! LLVM's mnemonics (without the `_e32`/`_e64` encoding suffix) mapped to
//! the operations of [`super`].

use super::*;

const FLOAT_CONDS: [&str; 16] = [
    "f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt",
    "tru",
];
const INT_CONDS: [&str; 8] = ["f", "lt", "eq", "le", "gt", "ne", "ge", "t"];

/// The operation of an LLVM mnemonic (`v_add_f32`, `v_cmpx_gt_u32`, ...;
/// without `_e32`/`_e64`/`_dpp`).
pub fn lookup(name: &str) -> Option<Op> {
    if let Some(rest) = name.strip_prefix("v_cmpx_") {
        return compare(rest, true);
    }
    if let Some(rest) = name.strip_prefix("v_cmp_") {
        return compare(rest, false);
    }
    use FOp as F;
    use IOp as I;
    Some(match name {
        "v_nop" => Op::Nop,
        "v_mov_b32" => Op::I(I::Mov),
        "v_not_b32" => Op::I(I::Not),
        "v_bfrev_b32" => Op::I(I::Bfrev),
        "v_ffbh_u32" | "v_clz_i32_u32" => Op::I(I::Clz),
        "v_ffbl_b32" | "v_ctz_i32_b32" => Op::I(I::Ctz),
        "v_ffbh_i32" | "v_cls_i32" => Op::I(I::Cls),
        "v_add_nc_u32" | "v_add_u32" => Op::I(I::Add),
        "v_sub_nc_u32" | "v_sub_u32" => Op::I(I::Sub),
        "v_subrev_nc_u32" | "v_subrev_u32" => Op::I(I::Subrev),
        "v_add_nc_i32" => Op::I(I::AddI),
        "v_sub_nc_i32" => Op::I(I::SubI),
        "v_and_b32" => Op::I(I::And),
        "v_or_b32" => Op::I(I::Or),
        "v_xor_b32" => Op::I(I::Xor),
        "v_xnor_b32" => Op::I(I::Xnor),
        "v_lshlrev_b32" => Op::I(I::Lshlrev),
        "v_lshrrev_b32" => Op::I(I::Lshrrev),
        "v_ashrrev_i32" => Op::I(I::Ashrrev),
        "v_min_u32" => Op::I(I::MinU),
        "v_max_u32" => Op::I(I::MaxU),
        "v_min_i32" => Op::I(I::MinI),
        "v_max_i32" => Op::I(I::MaxI),
        "v_mul_lo_u32" => Op::I(I::MulLo),
        "v_mul_hi_u32" => Op::I(I::MulHiU),
        "v_mul_hi_i32" => Op::I(I::MulHiI),
        "v_mul_u32_u24" => Op::I(I::MulU24),
        "v_mul_i32_i24" => Op::I(I::MulI24),
        "v_mul_hi_u32_u24" => Op::I(I::MulHiU24),
        "v_mul_hi_i32_i24" => Op::I(I::MulHiI24),
        "v_bcnt_u32_b32" => Op::I(I::Bcnt),
        "v_mbcnt_lo_u32_b32" => Op::I(I::MbcntLo),
        "v_mbcnt_hi_u32_b32" => Op::I(I::MbcntHi),
        "v_bfm_b32" => Op::I(I::Bfm),
        "v_cndmask_b32" => Op::I(I::Cndmask),
        "v_add3_u32" => Op::I(I::Add3),
        "v_lshl_add_u32" => Op::I(I::LshlAdd),
        "v_add_lshl_u32" => Op::I(I::AddLshl),
        "v_lshl_or_b32" => Op::I(I::LshlOr),
        "v_and_or_b32" => Op::I(I::AndOr),
        "v_or3_b32" => Op::I(I::Or3),
        "v_xor3_b32" => Op::I(I::Xor3),
        "v_alignbit_b32" => Op::I(I::Alignbit),
        "v_alignbyte_b32" => Op::I(I::Alignbyte),
        "v_bfe_u32" => Op::I(I::BfeU),
        "v_bfe_i32" => Op::I(I::BfeI),
        "v_bfi_b32" => Op::I(I::Bfi),
        "v_mad_u32_u24" => Op::I(I::MadU24),
        "v_mad_i32_i24" => Op::I(I::MadI24),
        "v_min3_u32" => Op::I(I::Min3U),
        "v_max3_u32" => Op::I(I::Max3U),
        "v_med3_u32" => Op::I(I::Med3U),
        "v_min3_i32" => Op::I(I::Min3I),
        "v_max3_i32" => Op::I(I::Max3I),
        "v_med3_i32" => Op::I(I::Med3I),
        "v_xad_u32" => Op::I(I::Xad),
        "v_perm_b32" => Op::I(I::Perm),
        "v_minmax_u32" => Op::I(I::MinmaxU),
        "v_minmax_i32" => Op::I(I::MinmaxI),
        "v_maxmin_u32" => Op::I(I::MaxminU),
        "v_maxmin_i32" => Op::I(I::MaxminI),

        "v_not_b16" => Op::I16(I16Op::Not),
        "v_mov_b16" => Op::I16(I16Op::Mov),
        "v_cndmask_b16" => Op::I16(I16Op::Cndmask),
        "v_add_nc_u16" | "v_add_u16" => Op::I16(I16Op::AddU),
        "v_sub_nc_u16" | "v_sub_u16" => Op::I16(I16Op::SubU),
        "v_add_nc_i16" => Op::I16(I16Op::AddI),
        "v_sub_nc_i16" => Op::I16(I16Op::SubI),
        "v_mad_u16" => Op::I16(I16Op::MadU),
        "v_mad_i16" => Op::I16(I16Op::MadI),
        "v_lshlrev_b16" => Op::I16(I16Op::Lshlrev),
        "v_lshrrev_b16" => Op::I16(I16Op::Lshrrev),
        "v_ashrrev_i16" => Op::I16(I16Op::Ashrrev),
        "v_mul_lo_u16" => Op::I16(I16Op::MulLo),
        "v_min_u16" => Op::I16(I16Op::MinU),
        "v_max_u16" => Op::I16(I16Op::MaxU),
        "v_min_i16" => Op::I16(I16Op::MinI),
        "v_max_i16" => Op::I16(I16Op::MaxI),
        "v_min3_u16" => Op::I16(I16Op::Min3U),
        "v_max3_u16" => Op::I16(I16Op::Max3U),
        "v_med3_u16" => Op::I16(I16Op::Med3U),
        "v_min3_i16" => Op::I16(I16Op::Min3I),
        "v_max3_i16" => Op::I16(I16Op::Max3I),
        "v_med3_i16" => Op::I16(I16Op::Med3I),
        "v_and_b16" => Op::I16(I16Op::And),
        "v_or_b16" => Op::I16(I16Op::Or),
        "v_xor_b16" => Op::I16(I16Op::Xor),

        "v_add_f32" => Op::F(F::Add),
        "v_sub_f32" => Op::F(F::Sub),
        "v_subrev_f32" => Op::F(F::Subrev),
        "v_mul_f32" => Op::F(F::Mul),
        "v_fma_f32" => Op::F(F::Fma),
        "v_fmac_f32" => Op::F(F::Fmac),
        "v_fmamk_f32" => Op::F(F::Fmamk),
        "v_fmaak_f32" => Op::F(F::Fmaak),
        "v_min_f32" | "v_min_num_f32" => Op::F(F::Min),
        "v_max_f32" | "v_max_num_f32" => Op::F(F::Max),
        "v_min3_f32" | "v_min3_num_f32" => Op::F(F::Min3),
        "v_max3_f32" | "v_max3_num_f32" => Op::F(F::Max3),
        "v_minmax_f32" | "v_minmax_num_f32" => Op::F(F::Minmax),
        "v_maxmin_f32" | "v_maxmin_num_f32" => Op::F(F::Maxmin),
        "v_med3_f32" | "v_med3_num_f32" => Op::F(F::Med3),
        "v_ldexp_f32" => Op::F(F::Ldexp),
        "v_rcp_f32" | "v_s_rcp_f32" => Op::F(F::Rcp),
        "v_rcp_iflag_f32" => Op::F(F::RcpIflag),
        "v_rsq_f32" | "v_s_rsq_f32" => Op::F(F::Rsq),
        "v_sqrt_f32" | "v_s_sqrt_f32" => Op::F(F::Sqrt),
        "v_exp_f32" | "v_s_exp_f32" => Op::F(F::Exp),
        "v_log_f32" | "v_s_log_f32" => Op::F(F::Log),
        "v_sin_f32" => Op::F(F::Sin),
        "v_cos_f32" => Op::F(F::Cos),
        "v_floor_f32" => Op::F(F::Floor),
        "v_ceil_f32" => Op::F(F::Ceil),
        "v_trunc_f32" => Op::F(F::Trunc),
        "v_rndne_f32" => Op::F(F::Rndne),
        "v_fract_f32" => Op::F(F::Fract),
        "v_frexp_mant_f32" => Op::F(F::FrexpMant),
        "v_frexp_exp_i32_f32" => Op::F(F::FrexpExp),
        "v_div_scale_f32" => Op::F(F::DivScale),
        "v_div_fmas_f32" => Op::F(F::DivFmas),
        "v_div_fixup_f32" => Op::F(F::DivFixup),

        "v_add_f16" => Op::H(F::Add),
        "v_sub_f16" => Op::H(F::Sub),
        "v_subrev_f16" => Op::H(F::Subrev),
        "v_mul_f16" => Op::H(F::Mul),
        "v_fma_f16" => Op::H(F::Fma),
        "v_fmac_f16" => Op::H(F::Fmac),
        "v_fmamk_f16" => Op::H(F::Fmamk),
        "v_fmaak_f16" => Op::H(F::Fmaak),
        "v_min_f16" | "v_min_num_f16" => Op::H(F::Min),
        "v_max_f16" | "v_max_num_f16" => Op::H(F::Max),
        "v_ldexp_f16" => Op::H(F::Ldexp),
        "v_min3_f16" | "v_min3_num_f16" => Op::H(F::Min3),
        "v_max3_f16" | "v_max3_num_f16" => Op::H(F::Max3),
        "v_med3_f16" | "v_med3_num_f16" => Op::H(F::Med3),
        "v_minmax_f16" | "v_minmax_num_f16" => Op::H(F::Minmax),
        "v_maxmin_f16" | "v_maxmin_num_f16" => Op::H(F::Maxmin),
        "v_rcp_f16" => Op::H(F::Rcp),
        "v_rsq_f16" => Op::H(F::Rsq),
        "v_sqrt_f16" => Op::H(F::Sqrt),
        "v_exp_f16" => Op::H(F::Exp),
        "v_log_f16" => Op::H(F::Log),
        "v_floor_f16" => Op::H(F::Floor),
        "v_ceil_f16" => Op::H(F::Ceil),
        "v_trunc_f16" => Op::H(F::Trunc),
        "v_rndne_f16" => Op::H(F::Rndne),
        "v_fract_f16" => Op::H(F::Fract),

        "v_fma_mix_f32" => Op::Mix(MixOp::F32),
        "v_fma_mixlo_f16" => Op::Mix(MixOp::Lo),
        "v_fma_mixhi_f16" => Op::Mix(MixOp::Hi),
        "v_pk_add_f16" => Op::Pk(F::Add),
        "v_pk_mul_f16" => Op::Pk(F::Mul),
        "v_pk_fma_f16" => Op::Pk(F::Fma),
        "v_pk_min_f16" | "v_pk_min_num_f16" => Op::Pk(F::Min),
        "v_pk_max_f16" | "v_pk_max_num_f16" => Op::Pk(F::Max),

        "v_cvt_f32_u32" => Op::Cvt(CvtOp::F32U32),
        "v_cvt_f32_i32" => Op::Cvt(CvtOp::F32I32),
        "v_cvt_u32_f32" => Op::Cvt(CvtOp::U32F32),
        "v_cvt_i32_f32" => Op::Cvt(CvtOp::I32F32),
        "v_cvt_f16_f32" => Op::Cvt(CvtOp::F16F32),
        "v_cvt_f32_f16" => Op::Cvt(CvtOp::F32F16),
        "v_cvt_f32_ubyte0" => Op::Cvt(CvtOp::F32Ubyte(0)),
        "v_cvt_f32_ubyte1" => Op::Cvt(CvtOp::F32Ubyte(1)),
        "v_cvt_f32_ubyte2" => Op::Cvt(CvtOp::F32Ubyte(2)),
        "v_cvt_f32_ubyte3" => Op::Cvt(CvtOp::F32Ubyte(3)),
        "v_cvt_flr_i32_f32" | "v_cvt_floor_i32_f32" => Op::Cvt(CvtOp::FloorI32F32),
        "v_cvt_rpi_i32_f32" | "v_cvt_nearest_i32_f32" => Op::Cvt(CvtOp::NearestI32F32),
        "v_cvt_pkrtz_f16_f32" | "v_cvt_pk_rtz_f16_f32" => Op::Cvt(CvtOp::PkRtzF16F32),
        "v_pack_b32_f16" => Op::Cvt(CvtOp::PackB32F16),
        "v_cvt_f16_u16" => Op::Cvt(CvtOp::F16U16),
        "v_cvt_f16_i16" => Op::Cvt(CvtOp::F16I16),
        "v_cvt_u16_f16" => Op::Cvt(CvtOp::U16F16),
        "v_cvt_i16_f16" => Op::Cvt(CvtOp::I16F16),

        "v_add_f64" => Op::D(DOp::Add),
        "v_mul_f64" => Op::D(DOp::Mul),
        "v_fma_f64" => Op::D(DOp::Fma),
        "v_min_f64" | "v_min_num_f64" => Op::D(DOp::Min),
        "v_max_f64" | "v_max_num_f64" => Op::D(DOp::Max),
        "v_minimum_f64" => Op::D(DOp::Minimum),
        "v_maximum_f64" => Op::D(DOp::Maximum),
        "v_ldexp_f64" => Op::D(DOp::Ldexp),
        "v_rcp_f64" => Op::D(DOp::Rcp),
        "v_rsq_f64" => Op::D(DOp::Rsq),
        "v_sqrt_f64" => Op::D(DOp::Sqrt),
        "v_floor_f64" => Op::D(DOp::Floor),
        "v_ceil_f64" => Op::D(DOp::Ceil),
        "v_trunc_f64" => Op::D(DOp::Trunc),
        "v_rndne_f64" => Op::D(DOp::Rndne),
        "v_fract_f64" => Op::D(DOp::Fract),
        "v_frexp_mant_f64" => Op::D(DOp::FrexpMant),
        "v_frexp_exp_i32_f64" => Op::D(DOp::FrexpExp),
        "v_div_scale_f64" => Op::D(DOp::DivScale),
        "v_div_fmas_f64" => Op::D(DOp::DivFmas),
        "v_div_fixup_f64" => Op::D(DOp::DivFixup),
        "v_trig_preop_f64" => Op::D(DOp::TrigPreop),
        "v_cvt_f32_f64" => Op::D(DOp::F32F64),
        "v_cvt_f64_f32" => Op::D(DOp::F64F32),
        "v_cvt_f64_i32" => Op::D(DOp::F64I32),
        "v_cvt_f64_u32" => Op::D(DOp::F64U32),
        "v_cvt_i32_f64" => Op::D(DOp::I32F64),
        "v_cvt_u32_f64" => Op::D(DOp::U32F64),

        "v_lshlrev_b64" => Op::W(WOp::Lshlrev64),
        "v_lshrrev_b64" => Op::W(WOp::Lshrrev64),
        "v_ashrrev_i64" => Op::W(WOp::Ashrrev64),
        "v_mad_u64_u32" | "v_mad_co_u64_u32" => Op::W(WOp::MadU64U32),
        "v_mad_i64_i32" | "v_mad_co_i64_i32" => Op::W(WOp::MadI64I32),

        "v_add_co_u32" => Op::Carry(CarryOp::AddCo),
        "v_sub_co_u32" => Op::Carry(CarryOp::SubCo),
        "v_subrev_co_u32" => Op::Carry(CarryOp::SubrevCo),
        "v_add_co_ci_u32" => Op::Carry(CarryOp::AddCoCi),
        "v_sub_co_ci_u32" => Op::Carry(CarryOp::SubCoCi),
        "v_subrev_co_ci_u32" => Op::Carry(CarryOp::SubrevCoCi),

        "v_dot2_f32_f16" => Op::Dot(DotOp::F32F16),
        "v_dot2_f32_bf16" => Op::Dot(DotOp::F32Bf16),
        "v_dot2_f16_f16" => Op::Dot(DotOp::F16F16),
        "v_dot2c_f32_f16" | "v_dot2acc_f32_f16" => Op::Dot(DotOp::AccF32F16),
        "v_dot2_i32_i16" => Op::Dot(DotOp::I32I16),
        "v_dot2_u32_u16" => Op::Dot(DotOp::U32U16),
        "v_dot4_i32_i8" => Op::Dot(DotOp::I32I8),
        "v_dot4_u32_u8" => Op::Dot(DotOp::U32U8),
        "v_dot4_i32_iu8" => Op::Dot(DotOp::I32Iu8),
        "v_dot8_i32_i4" => Op::Dot(DotOp::I32I4),
        "v_dot8_u32_u4" => Op::Dot(DotOp::U32U4),
        "v_dot8_i32_iu4" => Op::Dot(DotOp::I32Iu4),
        "v_dot4c_i32_i8" => Op::Dot(DotOp::AccI32I8),

        "v_readlane_b32" => Op::Lane(LaneOp::Readlane),
        "v_readfirstlane_b32" => Op::Lane(LaneOp::Readfirstlane),
        "v_writelane_b32" => Op::Lane(LaneOp::Writelane),
        "v_swap_b32" => Op::Lane(LaneOp::Swap),
        "v_movrels_b32" => Op::Lane(LaneOp::Movrels),
        "v_movreld_b32" => Op::Lane(LaneOp::Movreld),
        "v_movrelsd_b32" => Op::Lane(LaneOp::Movrelsd),
        "v_permlane16_b32" => Op::Lane(LaneOp::Permlane16),
        "v_permlanex16_b32" => Op::Lane(LaneOp::Permlanex16),
        n if n.starts_with("v_wmma_") => Op::Wmma(crate::isa::valu::wmma::WmmaOp::lookup(n)?),
        n => {
            return crate::isa::valu::packed_int::lookup(n)
                .or_else(|| crate::isa::valu::fp8::lookup(n))
        }
    })
}

/// `v_cmp[x]_<cond>_<type>` and `v_cmp[x]_class_<type>`.
fn compare(rest: &str, exec: bool) -> Option<Op> {
    let (cond, ty) = rest.rsplit_once('_')?;
    let ty = match ty {
        "u16" => CmpTy::U16,
        "i16" => CmpTy::I16,
        "u32" => CmpTy::U32,
        "i32" => CmpTy::I32,
        "u64" => CmpTy::U64,
        "i64" => CmpTy::I64,
        "f16" => CmpTy::F16,
        "f32" => CmpTy::F32,
        "f64" => CmpTy::F64,
        _ => return None,
    };
    let float = matches!(ty, CmpTy::F16 | CmpTy::F32 | CmpTy::F64);
    if cond == "class" {
        return float.then_some(Op::Cmp(Cmp {
            ty,
            cond: 0,
            class: true,
            exec,
        }));
    }
    let conds: &[&str] = if float { &FLOAT_CONDS } else { &INT_CONDS };
    let cond = conds.iter().position(|c| *c == cond)? as u8;
    Some(Op::Cmp(Cmp {
        ty,
        cond,
        class: false,
        exec,
    }))
}

/// The mnemonic without the encoding suffix LLVM adds (`_e32`, `_e64`).
pub fn base_name(name: &str) -> &str {
    name.strip_suffix("_e32")
        .or_else(|| name.strip_suffix("_e64"))
        .unwrap_or(name)
}

impl Op {
    /// True when the operation's sources are 16-bit halves (the gfx11+
    /// VOP1/VOP2/VOPC encodings select the high half with VGPR bit 7).
    pub fn reads_16bit(&self) -> bool {
        match self {
            Op::H(_) | Op::I16(_) => true,
            Op::Cmp(c) => matches!(c.ty, CmpTy::F16 | CmpTy::U16 | CmpTy::I16),
            Op::Cvt(c) => matches!(
                c,
                CvtOp::F32F16
                    | CvtOp::PackB32F16
                    | CvtOp::F16U16
                    | CvtOp::F16I16
                    | CvtOp::U16F16
                    | CvtOp::I16F16
            ),
            _ => false,
        }
    }

    /// True when the result is a 16-bit half (the rest of the register is
    /// kept, as gfx10+ hardware does).
    pub fn writes_16bit(&self) -> bool {
        match self {
            Op::H(f) => !matches!(f, FOp::FrexpExp),
            Op::I16(_) => true,
            Op::Cvt(c) => matches!(
                c,
                CvtOp::F16F32 | CvtOp::F16U16 | CvtOp::F16I16 | CvtOp::U16F16 | CvtOp::I16F16
            ),
            _ => false,
        }
    }
}
