//! SDWA, gfx10's sub-dword addressing of VOP1/VOP2/VOPC: each source is a
//! byte, a word or the dword of its register (zero- or sign-extended), the
//! result is written to a byte, a word or the dword of the destination,
//! the rest of it zeroed, sign-extended or kept (DST_UNUSED).
//!
//! The SDWA dword (bits of the instruction's second dword): SRC0 7:0,
//! DST_SEL 10:8, DST_UNUSED 12:11, CLAMP 13, OMOD 15:14 (VOPC: SDST 14:8,
//! SD 15), SRC0_SEL 18:16, SRC0_SEXT 19, SRC0_NEG 20, SRC0_ABS 21, S0 23,
//! SRC1_SEL 26:24, SRC1_SEXT 27, SRC1_NEG 28, SRC1_ABS 29, S1 31. Selects:
//! 0-3 BYTE_0-3, 4-5 WORD_0-1, 6 DWORD.
//!
//! The operation itself runs unchanged on the selected values: they are
//! placed in scratch VGPRs past the kernel's allocation for the duration
//! of the instruction (the destination's scratch starts as its old value,
//! so accumulating operations and 16-bit results see it), then the result
//! is merged into the real destination under EXEC.

use relaunch_isa::Family;

use super::super::fault::IsaFault;
use super::super::operand::{scalar_dst_code, Dst, Src};
use super::super::program::Inst;
use super::super::wave::{Wave, MAX_LANES};
use super::{bits, exec, Enc, Mods, Prep};

/// The SDWA modifiers `prepare` reads into the VOP modifiers (abs, neg,
/// clamp, omod), or `None` when a field has no meaning here (a select of
/// 7, DST_UNUSED 3).
pub(super) fn prepare_mods(enc: Enc, w: u32, mods: &mut Mods) -> Option<()> {
    if bits(w, 18, 16) > 6 || bits(w, 26, 24) > 6 {
        return None;
    }
    mods.neg = (bits(w, 20, 20) | bits(w, 28, 28) << 1) as u8;
    mods.abs = (bits(w, 21, 21) | bits(w, 29, 29) << 1) as u8;
    match enc {
        Enc::Vop1 | Enc::Vop2 => {
            if bits(w, 10, 8) > 6 || bits(w, 12, 11) > 2 {
                return None;
            }
            mods.clamp = bits(w, 13, 13) != 0;
            mods.omod = bits(w, 15, 14) as u8;
            Some(())
        }
        Enc::Vopc => Some(()),
        Enc::Vop3 | Enc::Vop3p | Enc::Vopd => None,
    }
}

/// Whether gfx10 has an SDWA form of the 32-bit operation `base`: all but
/// the fmac accumulators (LLVM 19 assembles none for them).
pub fn exists(base: &str) -> bool {
    !matches!(base, "v_fmac_f32" | "v_fmac_f16")
}

/// The selected field of `v`, extended to 32 bits.
pub fn select(v: u32, sel: u32, sext: bool) -> u32 {
    match sel {
        0..=3 => {
            let b = (v >> (8 * sel)) & 0xFF;
            if sext {
                b as u8 as i8 as i32 as u32
            } else {
                b
            }
        }
        4 | 5 => {
            let h = (v >> (16 * (sel - 4))) & 0xFFFF;
            if sext {
                h as u16 as i16 as i32 as u32
            } else {
                h
            }
        }
        _ => v,
    }
}

/// The result `r` written to the `sel` field of `old`: the rest zeroed
/// (unused 0), sign-extended from the field (1) or kept (2).
pub fn place(r: u32, old: u32, sel: u32, unused: u32) -> u32 {
    let (shift, width) = match sel {
        0..=3 => (8 * sel, 8),
        4 | 5 => (16 * (sel - 4), 16),
        _ => return r,
    };
    let mask = ((1u32 << width) - 1) << shift;
    let field = (r << shift) & mask;
    match unused {
        2 => (old & !mask) | field,
        1 if field >> (shift + width - 1) & 1 != 0 => {
            // Every bit above the field set; below it zero.
            let above = if shift + width >= 32 {
                0
            } else {
                u32::MAX << (shift + width)
            };
            field | above
        }
        _ => field,
    }
}

