//! The fewest cache invalidations an IB could have carried and still read
//! nothing stale, judged by the same cache rules as the model: a measure,
//! not a check. Beside the IB's real actions it tells how much of a
//! runtime's cache work the data actually required (`relaunch-bench`'s
//! `cp_vs_hip`), whatever the runtime knew when it chose its boundaries.
//!
//! Each cache is invalidated only right before the first dispatch that
//! reads, through it, data written since its last invalidation (or, before
//! any, data the host may have written). Invalidating as late as that
//! clears the most at once, so no placement needs fewer actions of a kind.
//! Dispatches and waits stay where the IB put them.

use crate::trace::{AccessTrace, RangeSet};

/// Invalidations the IB needed at least, by cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FloorCounts {
    pub k_invalidate: u64,
    pub l0_invalidate: u64,
    pub gl1_invalidate: u64,
}

/// One cache's ideal state: what it may hold stale.
#[derive(Debug)]
struct Stale {
    writes: RangeSet,
    /// Host writes made before the IB (nothing invalidated them yet).
    host: bool,
}

impl Stale {
    fn new() -> Self {
        Stale {
            writes: RangeSet::new(),
            host: true,
        }
    }

    /// Whether reading `reads` through this cache needs it invalidated
    /// first; if so, the invalidation is done.
    fn needs(&mut self, reads: &[&RangeSet]) -> bool {
        let any = reads.iter().any(|r| !r.is_empty());
        let hit = (self.host && any)
            || reads
                .iter()
                .any(|r| r.first_overlap(&self.writes).is_some());
        if hit {
            self.writes = RangeSet::new();
            self.host = false;
        }
        hit
    }
}

/// The ideal placement, followed dispatch by dispatch.
#[derive(Debug)]
pub(super) struct Floor {
    k: Stale,
    v: Stale,
    gl1: Stale,
    counts: FloorCounts,
}

impl Floor {
    pub(super) fn new() -> Self {
        Floor {
            k: Stale::new(),
            v: Stale::new(),
            gl1: Stale::new(),
            counts: FloorCounts::default(),
        }
    }

    /// A dispatch, in program order: the invalidations it needs first.
    /// Scalar loads go through K$ and GL1, vector loads through V$ and GL1.
    pub(super) fn dispatch(&mut self, t: &AccessTrace) {
        let c = &mut self.counts;
        c.k_invalidate += u64::from(self.k.needs(&[&t.scalar_reads]));
        c.l0_invalidate += u64::from(self.v.needs(&[&t.vector_reads]));
        c.gl1_invalidate += u64::from(self.gl1.needs(&[&t.scalar_reads, &t.vector_reads]));
    }

    /// A wait completed `written`: from now on it may be stale anywhere.
    pub(super) fn wait(&mut self, written: &RangeSet) {
        for s in [&mut self.k, &mut self.v, &mut self.gl1] {
            s.writes.extend(written);
        }
    }

    pub(super) fn counts(&self) -> FloorCounts {
        self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::AccessKind;

    fn trace(accesses: &[(AccessKind, u64)]) -> AccessTrace {
        let mut t = AccessTrace::default();
        for &(kind, addr) in accesses {
            t.record(kind, addr, 4);
        }
        t
    }

    #[test]
    fn each_cache_is_invalidated_only_before_a_read_of_stale_data_through_it() {
        use AccessKind::*;
        let mut f = Floor::new();
        let mut written = RangeSet::new();
        // Host data read through both paths: one of each, the prologue.
        f.dispatch(&trace(&[
            (ScalarRead, 0),
            (VectorRead, 0x100),
            (Write, 0x200),
        ]));
        written.insert(0x200, 4);
        f.wait(&written);
        // Reads the write through V$ only: V$ and GL1, K$ kept.
        f.dispatch(&trace(&[(VectorRead, 0x200), (Write, 0x300)]));
        f.wait(&RangeSet::new());
        // Reads only data no dispatch wrote: nothing.
        f.dispatch(&trace(&[(ScalarRead, 0), (VectorRead, 0x100)]));
        let mut w = RangeSet::new();
        w.insert(0x300, 4);
        f.wait(&w);
        // The scalar read of the write after two waits: K$ (holding both
        // writes stale) and GL1 once.
        f.dispatch(&trace(&[(ScalarRead, 0x200), (ScalarRead, 0x300)]));
        assert_eq!(
            f.counts(),
            FloorCounts {
                k_invalidate: 2,
                l0_invalidate: 2,
                gl1_invalidate: 3,
            }
        );
    }
}
