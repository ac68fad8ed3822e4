//! The vector ALU: VOP1, VOP2, VOPC, VOP3 (and VOP3SD), VOP3P and VOPD,
//! with DPP16/DPP8 on the first source, VOP3 input/output modifiers (abs,
//! neg, omod, clamp, op_sel), VOP3P packed f16 and the dot products
//! (`dot`).
//!
//! `prepare` resolves an instruction once at program build (operation,
//! modifiers, DPP control); `execute` runs it over the wave's lanes in
//! fixed-size arrays. Whatever `prepare` cannot give an exact meaning to
//! (SDWA, VINTERP, an operation not in `ops::lookup`, a modifier the
//! operation does not take) stays unimplemented: running it is an
//! [`IsaFault::Unimplemented`] naming it. What is modelled of MODE: f32
//! and f16 denormal flushing (FP_DENORM); only round-to-nearest-even
//! (FP_ROUND = 0) runs, other round modes fault. NaN payloads follow the
//! host's, and min/max return the non-NaN operand (IEEE mode's quieting of
//! signalling NaNs is not modelled).

mod cmp;
pub(crate) mod cvt;
mod dot;
mod exec;
mod f64;
mod f64_steps;
pub(crate) mod fast;
#[cfg(test)]
mod fast_tests;
pub mod float;
mod fp;
mod fp8;
#[cfg(test)]
mod fp8_tests;
mod half;
pub(crate) use half::f16_lane;
mod int16;
#[cfg(test)]
mod lane_tests;
mod mix;
pub mod ops;
mod packed_int;
#[cfg(test)]
mod permlane_tests;
pub mod round;
mod sdwa;
mod src;
#[cfg(test)]
mod tests;
mod vopd;
mod wmma;
#[cfg(test)]
mod wmma_ref;
#[cfg(test)]
mod wmma_tests;

use relaunch_isa::{Family, Format, Instruction, Isa, Modifier};

use super::fault::{Flow, IsaFault};
use super::program::{Inst, Kind};
use super::wave::Wave;
use super::Ctx;
use ops::{lookup, Op};

/// Which encoding an instruction came in: where its implicit operands
/// (VCC, the carry in) are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enc {
    Vop1,
    Vop2,
    Vopc,
    Vop3,
    Vop3p,
    Vopd,
}

/// The DPP control of the first source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dpp {
    None,
    /// DPP16: `ctrl` is DPP_CTRL; lanes outside `row_mask`/`bank_mask` are
    /// not written; an invalid source lane reads 0 with `bound_zero`, else
    /// the lane is not written; `fi` fetches from inactive lanes.
    Row {
        ctrl: u16,
        row_mask: u8,
        bank_mask: u8,
        bound_zero: bool,
        fi: bool,
    },
    /// DPP8: lane `l` reads lane `(l & !7) | sel[l & 7]`.
    Lane8 {
        sel: u32,
        fi: bool,
    },
}

/// Source and output modifiers (one bit per source in `abs`/`neg`/...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mods {
    pub abs: u8,
    pub neg: u8,
    /// VOP3P: negation of the high halves.
    pub neg_hi: u8,
    /// VOP3: bits 0-2 pick the high half of 16-bit sources, bit 3 writes
    /// the high half; VOP3P: the half each source gives the low result.
    pub opsel: u8,
    /// VOP3P: the half each source gives the high result.
    pub opsel_hi: u8,
    pub clamp: bool,
    /// 0 none, 1 x2, 2 x4, 3 /2.
    pub omod: u8,
}

/// The second half of a VOPD pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VopdPair {
    pub x: Op,
    pub y: Op,
    pub vsrc1_x: u16,
    pub vsrc1_y: u16,
    pub vdst_y: u16,
}

