//! One facts row per supported target: the only place a processor name is
//! classified. Everything per target (family, wave sizes, limits, cache
//! model, automatic queue width, ELF machine id, opcode subtarget) is read
//! from here; family-wide facts come from [`Family`].

use crate::family::{CacheModel, Family, UserSgprRules};
use crate::isa::Subtarget;

/// Per-workgroup limits of a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Limits {
    /// Most LDS (group segment, static + dynamic) bytes one workgroup uses.
    pub max_lds_bytes: u32,
    /// Most work-items in one workgroup.
    pub max_workgroup_items: u32,
}

impl Limits {
    /// RDNA1-4: 64 KiB of LDS per workgroup, 1024 work-items.
    pub const RDNA: Limits = Limits {
        max_lds_bytes: 64 * 1024,
        max_workgroup_items: 1024,
    };

    /// The smallest limits among `family`'s targets: what every target of
    /// the family allows (an IB encoded for a family runs on any of them).
    pub const fn of_family(family: Family) -> Limits {
        let mut out = Limits {
            max_lds_bytes: u32::MAX,
            max_workgroup_items: u32::MAX,
        };
        let mut i = 0;
        while i < ROWS.len() {
            let r = &ROWS[i];
            // A filter, not a per-family decision (const fn: no PartialEq).
            if r.family as u8 == family as u8 {
                if r.limits.max_lds_bytes < out.max_lds_bytes {
                    out.max_lds_bytes = r.limits.max_lds_bytes;
                }
                if r.limits.max_workgroup_items < out.max_workgroup_items {
                    out.max_workgroup_items = r.limits.max_workgroup_items;
                }
            }
            i += 1;
        }
        out
    }

    /// The largest of every supported target's limits: what a graph may
    /// record before it knows the GPU it will run on.
    pub const ANY_TARGET: Limits = {
        let mut out = Limits {
            max_lds_bytes: 0,
            max_workgroup_items: 0,
        };
        let mut i = 0;
        while i < ROWS.len() {
            let l = ROWS[i].limits;
            if l.max_lds_bytes > out.max_lds_bytes {
                out.max_lds_bytes = l.max_lds_bytes;
            }
            if l.max_workgroup_items > out.max_workgroup_items {
                out.max_workgroup_items = l.max_workgroup_items;
            }
            i += 1;
        }
        out
    };
}

/// Wave sizes a target runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WaveSizes {
    pub wave32: bool,
    pub wave64: bool,
}

impl WaveSizes {
    /// RDNA: both, chosen per kernel by its descriptor.
    pub const BOTH: WaveSizes = WaveSizes {
        wave32: true,
        wave64: true,
    };

    pub const fn supports(self, lanes: u32) -> bool {
        match lanes {
            32 => self.wave32,
            64 => self.wave64,
            _ => false,
        }
    }
}

/// Everything relaunch knows about one GPU target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TargetFacts {
    /// LLVM processor name, e.g. `gfx1100`.
    pub processor: &'static str,
    pub family: Family,
    /// The opcode subtarget the machine-code tables distinguish.
    pub subtarget: Subtarget,
    pub wave_sizes: WaveSizes,
    pub user_sgprs: UserSgprRules,
    pub limits: Limits,
    /// The family's cache model (`FamilyFacts::cache`).
    pub cache: CacheModel,
    /// Hardware queues a multi-lane IB uses under the automatic policy.
    /// gfx1100 boards measured best with two (more contend for the same
    /// front end), other RDNA3 parts have the headroom for four, RDNA4
    /// behaves like gfx1100, RDNA1/2 gain nothing from a second queue.
    pub auto_queue_width: u8,
    /// EF_AMDGPU_MACH (ELF e_flags bits 7:0) as LLVM 19 writes it; `None`
    /// where it is not recorded here (the metadata stays authoritative).
    pub elf_mach: Option<u32>,
    /// The LLVM generic target whose code this target could run
    /// (`gfx11-generic`), by LLVM's table.
    pub generic_target: &'static str,
}

impl TargetFacts {
    /// The row of a bare processor name (`gfx1100`), if relaunch supports it.
    pub fn lookup(processor: &str) -> Option<&'static TargetFacts> {
        ROWS.iter().find(|r| r.processor == processor)
    }

    /// Every supported target.
    pub fn all() -> &'static [TargetFacts] {
        &ROWS
    }

    /// The supported targets as messages list them: runs of one opcode
    /// subtarget as `first-last` (`gfx1010-gfx1013, gfx1030-gfx1036, ...`),
    /// derived from the rows.
    pub fn supported_list() -> String {
        let mut runs: Vec<(&str, &str, Subtarget)> = Vec::new();
        for r in &ROWS {
            match runs.last_mut() {
                Some((_, last, sub)) if *sub == r.subtarget => *last = r.processor,
                _ => runs.push((r.processor, r.processor, r.subtarget)),
            }
        }
        let each: Vec<String> = runs
            .iter()
            .map(|(first, last, _)| match first == last {
                true => first.to_string(),
                false => format!("{first}-{last}"),
            })
            .collect();
        each.join(", ")
    }
}

