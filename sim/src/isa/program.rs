//! A kernel's code decoded once into a program: every instruction reachable
//! from the entry (fall-through and branch targets), with its operands
//! resolved and its executor chosen, cached per loaded kernel.

use relaunch_isa::{Decoded, Instruction, Isa};

use super::operand::{Dst, Src};

/// One decoded instruction, ready to execute.
#[derive(Debug, Clone)]
pub struct Inst {
    /// Byte offset from the kernel's code entry.
    pub offset: u32,
    /// The raw dwords (base encoding, literal / DPP / SDWA words; zero past
    /// the instruction's length), for fields the decoder does not type
    /// (VOP3 modifiers, op_sel, DS offset1, cache policy bits).
    pub words: [u32; 4],
    pub decoded: Instruction,
    /// Src0, Src1, Src2 (the data operand for SMEM/DS/VMEM stays in `decoded`).
    pub src: [Src; 3],
    /// The main destination.
    pub dst: Dst,
    /// The VOP3SD carry-out / VOPC SGPR destination.
    pub sdst: Dst,
    /// The branch target as an instruction index (SOPP branches).
    pub target: u32,
    pub(crate) kind: Kind,
}

/// Which executor runs an instruction.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    /// Vector ALU: `valu::execute`.
    Valu(super::valu::Prep),
    /// Decoded but not executed by the interpreter.
    Unimplemented,
}

/// A decoded kernel.
#[derive(Debug)]
pub struct Program {
    pub isa: Isa,
    pub insts: Vec<Inst>,
}

/// The raw words of the instruction at the start of `code`.
pub(crate) fn words_of(code: &[u8], len: usize) -> [u32; 4] {
    let mut w = [0u32; 4];
    for (i, slot) in w.iter_mut().enumerate() {
        let at = 4 * i;
        if at + 4 <= len.min(code.len()) {
            *slot = u32::from_le_bytes([code[at], code[at + 1], code[at + 2], code[at + 3]]);
        }
    }
    w
}

/// Resolve the fields of a decoded instruction.
pub(crate) fn resolve(d: &Instruction) -> ([Src; 3], Dst, Dst) {
    use relaunch_isa::Role;
    let mut src = [Src::Null; 3];
    let mut dst = Dst::None;
    let mut sdst = Dst::None;
    for f in &d.fields {
        match f.role {
            Role::Src0 if src[0] == Src::Null => src[0] = Src::from_operand(f.value),
            Role::Src0 => src[1] = Src::from_operand(f.value),
            Role::Src1 => src[1] = Src::from_operand(f.value),
            Role::Src2 => src[2] = Src::from_operand(f.value),
            Role::Dst => dst = Dst::from_operand(f.value),
            Role::Sdst => sdst = Dst::from_operand(f.value),
            _ => {}
        }
    }
    (src, dst, sdst)
}

#[allow(dead_code)]
pub(crate) fn is_known(d: &Decoded) -> bool {
    matches!(d, Decoded::Known(_))
}