/// What `prepare` resolved for one instruction, stored in the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prep {
    pub op: Op,
    pub enc: Enc,
    pub mods: Mods,
    pub dpp: Dpp,
    pub vopd: Option<VopdPair>,
    /// gfx10 SDWA: the SDWA dword (`sdwa`).
    pub sdwa: Option<u32>,
}

fn bits(v: u32, hi: u32, lo: u32) -> u32 {
    (v >> lo) & ((1u32 << (hi - lo + 1)) - 1)
}

/// Resolve a decoded VOP*/VOPD/VINTERP instruction once, at program build.
/// `words` are the instruction's raw dwords (`Inst::words`): the VOP3
/// modifiers, op_sel and the VOPD second half are read from them.
/// `None`: not implemented (executing it is an [`IsaFault::Unimplemented`]).
pub fn prepare(isa: Isa, inst: &Instruction, words: &[u32; 4]) -> Option<Prep> {
    let enc = match inst.format {
        Format::Vop1 => Enc::Vop1,
        Format::Vop2 => Enc::Vop2,
        Format::Vopc => Enc::Vopc,
        Format::Vop3 => Enc::Vop3,
        Format::Vop3p => Enc::Vop3p,
        Format::Vopd => return prepare_vopd(inst, words),
        _ => return None,
    };
    let op = lookup(ops::base_name(inst.name))?;
    let (d0, d1) = (words[0], words[1]);
    let mut mods = Mods::default();
    let mut sdwa = None;
    let dpp = match inst.modifier {
        None => Dpp::None,
        Some(Modifier::Sdwa(w)) => {
            sdwa::prepare_mods(enc, w, &mut mods)?;
            sdwa = Some(w);
            Dpp::None
        }
        Some(Modifier::Dpp16(w)) => {
            if matches!(enc, Enc::Vop1 | Enc::Vop2 | Enc::Vopc) {
                mods.neg = (bits(w, 20, 20) | bits(w, 22, 22) << 1) as u8;
                mods.abs = (bits(w, 21, 21) | bits(w, 23, 23) << 1) as u8;
            }
            let ctrl = bits(w, 16, 8) as u16;
            if !dpp16_valid(ctrl) {
                return None;
            }
            Dpp::Row {
                ctrl,
                row_mask: bits(w, 31, 28) as u8,
                bank_mask: bits(w, 27, 24) as u8,
                bound_zero: bits(w, 19, 19) != 0,
                fi: bits(w, 18, 18) != 0,
            }
        }
        Some(Modifier::Dpp8(w)) => Dpp::Lane8 {
            sel: w >> 8,
            // The EA form of the src0 field is DPP8 with fetch-inactive.
            fi: bits(d0, 8, 0) == 0xEA
                || (enc == Enc::Vop3 && bits(d1, 8, 0) == 0xEA)
                || (enc == Enc::Vop3p && bits(d1, 8, 0) == 0xEA),
        },
    };
    // VOP3SD: bits 14:8 are the second destination, not abs/op_sel.
    let vop3sd = matches!(
        op,
        Op::Carry(_)
            | Op::W(ops::WOp::MadU64U32 | ops::WOp::MadI64I32)
            | Op::F(ops::FOp::DivScale)
            | Op::D(ops::DOp::DivScale)
    );
    match enc {
        Enc::Vop3 if vop3sd => {
            mods.clamp = bits(d0, 15, 15) != 0;
            mods.omod = bits(d1, 28, 27) as u8;
            mods.neg = bits(d1, 31, 29) as u8;
        }
        Enc::Vop3 => {
            mods.abs = bits(d0, 10, 8) as u8;
            mods.opsel = bits(d0, 14, 11) as u8;
            mods.clamp = bits(d0, 15, 15) != 0;
            mods.omod = bits(d1, 28, 27) as u8;
            mods.neg = bits(d1, 31, 29) as u8;
        }
        Enc::Vop3p => {
            mods.neg_hi = bits(d0, 10, 8) as u8;
            mods.opsel = bits(d0, 13, 11) as u8;
            mods.opsel_hi = (bits(d1, 28, 27) | bits(d0, 14, 14) << 2) as u8;
            mods.clamp = bits(d0, 15, 15) != 0;
            mods.neg = bits(d1, 31, 29) as u8;
        }
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vopd => {}
    }
    if let Op::Wmma(w) = op {
        if !wmma::fits(isa.family, w, enc, &mods, dpp, d1) {
            return None;
        }
    }
    if !modifiers_fit(isa, op, enc, &mods, dpp) {
        return None;
    }
    if sdwa.is_some() && !sdwa_fits(op) {
        return None;
    }
    Some(Prep {
        op,
        enc,
        mods,
        dpp,
        vopd: None,
        sdwa,
    })
}

