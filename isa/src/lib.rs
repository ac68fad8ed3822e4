//! relaunch-isa: a table-driven decoder of RDNA machine code (gfx10.1,
//! gfx10.3, gfx11, gfx12; wave32 and wave64).
//!
//! Owns: telling each encoding format apart, the length of every
//! instruction (literal constants, DPP/SDWA words, MIMG NSA dwords), the
//! mnemonic as LLVM spells it, typed operands and the registers an
//! instruction writes. The opcode tables are facts: they live in
//! `relaunch-facts` (`facts/src/isa/`, generated from LLVM's disassembler
//! by `facts/tools/gen_tables.py`, one per family); this crate reads them.
//! An encoding the tables do not hold decodes to [`Decoded::Unknown`],
//! never to a guess. Must not depend on any relaunch crate but
//! `relaunch-facts`: it is the bottom of the certifier (`relaunch-device`)
//! and of the simulator's interpreter.

mod decode;
pub mod format;
pub mod operand;

pub use decode::{decode, opcodes, vopd_names, Instruction, Modifier};
pub use format::Format;
pub use operand::{Field, Operand, Role, Special};
/// The families and subtargets are the facts crate's (one enum each).
pub use relaunch_facts::isa::{table, Subtarget};
pub use relaunch_facts::Family;

/// What the decoder decodes for: family, subtarget and wave size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Isa {
    pub family: Family,
    /// The subtarget within the family: gfx10.1 (gfx1010-gfx1013) and
    /// gfx11.5 (gfx1150-gfx1153) are distinctions the tables make.
    pub sub: Subtarget,
    pub wave64: bool,
}

impl Isa {
    /// From an LLVM processor name (`gfx1030`) and the wave size; `None`
    /// for a processor without a facts row.
    pub fn from_processor(processor: &str, wave64: bool) -> Option<Isa> {
        let row = relaunch_facts::TargetFacts::lookup(processor)?;
        Some(Isa {
            family: row.family,
            sub: row.subtarget,
            wave64,
        })
    }

    pub(crate) fn sub(&self) -> table::Sub {
        self.sub.rows()
    }

    /// SGPRs of a lane mask (VCC-like destinations).
    pub fn mask_sgprs(&self) -> u8 {
        if self.wave64 {
            2
        } else {
            1
        }
    }
}

/// The result of decoding at one address.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    Known(Instruction),
    /// Not an encoding this decoder knows. `len` is the length when the
    /// format is recognised (so a listing can go on), `None` otherwise.
    Unknown {
        format: Option<Format>,
        len: Option<usize>,
        dword: u32,
    },
}

/// Decode every instruction of `code` from its start; stops at the first
/// Unknown without a length, or at a truncated instruction.
pub fn decode_all(isa: Isa, code: &[u8]) -> Vec<(usize, Decoded)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < code.len() {
        let d = decode(isa, &code[at..]);
        let len = match &d {
            Decoded::Known(i) => Some(i.len),
            Decoded::Unknown { len, .. } => *len,
        };
        out.push((at, d));
        match len {
            Some(n) if n > 0 && at + n <= code.len() => at += n,
            _ => break,
        }
    }
    out
}
