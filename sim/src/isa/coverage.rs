//! What the interpreter would refuse in a kernel, found before it runs:
//! the kernel is decoded from its entry as a dispatch would decode it
//! (`program::build`: every instruction reachable by fall-through and
//! branches) and each instruction is classified the same way. What only a
//! run can tell (MODE's directed rounding, an LDS access outside the
//! allocation, scratch) is not known here.

use std::collections::BTreeMap;

use relaunch_isa::Isa;

use super::program::{self, Kind};

/// The static verdict on one kernel's code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Reachable instructions decoded.
    pub instructions: usize,
    /// Mnemonics (as LLVM spells them, `_sdwa`/`_dpp` forms apart) the
    /// interpreter does not execute, with how often each occurs.
    pub missing: BTreeMap<String, usize>,
    /// Reachable words the decoder does not know.
    pub undecodable: usize,
}

impl Coverage {
    /// Whether the interpreter executes every reachable instruction.
    pub fn runs(&self) -> bool {
        self.missing.is_empty() && self.undecodable == 0
    }
}

/// The coverage of the code starting at `code[0]` (a kernel's entry; the
/// slice should end where the kernel's code does).
pub fn coverage(isa: Isa, code: &[u8]) -> Coverage {
    let prog = program::build(isa, 0, code);
    let mut out = Coverage::default();
    for inst in &prog.insts {
        match inst.kind {
            Kind::OutOfCode => {}
            Kind::Undecodable(_) => {
                out.instructions += 1;
                out.undecodable += 1;
            }
            Kind::Unimplemented => {
                out.instructions += 1;
                let name = match inst.decoded.name_y {
                    Some(y) => format!("{} :: {y}", inst.decoded.mnemonic()),
                    None => inst.decoded.mnemonic(),
                };
                *out.missing.entry(name).or_default() += 1;
            }
            Kind::Valu(_)
            | Kind::Salu(_)
            | Kind::Ctrl(_)
            | Kind::Smem(_)
            | Kind::Ds(_)
            | Kind::Vmem(_)
            | Kind::GetPc
            | Kind::SetPc
            | Kind::SwapPc => out.instructions += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gfx1030() -> Isa {
        Isa::from_processor("gfx1030", false).expect("gfx1030 row")
    }

    #[test]
    fn counts_missing_and_implemented() {
        let code = [
            0x01, 0x03, 0x00, 0x7e, // v_mov_b32_e32 v0, v1
            0x08, 0x01, 0x00, 0xf0, 0x00, 0x00, 0x00, 0x00, // image_load (never modelled)
            0x08, 0x01, 0x00, 0xf0, 0x00, 0x00, 0x00, 0x00, // image_load again
            0x00, 0x00, 0x81, 0xbf, // s_endpgm
            0xff, 0xff, 0xff, 0xff, // unreachable: not counted
        ];
        let c = coverage(gfx1030(), &code);
        assert_eq!(c.instructions, 4);
        assert_eq!(c.undecodable, 0);
        assert_eq!(c.missing.get("image_load"), Some(&2));
        assert_eq!(c.missing.len(), 1);
        assert!(!c.runs());
        assert!(coverage(gfx1030(), &[0x01, 0x03, 0x00, 0x7e, 0x00, 0x00, 0x81, 0xbf]).runs());
    }
}
