//! Typed operands and the scalar/vector source field encoding per family.

use crate::Family;

/// A special register named by a source or destination field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Special {
    VccLo,
    VccHi,
    ExecLo,
    ExecHi,
    M0,
    Null,
    Scc,
    Vccz,
    Execz,
    LdsDirect,
    SharedBase,
    SharedLimit,
    PrivateBase,
    PrivateLimit,
    PopsExitingWaveId,
    Ttmp(u8),
}

/// One operand of a decoded instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    /// `count` SGPRs from `first`.
    Sgpr {
        first: u8,
        count: u8,
    },
    /// `count` VGPRs from `first`.
    Vgpr {
        first: u16,
        count: u8,
    },
    Special(Special),
    /// An inline integer constant (-16..=64).
    InlineInt(i8),
    /// An inline float constant, as the f32 bit pattern (0.5, 1.0, ..., 1/(2pi)).
    InlineFloat(u32),
    /// The 32-bit literal that follows the instruction.
    Literal(u32),
    /// An immediate field (offsets, SIMM16, masks).
    Imm(i64),
    /// A source field naming a DPP/SDWA modifier word or another encoding
    /// this decoder does not turn into a value.
    Reserved(u16),
}

/// What an operand is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Dst,
    /// Second destination: VOP3SD carry-out.
    Sdst,
    Src0,
    Src1,
    Src2,
    /// SMEM base pair/quad, buffer resource, image resource.
    Base,
    Sampler,
    Addr,
    Data,
    /// Immediate offset.
    Offset,
    /// Register offset (SMEM/MUBUF soffset, FLAT saddr).
    Soffset,
    Simm,
}

/// An operand with its role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub role: Role,
    pub value: Operand,
}

/// The SGPR-file index of `null` on the family (its facts row: gfx11
/// swapped `null` and `m0`).
pub(crate) fn null_code(f: Family) -> u16 {
    u16::from(f.facts().isa.sgprs.null)
}

const FLOATS: [u32; 9] = [
    0x3F00_0000, // 0.5
    0xBF00_0000,
    0x3F80_0000, // 1.0
    0xBF80_0000,
    0x4000_0000, // 2.0
    0xC000_0000,
    0x4080_0000, // 4.0
    0xC080_0000,
    0x3E22_F983, // 1/(2*pi)
];

/// Decode a 9-bit source field (8-bit scalar fields use the same codes) of
/// width `count` registers. `literal` is the instruction's literal, if any.
pub fn source(f: Family, code: u16, count: u8, literal: Option<u32>) -> Operand {
    let m0 = u16::from(f.facts().isa.sgprs.m0);
    match code {
        0..=105 => Operand::Sgpr {
            first: code as u8,
            count,
        },
        106 => Operand::Special(Special::VccLo),
        107 => Operand::Special(Special::VccHi),
        108..=123 => Operand::Special(Special::Ttmp((code - 108) as u8)),
        c if c == m0 => Operand::Special(Special::M0),
        c if c == null_code(f) => Operand::Special(Special::Null),
        126 => Operand::Special(Special::ExecLo),
        127 => Operand::Special(Special::ExecHi),
        128..=192 => Operand::InlineInt((code - 128) as i8),
        193..=208 => Operand::InlineInt(-((code - 192) as i8)),
        235 => Operand::Special(Special::SharedBase),
        236 => Operand::Special(Special::SharedLimit),
        237 => Operand::Special(Special::PrivateBase),
        238 => Operand::Special(Special::PrivateLimit),
        239 => Operand::Special(Special::PopsExitingWaveId),
        240..=248 => Operand::InlineFloat(FLOATS[(code - 240) as usize]),
        251 => Operand::Special(Special::Vccz),
        252 => Operand::Special(Special::Execz),
        253 => Operand::Special(Special::Scc),
        254 => Operand::Special(Special::LdsDirect),
        255 => literal.map_or(Operand::Reserved(255), Operand::Literal),
        256..=511 => Operand::Vgpr {
            first: code - 256,
            count,
        },
        _ => Operand::Reserved(code),
    }
}

/// A scalar destination field of width `count`.
pub(crate) fn sdst(f: Family, code: u16, count: u8) -> Operand {
    source(f, code, count, None)
}

impl Operand {
    /// The SGPRs this operand names, as (first, count).
    pub fn sgprs(&self) -> Option<(u8, u8)> {
        match *self {
            Operand::Sgpr { first, count } => Some((first, count)),
            _ => None,
        }
    }
}

impl std::fmt::Display for Operand {
    /// LLVM's spelling of the operand.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let range = |f: &mut std::fmt::Formatter<'_>, p: &str, a: u32, n: u8| {
            if n == 1 {
                write!(f, "{p}{a}")
            } else {
                write!(f, "{p}[{a}:{}]", a + u32::from(n) - 1)
            }
        };
        match *self {
            Operand::Sgpr { first, count } => range(f, "s", first.into(), count),
            Operand::Vgpr { first, count } => range(f, "v", first.into(), count),
            Operand::Special(s) => {
                let name = match s {
                    Special::VccLo => "vcc_lo",
                    Special::VccHi => "vcc_hi",
                    Special::ExecLo => "exec_lo",
                    Special::ExecHi => "exec_hi",
                    Special::M0 => "m0",
                    Special::Null => "null",
                    Special::Scc => "scc",
                    Special::Vccz => "vccz",
                    Special::Execz => "execz",
                    Special::LdsDirect => "lds_direct",
                    Special::SharedBase => "src_shared_base",
                    Special::SharedLimit => "src_shared_limit",
                    Special::PrivateBase => "src_private_base",
                    Special::PrivateLimit => "src_private_limit",
                    Special::PopsExitingWaveId => "src_pops_exiting_wave_id",
                    Special::Ttmp(n) => return write!(f, "ttmp{n}"),
                };
                f.write_str(name)
            }
            Operand::InlineInt(v) => write!(f, "{v}"),
            Operand::InlineFloat(b) => write!(f, "{}", f32::from_bits(b)),
            Operand::Literal(v) => write!(f, "0x{v:x}"),
            Operand::Imm(v) => write!(f, "0x{v:x}"),
            Operand::Reserved(c) => write!(f, "<field {c}>"),
        }
    }
}
