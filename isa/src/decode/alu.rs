//! Scalar and vector ALU formats (SOP*, VOP*, VOPD, interpolation, export):
//! the per-format field layout, dispatching memory formats to `memory`.

use super::tables::{
    fam_index, Tables, EXP, LDSDIR_GFX11, LDSDIR_GFX12, VINTERP, VINTRP_GFX10, VOPD_GFX11,
    VOPD_GFX12, VOPD_OPS,
};
use super::{bits, scalar_width, sext, u32_at, vgpr, Builder, Modifier};
use crate::format::Format;
use crate::operand::{self, Operand, Role};
use crate::table::{self, Dst, Op, LIT};
use crate::Family;

impl Builder<'_> {
    pub(super) fn fill(
        &mut self,
        t: &Tables,
        w: &[u32; 4],
    ) -> Option<(&'static Op, Option<&'static str>)> {
        let f = self.isa.family;
        let sub = self.isa.sub();
        let d0 = w[0];
        let d1 = w[1];
        let find = |tab: &'static [Op], code: u32| table::find(tab, code as u16, sub);
        let op = match self.format {
            Format::Sop2 => {
                let op = find(t.sop2, bits(d0, 29, 23))?;
                self.dst(Role::Dst, op.dst, bits(d0, 22, 16) as u16, false);
                let n = scalar_width(op);
                self.src(Role::Src0, bits(d0, 7, 0) as u16, n);
                self.src(Role::Src1, bits(d0, 15, 8) as u16, n);
                // s_fmaak/s_fmamk_f32 carry their constant as the literal.
                if op.flags & LIT != 0 {
                    let l = self.take_literal()?;
                    self.push(Role::Src2, Operand::Literal(l));
                }
                op
            }
            Format::Sopk => {
                let op = find(t.sopk, bits(d0, 27, 23))?;
                self.dst(Role::Dst, op.dst, bits(d0, 22, 16) as u16, false);
                self.push(Role::Simm, Operand::Imm(sext(bits(d0, 15, 0), 16)));
                if op.flags & LIT != 0 {
                    let l = self.take_literal()?;
                    self.push(Role::Src0, Operand::Literal(l));
                }
                op
            }
            Format::Sop1 => {
                let op = find(t.sop1, bits(d0, 15, 8))?;
                self.dst(Role::Dst, op.dst, bits(d0, 22, 16) as u16, false);
                self.src(Role::Src0, bits(d0, 7, 0) as u16, scalar_width(op));
                op
            }
            Format::Sopc => {
                let op = find(t.sopc, bits(d0, 22, 16))?;
                let n = scalar_width(op);
                self.src(Role::Src0, bits(d0, 7, 0) as u16, n);
                self.src(Role::Src1, bits(d0, 15, 8) as u16, n);
                op
            }
            Format::Sopp => {
                let op = find(t.sopp, bits(d0, 22, 16))?;
                self.push(Role::Simm, Operand::Imm(sext(bits(d0, 15, 0), 16)));
                op
            }
            Format::Smem => self.smem(t, d0, d1)?,
            Format::Vop2 => {
                let op = find(t.vop2, bits(d0, 30, 25))?;
                self.dst(Role::Dst, op.dst, bits(d0, 24, 17) as u16, true);
                self.vop_src0(bits(d0, 8, 0) as u16).then_some(())?;
                self.push(
                    Role::Src1,
                    Operand::Vgpr {
                        first: bits(d0, 16, 9) as u16,
                        count: 1,
                    },
                );
                if op.flags & LIT != 0 {
                    let l = self.take_literal()?;
                    self.push(Role::Src2, Operand::Literal(l));
                }
                op
            }
            Format::Vop1 => {
                let op = find(t.vop1, bits(d0, 16, 9))?;
                // v_readfirstlane_b32 names an SGPR in the VDST field.
                let vd = matches!(op.dst, Dst::V(_));
                self.dst(Role::Dst, op.dst, bits(d0, 24, 17) as u16, vd);
                self.vop_src0(bits(d0, 8, 0) as u16).then_some(())?;
                op
            }
            Format::Vopc => {
                let op = find(t.vopc, bits(d0, 24, 17))?;
                self.vop_src0(bits(d0, 8, 0) as u16).then_some(())?;
                self.push(
                    Role::Src1,
                    Operand::Vgpr {
                        first: bits(d0, 16, 9) as u16,
                        count: 1,
                    },
                );
                // e32 compares write VCC (v_cmpx: EXEC) implicitly.
                let implicit = if op.name.starts_with("v_cmpx") {
                    operand::Special::ExecLo
                } else {
                    operand::Special::VccLo
                };
                self.writes.push(Operand::Special(implicit));
                op
            }
            Format::Vop3 | Format::Vop3p => {
                let (tab, code) = if self.format == Format::Vop3 {
                    (t.vop3, bits(d0, 25, 16))
                } else {
                    (t.vop3p, bits(d0, 22, 16))
                };
                let op = find(tab, code)?;
                let vd = matches!(op.dst, Dst::V(_));
                self.dst(Role::Dst, op.dst, bits(d0, 7, 0) as u16, vd);
                if op.sdst != Dst::None {
                    self.dst(Role::Sdst, op.sdst, bits(d0, 14, 8) as u16, false);
                }
                let s0 = bits(d1, 8, 0) as u16;
                let dpp = match s0 {
                    0xFA | 0xE9 | 0xEA if f.facts().isa.vop3_dpp => true,
                    0xFA | 0xE9 | 0xEA | 0xF9 => return None,
                    _ => false,
                };
                if dpp {
                    let word = u32_at(self.code, self.base / 4).unwrap_or(0);
                    self.modifier = Some(if s0 == 0xFA {
                        Modifier::Dpp16(word)
                    } else {
                        Modifier::Dpp8(word)
                    });
                    self.extra = 4;
                    self.push(
                        Role::Src0,
                        Operand::Vgpr {
                            first: (word & 0xFF) as u16,
                            count: 1,
                        },
                    );
                } else {
                    self.src(Role::Src0, s0, 1);
                }
                self.src(Role::Src1, bits(d1, 17, 9) as u16, 1);
                self.src(Role::Src2, bits(d1, 26, 18) as u16, 1);
                op
            }
            Format::Vopd => return self.vopd(d0, d1),
            Format::Vinterp | Format::Ldsdir => return self.interp(d0),
            Format::Exp => return Some((&EXP[fam_index(f)], None)),
            Format::Ds => {
                let op = find(t.ds, bits(d0, 25, 18))?;
                self.dst(Role::Dst, op.dst, bits(d1, 31, 24) as u16, true);
                self.push(Role::Addr, vgpr(bits(d1, 7, 0)));
                self.push(Role::Data, vgpr(bits(d1, 15, 8)));
                self.push(Role::Offset, Operand::Imm(bits(d0, 15, 0) as i64));
                op
            }
            Format::Flat | Format::Global | Format::Scratch => self.flat(t, w)?,
            Format::Mubuf | Format::Mtbuf | Format::Vbuffer => self.buffer(t, w)?,
            Format::Mimg | Format::Vimage | Format::Vsample => self.image(t, w)?,
        };
        Some((op, None))
    }

    fn vopd(&mut self, d0: u32, d1: u32) -> Option<(&'static Op, Option<&'static str>)> {
        let f = self.isa.family;
        let (names_x, names_y): (&[&str], &[&str]) = match f {
            Family::Gfx10 => return None,
            Family::Gfx11 => (&VOPD_GFX11, &VOPD_GFX11),
            Family::Gfx12 => (&VOPD_GFX12, &VOPD_GFX12),
        };
        let opx = bits(d0, 25, 22) as usize;
        let opy = bits(d0, 21, 17) as usize;
        let nx = names_x.get(opx).copied().filter(|n| !n.is_empty())?;
        let ny = names_y.get(opy).copied().filter(|n| !n.is_empty())?;
        let vdstx = bits(d1, 31, 24) as u16;
        let vdsty = (bits(d1, 23, 17) << 1) as u16 | ((vdstx & 1) ^ 1);
        self.push(Role::Dst, vgpr(vdstx.into()));
        self.writes.push(vgpr(vdstx.into()));
        self.writes.push(vgpr(vdsty.into()));
        self.src(Role::Src0, bits(d0, 8, 0) as u16, 1);
        self.src(Role::Src0, bits(d1, 8, 0) as u16, 1);
        // fmaak/fmamk carry their constant as the literal.
        if [opx, opy].iter().any(|&o| o == 1 || o == 2) {
            self.take_literal()?;
        }
        let op = VOPD_OPS[fam_index(f)].iter().find(|o| o.name == nx)?;
        Some((op, Some(ny)))
    }

    fn interp(&mut self, d0: u32) -> Option<(&'static Op, Option<&'static str>)> {
        let f = self.isa.family;
        let (table, code): (&'static [Op], u32) = match (self.format, f) {
            (Format::Vinterp, Family::Gfx10) => (&VINTRP_GFX10, bits(d0, 17, 16)),
            (Format::Vinterp, _) => (&VINTERP, bits(d0, 22, 16)),
            (_, Family::Gfx11) => (&LDSDIR_GFX11, bits(d0, 21, 20)),
            (_, _) => (&LDSDIR_GFX12, bits(d0, 21, 20)),
        };
        let op = table::find(table, code as u16, table::ALL)?;
        let vdst = match (self.format, f) {
            (Format::Vinterp, Family::Gfx10) => bits(d0, 25, 18),
            _ => bits(d0, 7, 0),
        };
        self.dst(Role::Dst, Dst::V(1), vdst as u16, true);
        Some((op, None))
    }
}