/// Whether the operation gives the modifiers a meaning the interpreter
/// models; anything else is left unimplemented rather than guessed.
fn modifiers_fit(isa: Isa, op: Op, enc: Enc, m: &Mods, dpp: Dpp) -> bool {
    if let Op::Wmma(_) = op {
        // Checked with the operand fields in `prepare`.
        return true;
    }
    if let Op::Dot(d) = op {
        return dot::modifiers_fit(d, enc, m, dpp);
    }
    if let Op::D(d) = op {
        return f64::modifiers_fit(d, m, dpp);
    }
    if let Op::PkI(i) = op {
        return packed_int::modifiers_fit(i, m);
    }
    if let Op::Fp8(f) = op {
        return fp8::modifiers_fit(f, enc, m);
    }
    let float = matches!(op, Op::F(_) | Op::H(_) | Op::Pk(_) | Op::Mix(_));
    let float_src = float
        || matches!(
            op,
            Op::Cvt(
                ops::CvtOp::U32F32
                    | ops::CvtOp::I32F32
                    | ops::CvtOp::F16F32
                    | ops::CvtOp::F32F16
                    | ops::CvtOp::FloorI32F32
                    | ops::CvtOp::NearestI32F32
                    | ops::CvtOp::PkRtzF16F32
                    | ops::CvtOp::PackB32F16
                    | ops::CvtOp::U16F16
                    | ops::CvtOp::I16F16
            )
        )
        || matches!(op, Op::Cmp(c) if matches!(c.ty, ops::CmpTy::F16 | ops::CmpTy::F32 | ops::CmpTy::F64))
        // Sign-bit modifiers on a select or move are plain bit operations.
        || matches!(op, Op::I(ops::IOp::Cndmask | ops::IOp::Mov));
    let float_out = float
        || matches!(
            op,
            Op::Cvt(
                ops::CvtOp::F32U32
                    | ops::CvtOp::F32I32
                    | ops::CvtOp::F16F32
                    | ops::CvtOp::F32F16
                    | ops::CvtOp::F32Ubyte(_)
            )
        );
    if (m.abs | m.neg | m.neg_hi) != 0 && !float_src {
        return false;
    }
    // Integer clamp saturates the 16-bit adds and mads and the u32 and
    // i32 add/sub; no integer operation has omod.
    let saturates = matches!(op, Op::I16(i) if i.saturates())
        || matches!(
            op,
            Op::I(
                ops::IOp::Add | ops::IOp::Sub | ops::IOp::Subrev | ops::IOp::AddI | ops::IOp::SubI
            )
        );
    if m.omod != 0 && !float_out {
        return false;
    }
    if m.clamp && !float_out && !saturates {
        return false;
    }
    // omod is defined for f32 results only here.
    if m.omod != 0 && !matches!(op, Op::F(_) | Op::Cvt(_)) {
        return false;
    }
    // A mix reads 32-bit registers whole or by half: no DPP here.
    if matches!(op, Op::Mix(_)) && dpp != Dpp::None {
        return false;
    }
    // op_sel on VOP3 only means something for 16-bit operands, and as
    // the permlanes' FI and BOUND_CTRL bits (OP_SEL[1:0]).
    let permlane = matches!(
        op,
        Op::Lane(ops::LaneOp::Permlane16 | ops::LaneOp::Permlanex16)
    );
    if enc == Enc::Vop3
        && m.opsel != 0
        && !(op.reads_16bit() || op.writes_16bit() || (permlane && m.opsel < 4))
    {
        return false;
    }
    if enc == Enc::Vop3p && !matches!(op, Op::Pk(_) | Op::Mix(_)) {
        return false;
    }
    // DPP reads a 32-bit VGPR; 64-bit operations have no DPP form here.
    if dpp != Dpp::None && matches!(op, Op::W(_) | Op::Lane(_)) {
        return false;
    }
    // DPP on gfx10 exists only in the 32-bit encodings; gfx11 added VOP3
    // forms with DPP.
    let dpp_in_vop3 = isa.family.facts().isa.vop3_dpp;
    if dpp != Dpp::None && !dpp_in_vop3 && !matches!(enc, Enc::Vop1 | Enc::Vop2 | Enc::Vopc) {
        return false;
    }
    true
}

