//! The GPU families relaunch encodes for, and the facts that are the same
//! for every target of one family. Every decision that differs by family is
//! an exhaustive `match` here or at its user, so a new family makes the
//! compiler list every place that must decide.

use std::fmt;

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
        match self {
            Family::Gfx10 => "gfx10",
            Family::Gfx11 => "gfx11",
            Family::Gfx12 => "gfx12",
        }
    }

    /// How the hardware lays out the user SGPRs of a compute dispatch.
    pub const fn user_sgprs(self) -> UserSgprRules {
        match self {
            // AMDGPUUsage: the 4-SGPR private segment buffer descriptor
            // exists up to gfx11; gfx12 has architected flat scratch only.
            Family::Gfx10 | Family::Gfx11 => UserSgprRules {
                private_segment_buffer: true,
            },
            Family::Gfx12 => UserSgprRules {
                private_segment_buffer: false,
            },
        }
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
