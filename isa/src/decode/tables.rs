//! The per-family opcode tables each format looks up, and the small
//! tables (VOPD, interpolation, export) the generated facts do not hold.

use crate::format::Format;
use crate::table::{self, Dst, Op};
use crate::Family;
use relaunch_facts::isa::{gfx10, gfx11, gfx12};

pub(super) struct Tables {
    pub(super) sop2: &'static [Op],
    pub(super) sopk: &'static [Op],
    pub(super) sop1: &'static [Op],
    pub(super) sopc: &'static [Op],
    pub(super) sopp: &'static [Op],
    pub(super) smem: &'static [Op],
    pub(super) vop2: &'static [Op],
    pub(super) vop1: &'static [Op],
    pub(super) vopc: &'static [Op],
    pub(super) vop3: &'static [Op],
    pub(super) vop3p: &'static [Op],
    pub(super) ds: &'static [Op],
    pub(super) flat: [&'static [Op]; 3],
    pub(super) mubuf: &'static [Op],
    pub(super) mtbuf: &'static [Op],
    pub(super) mimg: &'static [Op],
    pub(super) vsample: &'static [Op],
}

pub(super) fn tables(f: Family) -> Tables {
    match f {
        Family::Gfx10 => Tables {
            sop2: gfx10::SOP2,
            sopk: gfx10::SOPK,
            sop1: gfx10::SOP1,
            sopc: gfx10::SOPC,
            sopp: gfx10::SOPP,
            smem: gfx10::SMEM,
            vop2: gfx10::VOP2,
            vop1: gfx10::VOP1,
            vopc: gfx10::VOPC,
            vop3: gfx10::VOP3,
            vop3p: gfx10::VOP3P,
            ds: gfx10::DS,
            flat: [gfx10::FLAT0, gfx10::FLAT1, gfx10::FLAT2],
            mubuf: gfx10::MUBUF,
            mtbuf: gfx10::MTBUF,
            mimg: gfx10::MIMG,
            vsample: &[],
        },
        Family::Gfx11 => Tables {
            sop2: gfx11::SOP2,
            sopk: gfx11::SOPK,
            sop1: gfx11::SOP1,
            sopc: gfx11::SOPC,
            sopp: gfx11::SOPP,
            smem: gfx11::SMEM,
            vop2: gfx11::VOP2,
            vop1: gfx11::VOP1,
            vopc: gfx11::VOPC,
            vop3: gfx11::VOP3,
            vop3p: gfx11::VOP3P,
            ds: gfx11::DS,
            flat: [gfx11::FLAT0, gfx11::FLAT1, gfx11::FLAT2],
            mubuf: gfx11::MUBUF,
            mtbuf: gfx11::MTBUF,
            mimg: gfx11::MIMG,
            vsample: &[],
        },
        Family::Gfx12 => Tables {
            sop2: gfx12::SOP2,
            sopk: gfx12::SOPK,
            sop1: gfx12::SOP1,
            sopc: gfx12::SOPC,
            sopp: gfx12::SOPP,
            smem: gfx12::SMEM,
            vop2: gfx12::VOP2,
            vop1: gfx12::VOP1,
            vopc: gfx12::VOPC,
            vop3: gfx12::VOP3,
            vop3p: gfx12::VOP3P,
            ds: gfx12::DS,
            flat: [gfx12::FLAT0, gfx12::FLAT1, gfx12::FLAT2],
            mubuf: gfx12::MUBUF,
            mtbuf: &[],
            mimg: gfx12::VIMAGE,
            vsample: gfx12::VSAMPLE,
        },
    }
}

/// The table rows of `format` for `family` (every subtarget's), for tools
/// that list what a family encodes (the interpreter's implemented-opcode
/// list). Formats without a table here (VOPD, VINTERP, EXP, ...) are empty.
pub fn opcodes(family: Family, format: Format) -> &'static [Op] {
    let t = tables(family);
    match format {
        Format::Sop1 => t.sop1,
        Format::Sop2 => t.sop2,
        Format::Sopk => t.sopk,
        Format::Sopc => t.sopc,
        Format::Sopp => t.sopp,
        Format::Smem => t.smem,
        Format::Vop1 => t.vop1,
        Format::Vop2 => t.vop2,
        Format::Vopc => t.vopc,
        Format::Vop3 => t.vop3,
        Format::Vop3p => t.vop3p,
        Format::Ds => t.ds,
        Format::Flat => t.flat[0],
        Format::Scratch => t.flat[1],
        Format::Global => t.flat[2],
        Format::Mubuf | Format::Vbuffer => t.mubuf,
        Format::Mtbuf => t.mtbuf,
        Format::Mimg | Format::Vimage => t.mimg,
        Format::Vsample => t.vsample,
        Format::Vopd | Format::Vinterp | Format::Ldsdir | Format::Exp => &[],
    }
}