/// A source named by an SDWA S bit: an SGPR or inline constant code.
fn scalar_source(family: Family, code: u32) -> Src {
    Src::from_operand(relaunch_isa::operand::source(family, code as u16, 1, None))
}

/// Execute an SDWA instruction (`w` its SDWA dword).
pub(super) fn execute(wave: &mut Wave, inst: &Inst, p: &Prep, w: u32) -> Result<(), IsaFault> {
    let family = wave.isa.family;
    let base = wave.vgpr.len();
    let lanes = wave.lanes;
    // Sources as named: S0/S1 turn the register fields into scalar codes.
    let s0 = if bits(w, 23, 23) != 0 {
        scalar_source(family, bits(w, 7, 0))
    } else {
        inst.src[0]
    };
    let s1 = match inst.src[1] {
        Src::Vgpr(r) if bits(w, 31, 31) != 0 => scalar_source(family, u32::from(r)),
        other => other,
    };
    let mut vals = [[0u32; MAX_LANES]; 2];
    for (i, (s, sel, sext)) in [
        (s0, bits(w, 18, 16), bits(w, 19, 19) != 0),
        (s1, bits(w, 26, 24), bits(w, 27, 27) != 0),
    ]
    .into_iter()
    .enumerate()
    {
        if s == Src::Null {
            continue;
        }
        wave.read_lanes(s, &mut vals[i])?;
        for v in vals[i].iter_mut().take(lanes) {
            *v = select(*v, sel, sext);
        }
    }
    let old = match inst.dst {
        Dst::Vgpr(r) if p.enc != Enc::Vopc => Some(*wave.v(r)?),
        _ => None,
    };
    let mut inner = inst.clone();
    let mut q = *p;
    q.sdwa = None;
    inner.src[0] = Src::Vgpr(base as u16);
    if s1 != Src::Null {
        inner.src[1] = Src::Vgpr(base as u16 + 1);
    }
    if old.is_some() {
        inner.dst = Dst::Vgpr(base as u16 + 2);
    }
    if p.enc == Enc::Vopc && bits(w, 15, 15) != 0 {
        // SD: the mask goes to SDST, as a VOP3 compare writes its dst.
        q.enc = Enc::Vop3;
        inner.dst = scalar_dst_code(family, bits(w, 14, 8) as u8);
    }
    wave.vgpr
        .extend_from_slice(&[vals[0], vals[1], old.unwrap_or([0; MAX_LANES])]);
    let r = exec::execute(wave, &inner, &q);
    let result = wave.vgpr[base + 2];
    wave.vgpr.truncate(base);
    r?;
    if let (Some(old), Dst::Vgpr(d)) = (old, inst.dst) {
        let (sel, unused) = (bits(w, 10, 8), bits(w, 12, 11));
        let exec_mask = wave.exec;
        let dst = wave.v_mut(d)?;
        for l in 0..lanes {
            if exec_mask >> l & 1 != 0 {
                dst[l] = place(result[l], old[l], sel, unused);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selects_and_places() {
        assert_eq!(select(0x8081_8283, 0, false), 0x83);
        assert_eq!(select(0x8081_8283, 1, true), 0xFFFF_FF82);
        assert_eq!(select(0x8081_8283, 5, false), 0x8081);
        assert_eq!(select(0x8081_8283, 5, true), 0xFFFF_8081);
        assert_eq!(select(0x8081_8283, 6, true), 0x8081_8283);
        assert_eq!(place(0x1234_5678, 0xAAAA_AAAA, 5, 2), 0x5678_AAAA);
        assert_eq!(place(0x1234_5678, 0xAAAA_AAAA, 5, 0), 0x5678_0000);
        assert_eq!(place(0x0000_0080, 0xAAAA_AAAA, 1, 1), 0xFFFF_8000);
        assert_eq!(place(0x0000_0070, 0xAAAA_AAAA, 1, 1), 0x0000_7000);
        assert_eq!(place(0x0000_8000, 0, 5, 1), 0x8000_0000);
        assert_eq!(place(7, 9, 6, 2), 7);
    }

    #[test]
    fn sdwa_instructions_select_and_merge() {
        use super::super::float::f32_to_f16;
        use super::super::tests::{isa, run, set, wave};
        let i = isa("gfx1030", false);
        let mut w = wave(i);
        set(&mut w, 0, |_| 0xAAAA_AAAA);
        set(&mut w, 1, |l| 0x1234_5678 + l as u32);
        set(&mut w, 2, |_| 0x0003_0010);
        // v_add_nc_u32_sdwa v0, v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE
        // src0_sel:BYTE_1 src1_sel:WORD_0: 0x56 + 0x10 into v0's high half.
        run(i, &[0xf9, 0x04, 0x00, 0x4a, 0x01, 0x15, 0x01, 0x04], &mut w);
        assert_eq!(w.vgpr[0][0], 0x0066_AAAA);
        // v_xor_b32_sdwa v0, sext(v1), v2 dst_sel:BYTE_0 dst_unused:UNUSED_SEXT
        // src0_sel:BYTE_0: sext(0x78 + 8) ^ v2 = 0x80 ^ 0x30010 -> byte 0x90,
        // sign-extended.
        set(&mut w, 1, |_| 0x1234_5680);
        run(i, &[0xf9, 0x04, 0x00, 0x3a, 0x01, 0x08, 0x08, 0x06], &mut w);
        assert_eq!(w.vgpr[0][0], 0xFFFF_FF90);
        // v_or_b32_sdwa v0, s2, v2 ... src0_sel:BYTE_2 (an SGPR by S0).
        w.sgpr[2] = 0x00AB_0000;
        run(i, &[0xf9, 0x04, 0x00, 0x38, 0x02, 0x06, 0x82, 0x06], &mut w);
        assert_eq!(w.vgpr[0][0], 0x0003_00BB);
        // v_cvt_f32_f16_sdwa v0, v1 src0_sel:WORD_1.
        set(&mut w, 1, |_| u32::from(f32_to_f16(1.5)) << 16);
        run(i, &[0xf9, 0x16, 0x00, 0x7e, 0x01, 0x16, 0x05, 0x00], &mut w);
        assert_eq!(f32::from_bits(w.vgpr[0][0]), 1.5);
        // v_add_f16_sdwa v0, -v1, |v2| dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE
        // src0_sel:WORD_1 src1_sel:WORD_0: -1.5 + |-4| into the high half.
        set(&mut w, 0, |_| 0x0000_1234);
        set(&mut w, 2, |_| u32::from(f32_to_f16(-4.0)));
        run(i, &[0xf9, 0x04, 0x00, 0x64, 0x01, 0x15, 0x15, 0x24], &mut w);
        assert_eq!(w.vgpr[0][0], u32::from(f32_to_f16(2.5)) << 16 | 0x1234);
        // v_cmp_ne_u16_sdwa s10 / vcc_lo, v1.hi, v2.lo: lane 0 differs.
        set(&mut w, 1, |l| (l as u32) << 16);
        set(&mut w, 2, |_| 0xFFFF_0000);
        run(i, &[0xf9, 0x04, 0x5a, 0x7d, 0x01, 0x8a, 0x05, 0x04], &mut w);
        assert_eq!(w.sgpr[10], 0xFFFF_FFFE);
        run(i, &[0xf9, 0x04, 0x5a, 0x7d, 0x01, 0x00, 0x05, 0x04], &mut w);
        assert_eq!(w.vcc() as u32, 0xFFFF_FFFE);
        // v_mul_u32_u24_sdwa v0, v1, v2 src0_sel:WORD_0 src1_sel:BYTE_0.
        set(&mut w, 1, |_| 0xFFFF_0003);
        set(&mut w, 2, |_| 0x0000_0105);
        run(i, &[0xf9, 0x04, 0x00, 0x16, 0x01, 0x06, 0x04, 0x00], &mut w);
        assert_eq!(w.vgpr[0][0], 15);
        // v_cvt_f32_u32_sdwa v0, v1 src0_sel:BYTE_3.
        set(&mut w, 1, |_| 0xC800_0000);
        run(i, &[0xf9, 0x0c, 0x00, 0x7e, 0x01, 0x06, 0x03, 0x00], &mut w);
        assert_eq!(f32::from_bits(w.vgpr[0][0]), 200.0);
        assert_eq!(w.vgpr.len(), 16, "the scratch registers are gone");
    }
}
