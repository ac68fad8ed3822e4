//! The cross-queue check: packets of different queues that were executing
//! at the same time must not conflict. Each packet's execution window is
//! taken from one device-wide tick counter (start before it runs, end before
//! its completion signal fires), so work the host or a barrier ordered after
//! a completion never counts as concurrent. A pair is checked when the later
//! of the two finishes.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use super::{Footprint, Rule, Violation};

/// Finished packets kept for comparison (older ones cannot overlap anything
/// still running once trimmed; the cap bounds memory either way).
const KEPT: usize = 256;

#[derive(Debug)]
struct Finished {
    queue: u64,
    packet: u64,
    end: u64,
    footprint: Footprint,
}

#[derive(Debug, Default)]
struct State {
    running: HashMap<(u64, u64), u64>,
    finished: VecDeque<Finished>,
}

/// Packets in flight on one device.
#[derive(Debug, Default)]
pub struct InFlight {
    tick: AtomicU64,
    state: Mutex<State>,
}

impl InFlight {
    /// A packet starts executing; returns its start tick.
    pub fn begin(&self, queue: u64, packet: u64) -> u64 {
        let mut s = self.state.lock();
        let start = self.tick.fetch_add(1, Ordering::AcqRel);
        s.running.insert((queue, packet), start);
        start
    }

    /// A packet finished (before its completion signal fires): compare it
    /// with every packet of another queue that finished during its window.
    pub fn end(&self, queue: u64, packet: u64, start: u64, footprint: Footprint) -> Vec<Violation> {
        let mut s = self.state.lock();
        let end = self.tick.fetch_add(1, Ordering::AcqRel);
        s.running.remove(&(queue, packet));
        let mut found = Vec::new();
        for f in s
            .finished
            .iter()
            .filter(|f| f.queue != queue && f.end > start)
        {
            if let Some(address) = footprint.conflict(&f.footprint) {
                found.push(Violation {
                    rule: Rule::CrossQueueRace,
                    queue,
                    aql_packet: packet,
                    pm4_packet: 0,
                    dispatch: 0,
                    kernel: "(whole IB)".to_string(),
                    address,
                    detail: format!(
                        "queue {} packet {} ran at the same time and also accessed it, one of \
                         them writing: work on different queues must not share memory it writes \
                         (order them with a completion signal or keep them on one queue)",
                        f.queue, f.packet
                    ),
                });
            }
        }
        s.finished.push_back(Finished {
            queue,
            packet,
            end,
            footprint,
        });
        // Drop finished packets no running or future packet can overlap.
        let oldest_running = s.running.values().copied().min().unwrap_or(end + 1);
        while s
            .finished
            .front()
            .is_some_and(|f| f.end < oldest_running || s.finished.len() > KEPT)
        {
            s.finished.pop_front();
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(reads: &[(u64, u64)], writes: &[(u64, u64)]) -> Footprint {
        let mut f = Footprint::default();
        for &(a, l) in reads {
            f.reads.insert(a, l);
        }
        for &(a, l) in writes {
            f.writes.insert(a, l);
        }
        f
    }

    #[test]
    fn overlapping_windows_with_a_shared_write_conflict() {
        let q = InFlight::default();
        let a = q.begin(0, 1);
        let b = q.begin(1, 7);
        assert_eq!(q.end(0, 1, a, fp(&[], &[(100, 8)])), vec![]);
        let v = q.end(1, 7, b, fp(&[(104, 4)], &[]));
        assert_eq!(v.len(), 1);
        assert_eq!(
            (v[0].rule, v[0].queue, v[0].aql_packet, v[0].address),
            (Rule::CrossQueueRace, 1, 7, 104)
        );
        assert!(v[0].detail.contains("queue 0 packet 1"), "{}", v[0]);
    }

    #[test]
    fn sequential_packets_and_disjoint_or_read_only_sharing_pass() {
        let q = InFlight::default();
        let a = q.begin(0, 1);
        assert_eq!(q.end(0, 1, a, fp(&[], &[(100, 8)])), vec![]);
        // Starts after the other finished: ordered, not concurrent.
        let b = q.begin(1, 1);
        assert_eq!(q.end(1, 1, b, fp(&[], &[(100, 8)])), vec![]);
        let c = q.begin(0, 2);
        let d = q.begin(1, 2);
        assert_eq!(q.end(0, 2, c, fp(&[(0, 64)], &[(200, 8)])), vec![]);
        assert_eq!(q.end(1, 2, d, fp(&[(0, 64)], &[(300, 8)])), vec![]);
        // Same queue never conflicts with itself.
        let e = q.begin(1, 3);
        let f = q.begin(1, 4);
        assert_eq!(q.end(1, 3, e, fp(&[], &[(0, 8)])), vec![]);
        assert_eq!(q.end(1, 4, f, fp(&[], &[(0, 8)])), vec![]);
        assert!(q.state.lock().finished.len() <= 1);
    }
}
