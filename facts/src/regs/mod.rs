//! Compute SH registers, declared once per family as data.
//!
//! Owns: the register tables (name, SET_SH_REG offset, fields, who owns the
//! register) for gfx10, gfx11 and gfx12, and the offsets the encoder programs.
//! The encoder, the decoder and the simulated device all read these tables;
//! `scripts/check-registers` compares them with the kernel headers.

pub mod fields;
mod tables;

use std::sync::OnceLock;

use crate::family::Family;

pub use fields::*;

use crate::field::Field;

/// Start of the SH register window in GC dword space (`PACKET3_SET_SH_REG_START`).
pub const SH_REG_START: u32 = 0x2C00;
/// End (exclusive) of the SH window; SET_SH_REG offsets are below 0x400.
pub const SH_REG_END: u32 = 0x3000;
/// GC register segment 0 base: SET_SH_REG offset = GC dword + this - 0x2C00.
pub const GC_BASE_SEG0: u32 = 0x1260;

/// Who may write a register inside an IB relaunch submits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// Programmed by the dispatch encoder.
    Dispatch,
    /// Owned by the queue (set from its MQD and CU mask): an IB must never
    /// write it.
    Queue,
    /// Written by the command processor itself (dispatch dims, restart
    /// state): an IB must never write it.
    Cp,
    /// The dispatch's scratch ring (COMPUTE_TMPRING_SIZE, the gfx11/gfx12
    /// scratch base): an IB may program it for its own dispatches, as the
    /// CP does from `amd_queue_t` for each AQL dispatch (which reprograms
    /// it, so an IB's values never leak into the queue's own dispatches).
    Scratch,
    /// Exists and may be written, but relaunch never writes it.
    Other,
}

impl Class {
    /// True when an IB writing this register is an error.
    pub fn forbidden(self) -> bool {
        matches!(self, Class::Queue | Class::Cp)
    }

    pub fn name(self) -> &'static str {
        match self {
            Class::Dispatch => "dispatch",
            Class::Queue => "queue-owned",
            Class::Cp => "cp-owned",
            Class::Scratch => "scratch",
            Class::Other => "other",
        }
    }
}

/// One SH register: its name as in the kernel headers (without the `mm`/`reg`
/// prefix), its SET_SH_REG offset, its fields and its class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Register {
    pub name: &'static str,
    pub offset: u16,
    pub fields: &'static [Field],
    pub class: Class,
}

impl Register {
    /// The GC dword offset the kernel headers list (`mmNAME` / `regNAME`).
    pub fn gc_offset(&self) -> u32 {
        self.offset as u32 + SH_REG_START - GC_BASE_SEG0
    }
}

/// The registers one family has, sorted by offset.
pub struct RegisterTable {
    pub family: Family,
    chunks: &'static [&'static [Register]],
    index: OnceLock<Vec<Option<Register>>>,
}

impl RegisterTable {
    const fn new(family: Family, chunks: &'static [&'static [Register]]) -> Self {
        RegisterTable {
            family,
            chunks,
            index: OnceLock::new(),
        }
    }

    fn index(&self) -> &[Option<Register>] {
        self.index.get_or_init(|| {
            let mut v = vec![None; (SH_REG_END - SH_REG_START) as usize];
            for r in self.chunks.iter().flat_map(|c| c.iter()) {
                v[r.offset as usize] = Some(*r);
            }
            v
        })
    }

    /// The register at SET_SH_REG `offset`, if this family has one there.
    pub fn get(&self, offset: u32) -> Option<&Register> {
        self.index().get(offset as usize)?.as_ref()
    }

    /// The register called `name`.
    pub fn by_name(&self, name: &str) -> Option<&Register> {
        self.index().iter().flatten().find(|r| r.name == name)
    }

    /// Every register, sorted by offset.
    pub fn iter(&self) -> impl Iterator<Item = &Register> {
        self.index().iter().flatten()
    }
}

/// The register table of `family`.
pub fn table(family: Family) -> &'static RegisterTable {
    static GFX10: RegisterTable = RegisterTable::new(Family::Gfx10, tables::GFX10);
    static GFX11: RegisterTable = RegisterTable::new(Family::Gfx11, tables::GFX11);
    static GFX12: RegisterTable = RegisterTable::new(Family::Gfx12, tables::GFX12);
    match family {
        Family::Gfx10 => &GFX10,
        Family::Gfx11 => &GFX11,
        Family::Gfx12 => &GFX12,
    }
}

