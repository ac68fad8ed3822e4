//! A dispatch's memory accesses as the interpreter makes them, per lane,
//! kept in flat lists (an append extends the last range when it continues
//! it) and merged into the dispatch's [`AccessTrace`] at the end: inserting
//! every lane's range into the trace's ordered sets one by one would cost
//! more than executing the instruction.

use crate::trace::{AccessKind, AccessTrace};

/// Ranges `[start, end)` per access kind, unsorted until merged, and per
/// lane the range each lane last touched (a lane walking through memory,
/// as in a dot-product loop, extends its own range instead of adding one
/// per instruction).
#[derive(Debug)]
pub struct TraceBuf {
    kinds: [Vec<(u64, u64)>; 4],
    lanes: [[(u64, u64); 64]; 4],
}

impl Default for TraceBuf {
    fn default() -> Self {
        TraceBuf {
            kinds: Default::default(),
            lanes: [[(0, 0); 64]; 4],
        }
    }
}

/// Entries per kind before the list is sorted and merged in place.
const COMPACT_AT: usize = 1 << 16;

fn slot(kind: AccessKind) -> usize {
    match kind {
        AccessKind::ScalarRead => 0,
        AccessKind::VectorRead => 1,
        AccessKind::Write => 2,
        AccessKind::Atomic => 3,
    }
}

fn merge(v: &mut Vec<(u64, u64)>) {
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for &(s, e) in v.iter() {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    *v = out;
}

impl TraceBuf {
    /// Record `[addr, addr + len)`.
    #[inline]
    pub fn record(&mut self, kind: AccessKind, addr: u64, len: u64) {
        let v = &mut self.kinds[slot(kind)];
        let end = addr.saturating_add(len);
        if let Some(last) = v.last_mut() {
            if last.1 == addr {
                last.1 = end;
                return;
            }
            if last.0 <= addr && end <= last.1 {
                return;
            }
        }
        v.push((addr, end));
        if v.len() >= COMPACT_AT {
            merge(v);
        }
    }

    /// Record `[addr, addr + len)` accessed by lane `lane` of a vector
    /// instruction.
    #[inline]
    pub fn record_lane(&mut self, kind: AccessKind, lane: usize, addr: u64, len: u64) {
        let k = slot(kind);
        let last = &mut self.lanes[k][lane & 63];
        let end = addr.saturating_add(len);
        if last.1 == addr && last.1 != last.0 {
            last.1 = end;
            return;
        }
        if last.0 <= addr && end <= last.1 {
            return;
        }
        let done = std::mem::replace(last, (addr, end));
        if done.1 > done.0 {
            self.record(kind, done.0, done.1 - done.0);
        }
    }

    /// Merge everything recorded into `trace` and empty the buffer.
    pub fn flush_into(&mut self, trace: &mut AccessTrace) {
        for k in 0..4 {
            for l in 0..64 {
                let (s, e) = std::mem::take(&mut self.lanes[k][l]);
                if e > s {
                    let v = &mut self.kinds[k];
                    v.push((s, e));
                }
            }
        }
        for (i, kind) in [
            AccessKind::ScalarRead,
            AccessKind::VectorRead,
            AccessKind::Write,
            AccessKind::Atomic,
        ]
        .into_iter()
        .enumerate()
        {
            let v = &mut self.kinds[i];
            if v.is_empty() {
                continue;
            }
            merge(v);
            for &(s, e) in v.iter() {
                trace.record(kind, s, e - s);
            }
            v.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_ranges_merge_into_the_trace() {
        let mut b = TraceBuf::default();
        for l in (0..32u64).rev() {
            b.record(AccessKind::VectorRead, 0x1000 + 4 * l, 4);
        }
        b.record(AccessKind::Write, 0x2000, 4);
        b.record(AccessKind::Write, 0x2004, 4);
        b.record(AccessKind::Write, 0x3000, 8);
        let mut t = AccessTrace::default();
        b.flush_into(&mut t);
        assert_eq!(
            t.vector_reads.iter().collect::<Vec<_>>(),
            vec![(0x1000, 0x1080)]
        );
        assert_eq!(
            t.writes.iter().collect::<Vec<_>>(),
            vec![(0x2000, 0x2008), (0x3000, 0x3008)]
        );
    }
}