/// The VOPD half mnemonics of `family` (empty for gfx10).
pub fn vopd_names(family: Family) -> impl Iterator<Item = &'static str> {
    let names: &'static [&'static str] = match family {
        Family::Gfx10 => &[],
        Family::Gfx11 => &VOPD_GFX11,
        Family::Gfx12 => &VOPD_GFX12,
    };
    names.iter().copied().filter(|n| !n.is_empty())
}

pub(super) fn fam_index(f: Family) -> usize {
    match f {
        Family::Gfx10 => 0,
        Family::Gfx11 => 1,
        Family::Gfx12 => 2,
    }
}

const fn row(code: u16, name: &'static str) -> Op {
    table::op(code, name, Dst::V(1), Dst::None, 0, table::ALL)
}

pub(super) static EXP: [Op; 3] = [row(0, "exp"), row(0, "exp"), row(0, "export")];

pub(super) const VOPD_GFX11: [&str; 19] = [
    "v_dual_fmac_f32",
    "v_dual_fmaak_f32",
    "v_dual_fmamk_f32",
    "v_dual_mul_f32",
    "v_dual_add_f32",
    "v_dual_sub_f32",
    "v_dual_subrev_f32",
    "v_dual_mul_dx9_zero_f32",
    "v_dual_mov_b32",
    "v_dual_cndmask_b32",
    "v_dual_max_f32",
    "v_dual_min_f32",
    "v_dual_dot2acc_f32_f16",
    "v_dual_dot2acc_f32_bf16",
    "",
    "",
    "v_dual_add_nc_u32",
    "v_dual_lshlrev_b32",
    "v_dual_and_b32",
];
pub(super) const VOPD_GFX12: [&str; 19] = [
    "v_dual_fmac_f32",
    "v_dual_fmaak_f32",
    "v_dual_fmamk_f32",
    "v_dual_mul_f32",
    "v_dual_add_f32",
    "v_dual_sub_f32",
    "v_dual_subrev_f32",
    "v_dual_mul_dx9_zero_f32",
    "v_dual_mov_b32",
    "v_dual_cndmask_b32",
    "v_dual_max_num_f32",
    "v_dual_min_num_f32",
    "v_dual_dot2acc_f32_f16",
    "v_dual_dot2acc_f32_bf16",
    "",
    "",
    "v_dual_add_nc_u32",
    "v_dual_lshlrev_b32",
    "v_dual_and_b32",
];

macro_rules! vopd_rows {
    ($names:expr) => {{
        let n = $names;
        [
            row(0, n[0]),
            row(1, n[1]),
            row(2, n[2]),
            row(3, n[3]),
            row(4, n[4]),
            row(5, n[5]),
            row(6, n[6]),
            row(7, n[7]),
            row(8, n[8]),
            row(9, n[9]),
            row(10, n[10]),
            row(11, n[11]),
            row(12, n[12]),
            row(13, n[13]),
            row(16, n[16]),
            row(17, n[17]),
            row(18, n[18]),
        ]
    }};
}

pub(super) static VOPD_OPS: [[Op; 17]; 3] = [
    vopd_rows!(VOPD_GFX11),
    vopd_rows!(VOPD_GFX11),
    vopd_rows!(VOPD_GFX12),
];

pub(super) static VINTRP_GFX10: [Op; 3] = [
    row(0, "v_interp_p1_f32_e32"),
    row(1, "v_interp_p2_f32_e32"),
    row(2, "v_interp_mov_f32_e32"),
];
pub(super) static VINTERP: [Op; 6] = [
    row(0, "v_interp_p10_f32"),
    row(1, "v_interp_p2_f32"),
    row(2, "v_interp_p10_f16_f32"),
    row(3, "v_interp_p2_f16_f32"),
    row(4, "v_interp_p10_rtz_f16_f32"),
    row(5, "v_interp_p2_rtz_f16_f32"),
];
pub(super) static LDSDIR_GFX11: [Op; 2] = [row(0, "lds_param_load"), row(1, "lds_direct_load")];
pub(super) static LDSDIR_GFX12: [Op; 2] = [row(0, "ds_param_load"), row(1, "ds_direct_load")];