/// Operations SDWA gives a meaning here: 32-bit lane operations whose
/// sources and result are one VGPR each (not the 64-bit ones, cross-lane
/// reads, or dots).
fn sdwa_fits(op: Op) -> bool {
    match op {
        Op::I(_) | Op::I16(_) | Op::F(_) | Op::H(_) | Op::Cvt(_) | Op::Carry(_) | Op::Nop => true,
        Op::Cmp(c) => !matches!(c.ty, ops::CmpTy::U64 | ops::CmpTy::I64 | ops::CmpTy::F64),
        Op::Pk(_)
        | Op::PkI(_)
        | Op::Fp8(_)
        | Op::Mix(_)
        | Op::D(_)
        | Op::W(_)
        | Op::Lane(_)
        | Op::Dot(_)
        | Op::Wmma(_) => false,
    }
}

/// DPP_CTRL values of gfx10+ (quad_perm, row_shl/shr/ror, row_mirror,
/// row_half_mirror, row_share, row_xmask).
fn dpp16_valid(ctrl: u16) -> bool {
    matches!(ctrl, 0x000..=0x0FF | 0x101..=0x10F | 0x111..=0x11F | 0x121..=0x12F | 0x140 | 0x141 | 0x150..=0x16F)
}

fn prepare_vopd(inst: &Instruction, words: &[u32; 4]) -> Option<Prep> {
    let dual = |n: &str| {
        let n = n.strip_prefix("v_dual_")?;
        lookup(&format!("v_{n}"))
    };
    let x = dual(inst.name)?;
    let y = dual(inst.name_y?)?;
    if !vopd::supported(x) || !vopd::supported(y) {
        return None;
    }
    let (d0, d1) = (words[0], words[1]);
    let vdst_x = bits(d1, 31, 24) as u16;
    Some(Prep {
        op: x,
        enc: Enc::Vopd,
        mods: Mods::default(),
        dpp: Dpp::None,
        sdwa: None,
        vopd: Some(VopdPair {
            x,
            y,
            vsrc1_x: bits(d0, 16, 9) as u16,
            vsrc1_y: bits(d1, 16, 9) as u16,
            vdst_y: ((bits(d1, 23, 17) << 1) as u16) | ((vdst_x & 1) ^ 1),
        }),
    })
}

/// Execute one vector ALU instruction on `wave`.
pub fn execute(wave: &mut Wave, inst: &Inst, _ctx: &mut Ctx<'_>) -> Result<Flow, IsaFault> {
    run(wave, inst).map(|()| Flow::Next)
}

/// Execute without the memory context (the vector ALU never touches
/// memory): the form resolved at program build (`fast`) when there is
/// one, else the general path.
#[inline]
pub(crate) fn run(wave: &mut Wave, inst: &Inst) -> Result<(), IsaFault> {
    let r = match inst.fast {
        Some(f) => f(wave, inst).map(|_| ()).map_err(|e| *e),
        None => general(wave, inst),
    };
    r.map_err(|e| name_fault(e, inst))
}

