//! Private (scratch) memory as the hardware hands it to waves: the queue's
//! scratch backing cut into wave slots (COMPUTE_TMPRING_SIZE), the slot
//! each wave of a dispatch gets, and the per-lane dword interleave of a
//! slot (AMDGPUUsage, "Memory Spaces", private: `wavefront-scratch-base +
//! (private-address / 4 * wavefront-size * 4) + wavefront-lane-id * 4 +
//! private-address % 4`), which buffer scratch (the swizzled V#), the
//! scratch instructions and flat instructions in the private aperture all
//! see alike.
//!
//! Owns: [`ScratchSetup`] (what the queue owner programs; a model of the
//! hardware state, not of any runtime's policy), [`scratch_needed`] (what
//! a kernel needs per wave slot, for the CP's "scratch needed" check) and
//! the slot and interleave arithmetic the executors use.

use relaunch_facts::regs::table;
use relaunch_facts::Family;

/// The scratch state of a queue as the hardware sees it at a dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScratchSetup {
    /// GPU virtual address of the queue's scratch backing: the V#'s base
    /// and flat scratch init on gfx10, COMPUTE_DISPATCH_SCRATCH_BASE << 8
    /// on gfx11/gfx12.
    pub base: u64,
    /// Bytes of one wave slot (TMPRING_SIZE.WAVESIZE x the family's
    /// granule).
    pub wave_bytes: u64,
    /// Wave slots in the backing (TMPRING_SIZE.WAVES).
    pub slots: u32,
    /// The private segment buffer V# the queue holds (gfx10; gfx11 and
    /// gfx12 kernels cannot ask for it). The CP fills in INDEX_STRIDE for
    /// the dispatch's wave size when it delivers it (ROCr leaves the field
    /// 0, "filled in by CP"): [`ScratchSetup::delivered_srd`].
    pub srd: [u32; 4],
}

impl ScratchSetup {
    /// The setup a queue owner describes with register values:
    /// COMPUTE_TMPRING_SIZE (WAVES, WAVESIZE in the family's granule, field
    /// widths from `relaunch-facts`), the backing's address and the V#.
    pub fn from_tmpring(family: Family, tmpring_size: u32, base: u64, srd: [u32; 4]) -> Self {
        let reg = table(family)
            .by_name("COMPUTE_TMPRING_SIZE")
            .expect("every family has COMPUTE_TMPRING_SIZE");
        let field = |name: &str| {
            reg.fields
                .iter()
                .find(|f| f.name == name)
                .map_or(0, |f| f.get(tmpring_size))
        };
        ScratchSetup {
            base,
            wave_bytes: u64::from(field("WAVESIZE")) * family.scratch().wavesize_granule,
            slots: field("WAVES"),
            srd,
        }
    }

    /// The scratch base COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI hold on the
    /// families whose hardware reads them (`relaunch-facts`
    /// `ScratchRules::dispatch_scratch_base`): bits 47:8 of the address,
    /// HI's DATA field 8 bits wide. `None` on gfx10, whose waves do not
    /// take FLAT_SCRATCH from it.
    pub fn dispatch_scratch_base(family: Family, lo: u32, hi: u32) -> Option<u64> {
        let reg = table(family).by_name("COMPUTE_DISPATCH_SCRATCH_BASE_HI")?;
        let hi = reg.fields.first().map_or(hi, |f| f.get(hi));
        family
            .scratch()
            .dispatch_scratch_base
            .then(|| (u64::from(hi) << 40) | (u64::from(lo) << 8))
    }

    /// Bytes of the whole backing the slots cover.
    pub fn bytes(&self) -> u64 {
        self.wave_bytes * u64::from(self.slots)
    }

    /// The V# as a wave receives it in s[0:3]: the queue's, with
    /// INDEX_STRIDE set to the wave size (32: 2, 64: 3), so the swizzle
    /// interleaves exactly one wave's lanes.
    pub fn delivered_srd(&self, wave64: bool) -> [u32; 4] {
        relaunch_facts::scratch::srd_for_wave(self.srd, wave64)
    }

