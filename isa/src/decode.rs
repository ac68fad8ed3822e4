//! Field extraction per format: length, table lookup, operands, writes.

use crate::format::Format;
use crate::operand::{self, null_code, Field, Operand, Role};
use crate::table::{self, Dst, Op, INDIRECT, LIT, W32, W64};
use crate::{Decoded, Family, Isa};
use relaunch_facts::isa::{gfx10, gfx11, gfx12};

/// The modifier word a VOP instruction carries after its base encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modifier {
    Dpp16(u32),
    Dpp8(u32),
    Sdwa(u32),
}

/// One decoded instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct Instruction {
    /// Length in bytes (with literal, DPP/SDWA and NSA dwords).
    pub len: usize,
    pub format: Format,
    pub opcode: u16,
    /// The table mnemonic (`v_add_f32_e32`); [`Instruction::mnemonic`]
    /// adds the DPP/SDWA suffix LLVM prints.
    pub name: &'static str,
    /// VOPD only: the Y half's mnemonic.
    pub name_y: Option<&'static str>,
    pub fields: Vec<Field>,
    pub literal: Option<u32>,
    pub modifier: Option<Modifier>,
    /// Registers the instruction writes (explicit destinations; VCC/EXEC
    /// where the format writes them implicitly).
    pub writes: Vec<Operand>,
    /// The destination is indexed at run time (s_movreld): any SGPR may be
    /// written.
    pub writes_any_sgpr: bool,
}

impl Instruction {
    /// The mnemonic as LLVM prints it.
    pub fn mnemonic(&self) -> String {
        let strip = |n: &str| n.strip_suffix("_e32").unwrap_or(n).to_string();
        match (self.modifier, self.format) {
            (None, _) => self.name.to_string(),
            (Some(Modifier::Sdwa(_)), _) => strip(self.name) + "_sdwa",
            (Some(_), Format::Vop3 | Format::Vop3p) => self.name.to_string() + "_dpp",
            (Some(_), _) => strip(self.name) + "_dpp",
        }
    }

    /// The first field with `role`.
    pub fn field(&self, role: Role) -> Option<Operand> {
        self.fields.iter().find(|f| f.role == role).map(|f| f.value)
    }

    /// The SGPRs this instruction may write, as (first, count) ranges.
    pub fn sgpr_writes(&self) -> impl Iterator<Item = (u8, u8)> + '_ {
        self.writes.iter().filter_map(|w| w.sgprs())
    }
}

