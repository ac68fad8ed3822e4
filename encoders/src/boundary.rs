//! Boundary kinds between dispatches in one IB, and the packets each one,
//! the IB prologue and the IB epilogue emit (why: `docs/pm4.md`).

use std::fmt;

use relaunch_device::Family;

use crate::emit;
use crate::packet::{event, gcr};
use crate::writer::DwordWriter;

/// What a boundary guarantees to the dispatches after it. Ordered from
/// cheapest to strongest where a stronger one also satisfies weaker needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BoundaryKind {
    /// Wait for earlier dispatches to finish (CS_PARTIAL_FLUSH); no data
    /// written before is read after it (write-after-read, write-after-write).
    Wait,
    /// Wait, then invalidate V$ and GL1 so vector-memory reads see earlier
    /// writes; for consumers certified to read mutable data only via VMEM.
    RmwVmem,
    /// Wait, then invalidate K$, V$ and GL1: any read-after-write.
    Rmw,
}

impl BoundaryKind {
    /// Short name used in dumps, DOT output and the fingerprint.
    pub fn name(self) -> &'static str {
        match self {
            BoundaryKind::Wait => "wait",
            BoundaryKind::RmwVmem => "rmw_vmem",
            BoundaryKind::Rmw => "rmw",
        }
    }

    /// True when a boundary of kind `self` also satisfies a need for `need`.
    pub fn covers(self, need: BoundaryKind) -> bool {
        self >= need
    }
}

/// GCR_CNTL of the generic read-after-write acquire: K$, V$ and GL1 invalidate.
pub const GCR_RMW: u32 = gcr::GLK_INV.place(1) | gcr::GLV_INV.place(1) | gcr::GL1_INV.place(1);
/// GCR_CNTL for consumers certified to read mutable data only through vector
/// memory: V$ and GL1 invalidate, scalar cache kept.
pub const GCR_RMW_VMEM: u32 = gcr::GLV_INV.place(1) | gcr::GL1_INV.place(1);
/// GCR_CNTL of the IB prologue: the same invalidations as `GCR_RMW`, so
/// kernargs and inputs the host wrote since the last replay are seen.
pub const GCR_PROLOGUE: u32 = GCR_RMW;
/// The epilogue's GCR_CNTL for `family`: its cache model's release (GL2
/// written back before the completion signal; what else is written back
/// with it is the family row's fact, `relaunch_facts::CacheModel`).
pub const fn gcr_epilogue(family: Family) -> u32 {
    family.facts().cache.release_gcr
}

/// Dwords the prologue takes (one ACQUIRE_MEM).
pub const PROLOGUE_DWORDS: usize = 8;
/// Dwords the epilogue takes (CS_PARTIAL_FLUSH + ACQUIRE_MEM).
pub const EPILOGUE_DWORDS: usize = 10;

impl BoundaryKind {
    /// Dwords this boundary emits.
    pub const fn dwords(self) -> usize {
        match self {
            BoundaryKind::Wait => 2,
            BoundaryKind::RmwVmem | BoundaryKind::Rmw => 10,
        }
    }

    /// This boundary's packets as words.
    pub const fn words(self) -> &'static [u32] {
        match self {
            BoundaryKind::Wait => &WAIT_WORDS,
            BoundaryKind::RmwVmem => &RMW_VMEM_WORDS,
            BoundaryKind::Rmw => &RMW_WORDS,
        }
    }

    /// Append this boundary's packets.
    #[inline(always)]
    pub fn emit(self, w: &mut DwordWriter) {
        match self {
            BoundaryKind::Wait => w.put(&WAIT_WORDS),
            BoundaryKind::RmwVmem => w.put(&RMW_VMEM_WORDS),
            BoundaryKind::Rmw => w.put(&RMW_WORDS),
        }
    }
}

const fn flush_then_acquire(gcr_cntl: u32) -> [u32; 10] {
    let f = emit::event_write_words(event::CS_PARTIAL_FLUSH, event::INDEX_PARTIAL_FLUSH);
    let a = emit::acquire_mem_all_words(gcr_cntl);
    [f[0], f[1], a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]]
}

const WAIT_WORDS: [u32; 2] =
    emit::event_write_words(event::CS_PARTIAL_FLUSH, event::INDEX_PARTIAL_FLUSH);
const RMW_WORDS: [u32; 10] = flush_then_acquire(GCR_RMW);
const RMW_VMEM_WORDS: [u32; 10] = flush_then_acquire(GCR_RMW_VMEM);

/// Append the IB prologue (start of every segment).
#[inline]
pub fn emit_prologue(w: &mut DwordWriter) {
    emit::acquire_mem_all(w, GCR_PROLOGUE);
}

/// Append the IB epilogue of `family` (end of the last segment).
#[inline]
pub fn emit_epilogue(w: &mut DwordWriter, family: Family) {
    w.put(&flush_then_acquire(gcr_epilogue(family)));
}

impl fmt::Display for BoundaryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::BoundaryKind::*;

    use super::*;

    fn words(kind: BoundaryKind) -> Vec<u32> {
        let mut w = DwordWriter::new();
        kind.emit(&mut w);
        assert_eq!(w.len(), kind.dwords());
        assert_eq!(w.as_slice(), kind.words());
        w.into_vec()
    }

    #[test]
    fn generic_rmw_golden_words() {
        assert_eq!(
            words(Rmw),
            [
                0xC0004600, 0x00000407, 0xC0065800, 0x00000000, 0xFFFFFFFF, 0x00FFFFFF, 0x00000000,
                0x00000000, 0x0000000A, 0x00000380
            ]
        );
    }

    #[test]
    fn vmem_rmw_golden_words() {
        assert_eq!(
            words(RmwVmem),
            [
                0xC0004600, 0x00000407, 0xC0065800, 0x00000000, 0xFFFFFFFF, 0x00FFFFFF, 0x00000000,
                0x00000000, 0x0000000A, 0x00000300
            ]
        );
    }

    #[test]
    fn wait_golden_words() {
        assert_eq!(words(Wait), [0xC0004600, 0x00000407]);
    }

    #[test]
    fn prologue_and_epilogue_golden_words() {
        let mut w = DwordWriter::new();
        emit_prologue(&mut w);
        assert_eq!(w.len(), PROLOGUE_DWORDS);
        emit_epilogue(&mut w, Family::Gfx11);
        assert_eq!(w.len(), PROLOGUE_DWORDS + EPILOGUE_DWORDS);
        assert_eq!(
            w.as_slice(),
            [
                0xC0065800, 0, 0xFFFFFFFF, 0x00FFFFFF, 0, 0, 0xA, 0x380, // prologue
                0xC0004600, 0x407, 0xC0065800, 0, 0xFFFFFFFF, 0x00FFFFFF, 0, 0, 0xA, 0x8030,
            ]
        );
        let mut w = DwordWriter::new();
        emit_epilogue(&mut w, Family::Gfx10);
        assert_eq!(w.as_slice()[9], 0x8030);
        let mut w = DwordWriter::new();
        emit_epilogue(&mut w, Family::Gfx12);
        assert_eq!(w.as_slice()[9], 0x8000, "gfx12: GL2 write-back only");
    }

    #[test]
    fn stronger_boundaries_cover_weaker_needs() {
        assert!(Rmw.covers(RmwVmem) && Rmw.covers(Wait) && RmwVmem.covers(Wait));
        assert!(!Wait.covers(Rmw) && !RmwVmem.covers(Rmw));
    }
}
