//! relaunch-isa: a table-driven decoder of RDNA machine code (gfx10.1,
//! gfx10.3, gfx11, gfx12; wave32 and wave64).
//!
//! Owns: telling each encoding format apart, the length of every
//! instruction (literal constants, DPP/SDWA words, MIMG NSA dwords), the
//! mnemonic as LLVM spells it, typed operands and the registers an
//! instruction writes. The opcode tables (`tables/`) are generated from
//! LLVM's disassembler by `tools/gen_tables.py`, one per family. An encoding
//! the tables do not hold decodes to [`Decoded::Unknown`], never to a guess.
//! Must not depend on any other relaunch crate: it is the bottom of the
//! certifier (`relaunch-device`) and of the simulator's interpreter.

mod decode;
pub mod format;
pub mod operand;
pub mod table;
mod tables;

pub use decode::{decode, opcodes, vopd_names, Instruction, Modifier};
pub use format::Format;
pub use operand::{Field, Operand, Role, Special};

/// An instruction-set family: one table of encodings each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// gfx10.1 and gfx10.3 (RDNA1, RDNA2).
    Gfx10,
    /// gfx11 (RDNA3, RDNA3.5).
    Gfx11,
    /// gfx12 (RDNA4).
    Gfx12,
}

/// A subtarget whose opcode set differs from its family's other one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subtarget {
    Gfx101,
    Gfx103,
    Gfx110,
    Gfx115,
    Gfx120,
}

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
    /// From an LLVM processor name (`gfx1030`) and the wave size.
    pub fn from_processor(processor: &str, wave64: bool) -> Option<Isa> {
        let digits = processor.strip_prefix("gfx")?;
        let (family, sub) = match digits.get(..3)? {
            "101" => (Family::Gfx10, Subtarget::Gfx101),
            "103" => (Family::Gfx10, Subtarget::Gfx103),
            "110" => (Family::Gfx11, Subtarget::Gfx110),
            "115" => (Family::Gfx11, Subtarget::Gfx115),
            "120" => (Family::Gfx12, Subtarget::Gfx120),
            _ => return None,
        };
        if digits.len() != 4 {
            return None;
        }
        Some(Isa {
            family,
            sub,
            wave64,
        })
    }

    pub(crate) fn sub(&self) -> table::Sub {
        match self.sub {
            Subtarget::Gfx101 => table::G101,
            Subtarget::Gfx103 => table::G103,
            Subtarget::Gfx110 => table::G110,
            Subtarget::Gfx115 => table::G115,
            Subtarget::Gfx120 => table::ALL,
        }
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
