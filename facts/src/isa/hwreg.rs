//! Hardware registers (`s_getreg_b32 hwreg(ID, ...)`) whose ids differ
//! between subtargets, by LLVM 19's assembler (`llvm-mc-19 -show-encoding`
//! of `hwreg(HW_REG_SHADER_CYCLES...)`, id in SIMM16 bits 5:0).

use super::Subtarget;

/// Where a subtarget's shader cycle counter is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShaderCycles {
    /// gfx10.1 has no such register (LLVM refuses the name).
    None,
    /// HW_REG_SHADER_CYCLES: the counter's low 20 bits (gfx10.3, gfx11).
    Low20 { id: u32 },
    /// HW_REG_SHADER_CYCLES_LO and _HI: the 64-bit counter's halves (gfx12).
    Split { lo: u32, hi: u32 },
}

impl Subtarget {
    /// Where this subtarget's shader cycle counter is read.
    pub const fn shader_cycles(self) -> ShaderCycles {
        match self {
            Subtarget::Gfx101 => ShaderCycles::None,
            Subtarget::Gfx103 | Subtarget::Gfx110 | Subtarget::Gfx115 => {
                ShaderCycles::Low20 { id: 29 }
            }
            Subtarget::Gfx120 => ShaderCycles::Split { lo: 29, hi: 30 },
        }
    }
}
