//! The vector ALU (VOP1, VOP2, VOPC, VOP3, VOP3P, VOPD, VINTERP): owned by
//! the interp-valu work. Until it lands every vector ALU instruction is an
//! error naming it, never a guess.

use relaunch_isa::{Family, Instruction, Isa};

use super::fault::{Flow, IsaFault};
use super::program::Inst;
use super::wave::Wave;
use super::Ctx;

/// What `prepare` resolved for one instruction (the vector ALU's own
/// opcode and modifiers), stored in the program next to the instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prep(pub u16);

/// Resolve a decoded VOP*/VOPD/VINTERP instruction once, at program build.
/// `words` are the instruction's raw dwords (`Inst::words`): the VOP3
/// modifiers, op_sel and the VOPD second half are read from them.
/// `None`: not implemented (executing it is an [`IsaFault::Unimplemented`]).
pub fn prepare(_isa: Isa, _inst: &Instruction, _words: &[u32; 4]) -> Option<Prep> {
    None
}

/// Execute one vector ALU instruction on `wave`.
pub fn execute(wave: &mut Wave, inst: &Inst, _ctx: &mut Ctx<'_>) -> Result<Flow, IsaFault> {
    Err(IsaFault::Unimplemented {
        mnemonic: format!("vector ALU not implemented: {}", inst.decoded.mnemonic()),
        family: wave.isa.family,
    })
}

/// The mnemonics (as LLVM spells them, `_e32`/`_e64` included) this module
/// executes on `family`: what the LLVM round-trip test assembles.
pub fn implemented(_family: Family) -> &'static [&'static str] {
    &[]
}
