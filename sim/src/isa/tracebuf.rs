//! A dispatch's memory accesses as the interpreter makes them, per lane,
//! kept in flat lists (an append extends the last range when it continues
//! it) and merged into the dispatch's [`AccessTrace`] at the end: inserting
//! every lane's range into the trace's ordered sets one by one would cost
//! more than executing the instruction.

use crate::lanemask::set_lanes;
use crate::trace::{AccessKind, AccessTrace};

/// Ranges `[start, end)` per access kind, unsorted until merged; per kind
/// a few open ranges that the next access may extend (a kernel streaming
/// through several arrays at once, as a dot product's loop does, keeps one
/// open range per array instead of adding one per instruction); and per
/// lane the range each lane last touched (a lane walking through memory
/// extends its own range).
#[derive(Debug)]
pub struct TraceBuf {
    kinds: [Vec<(u64, u64)>; 4],
    open: [[(u64, u64); OPEN]; 4],
    /// The open slot the next new range replaces, per kind (round robin).
    victim: [usize; 4],
    /// The open slots the last four records used, per kind (a byte each,
    /// the latest lowest).
    history: [u32; 4],
    /// Per lane two open ranges ([which][kind][lane]) and which of the two
    /// was used last (a bit per lane, per kind).
    lane_start: [[[u64; 64]; 4]; 2],
    lane_end: [[[u64; 64]; 4]; 2],
    lane_newer: [u64; 4],
}

impl Default for TraceBuf {
    fn default() -> Self {
        TraceBuf {
            kinds: Default::default(),
            open: [[(0, 0); OPEN]; 4],
            victim: [0; 4],
            history: [0; 4],
            lane_start: [[[0; 64]; 4]; 2],
            lane_end: [[[0; 64]; 4]; 2],
            lane_newer: [0; 4],
        }
    }
}

