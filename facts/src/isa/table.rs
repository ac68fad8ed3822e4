//! The shape of the generated opcode tables (`gfx*.rs` beside this file),
//! and the subtargets whose opcode sets differ within a family.

/// What the destination field of an instruction writes, per LLVM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dst {
    /// The field is a source or unused.
    None,
    /// `n` consecutive SGPRs starting at the field.
    S(u8),
    /// `n` consecutive VGPRs starting at the field.
    V(u8),
    /// A lane mask: one SGPR in wave32, a pair in wave64.
    Mask,
}

/// Flags of a table row.
pub type Flags = u8;
/// A 32-bit literal follows the instruction even when no source field is 255.
pub const LIT: Flags = 1;
/// The destination is indexed by M0 (s_movreld): which SGPR it writes is not
/// known from the encoding.
pub const INDIRECT: Flags = 2;
/// LLVM accepts the opcode only in wave32.
pub const W32: Flags = 4;
/// LLVM accepts the opcode only in wave64.
pub const W64: Flags = 8;

/// Which subtargets of a family a row belongs to (gfx10: 10.1 and 10.3;
/// gfx11: 11.0 and 11.5, which adds scalar float ALU ops).
pub type Sub = u8;
pub const ALL: Sub = 0b11;
pub const G101: Sub = 0b01;
pub const G103: Sub = 0b10;
pub const G110: Sub = 0b01;
pub const G115: Sub = 0b10;

/// A subtarget whose opcode set differs from its family's other one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subtarget {
    /// gfx1010-gfx1013.
    Gfx101,
    /// gfx1030-gfx1036.
    Gfx103,
    /// gfx1100-gfx1103.
    Gfx110,
    /// gfx1150-gfx1153 (adds scalar float ALU ops).
    Gfx115,
    /// gfx1200, gfx1201.
    Gfx120,
}

impl Subtarget {
    /// The table rows this subtarget decodes ([`Op::sub`] bits).
    pub const fn rows(self) -> Sub {
        match self {
            Subtarget::Gfx101 => G101,
            Subtarget::Gfx103 => G103,
            Subtarget::Gfx110 => G110,
            Subtarget::Gfx115 => G115,
            Subtarget::Gfx120 => ALL,
        }
    }
}

/// One opcode of one format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    pub code: u16,
    pub name: &'static str,
    /// The main destination field (SDST, SDATA, VDST).
    pub dst: Dst,
    /// The VOP3SD carry-out field (bits 14:8), when the opcode has one.
    pub sdst: Dst,
    pub flags: Flags,
    pub sub: Sub,
}

pub const fn op(code: u16, name: &'static str, dst: Dst, sdst: Dst, flags: Flags, sub: Sub) -> Op {
    Op {
        code,
        name,
        dst,
        sdst,
        flags,
        sub,
    }
}

/// The row for `code` in a table sorted by code, for subtarget `sub`.
pub fn find(table: &'static [Op], code: u16, sub: Sub) -> Option<&'static Op> {
    let start = table.partition_point(|o| o.code < code);
    table[start..]
        .iter()
        .take_while(|o| o.code == code)
        .find(|o| o.sub & sub != 0)
}
