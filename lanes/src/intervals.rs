//! A byte-range map over one buffer: disjoint segments covering
//! `[0, size)`, each with a state. Used by the hazard sweep (last writer and
//! readers since) and the boundary sweep (indices in a lane).

use std::collections::BTreeMap;

#[derive(Debug, Clone)]
struct Seg<S> {
    end: u64,
    state: S,
}

/// Disjoint segments keyed by start; together they always cover the buffer.
#[derive(Debug, Clone)]
pub(crate) struct IntervalMap<S> {
    segs: BTreeMap<u64, Seg<S>>,
}

impl<S: Clone + Default> IntervalMap<S> {
    pub(crate) fn new(size: u64) -> Self {
        let mut segs = BTreeMap::new();
        segs.insert(
            0,
            Seg {
                end: size,
                state: S::default(),
            },
        );
        IntervalMap { segs }
    }

    /// Make `at` a segment start (no-op at an existing start or the end).
    fn split_at(&mut self, at: u64) {
        let Some((&start, seg)) = self.segs.range_mut(..=at).next_back() else {
            return;
        };
        if start == at || seg.end <= at {
            return;
        }
        let tail = Seg {
            end: seg.end,
            state: seg.state.clone(),
        };
        seg.end = at;
        self.segs.insert(at, tail);
    }

    /// Visit the states of every segment overlapping `[start, end)`.
    pub(crate) fn visit(&self, start: u64, end: u64, mut f: impl FnMut(u64, u64, &S)) {
        if let Some((&s, seg)) = self.segs.range(..=start).next_back() {
            if seg.end > start {
                f(s.max(start), seg.end.min(end), &seg.state);
            }
        }
        if start < u64::MAX {
            for (&s, seg) in self.segs.range(start + 1..end) {
                f(s, seg.end.min(end), &seg.state);
            }
        }
    }

    /// Split so `[start, end)` is whole segments, then update each.
    pub(crate) fn update(&mut self, start: u64, end: u64, mut f: impl FnMut(&mut S)) {
        self.split_at(start);
        self.split_at(end);
        for (_, seg) in self.segs.range_mut(start..end) {
            f(&mut seg.state);
        }
    }

    /// Replace everything in `[start, end)` by one segment with `state`.
    pub(crate) fn assign(&mut self, start: u64, end: u64, state: S) {
        self.split_at(start);
        self.split_at(end);
        while let Some((&k, _)) = self.segs.range(start..end).next() {
            self.segs.remove(&k);
        }
        self.segs.insert(start, Seg { end, state });
    }

    #[cfg(test)]
    fn segments(&self) -> Vec<(u64, u64, S)> {
        self.segs
            .iter()
            .map(|(&s, seg)| (s, seg.end, seg.state.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::IntervalMap;

    #[test]
    fn assign_and_update_keep_segments_disjoint_and_covering() {
        let mut map: IntervalMap<u32> = IntervalMap::new(100);
        map.assign(10, 20, 1);
        map.update(15, 40, |s| *s += 10);
        assert_eq!(
            map.segments(),
            vec![
                (0, 10, 0),
                (10, 15, 1),
                (15, 20, 11),
                (20, 40, 10),
                (40, 100, 0)
            ]
        );
        map.assign(0, 100, 7);
        assert_eq!(map.segments(), vec![(0, 100, 7)]);
    }

    #[test]
    fn visit_clips_to_the_asked_range() {
        let mut map: IntervalMap<u32> = IntervalMap::new(100);
        map.assign(10, 20, 1);
        let mut seen = Vec::new();
        map.visit(5, 15, |s, e, st| seen.push((s, e, *st)));
        assert_eq!(seen, vec![(5, 10, 0), (10, 15, 1)]);
    }
}