    /// The start of slot `slot` (the wave's FLAT_SCRATCH on gfx11/gfx12,
    /// base + the private segment wave byte offset on gfx10).
    pub fn slot_base(&self, slot: u32) -> u64 {
        self.base + u64::from(slot) * self.wave_bytes
    }
}

/// A V# with the fields the hardware needs for scratch, for callers that
/// build one (tests, a queue owner without a runtime's descriptor): the
/// facts' `scratch_srd` (ROCr's queue descriptor's fields, INDEX_STRIDE
/// left for the CP).
pub use relaunch_facts::scratch::scratch_srd;

/// Bytes of private memory one wave of a kernel needs: the per-work-item
/// private segment (its descriptor's `private_segment_fixed_size`, rounded
/// up to a dword as the CP rounds it) times the wave's lanes. A dispatch
/// needing more than a slot holds cannot run: the CP stops the queue with
/// "scratch needed" until the owner grows the backing.
pub fn scratch_needed(kd: &relaunch_facts::KernelDescriptor, wave64: bool) -> u64 {
    per_wave_bytes(kd.private_segment_fixed_size, wave64)
}

/// [`scratch_needed`] for a per-work-item size (e.g. an AQL packet's
/// `private_segment_size`, which may exceed the descriptor's).
pub fn per_wave_bytes(per_lane: u32, wave64: bool) -> u64 {
    let lanes = if wave64 { 64 } else { 32 };
    u64::from(per_lane).div_ceil(4) * 4 * lanes
}

/// The slot wave `wave` of a workgroup runs in on worker `worker` (a
/// compute unit running one workgroup at a time), given `waves` waves per
/// workgroup: each worker's waves keep consecutive slots of their own, so
/// no two resident waves share a slot while workers x waves <= slots
/// (the dispatch limits its workers to that).
pub fn slot_of(worker: u32, wave: u32, waves: u32, slots: u32) -> u32 {
    ((u64::from(worker) * u64::from(waves) + u64::from(wave)) % u64::from(slots.max(1))) as u32
}

/// One wave's private memory: its slot and the whole backing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaveSlot {
    /// First byte of the slot.
    pub base: u64,
    pub bytes: u64,
    /// The queue's whole backing `[start, end)`.
    pub backing: (u64, u64),
}

impl WaveSlot {
    /// Whether `[addr, addr + len)` lies in this slot.
    pub fn holds(&self, addr: u64, len: u64) -> bool {
        addr >= self.base && addr.saturating_add(len) <= self.base + self.bytes
    }

    /// Whether `addr` lies anywhere in the backing.
    pub fn in_backing(&self, addr: u64) -> bool {
        (self.backing.0..self.backing.1).contains(&addr)
    }
}

/// Interleaved per-lane addressing: lane `l`'s byte `k` of the access is
/// at `base[l] + (off[l] + k) / elem * group + (off[l] + k) % elem`.
/// Flat scratch: base = FLAT_SCRATCH + 4 * lane, elem 4, group 4 x
/// lanes; a swizzled buffer: elem the V#'s element size, group elem x
/// INDEX_STRIDE, base holding the index part.
#[derive(Debug, Clone)]
pub struct Interleave {
    pub base: [u64; super::MAX_LANES],
    pub off: [u64; super::MAX_LANES],
    pub elem: u64,
    pub group: u64,
}

impl Interleave {
    /// The address of lane `l`'s byte `k`.
    #[inline]
    pub fn at(&self, l: usize, k: u64) -> u64 {
        let o = self.off[l] + k;
        self.base[l]
            .wrapping_add(o / self.elem * self.group)
            .wrapping_add(o % self.elem)
    }

