//! The scratch (private segment) ring as the hardware reads it from a
//! compute dispatch's state: COMPUTE_TMPRING_SIZE (WAVES wave slots of
//! WAVESIZE granules each), the private segment buffer V# a gfx10 wave
//! gets in s[0:3], and which of them the family counts per shader engine.
//! Field positions are the register tables' (`regs`); units and per-family
//! meaning are [`crate::family::ScratchRules`].
//!
//! Sources: Mesa `ac_get_scratch_tmpring_size` (WAVESIZE in 1 KiB units on
//! gfx10, 256 bytes from gfx11; "WAVES is per SE" from gfx11), ROCr's
//! `InitScratchSRD` (the V#: SWIZZLE_ENABLE, ADD_TID_ENABLE, INDEX_STRIDE
//! left to the CP), the kernel headers' `COMPUTE_TMPRING_SIZE` fields.

use crate::family::Family;
use crate::field::Field;
use crate::regs::table;

fn tmpring_field(family: Family, name: &str) -> Field {
    *table(family)
        .by_name("COMPUTE_TMPRING_SIZE")
        .and_then(|r| r.fields.iter().find(|f| f.name == name))
        .expect("every family's COMPUTE_TMPRING_SIZE has WAVES and WAVESIZE")
}

/// COMPUTE_TMPRING_SIZE.WAVES: the ring's wave slots (per shader engine
/// where [`crate::family::ScratchRules::waves_per_engine`]).
pub fn waves_field(family: Family) -> Field {
    tmpring_field(family, "WAVES")
}

/// COMPUTE_TMPRING_SIZE.WAVESIZE: bytes per slot in the family's granule.
pub fn wavesize_field(family: Family) -> Field {
    tmpring_field(family, "WAVESIZE")
}

/// Bytes per wave slot rounded up to the family's WAVESIZE granule.
pub fn round_wave_bytes(family: Family, bytes: u64) -> u64 {
    bytes.next_multiple_of(family.scratch().wavesize_granule)
}

/// The COMPUTE_TMPRING_SIZE value for `waves` slots (the field's count) of
/// `wave_bytes` each (a multiple of the granule), or `None` when either
/// does not fit its field or `wave_bytes` is not a whole granule count.
pub fn tmpring_size(family: Family, waves: u32, wave_bytes: u64) -> Option<u32> {
    let granule = family.scratch().wavesize_granule;
    if wave_bytes % granule != 0 {
        return None;
    }
    let units = u32::try_from(wave_bytes / granule).ok()?;
    let (w, s) = (waves_field(family), wavesize_field(family));
    (w.fits(waves) && s.fits(units)).then(|| w.place(waves) | s.place(units))
}

/// V# dword 3 INDEX_STRIDE (bits 22:21): 8, 16, 32 or 64 records.
pub const SRD_INDEX_STRIDE_SHIFT: u32 = 21;

/// The private segment buffer V# of a scratch backing at `base` of
/// `bytes`: base, NUM_RECORDS the backing's size, SWIZZLE_ENABLE (4-byte
/// elements), ADD_TID_ENABLE, OOB_SELECT 2 (no bounds check in swizzle
/// mode), buffer type 0, and INDEX_STRIDE 0, which the CP fills in for the
/// wave size of an AQL dispatch (ROCr's queue V# leaves it so). A direct
/// PM4 dispatch gets the V# exactly as written, so its writer sets
/// INDEX_STRIDE itself ([`srd_for_wave`]).
pub fn scratch_srd(family: Family, base: u64, bytes: u32) -> [u32; 4] {
    let r = family.facts().resource;
    let swizzle = r.swizzle.place(r.swizzle_four_byte);
    let add_tid = 1 << 23;
    let oob_raw = 2 << 28;
    [
        base as u32,
        ((base >> 32) as u32 & 0xFFFF) | swizzle,
        bytes,
        add_tid | oob_raw,
    ]
}

/// `srd` with INDEX_STRIDE set for the wave size (32: 2, 64: 3), so the
/// swizzle interleaves exactly one wave's lanes, as the CP delivers it.
pub fn srd_for_wave(mut srd: [u32; 4], wave64: bool) -> [u32; 4] {
    let stride = if wave64 { 3 } else { 2 };
    srd[3] = (srd[3] & !(3 << SRD_INDEX_STRIDE_SHIFT)) | (stride << SRD_INDEX_STRIDE_SHIFT);
    srd
}

/// The 48-bit base a V# holds (dword 0, dword 1 bits 15:0).
pub fn srd_base(srd: [u32; 4]) -> u64 {
    u64::from(srd[0]) | (u64::from(srd[1] & 0xFFFF) << 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tmpring_units_per_family() {
        assert_eq!(tmpring_size(Family::Gfx10, 8, 3 * 1024), Some(8 | 3 << 12));
        assert_eq!(tmpring_size(Family::Gfx11, 8, 3 * 256), Some(8 | 3 << 12));
        assert_eq!(tmpring_size(Family::Gfx12, 8, 3 * 256), Some(8 | 3 << 12));
        // Not a whole granule; WAVES past its 12 bits; WAVESIZE past gfx10's 13.
        assert_eq!(tmpring_size(Family::Gfx10, 8, 256), None);
        assert_eq!(tmpring_size(Family::Gfx11, 4096, 256), None);
        assert_eq!(tmpring_size(Family::Gfx10, 1, 8192 * 1024), None);
        assert!(tmpring_size(Family::Gfx11, 1, 8191 * 1024).is_some());
        assert_eq!(round_wave_bytes(Family::Gfx10, 32 * 200), 7 * 1024);
        assert_eq!(round_wave_bytes(Family::Gfx12, 32 * 200), 6400);
    }

    #[test]
    fn srd_round_trips_base_and_sets_the_stride() {
        let s = scratch_srd(Family::Gfx10, 0x7F12_3456_7800, 4096);
        assert_eq!(srd_base(s), 0x7F12_3456_7800);
        assert_eq!(srd_for_wave(s, false)[3] >> SRD_INDEX_STRIDE_SHIFT & 3, 2);
        assert_eq!(srd_for_wave(s, true)[3] >> SRD_INDEX_STRIDE_SHIFT & 3, 3);
    }
}
