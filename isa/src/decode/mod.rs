//! Field extraction per format: length, table lookup, operands, writes.

use crate::format::Format;
use crate::operand::{self, Field, Operand, Role};
use crate::table::{Dst, Op, INDIRECT, W32, W64};
use crate::{Decoded, Isa};

mod alu;
mod memory;
mod tables;

use tables::tables;
pub use tables::{opcodes, vopd_names};

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
        let m = match code {
            0xFA => Some(Modifier::Dpp16(word)),
            0xE9 | 0xEA => Some(Modifier::Dpp8(word)),
            0xF9 if f.facts().isa.sdwa => Some(Modifier::Sdwa(word)),
            0xF9 => return false,
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