fn u32_at(b: &[u8], i: usize) -> Option<u32> {
    let s = b.get(4 * i..4 * i + 4)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn bits(v: u32, hi: u32, lo: u32) -> u32 {
    (v >> lo) & ((1u32 << (hi - lo + 1)) - 1)
}

fn sext(v: u32, width: u32) -> i64 {
    let shift = 64 - width;
    (((v as u64) << shift) as i64) >> shift
}

struct Tables {
    sop2: &'static [Op],
    sopk: &'static [Op],
    sop1: &'static [Op],
    sopc: &'static [Op],
    sopp: &'static [Op],
    smem: &'static [Op],
    vop2: &'static [Op],
    vop1: &'static [Op],
    vopc: &'static [Op],
    vop3: &'static [Op],
    vop3p: &'static [Op],
    ds: &'static [Op],
    flat: [&'static [Op]; 3],
    mubuf: &'static [Op],
    mtbuf: &'static [Op],
    mimg: &'static [Op],
    vsample: &'static [Op],
}

fn tables(f: Family) -> Tables {
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

/// Decode the instruction at the start of `code`.
pub fn decode(isa: Isa, code: &[u8]) -> Decoded {
    let Some(d0) = u32_at(code, 0) else {
        return Decoded::Unknown {
            format: None,
            len: None,
            dword: 0,
        };
    };
    let f = isa.family;
    let Some(format) = Format::of(f, d0) else {
        return Decoded::Unknown {
            format: None,
            len: None,
            dword: d0,
        };
    };
    let base = format.base_len(f);
    let unknown = |len| Decoded::Unknown {
        format: Some(format),
        len,
        dword: d0,
    };
    let mut words = [0u32; 4];
    for (i, w) in words.iter_mut().enumerate().take(base / 4) {
        match u32_at(code, i) {
            Some(v) => *w = v,
            None => return unknown(None),
        }
    }
    let t = tables(f);
    let mut b = Builder {
        isa,
        code,
        base,
        format,
        fields: Vec::new(),
        writes: Vec::new(),
        literal: None,
        modifier: None,
        extra: 0,
    };
    let found = b.fill(&t, &words);
    let Some((op, name_y)) = found else {
        return unknown(b.len_if_known());
    };
    if (op.flags & W32 != 0 && isa.wave64) || (op.flags & W64 != 0 && !isa.wave64) {
        return unknown(b.len_if_known());
    }
    let len = base + b.extra;
    if len > code.len() {
        return unknown(None);
    }
    Decoded::Known(Instruction {
        len,
        format,
        opcode: op.code,
        name: op.name,
        name_y,
        fields: b.fields,
        literal: b.literal,
        modifier: b.modifier,
        writes: b.writes,
        writes_any_sgpr: op.flags & INDIRECT != 0,
    })
}

struct Builder<'a> {
    isa: Isa,
    code: &'a [u8],
    base: usize,
    format: Format,
    fields: Vec<Field>,
    writes: Vec<Operand>,
    literal: Option<u32>,
    modifier: Option<Modifier>,
    /// Bytes after the base encoding (literal, DPP/SDWA word, NSA dwords).
    extra: usize,
}

impl Builder<'_> {
    fn len_if_known(&self) -> Option<usize> {
        let n = self.base + self.extra;
        (n <= self.code.len()).then_some(n)
    }

    fn push(&mut self, role: Role, value: Operand) {
        self.fields.push(Field { role, value });
    }

    fn width(&self, d: Dst) -> u8 {
        match d {
            Dst::None => 0,
            Dst::S(n) | Dst::V(n) => n,
            Dst::Mask => self.isa.mask_sgprs(),
        }
    }

    /// Record the destination field `code` (scalar index space 0..=127, or
    /// a VGPR number when `vgpr`) as written with the table's width.
    fn dst(&mut self, role: Role, d: Dst, code: u16, vgpr_field: bool) {
        let n = self.width(d);
        if n == 0 {
            return;
        }
        let v = match d {
            Dst::V(_) if vgpr_field => Operand::Vgpr {
                first: code,
                count: n,
            },
            Dst::V(_) => operand::source(self.isa.family, code, n, None),
            Dst::S(_) | Dst::Mask => operand::sdst(self.isa.family, code, n),
            Dst::None => return,
        };
        self.push(role, v);
        self.writes.push(v);
    }

    /// The literal dword, read once, when a source field is 255 or the
    /// opcode always has one.
    fn take_literal(&mut self) -> Option<u32> {
        if self.literal.is_none() {
            self.literal = u32_at(self.code, self.base / 4);
            self.extra = 4;
        }
        self.literal
    }

    fn src(&mut self, role: Role, code: u16, count: u8) {
        let lit = if code == 255 {
            self.take_literal()
        } else {
            None
        };
        let v = operand::source(self.isa.family, code, count, lit);
        self.push(role, v);
    }

    /// VOP1/VOP2/VOPC src0: DPP and SDWA words are signalled through it.
    fn vop_src0(&mut self, code: u16) -> bool {
        let f = self.isa.family;
        let word = u32_at(self.code, self.base / 4).unwrap_or(0);
        let m = match (code, f) {
            (0xFA, _) => Some(Modifier::Dpp16(word)),
            (0xE9 | 0xEA, _) => Some(Modifier::Dpp8(word)),
            (0xF9, Family::Gfx10) => Some(Modifier::Sdwa(word)),
            (0xF9, Family::Gfx11 | Family::Gfx12) => return false,
            _ => None,
        };
        if let Some(m) = m {
            self.modifier = Some(m);
            self.extra = 4;
            // The real src0 is the low byte of the modifier word, a VGPR
            // (SDWA may name an SGPR through its S0 bit; kept as a VGPR here).
            self.push(
                Role::Src0,
                Operand::Vgpr {
                    first: (word & 0xFF) as u16,
                    count: 1,
                },
            );
        } else {
            self.src(Role::Src0, code, 1);
        }
        true
    }

    fn fill(&mut self, t: &Tables, w: &[u32; 4]) -> Option<(&'static Op, Option<&'static str>)> {
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
                let dpp = match (s0, f) {
                    (0xFA | 0xE9 | 0xEA, Family::Gfx11 | Family::Gfx12) => true,
                    (0xFA | 0xE9 | 0xEA | 0xF9, _) => return None,
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

    fn smem(&mut self, t: &Tables, d0: u32, d1: u32) -> Option<&'static Op> {
        let f = self.isa.family;
        let code = match f {
            Family::Gfx10 | Family::Gfx11 => bits(d0, 25, 18),
            Family::Gfx12 => bits(d0, 18, 13),
        };
        let op = table::find(t.smem, code as u16, self.isa.sub())?;
        self.dst(Role::Dst, op.dst, bits(d0, 12, 6) as u16, false);
        if op.dst == Dst::None && op.name.contains("store") {
            let n = store_width(op.name);
            self.push(Role::Data, operand::sdst(f, bits(d0, 12, 6) as u16, n));
        }
        let base_count = if op.name.contains("buffer") { 4 } else { 2 };
        self.push(
            Role::Base,
            operand::sdst(f, (bits(d0, 5, 0) * 2) as u16, base_count),
        );
        let offset = match f {
            Family::Gfx10 | Family::Gfx11 => sext(bits(d1, 20, 0), 21),
            Family::Gfx12 => sext(bits(d1, 23, 0), 24),
        };
        self.push(Role::Offset, Operand::Imm(offset));
        let soff = bits(d1, 31, 25) as u16;
        if soff != null_code(f) {
            self.push(Role::Soffset, operand::sdst(f, soff, 1));
        }
        Some(op)
    }

    fn flat(&mut self, t: &Tables, w: &[u32; 4]) -> Option<&'static Op> {
        let f = self.isa.family;
        let seg = match self.format {
            Format::Flat => 0,
            Format::Scratch => 1,
            _ => 2,
        };
        let (code, vdst, addr, data, saddr, offset) = match f {
            Family::Gfx10 => (
                bits(w[0], 24, 18),
                bits(w[1], 31, 24),
                bits(w[1], 7, 0),
                bits(w[1], 15, 8),
                bits(w[1], 22, 16),
                sext(bits(w[0], 11, 0), 12),
            ),
            Family::Gfx11 => (
                bits(w[0], 24, 18),
                bits(w[1], 31, 24),
                bits(w[1], 7, 0),
                bits(w[1], 15, 8),
                bits(w[1], 22, 16),
                sext(bits(w[0], 12, 0), 13),
            ),
            Family::Gfx12 => (
                bits(w[0], 21, 14),
                bits(w[1], 7, 0),
                bits(w[2], 7, 0),
                bits(w[1], 30, 23),
                bits(w[0], 6, 0),
                sext(bits(w[2], 31, 8), 24),
            ),
        };
        let op = table::find(t.flat[seg], code as u16, self.isa.sub())?;
        self.dst(Role::Dst, op.dst, vdst as u16, true);
        // A 64-bit address unless a scalar base supplies the high part
        // (scratch addresses are 32-bit offsets).
        let has_saddr = saddr as u16 != null_code(f);
        let addr_count = match self.format {
            Format::Flat => 2,
            Format::Global if !has_saddr => 2,
            _ => 1,
        };
        self.push(
            Role::Addr,
            Operand::Vgpr {
                first: addr as u16,
                count: addr_count,
            },
        );
        self.push(Role::Data, vgpr(data));
        if has_saddr {
            self.push(Role::Soffset, operand::sdst(f, saddr as u16, 2));
        }
        self.push(Role::Offset, Operand::Imm(offset));
        Some(op)
    }

    fn buffer(&mut self, t: &Tables, w: &[u32; 4]) -> Option<&'static Op> {
        let f = self.isa.family;
        let (tab, code) = match (self.format, f) {
            (Format::Mubuf, Family::Gfx10) => (t.mubuf, bits(w[0], 24, 18)),
            (Format::Mubuf, _) => (t.mubuf, bits(w[0], 25, 18)),
            (Format::Mtbuf, Family::Gfx10) => {
                (t.mtbuf, bits(w[0], 18, 16) | (bits(w[1], 21, 21) << 3))
            }
            (Format::Mtbuf, _) => (t.mtbuf, bits(w[0], 18, 15)),
            (_, _) => (t.mubuf, bits(w[0], 21, 14)),
        };
        let op = table::find(tab, code as u16, self.isa.sub())?;
        let (vdata, vaddr, rsrc, soff) = match self.format {
            Format::Vbuffer => (
                bits(w[1], 7, 0),
                bits(w[2], 7, 0),
                bits(w[1], 17, 9),
                bits(w[0], 6, 0),
            ),
            _ => (
                bits(w[1], 15, 8),
                bits(w[1], 7, 0),
                bits(w[1], 20, 16) * 4,
                bits(w[1], 31, 24),
            ),
        };
        self.dst(Role::Dst, op.dst, vdata as u16, true);
        self.push(Role::Addr, vgpr(vaddr));
        self.push(Role::Base, operand::sdst(f, rsrc as u16, 4));
        self.push(Role::Soffset, operand::sdst(f, soff as u16, 1));
        Some(op)
    }

    fn image(&mut self, t: &Tables, w: &[u32; 4]) -> Option<&'static Op> {
        let f = self.isa.family;
        let sub = self.isa.sub();
        let op = match (self.format, f) {
            (Format::Mimg, Family::Gfx10) => {
                let code = bits(w[0], 24, 18) | (bits(w[0], 0, 0) << 7);
                let op = table::find(t.mimg, code as u16, sub)?;
                self.extra = 4 * bits(w[0], 2, 1) as usize;
                op
            }
            (Format::Mimg, _) => {
                let op = table::find(t.mimg, bits(w[0], 25, 18) as u16, sub)?;
                if bits(w[0], 0, 0) != 0 {
                    // NSA: the number of address dwords follows from the
                    // opcode and dimension; 16-bit addresses are not modelled.
                    if bits(w[1], 30, 30) != 0 || op.name.contains("g16") {
                        return None;
                    }
                    let n = image_addresses(op.name, bits(w[0], 4, 2))?;
                    self.extra = 4 * (n.saturating_sub(1)).div_ceil(4) as usize;
                }
                op
            }
            (Format::Vsample, _) => table::find(t.vsample, bits(w[0], 21, 14) as u16, sub)?,
            (_, _) => table::find(t.mimg, bits(w[0], 21, 14) as u16, sub)?,
        };
        let (vdata, vaddr, rsrc) = match self.format {
            Format::Mimg => (bits(w[1], 15, 8), bits(w[1], 7, 0), bits(w[1], 20, 16) * 4),
            _ => (bits(w[1], 7, 0), bits(w[2], 7, 0), bits(w[1], 17, 9)),
        };
        self.dst(Role::Dst, op.dst, vdata as u16, true);
        self.push(Role::Addr, vgpr(vaddr));
        self.push(Role::Base, operand::sdst(f, rsrc as u16, 8));
        Some(op)
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

fn vgpr(n: u32) -> Operand {
    Operand::Vgpr {
        first: n as u16,
        count: 1,
    }
}

/// Source width of a scalar ALU op: 64-bit operations read pairs. Shift
/// amounts and bit counts of 64-bit shifts are 32-bit; the first source is
/// what the certifier follows (copies), so that one must be right.
fn scalar_width(op: &Op) -> u8 {
    let n = op.name;
    let wide = ["_b64", "_u64", "_i64", "_saveexec_b64", "_wrexec_b64"]
        .iter()
        .any(|s| n.contains(s));
    match op.dst {
        Dst::S(2) if wide => 2,
        _ if wide => 2,
        _ => 1,
    }
}

fn store_width(name: &str) -> u8 {
    for (s, n) in [
        ("x16", 16),
        ("x8", 8),
        ("x4", 4),
        ("x2", 2),
        ("b64", 2),
        ("b128", 4),
    ] {
        if name.ends_with(s) {
            return n;
        }
    }
    1
}

/// gfx11 MIMG address count for an NSA encoding: coordinates per dimension
/// plus what the opcode's name adds.
fn image_addresses(name: &str, dim: u32) -> Option<u32> {
    let coords = [1u32, 2, 3, 3, 2, 3, 3, 4][dim as usize];
    let grad = [1u32, 2, 3, 2, 1, 2, 2, 2][dim as usize];
    let mods = name
        .strip_prefix("image_sample")
        .or_else(|| name.strip_prefix("image_gather4"));
    let mut n = coords;
    match mods {
        Some(m) => {
            for part in m.split('_').filter(|p| !p.is_empty()) {
                n += match part {
                    "c" | "b" | "l" | "cl" | "o" => 1,
                    "d" | "cd" => 2 * grad,
                    "lz" | "h" => 0,
                    _ => return None,
                };
            }
        }
        None if name.contains("_mip") => n += 1,
        None if name.starts_with("image_bvh") => return None,
        None => {}
    }
    Some(n)
}

fn fam_index(f: Family) -> usize {
    match f {
        Family::Gfx10 => 0,
        Family::Gfx11 => 1,
        Family::Gfx12 => 2,
    }
}

const fn row(code: u16, name: &'static str) -> Op {
    table::op(code, name, Dst::V(1), Dst::None, 0, table::ALL)
}

static EXP: [Op; 3] = [row(0, "exp"), row(0, "exp"), row(0, "export")];

const VOPD_GFX11: [&str; 19] = [
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
const VOPD_GFX12: [&str; 19] = [
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

static VOPD_OPS: [[Op; 17]; 3] = [
    vopd_rows!(VOPD_GFX11),
    vopd_rows!(VOPD_GFX11),
    vopd_rows!(VOPD_GFX12),
];

static VINTRP_GFX10: [Op; 3] = [
    row(0, "v_interp_p1_f32_e32"),
    row(1, "v_interp_p2_f32_e32"),
    row(2, "v_interp_mov_f32_e32"),
];
static VINTERP: [Op; 6] = [
    row(0, "v_interp_p10_f32"),
    row(1, "v_interp_p2_f32"),
    row(2, "v_interp_p10_f16_f32"),
    row(3, "v_interp_p2_f16_f32"),
    row(4, "v_interp_p10_rtz_f16_f32"),
    row(5, "v_interp_p2_rtz_f16_f32"),
];
static LDSDIR_GFX11: [Op; 2] = [row(0, "lds_param_load"), row(1, "lds_direct_load")];
static LDSDIR_GFX12: [Op; 2] = [row(0, "ds_param_load"), row(1, "ds_direct_load")];
