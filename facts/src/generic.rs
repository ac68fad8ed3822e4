//! Generic targets: LLVM's code object V6 processors (`gfx11-generic`)
//! whose code runs on every processor of a range. A generic object is
//! marked by ELF ABI version V6 and a generic version of at least 1 in
//! e_flags bits 31:24 (LLVM's AMDGPUUsage, "ELF header"); which processors
//! each covers is the rows' `generic_target` (LLVM's generic processor
//! table). A generic target has no facts row of its own: its code takes
//! the facts of the processor it is loaded on.

use crate::family::Family;
use crate::rows::TargetFacts;

/// One generic target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenericFacts {
    pub name: &'static str,
    /// EF_AMDGPU_MACH (e_flags bits 7:0) as LLVM 19 writes it.
    pub elf_mach: u32,
    /// The family of every processor it covers.
    pub family: Family,
}

/// e_flags bits 31:24 of a code object V6: the generic version (0 for a
/// non-generic object; earlier versions have no such field).
pub const EF_AMDGPU_GENERIC_VERSION_SHIFT: u32 = 24;
/// The lowest generic version (LLVM's `EF_AMDGPU_GENERIC_VERSION_MIN`).
pub const GENERIC_VERSION_MIN: u32 = 1;

static GENERIC_ROWS: [GenericFacts; 4] = [
    GenericFacts {
        name: "gfx10-1-generic",
        elf_mach: 0x052,
        family: Family::Gfx10,
    },
    GenericFacts {
        name: "gfx10-3-generic",
        elf_mach: 0x053,
        family: Family::Gfx10,
    },
    GenericFacts {
        name: "gfx11-generic",
        elf_mach: 0x054,
        family: Family::Gfx11,
    },
    GenericFacts {
        name: "gfx12-generic",
        elf_mach: 0x059,
        family: Family::Gfx12,
    },
];

impl GenericFacts {
    /// The generic target named `name`, if relaunch knows it (the RDNA ones).
    pub fn lookup(name: &str) -> Option<&'static GenericFacts> {
        GENERIC_ROWS.iter().find(|g| g.name == name)
    }

    /// Every generic target relaunch knows.
    pub fn all() -> &'static [GenericFacts] {
        &GENERIC_ROWS
    }

    /// The processors whose code this generic target's code is, in row order.
    pub fn covers(&self) -> impl Iterator<Item = &'static TargetFacts> + '_ {
        TargetFacts::all()
            .iter()
            .filter(move |r| r.generic_target == self.name)
    }

    /// Whether `processor` runs this generic target's code.
    pub fn covers_processor(&self, processor: &str) -> bool {
        self.covers().any(|r| r.processor == processor)
    }

    /// The processors covered, as messages list them (`gfx1100, gfx1101, ...`).
    pub fn covers_list(&self) -> String {
        self.covers()
            .map(|r| r.processor)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Whether `processor` is spelled as a generic target (`gfx11-generic`,
/// `gfx10-3-generic`): `gfx`, a decimal major version without leading
/// zeros, optionally `-` and a minor digit, then `-generic`.
pub fn is_generic_spelling(processor: &str) -> bool {
    let Some(core) = processor
        .strip_prefix("gfx")
        .and_then(|p| p.strip_suffix("-generic"))
    else {
        return false;
    };
    let (major, minor) = core.split_once('-').unwrap_or((core, "0"));
    let decimal = |s: &str| !s.is_empty() && s.len() <= 3 && s.bytes().all(|b| b.is_ascii_digit());
    decimal(major) && !major.starts_with('0') && decimal(minor) && minor.len() == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_generic_covers_one_family_by_llvms_table() {
        let covers = |n: &str| GenericFacts::lookup(n).unwrap().covers_list();
        assert_eq!(
            covers("gfx10-1-generic"),
            "gfx1010, gfx1011, gfx1012, gfx1013"
        );
        assert_eq!(
            covers("gfx10-3-generic"),
            "gfx1030, gfx1031, gfx1032, gfx1033, gfx1034, gfx1035, gfx1036"
        );
        assert_eq!(
            covers("gfx11-generic"),
            "gfx1100, gfx1101, gfx1102, gfx1103, gfx1150, gfx1151, gfx1152, gfx1153"
        );
        assert_eq!(covers("gfx12-generic"), "gfx1200, gfx1201");
        for g in GenericFacts::all() {
            assert!(g.covers().all(|r| r.family == g.family), "{}", g.name);
            assert!(is_generic_spelling(g.name), "{}", g.name);
        }
        // Every row's generic target is one of these.
        for r in TargetFacts::all() {
            assert!(
                GenericFacts::lookup(r.generic_target).is_some(),
                "{}",
                r.processor
            );
        }
        assert!(GenericFacts::lookup("gfx9-generic").is_none());
    }

    #[test]
    fn generic_spellings() {
        for good in [
            "gfx11-generic",
            "gfx10-3-generic",
            "gfx9-generic",
            "gfx9-4-generic",
        ] {
            assert!(is_generic_spelling(good), "{good}");
        }
        for bad in [
            "gfx011-generic",
            "gfx11-generic-",
            "gfx-generic",
            "gfx11-33-generic",
            "gfx11",
            "gfx11-Generic",
        ] {
            assert!(!is_generic_spelling(bad), "{bad}");
        }
    }
}
