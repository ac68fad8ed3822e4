//! Scratch for the direct PM4 path: what an IB's kernels need
//! ([`ScratchNeed`], gathered while recording), how big a backing one
//! queue gets and how COMPUTE_TMPRING_SIZE describes it ([`ScratchPlan`],
//! from the device's compute units and shader engines), and the register
//! and user-SGPR values a backing at a known address gives
//! ([`ScratchRing`], which `IbBuilder::finish_with_scratch` writes into
//! the placeholders recording left).
//!
//! Sizing (policy, documented in `docs/pm4.md`): a wave slot holds the
//! largest per-wave need of the IB's kernels (private_segment_fixed_size
//! rounded to a dword, times the wave's lanes), rounded up to the family's
//! WAVESIZE granule; the ring has Mesa's bound of 32 waves per compute
//! unit (`max_scratch_waves`, at least one 1024-item workgroup), fewer when
//! the backing would pass [`MAX_BACKING_BYTES`], but never fewer than one
//! workgroup of the IB's largest scratch dispatch (the SPI launches a
//! scratch wave only into a free slot, so fewer slots than resident waves
//! only throttles). Register units and the per-engine WAVES count are
//! facts (`relaunch_facts::scratch`, `ScratchRules`).

use relaunch_facts::family::FlatScratch;
use relaunch_facts::scratch::{
    round_wave_bytes, scratch_srd, srd_for_wave, tmpring_size, waves_field,
};
use relaunch_facts::Family;

use crate::error::EncodeError;

/// Most private bytes per work-item the PM4 path gives a kernel: 64 KiB,
/// so a wave64 slot (4 MiB) fits WAVESIZE on every family (gfx10's 13-bit
/// field in 1 KiB units holds 8191 KiB).
pub const MAX_PRIVATE_SEGMENT_BYTES: u32 = 64 * 1024;
/// Most bytes one queue's scratch backing takes; fewer slots beyond it.
pub const MAX_BACKING_BYTES: u64 = 256 << 20;
/// Scratch waves per compute unit the ring is sized for (Mesa's
/// `max_scratch_waves`: 32 per CU).
pub const WAVES_PER_CU: u32 = 32;

/// Bytes of private memory one wave of a kernel needs: its per-work-item
/// size rounded up to a dword (as the CP rounds it), times its lanes.
pub fn wave_need(private_segment_fixed_size: u32, wave64: bool) -> u64 {
    let lanes = if wave64 { 64 } else { 32 };
    u64::from(private_segment_fixed_size.div_ceil(4) * 4) * lanes
}

/// What an IB's scratch dispatches need of the queue's backing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ScratchNeed {
    /// The largest per-wave need ([`wave_need`]).
    pub wave_bytes: u64,
    /// The most waves one workgroup of a scratch dispatch has.
    pub group_waves: u32,
}

impl ScratchNeed {
    pub(crate) fn add(&mut self, wave_bytes: u64, group_waves: u32) {
        self.wave_bytes = self.wave_bytes.max(wave_bytes);
        self.group_waves = self.group_waves.max(group_waves);
    }
}

/// A backing's size and COMPUTE_TMPRING_SIZE, before it has an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScratchPlan {
    pub family: Family,
    /// Bytes of one wave slot (a whole WAVESIZE granule count).
    pub wave_bytes: u64,
    /// COMPUTE_TMPRING_SIZE.WAVES (per shader engine from gfx11).
    pub waves: u32,
    /// Slots in the backing (WAVES, times the engines where it counts
    /// per engine).
    pub slots: u64,
    /// Bytes to allocate: slots x wave_bytes.
    pub bytes: u64,
    /// The register value.
    pub tmpring_size: u32,
}

impl ScratchPlan {
    /// The plan for `need` on a device of `compute_units` CUs and
    /// `shader_engines` engines (both as the agent reports them).
    pub fn new(
        family: Family,
        need: ScratchNeed,
        compute_units: u32,
        shader_engines: u32,
    ) -> Result<Self, EncodeError> {
        let refuse = |reason: String| EncodeError::Scratch { reason };
        let wave_bytes = round_wave_bytes(family, need.wave_bytes.max(1));
        let group = need.group_waves.max(1);
        let engines = match family.scratch().waves_per_engine {
            true => shader_engines.max(1),
            false => 1,
        };
        let by_bytes = (MAX_BACKING_BYTES / wave_bytes).min(u64::from(u32::MAX)) as u32;
        let wanted = (WAVES_PER_CU.saturating_mul(compute_units.max(1)))
            .max(32)
            .min(by_bytes)
            .max(group);
        // WAVES per engine, rounded up so every engine can hold a workgroup.
        let waves = wanted
            .div_ceil(engines)
            .max(group)
            .min(waves_field(family).max());
        if waves < group {
            return Err(refuse(format!(
                "a workgroup of {group} scratch waves needs more slots than \
                 COMPUTE_TMPRING_SIZE.WAVES holds ({})",
                waves_field(family).max()
            )));
        }
        let tmpring_size = tmpring_size(family, waves, wave_bytes).ok_or_else(|| {
            refuse(format!(
                "{wave_bytes} bytes per wave do not fit COMPUTE_TMPRING_SIZE.WAVESIZE on {family}"
            ))
        })?;
        let slots = u64::from(waves) * u64::from(engines);
        Ok(ScratchPlan {
            family,
            wave_bytes,
            waves,
            slots,
            bytes: slots * wave_bytes,
            tmpring_size,
        })
    }

