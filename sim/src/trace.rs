//! Address-range sets recording what one dispatch touched, split by how the
//! hardware would have reached memory (scalar cache, vector caches, atomics
//! at GL2, writes). The ordering model compares these sets.

use std::collections::BTreeMap;
use std::fmt;

/// How an access reached memory (decides which cache invalidation it needs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccessKind {
    /// Scalar load through K$ (kernel arguments).
    ScalarRead,
    /// Vector load through V$ (L0) and GL1.
    VectorRead,
    /// Plain store.
    Write,
    /// Device-scope atomic, performed at GL2 (no L0/GL1/K$ involvement).
    Atomic,
}

impl fmt::Display for AccessKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AccessKind::ScalarRead => "scalar read",
            AccessKind::VectorRead => "vector read",
            AccessKind::Write => "write",
            AccessKind::Atomic => "atomic",
        })
    }
}

/// A set of half-open byte ranges `[start, end)`, kept merged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RangeSet {
    ranges: BTreeMap<u64, u64>,
}

impl RangeSet {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Insert `[start, start+len)`, merging with neighbours it touches.
    pub fn insert(&mut self, start: u64, len: u64) {
        if len == 0 {
            return;
        }
        let mut lo = start;
        let mut hi = start.saturating_add(len);
        // Absorb a range that starts before and reaches `lo`.
        if let Some((&s, &e)) = self.ranges.range(..=lo).next_back() {
            if e >= lo {
                lo = s;
                hi = hi.max(e);
            }
        }
        // Absorb every range that starts inside [lo, hi].
        let inside: Vec<(u64, u64)> = self.ranges.range(lo..=hi).map(|(&s, &e)| (s, e)).collect();
        for (s, e) in inside {
            self.ranges.remove(&s);
            hi = hi.max(e);
        }
        self.ranges.insert(lo, hi);
    }

    /// Merge all of `other` into `self`.
    pub fn extend(&mut self, other: &RangeSet) {
        for (s, e) in other.iter() {
            self.insert(s, e - s);
        }
    }

    /// The ranges as `(start, end)` pairs in address order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ranges.iter().map(|(&s, &e)| (s, e))
    }

    /// The lowest address contained in both sets, if any.
    pub fn first_overlap(&self, other: &RangeSet) -> Option<u64> {
        let (small, big) = if self.ranges.len() <= other.ranges.len() {
            (self, other)
        } else {
            (other, self)
        };
        let mut best: Option<u64> = None;
        for (s, e) in small.iter() {
            if let Some(hit) = big.first_in(s, e) {
                best = Some(best.map_or(hit, |b| b.min(hit)));
            }
        }
        best
    }

    /// The lowest address of this set inside `[start, end)`.
    pub fn first_in(&self, start: u64, end: u64) -> Option<u64> {
        if let Some((_, &e)) = self.ranges.range(..=start).next_back() {
            if e > start {
                return Some(start);
            }
        }
        self.ranges.range(start..end).next().map(|(&s, _)| s)
    }

    /// Remove `[start, end)` from the set (used when a later write shadows).
    pub fn remove(&mut self, start: u64, end: u64) {
        let touching: Vec<(u64, u64)> = self
            .ranges
            .range(..end)
            .filter(|(_, &e)| e > start)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in touching {
            self.ranges.remove(&s);
            if s < start {
                self.ranges.insert(s, start);
            }
            if e > end {
                self.ranges.insert(end, e);
            }
        }
    }
}

/// Everything one dispatch touched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccessTrace {
    pub scalar_reads: RangeSet,
    pub vector_reads: RangeSet,
    pub writes: RangeSet,
    pub atomics: RangeSet,
}

impl AccessTrace {
    pub fn record(&mut self, kind: AccessKind, addr: u64, len: u64) {
        let set = match kind {
            AccessKind::ScalarRead => &mut self.scalar_reads,
            AccessKind::VectorRead => &mut self.vector_reads,
            AccessKind::Write => &mut self.writes,
            AccessKind::Atomic => &mut self.atomics,
        };
        set.insert(addr, len);
    }

    pub fn set(&self, kind: AccessKind) -> &RangeSet {
        match kind {
            AccessKind::ScalarRead => &self.scalar_reads,
            AccessKind::VectorRead => &self.vector_reads,
            AccessKind::Write => &self.writes,
            AccessKind::Atomic => &self.atomics,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(ranges: &[(u64, u64)]) -> RangeSet {
        let mut s = RangeSet::new();
        for &(a, l) in ranges {
            s.insert(a, l);
        }
        s
    }

    #[test]
    fn inserts_merge_touching_and_overlapping_ranges() {
        let s = set(&[(10, 5), (15, 5), (30, 2), (0, 11), (31, 10)]);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![(0, 20), (30, 41)]);
        let s = set(&[(100, 1), (50, 1), (49, 60)]);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![(49, 109)]);
    }

    #[test]
    fn overlap_finds_the_lowest_common_address() {
        let a = set(&[(0, 8), (100, 8)]);
        let b = set(&[(8, 8), (104, 100)]);
        assert_eq!(a.first_overlap(&b), Some(104));
        assert_eq!(b.first_overlap(&a), Some(104));
        assert_eq!(a.first_overlap(&set(&[(8, 92)])), None);
        assert_eq!(
            set(&[(0, 1000)]).first_overlap(&set(&[(500, 1)])),
            Some(500)
        );
    }

    #[test]
    fn remove_splits_ranges() {
        let mut s = set(&[(0, 100)]);
        s.remove(10, 20);
        s.remove(90, 200);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![(0, 10), (20, 90)]);
    }
}
