//! The GPU families relaunch encodes for, and the facts that are the same
//! for every target of one family: one [`FamilyFacts`] row each (`row`).
//! A value or rule that differs by family is a field of the row; code that
//! is genuinely different per family is an exhaustive `match` at its user,
//! so a new family is a row plus what the compiler then lists.

use std::fmt;

use crate::rows::TargetFacts;

mod row;

pub use row::{
    BufferFields, CacheHierarchy, CacheModel, DispatchRules, FamilyFacts, FlatFields, InstBits,
    IsaRules, MemoryFields, ResourceRules, RuntimeFacts, SgprCodes, TrapRule, WorkgroupIds,
};

/// An RDNA generation: one PM4 register table, one machine-code table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// RDNA1/RDNA2: gfx1010..gfx1036.
    Gfx10,
    /// RDNA3/RDNA3.5: gfx1100..gfx1103, gfx1150..gfx1153.
    Gfx11,
    /// RDNA4: gfx1200, gfx1201.
    Gfx12,
}

impl Family {
    /// Every family, oldest first.
    pub const ALL: [Family; 3] = [Family::Gfx10, Family::Gfx11, Family::Gfx12];

    /// Lower-case family name as used in messages and dumps.
    pub const fn name(self) -> &'static str {
        self.facts().name
    }

    /// The family called `name` (`gfx11`), by the rows' names.
    pub fn from_name(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name)
    }

    /// How the hardware lays out the user SGPRs of a compute dispatch.
    pub const fn user_sgprs(self) -> UserSgprRules {
        self.facts().user_sgprs
    }

    /// The family's supported targets, in table order.
    pub fn targets(self) -> impl Iterator<Item = &'static TargetFacts> {
        TargetFacts::all().iter().filter(move |r| r.family == self)
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// User-SGPR layout rules of a family (AMDGPUUsage, "Initial Kernel
/// Execution State"). What one descriptor gets delivered is
/// [`crate::descriptor::KernelDescriptor::delivered_user_sgprs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UserSgprRules {
    /// The family has the 4-SGPR private segment buffer descriptor (first,
    /// when a kernel asks for it).
    pub private_segment_buffer: bool,
}

/// Most user SGPRs COMPUTE_USER_DATA_0..15 can deliver (every family).
pub const MAX_USER_SGPRS: u32 = 16;

/// How waves of a family reach their private (scratch) memory: what the
/// hardware sets up at wave launch and what the kernel's prologue does.
/// LLVM 19's assembler states the split: on gfx11 and gfx12 (its
/// "architected flat scratch") it refuses `.amdhsa_user_sgpr_private_segment_buffer`,
/// `.amdhsa_user_sgpr_flat_scratch_init` and
/// `.amdhsa_system_sgpr_private_segment_wavefront_offset`, and RSRC2 bit 0 is
/// `.amdhsa_enable_private_segment`; gfx10 is the other way round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlatScratch {
    /// gfx10 (AMDGPUUsage, "Flat Scratch", GFX10+ without architected flat
    /// scratch): RSRC2.SCRATCH_EN gives the wave the private segment wave
    /// byte offset SGPR (after the workgroup id SGPRs); flat scratch init
    /// (two user SGPRs) is the queue's scratch base, which the prologue
    /// adds the offset to and writes to FLAT_SCRATCH with
    /// `s_setreg_b32 hwreg(HW_REG_FLAT_SCR_LO/HI)`; buffer scratch uses the
    /// private segment buffer V# with the offset as SOFFSET (LLVM 19 adds
    /// it to the V#'s base instead).
    Init,
    /// gfx11, gfx12: the hardware sets FLAT_SCRATCH to the wave's own slot
    /// (dispatch scratch base + the wave's offset) before the first
    /// instruction; no scratch SGPR is delivered.
    Architected,
}

/// Scratch facts of a family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScratchRules {
    pub flat_scratch: FlatScratch,
    /// Bytes of one unit of COMPUTE_TMPRING_SIZE.WAVESIZE: 1 KiB (256
    /// dwords) on gfx10, 256 bytes (64 dwords) from gfx11 (Linux amdgpu
    /// and Mesa program `bytes_per_wave >> 10` resp. `>> 8`).
    pub wavesize_granule: u64,
    /// COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI hold bits 47:8 of the
    /// dispatch's scratch base and the hardware derives FLAT_SCRATCH from
    /// it (architected flat scratch); on gfx10 the kernel builds
    /// FLAT_SCRATCH itself.
    pub dispatch_scratch_base: bool,
    /// `hwreg` ids of FLAT_SCRATCH's halves for s_getreg/s_setreg
    /// (HW_REG_FLAT_SCR_LO/HI, 20 and 21): gfx10 and gfx11; llvm-mc-19
    /// refuses them for gfx12 ("not supported on this GPU").
    pub flat_scratch_hwregs: Option<(u32, u32)>,
    /// COMPUTE_TMPRING_SIZE.WAVES counts slots per shader engine (Mesa's
    /// `ac_get_scratch_tmpring_size`: "WAVES is per SE" from gfx11), so
    /// the backing holds WAVES x engines slots; on gfx10 WAVES is the
    /// ring's total.
    pub waves_per_engine: bool,
}

impl Family {
    /// The family's scratch facts (see [`ScratchRules`]).
    pub const fn scratch(self) -> ScratchRules {
        self.facts().scratch
    }
}