/// The general path: any prepared instruction (operand faults not yet
/// named).
fn general(wave: &mut Wave, inst: &Inst) -> Result<(), IsaFault> {
    // By reference: the prepared form is large, and copied out per
    // instruction it cost more than some operations.
    let Kind::Valu(p) = &inst.kind else {
        return Err(unimplemented(wave, inst));
    };
    if let Some(pair) = &p.vopd {
        vopd::execute(wave, inst, pair)
    } else if let Some(w) = p.sdwa {
        sdwa::execute(wave, inst, p, w)
    } else {
        exec::execute(wave, inst, p)
    }
}

/// The fault for an instruction `prepare` refused.
fn unimplemented(wave: &Wave, inst: &Inst) -> IsaFault {
    IsaFault::Unimplemented {
        mnemonic: inst.decoded.mnemonic(),
        family: wave.isa.family,
    }
}

/// Operand faults are raised without the mnemonic (the operand helpers do
/// not know it): name it here.
#[cold]
pub(crate) fn name_fault(e: IsaFault, inst: &Inst) -> IsaFault {
    match e {
        IsaFault::Operand { mnemonic, why } if mnemonic.is_empty() => IsaFault::Operand {
            mnemonic: inst.decoded.mnemonic(),
            why,
        },
        other => other,
    }
}

/// The mnemonics (as LLVM spells them, `_e32`/`_e64` included) this module
/// executes on `family`: what the LLVM round-trip test assembles. Every
/// VOP1/VOP2/VOPC/VOP3/VOP3P row of the family's decoder tables whose
/// operation `ops::lookup` knows, and the VOPD pairs' halves.
pub fn implemented(family: Family) -> &'static [&'static str] {
    use std::sync::OnceLock;
    static LISTS: [OnceLock<Vec<&'static str>>; 3] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let i = match family {
        Family::Gfx10 => 0,
        Family::Gfx11 => 1,
        Family::Gfx12 => 2,
    };
    LISTS[i].get_or_init(|| {
        let mut names: Vec<&'static str> = Vec::new();
        for format in [
            Format::Vop1,
            Format::Vop2,
            Format::Vopc,
            Format::Vop3,
            Format::Vop3p,
        ] {
            for row in relaunch_isa::opcodes(family, format) {
                if let Some(op) = lookup(ops::base_name(row.name)) {
                    // VOP3P rows are only the packed operations and dots.
                    if format == Format::Vop3p
                        && !matches!(
                            op,
                            Op::Pk(_) | Op::PkI(_) | Op::Dot(_) | Op::Mix(_) | Op::Wmma(_)
                        )
                    {
                        continue;
                    }
                    names.push(row.name);
                }
            }
        }
        // gfx10's SDWA forms of the 32-bit encodings (`X_sdwa` for a
        // VOP1/VOP2/VOPC `X_e32` row).
        if family.facts().isa.sdwa {
            for format in [Format::Vop1, Format::Vop2, Format::Vopc] {
                for row in relaunch_isa::opcodes(family, format) {
                    let Some(base) = row.name.strip_suffix("_e32") else {
                        continue;
                    };
                    if lookup(base).is_some_and(|op| sdwa_fits(op) && sdwa::exists(base)) {
                        let name: &'static str = Box::leak(format!("{base}_sdwa").into_boxed_str());
                        names.push(name);
                    }
                }
            }
        }
        for name in relaunch_isa::vopd_names(family) {
            if let Some(op) = name
                .strip_prefix("v_dual_")
                .and_then(|n| lookup(&format!("v_{n}")))
            {
                if vopd::supported(op) {
                    names.push(name);
                }
            }
        }
        names.sort_unstable();
        names.dedup();
        names
    })
}