    /// The ring of this plan's backing at `base`.
    pub fn at(&self, base: u64) -> Result<ScratchRing, EncodeError> {
        if base % 256 != 0 || base >> 48 != 0 {
            return Err(EncodeError::Scratch {
                reason: format!(
                    "the scratch backing at {base:#x} is not 256-byte aligned below 2^48 \
                     (COMPUTE_DISPATCH_SCRATCH_BASE holds address bits 47:8)"
                ),
            });
        }
        let bytes = u32::try_from(self.bytes).map_err(|_| EncodeError::Scratch {
            reason: format!("{} bytes of scratch pass a V#'s NUM_RECORDS", self.bytes),
        })?;
        Ok(ScratchRing {
            plan: *self,
            base,
            srd: scratch_srd(self.family, base, bytes),
        })
    }
}

/// A backing at a known address: the values its placeholders take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScratchRing {
    pub plan: ScratchPlan,
    pub base: u64,
    /// The private segment buffer V# (INDEX_STRIDE per wave size in
    /// [`ScratchRing::word`]).
    pub srd: [u32; 4],
}

/// Which value a scratch placeholder stands for (its tag's low bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Word {
    Srd0 = 0,
    Srd1,
    Srd2,
    /// Dword 3 with INDEX_STRIDE for wave32.
    Srd3Wave32,
    Srd3Wave64,
    /// Flat scratch init: the backing's base.
    InitLo,
    InitHi,
    TmpringSize,
    /// COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI: base bits 47:8.
    DispatchBaseLo,
    DispatchBaseHi,
}

impl Word {
    pub(crate) const ALL: [Word; 10] = [
        Word::Srd0,
        Word::Srd1,
        Word::Srd2,
        Word::Srd3Wave32,
        Word::Srd3Wave64,
        Word::InitLo,
        Word::InitHi,
        Word::TmpringSize,
        Word::DispatchBaseLo,
        Word::DispatchBaseHi,
    ];
}

impl ScratchRing {
    /// The value of placeholder `w`.
    pub(crate) fn word(&self, w: Word) -> u32 {
        match w {
            Word::Srd0 => self.srd[0],
            Word::Srd1 => self.srd[1],
            Word::Srd2 => self.srd[2],
            Word::Srd3Wave32 => srd_for_wave(self.srd, false)[3],
            Word::Srd3Wave64 => srd_for_wave(self.srd, true)[3],
            Word::InitLo => self.base as u32,
            Word::InitHi => (self.base >> 32) as u32,
            Word::TmpringSize => self.plan.tmpring_size,
            Word::DispatchBaseLo => (self.base >> 8) as u32,
            Word::DispatchBaseHi => (self.base >> 40) as u32,
        }
    }
}

/// Whether `family` programs the dispatch scratch base registers (gfx11,
/// gfx12: architected flat scratch) or hands the base through user SGPRs.
pub(crate) fn dispatch_base_registers(family: Family) -> bool {
    match family.scratch().flat_scratch {
        FlatScratch::Architected => true,
        FlatScratch::Init => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_by_cus_engines_and_the_byte_cap() {
        let need = ScratchNeed {
            wave_bytes: wave_need(320, false),
            group_waves: 2,
        };
        // gfx10: 10 KiB slots, 32 per CU in all.
        let p = ScratchPlan::new(Family::Gfx10, need, 32, 1).unwrap();
        assert_eq!((p.wave_bytes, p.waves, p.slots), (10 * 1024, 1024, 1024));
        assert_eq!(p.tmpring_size, 1024 | 10 << 12);
        // gfx11: WAVES per engine, 256-byte granule.
        let p = ScratchPlan::new(Family::Gfx11, need, 48, 6).unwrap();
        assert_eq!((p.waves, p.slots, p.wave_bytes), (256, 1536, 10240));
        // The byte cap lowers the slots, never below one workgroup.
        let big = ScratchNeed {
            wave_bytes: wave_need(MAX_PRIVATE_SEGMENT_BYTES, true),
            group_waves: 16,
        };
        let p = ScratchPlan::new(Family::Gfx12, big, 96, 4).unwrap();
        assert!(p.bytes <= MAX_BACKING_BYTES, "{p:?}");
        assert!(p.waves >= 16);
        let huge = ScratchNeed {
            wave_bytes: wave_need(MAX_PRIVATE_SEGMENT_BYTES, true),
            group_waves: 1000,
        };
        let p = ScratchPlan::new(Family::Gfx10, huge, 1, 1).unwrap();
        assert_eq!(p.slots, 1000);
    }

    #[test]
    fn ring_words_per_family() {
        let need = ScratchNeed {
            wave_bytes: 4096,
            group_waves: 1,
        };
        let p = ScratchPlan::new(Family::Gfx10, need, 1, 1).unwrap();
        let r = p.at(0x7000_1234_5600).unwrap();
        assert_eq!(r.word(Word::InitLo), 0x1234_5600);
        assert_eq!(r.word(Word::InitHi), 0x7000);
        assert_eq!(r.word(Word::Srd3Wave32) >> 21 & 3, 2);
        assert_eq!(r.word(Word::Srd3Wave64) >> 21 & 3, 3);
        assert_eq!(r.word(Word::DispatchBaseLo), 0x0012_3456);
        assert_eq!(r.word(Word::DispatchBaseHi), 0x70);
        assert!(p.at(0x1001).is_err());
    }
}