/// SET_SH_REG offsets the encoder programs (the same on every family; the
/// tests check each against every table).
pub mod off {
    pub const COMPUTE_DISPATCH_INITIATOR: u16 = 0x200;
    pub const COMPUTE_START_X: u16 = 0x204;
    pub const COMPUTE_NUM_THREAD_X: u16 = 0x207;
    pub const COMPUTE_PGM_LO: u16 = 0x20C;
    pub const COMPUTE_PGM_HI: u16 = 0x20D;
    pub const COMPUTE_DISPATCH_SCRATCH_BASE_LO: u16 = 0x210;
    pub const COMPUTE_DISPATCH_SCRATCH_BASE_HI: u16 = 0x211;
    pub const COMPUTE_PGM_RSRC1: u16 = 0x212;
    pub const COMPUTE_PGM_RSRC2: u16 = 0x213;
    pub const COMPUTE_RESOURCE_LIMITS: u16 = 0x215;
    pub const COMPUTE_STATIC_THREAD_MGMT_SE0: u16 = 0x216;
    pub const COMPUTE_TMPRING_SIZE: u16 = 0x218;
    pub const COMPUTE_STATIC_THREAD_MGMT_SE8: u16 = 0x223;
    pub const COMPUTE_PGM_RSRC3: u16 = 0x228;
    pub const COMPUTE_USER_DATA_0: u16 = 0x240;
    /// Number of USER_DATA registers.
    pub const USER_DATA_COUNT: u16 = 16;
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Family; 3] = [Family::Gfx10, Family::Gfx11, Family::Gfx12];

    #[test]
    fn rsrc3_is_at_0x228_on_every_family() {
        for f in ALL {
            let r = table(f).get(0x228).unwrap();
            assert_eq!(r.name, "COMPUTE_PGM_RSRC3", "{f}");
            assert_eq!(r.gc_offset(), 0x1BC8);
            assert_eq!(table(f).by_name("COMPUTE_PGM_RSRC3").unwrap().offset, 0x228);
        }
        // The trap: 0x223 on gfx12 is a CU mask the queue owns.
        let se8 = table(Family::Gfx12).get(0x223).unwrap();
        assert_eq!(se8.name, "COMPUTE_STATIC_THREAD_MGMT_SE8");
        assert_eq!(se8.class, Class::Queue);
        assert!(table(Family::Gfx11).get(0x223).is_none());
    }

    #[test]
    fn programmed_offsets_name_the_same_register_everywhere() {
        use off::*;
        let want = [
            (COMPUTE_DISPATCH_INITIATOR, "COMPUTE_DISPATCH_INITIATOR"),
            (COMPUTE_NUM_THREAD_X, "COMPUTE_NUM_THREAD_X"),
            (COMPUTE_PGM_LO, "COMPUTE_PGM_LO"),
            (COMPUTE_PGM_HI, "COMPUTE_PGM_HI"),
            (COMPUTE_PGM_RSRC1, "COMPUTE_PGM_RSRC1"),
            (COMPUTE_PGM_RSRC2, "COMPUTE_PGM_RSRC2"),
            (COMPUTE_RESOURCE_LIMITS, "COMPUTE_RESOURCE_LIMITS"),
            (COMPUTE_TMPRING_SIZE, "COMPUTE_TMPRING_SIZE"),
            (
                COMPUTE_DISPATCH_SCRATCH_BASE_LO,
                "COMPUTE_DISPATCH_SCRATCH_BASE_LO",
            ),
            (
                COMPUTE_DISPATCH_SCRATCH_BASE_HI,
                "COMPUTE_DISPATCH_SCRATCH_BASE_HI",
            ),
            (COMPUTE_PGM_RSRC3, "COMPUTE_PGM_RSRC3"),
            (COMPUTE_USER_DATA_0, "COMPUTE_USER_DATA_0"),
            (COMPUTE_USER_DATA_0 + 15, "COMPUTE_USER_DATA_15"),
        ];
        for f in ALL {
            for (offset, name) in want {
                assert_eq!(table(f).get(offset as u32).unwrap().name, name, "{f}");
            }
        }
    }

    #[test]
    fn queue_owned_registers_are_forbidden() {
        for f in ALL {
            let t = table(f);
            for name in [
                "COMPUTE_TMPRING_SIZE",
                "COMPUTE_DISPATCH_SCRATCH_BASE_LO",
                "COMPUTE_DISPATCH_SCRATCH_BASE_HI",
            ] {
                let class = t.by_name(name).unwrap().class;
                assert_eq!(class, Class::Scratch, "{f} {name}");
                assert!(!class.forbidden(), "{f} {name}");
            }
            for name in [
                "COMPUTE_STATIC_THREAD_MGMT_SE0",
                "COMPUTE_STATIC_THREAD_MGMT_SE3",
            ] {
                assert!(t.by_name(name).unwrap().class.forbidden(), "{f} {name}");
            }
            let dispatch = t.iter().filter(|r| r.class == Class::Dispatch).count();
            assert_eq!(dispatch, 9 + 16, "{f}");
        }
    }

    #[test]
    fn tables_are_sorted_without_duplicates_and_fields_do_not_overlap() {
        for f in ALL {
            let mut seen = std::collections::HashSet::new();
            for chunk in table(f).chunks {
                for r in chunk.iter() {
                    assert!(seen.insert(r.offset), "{f}: duplicate {:#x}", r.offset);
                    let mut used = 0u32;
                    for fl in r.fields {
                        assert!(fl.lo <= fl.hi && fl.hi < 32, "{} {}", r.name, fl.name);
                        assert_eq!(used & fl.mask(), 0, "{} {}", r.name, fl.name);
                        used |= fl.mask();
                    }
                }
            }
        }
        // gfx10 and gfx11 really differ at 0x22B (RELAUNCH vs a CU mask).
        assert_eq!(
            table(Family::Gfx10).get(0x22B).unwrap().name,
            "COMPUTE_RELAUNCH"
        );
        assert_eq!(
            table(Family::Gfx11).get(0x22B).unwrap().name,
            "COMPUTE_STATIC_THREAD_MGMT_SE4"
        );
    }
}