    /// The largest piece size (dividing `bytes`) whose bytes stay inside
    /// one element for every lane in `live`: an aligned access moves
    /// whole elements, a misaligned one byte by byte.
    pub fn piece(&self, live: u64, lanes: usize, bytes: u64) -> u64 {
        let aligned = (0..lanes)
            .filter(|&l| live >> l & 1 != 0)
            .all(|l| self.off[l] % self.elem == 0);
        if aligned && bytes % self.elem == 0 {
            return self.elem;
        }
        let fits = (0..lanes)
            .filter(|&l| live >> l & 1 != 0)
            .all(|l| self.off[l] % self.elem + bytes <= self.elem);
        if fits {
            bytes
        } else {
            1
        }
    }
}

/// Why a private access was refused (beyond a VM fault of the backing).
pub(crate) fn outside_slot(lane: usize, addr: u64, len: u64, slot: &WaveSlot) -> String {
    format!(
        "lane {lane}'s private access of {len} bytes at {addr:#x} is outside this wave's \
         scratch slot [{:#x}, {:#x}) ({} bytes per wave, TMPRING_SIZE.WAVESIZE): on hardware it \
         would reach another wave's private memory or past the queue's scratch backing",
        slot.base,
        slot.base + slot.bytes,
        slot.bytes
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tmpring_decodes_per_family_granule() {
        // WAVES 8, WAVESIZE 3.
        let v = 8 | (3 << 12);
        let s = ScratchSetup::from_tmpring(Family::Gfx10, v, 0x1000, [0; 4]);
        assert_eq!((s.slots, s.wave_bytes), (8, 3 * 1024));
        let s = ScratchSetup::from_tmpring(Family::Gfx11, v, 0x1000, [0; 4]);
        assert_eq!((s.slots, s.wave_bytes), (8, 3 * 256));
        assert_eq!(s.bytes(), 8 * 768);
        assert_eq!(s.slot_base(2), 0x1000 + 2 * 768);
        assert_eq!(
            ScratchSetup::dispatch_scratch_base(Family::Gfx12, 0x1234_5678, 0x7F),
            Some(0x7F12_3456_7800)
        );
        assert_eq!(
            ScratchSetup::dispatch_scratch_base(Family::Gfx10, 1, 0),
            None
        );
    }

    #[test]
    fn needed_bytes_round_to_dwords_per_lane() {
        assert_eq!(per_wave_bytes(164, false), 164 * 32);
        assert_eq!(per_wave_bytes(5, true), 8 * 64);
        assert_eq!(per_wave_bytes(0, true), 0);
    }

    #[test]
    fn slots_of_resident_waves_differ() {
        let waves = 4;
        let s: Vec<u32> = (0..waves).map(|w| slot_of(3, w, waves, 6)).collect();
        assert_eq!(s, [0, 1, 2, 3]);
        assert_eq!(slot_of(1, 3, 4, 6), 1);
    }

    #[test]
    fn interleave_is_the_documented_dword_interleave() {
        let mut il = Interleave {
            base: [0; 64],
            off: [0; 64],
            elem: 4,
            group: 4 * 32,
        };
        for l in 0..32 {
            il.base[l] = 0x1000 + 4 * l as u64;
            il.off[l] = 10;
        }
        // Private byte 10 of lane 3: dword 2, byte 2.
        assert_eq!(il.at(3, 0), 0x1000 + 2 * 128 + 3 * 4 + 2);
        assert_eq!(il.piece(0xF, 32, 2), 2);
        assert_eq!(il.piece(0xF, 32, 4), 1);
        il.off[..32].fill(8);
        assert_eq!(il.piece(0xF, 32, 8), 4);
        assert_eq!(il.at(0, 4), 0x1000 + 3 * 128);
    }

    #[test]
    fn delivered_srd_sets_index_stride_for_the_wave_size() {
        let s = ScratchSetup {
            base: 0x7000_0000_1000,
            wave_bytes: 1024,
            slots: 4,
            srd: scratch_srd(Family::Gfx10, 0x7000_0000_1000, 4096),
        };
        assert_eq!(s.delivered_srd(false)[3] >> 21 & 3, 2);
        assert_eq!(s.delivered_srd(true)[3] >> 21 & 3, 3);
        assert_eq!(s.delivered_srd(true)[1] & 0xFFFF, 0x7000);
    }
}