/// Open ranges per kind.
const OPEN: usize = 8;

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
    #[inline(always)]
    pub fn record(&mut self, kind: AccessKind, addr: u64, len: u64) {
        let k = slot(kind);
        let end = addr.saturating_add(len);
        // The slots the last four records used first, inline in the
        // caller: a kernel streaming through up to four arrays in turn
        // finds its range at the same history position every time (a
        // branch the CPU predicts).
        let h = self.history[k];
        for j in 0..4 {
            if self.take(k, (h >> (8 * j)) as usize % OPEN, addr, end) {
                return;
            }
        }
        self.record_other(k, addr, end);
    }

    /// [`TraceBuf::record`] of a range no recently used slot takes.
    #[inline(never)]
    fn record_other(&mut self, k: usize, addr: u64, end: u64) {
        for i in 0..OPEN {
            if self.take(k, i, addr, end) {
                return;
            }
        }
        let v = self.victim[k];
        self.victim[k] = (v + 1) % OPEN;
        self.history[k] = (self.history[k] << 8) | v as u32;
        let done = std::mem::replace(&mut self.open[k][v], (addr, end));
        if done.1 > done.0 {
            self.push(k, done);
        }
    }

    /// Whether open range `i` of kind `k` takes `[addr, end)`: continued
    /// by it (then extended) or already covering it.
    #[inline(always)]
    fn take(&mut self, k: usize, i: usize, addr: u64, end: u64) -> bool {
        let r = &mut self.open[k][i];
        // Empty slots are (0, 0): never extended, only replaced.
        let continues = r.1 == addr && r.1 != r.0;
        // Or lies in it (a stream read again, as each wave of a workgroup
        // reads the same row).
        if !(continues || r.0 <= addr && end <= r.1) {
            return false;
        }
        if continues {
            r.1 = end;
        }
        self.history[k] = (self.history[k] << 8) | i as u32;
        true
    }

    fn push(&mut self, k: usize, range: (u64, u64)) {
        let v = &mut self.kinds[k];
        v.push(range);
        if v.len() >= COMPACT_AT {
            merge(v);
        }
    }

    /// Record `len` bytes at `addrs[l]` for every lane `l` set in `live`
    /// (a vector instruction whose lanes' addresses are neither one address
    /// nor one contiguous run).
    #[inline]
    pub fn record_lanes(&mut self, kind: AccessKind, addrs: &[u64], live: u64, len: u64) {
        let k = slot(kind);
        let n = addrs.len().min(64);
        if n == 0 {
            return;
        }
        let live = live & (u64::MAX >> (64 - n));
        // Common case first: every live lane continues the same one of its
        // two ranges. Live lanes only, stopping at the first that does not
        // (a mask built with a shift per lane does not vectorise anyway).
        for w in 0..2 {
            let (starts, ends) = (&self.lane_start[w][k], &self.lane_end[w][k]);
            let extends = set_lanes(live).all(|l| ends[l] == addrs[l] && ends[l] != starts[l]);
            if extends {
                let ends = &mut self.lane_end[w][k];
                for l in set_lanes(live) {
                    ends[l] = addrs[l].saturating_add(len);
                }
                let mine = if w == 1 { live } else { 0 };
                self.lane_newer[k] = (self.lane_newer[k] & !live) | mine;
                return;
            }
        }
        for l in set_lanes(live) {
            self.record_lane(kind, l, addrs[l], len);
        }
    }

    /// Record `[addr, addr + len)` accessed by lane `lane` of a vector
    /// instruction: it extends (or lies in) one of the lane's two open
    /// ranges, else replaces the older of them (two, so that a lane reading
    /// two arrays in turn, as a dot product does, keeps both streams).
    #[inline]
    pub fn record_lane(&mut self, kind: AccessKind, lane: usize, addr: u64, len: u64) {
        let k = slot(kind);
        let l = lane & 63;
        let new_end = addr.saturating_add(len);
        for w in 0..2 {
            let (start, end) = (self.lane_start[w][k][l], self.lane_end[w][k][l]);
            if end == addr && end != start {
                self.lane_end[w][k][l] = new_end;
                self.lane_newer[k] = (self.lane_newer[k] & !(1 << l)) | ((w as u64) << l);
                return;
            }
            if start <= addr && new_end <= end {
                return;
            }
        }
        // Replace the older range.
        let w = (!(self.lane_newer[k] >> l) & 1) as usize;
        let (start, end) = (self.lane_start[w][k][l], self.lane_end[w][k][l]);
        self.lane_start[w][k][l] = addr;
        self.lane_end[w][k][l] = new_end;
        self.lane_newer[k] = (self.lane_newer[k] & !(1 << l)) | ((w as u64) << l);
        if end > start {
            self.record(kind, start, end - start);
        }
    }

    /// Merge everything recorded into `trace` and empty the buffer.
    pub fn flush_into(&mut self, trace: &mut AccessTrace) {
        for k in 0..4 {
            for w in 0..2 {
                for l in 0..64 {
                    let (s, e) = (
                        std::mem::take(&mut self.lane_start[w][k][l]),
                        std::mem::take(&mut self.lane_end[w][k][l]),
                    );
                    if e > s {
                        self.kinds[k].push((s, e));
                    }
                }
            }
            self.lane_newer[k] = 0;
            for r in std::mem::take(&mut self.open[k]) {
                if r.1 > r.0 {
                    self.kinds[k].push(r);
                }
            }
            self.victim[k] = 0;
            self.history[k] = 0;
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

    #[test]
    fn interleaved_streams_and_strided_lanes_stay_exact() {
        let mut b = TraceBuf::default();
        // Three arrays read in turn, one dword each per step.
        for k in 0..100u64 {
            for base in [0x10_000u64, 0x20_000, 0x30_000] {
                b.record(AccessKind::ScalarRead, base + 4 * k, 4);
            }
        }
        // 32 lanes each walking its own row of 256 bytes, then one lane
        // jumping elsewhere.
        let mut addrs = [0u64; 32];
        for k in 0..64u64 {
            for (l, a) in addrs.iter_mut().enumerate() {
                *a = 0x40_000 + 256 * l as u64 + 4 * k;
            }
            b.record_lanes(AccessKind::VectorRead, &addrs, u64::from(u32::MAX), 4);
        }
        addrs[3] = 0x90_000;
        b.record_lanes(AccessKind::VectorRead, &addrs, 1 << 3, 4);
        let mut t = AccessTrace::default();
        b.flush_into(&mut t);
        assert_eq!(
            t.scalar_reads.iter().collect::<Vec<_>>(),
            vec![
                (0x10_000, 0x10_190),
                (0x20_000, 0x20_190),
                (0x30_000, 0x30_190)
            ]
        );
        assert_eq!(
            t.vector_reads.iter().collect::<Vec<_>>(),
            vec![(0x40_000, 0x40_000 + 32 * 256), (0x90_000, 0x90_004)]
        );
    }
}