const fn row(
    processor: &'static str,
    family: Family,
    subtarget: Subtarget,
    elf_mach: Option<u32>,
    auto_queue_width: u8,
) -> TargetFacts {
    TargetFacts {
        processor,
        family,
        subtarget,
        wave_sizes: WaveSizes::BOTH,
        user_sgprs: family.user_sgprs(),
        limits: Limits::RDNA,
        cache: family.facts().cache,
        auto_queue_width,
        elf_mach,
        generic_target: match subtarget {
            Subtarget::Gfx101 => "gfx10-1-generic",
            Subtarget::Gfx103 => "gfx10-3-generic",
            Subtarget::Gfx110 | Subtarget::Gfx115 => "gfx11-generic",
            Subtarget::Gfx120 => "gfx12-generic",
        },
    }
}

use Family::{Gfx10, Gfx11, Gfx12};
use Subtarget::{Gfx101, Gfx103, Gfx110, Gfx115, Gfx120};

static ROWS: [TargetFacts; 21] = [
    row("gfx1010", Gfx10, Gfx101, Some(0x033), 1),
    row("gfx1011", Gfx10, Gfx101, Some(0x034), 1),
    row("gfx1012", Gfx10, Gfx101, Some(0x035), 1),
    row("gfx1013", Gfx10, Gfx101, Some(0x042), 1),
    row("gfx1030", Gfx10, Gfx103, Some(0x036), 1),
    row("gfx1031", Gfx10, Gfx103, Some(0x037), 1),
    row("gfx1032", Gfx10, Gfx103, Some(0x038), 1),
    row("gfx1033", Gfx10, Gfx103, Some(0x039), 1),
    row("gfx1034", Gfx10, Gfx103, Some(0x03e), 1),
    row("gfx1035", Gfx10, Gfx103, Some(0x03d), 1),
    row("gfx1036", Gfx10, Gfx103, Some(0x045), 1),
    row("gfx1100", Gfx11, Gfx110, Some(0x041), 2),
    row("gfx1101", Gfx11, Gfx110, Some(0x046), 4),
    row("gfx1102", Gfx11, Gfx110, Some(0x047), 4),
    row("gfx1103", Gfx11, Gfx110, Some(0x044), 4),
    row("gfx1150", Gfx11, Gfx115, Some(0x043), 4),
    row("gfx1151", Gfx11, Gfx115, Some(0x04a), 4),
    row("gfx1152", Gfx11, Gfx115, Some(0x055), 4),
    row("gfx1153", Gfx11, Gfx115, None, 4),
    row("gfx1200", Gfx12, Gfx120, Some(0x048), 2),
    row("gfx1201", Gfx12, Gfx120, Some(0x04e), 2),
];

/// ELF machine ids of targets relaunch refuses but names when it sees them
/// (a code object's e_flags is cross-checked against its metadata).
pub const FOREIGN_MACHINES: [(u32, &str); 2] = [(0x03f, "gfx90a"), (0x04c, "gfx942")];

/// The processor an ELF e_flags value names, when it is one listed here
/// (a generic target's name for its machine id: `gfx11-generic`).
pub fn processor_from_elf_flags(e_flags: u32) -> Option<&'static str> {
    let mach = e_flags & EF_AMDGPU_MACH;
    ROWS.iter()
        .find(|r| r.elf_mach == Some(mach))
        .map(|r| r.processor)
        .or_else(|| {
            crate::generic::GenericFacts::all()
                .iter()
                .find(|g| g.elf_mach == mach)
                .map(|g| g.name)
        })
        .or_else(|| {
            FOREIGN_MACHINES
                .iter()
                .find(|(m, _)| *m == mach)
                .map(|(_, name)| *name)
        })
}

/// The machine field of e_flags.
pub const EF_AMDGPU_MACH: u32 = 0xff;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_unique_and_follow_their_family() {
        let mut seen = std::collections::HashSet::new();
        for r in TargetFacts::all() {
            assert!(seen.insert(r.processor), "{} twice", r.processor);
            assert_eq!(r.user_sgprs, r.family.user_sgprs(), "{}", r.processor);
            if let Some(m) = r.elf_mach {
                assert_eq!(processor_from_elf_flags(m | 0x300), Some(r.processor));
            }
        }
        assert_eq!(processor_from_elf_flags(0x04c), Some("gfx942"));
        assert_eq!(processor_from_elf_flags(0x0ff), None);
        assert_eq!(Limits::ANY_TARGET, Limits::RDNA);
        for f in Family::ALL {
            assert_eq!(Limits::of_family(f), Limits::RDNA, "{f}");
        }
    }

    #[test]
    fn supported_list_is_derived_from_the_rows() {
        assert_eq!(
            TargetFacts::supported_list(),
            "gfx1010-gfx1013, gfx1030-gfx1036, gfx1100-gfx1103, gfx1150-gfx1153, gfx1200-gfx1201"
        );
        for r in TargetFacts::all() {
            assert_eq!(r.cache, r.family.facts().cache, "{}", r.processor);
            assert!(r.family.targets().any(|t| t.processor == r.processor));
        }
        let counts: Vec<usize> = Family::ALL.iter().map(|f| f.targets().count()).collect();
        assert_eq!(counts, [11, 8, 2]);
    }
}
