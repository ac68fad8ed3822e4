//! The cross-queue check: two packets of different queues whose accesses
//! conflict (one writes what the other reads or writes) race unless one
//! happened before the other through a synchronisation the simulator saw
//! (see `clock`: completion signals, barrier packets, host waits, doorbells,
//! memory waits). Timing plays no part: lanes that conflict are reported
//! whether or not their kernels happened to overlap. A pair is checked when
//! the later of the two finishes; a packet that finished earlier cannot have
//! waited for one that finishes later.

use std::collections::VecDeque;

use parking_lot::Mutex;

use super::clock::{self, Agent, VectorClock};
use super::{Footprint, Rule, Violation};

/// Finished packets kept for comparison. The oldest are dropped beyond this
/// (a bound on memory): a race with a packet more than this many packets
/// ago, with no synchronisation in between, can go unreported.
const KEPT: usize = 256;

#[derive(Debug)]
struct Finished {
    queue: u64,
    packet: u64,
    agent: Agent,
    epoch: u64,
    footprint: Footprint,
}

/// A packet's identity in the happens-before order, from [`InFlight::begin`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    agent: Agent,
    epoch: u64,
}

/// Finished packets of one device, for the cross-queue check.
#[derive(Debug, Default)]
pub struct InFlight {
    finished: Mutex<VecDeque<Finished>>,
}

impl InFlight {
    /// A packet starts executing on the calling queue thread; `submitted`
    /// is what the host knew when it made the packet visible (the doorbell
    /// that covered it).
    pub fn begin(&self, submitted: &VectorClock) -> Start {
        let (agent, epoch) = clock::begin_packet(submitted);
        Start { agent, epoch }
    }

    /// A packet finished (before its completion signal fires): compare it
    /// with every finished packet of another queue it is not ordered after.
    pub fn end(
        &self,
        queue: u64,
        packet: u64,
        start: Start,
        footprint: Footprint,
    ) -> Vec<Violation> {
        let now = clock::current();
        let mut finished = self.finished.lock();
        let mut found = Vec::new();
        for f in finished
            .iter()
            .filter(|f| f.queue != queue && !now.knows(f.agent, f.epoch))
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
                        "queue {} packet {} also accessed it, one of them writing, and nothing \
                         ordered the two (no completion signal, barrier or wait between them): \
                         work on different queues must not share memory it writes (order them \
                         with a completion signal or keep them on one queue)",
                        f.queue, f.packet
                    ),
                });
            }
        }
        finished.push_back(Finished {
            queue,
            packet,
            agent: start.agent,
            epoch: start.epoch,
            footprint,
        });
        while finished.len() > KEPT {
            finished.pop_front();
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

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

    /// Run one packet on a fresh queue agent thread: acquire `sync`, begin,
    /// end with `footprint`; returns the violations and the clock the packet
    /// released (what its completion signal would carry).
    fn packet_on_new_queue(
        flight: &Arc<InFlight>,
        queue: u64,
        sync: VectorClock,
        footprint: Footprint,
    ) -> (Vec<Violation>, VectorClock) {
        let flight = Arc::clone(flight);
        std::thread::spawn(move || {
            clock::enter_queue();
            let start = flight.begin(&sync);
            let found = flight.end(queue, 1, start, footprint);
            (found, clock::current())
        })
        .join()
        .unwrap()
    }

    #[test]
    fn conflicting_packets_race_even_when_they_ran_one_after_the_other() {
        let flight = Arc::new(InFlight::default());
        let none = VectorClock::default();
        let (v, _) = packet_on_new_queue(&flight, 0, none.clone(), fp(&[], &[(100, 8)]));
        assert_eq!(v, vec![]);
        // Strictly later in time, but nothing ordered it after queue 0.
        let (v, _) = packet_on_new_queue(&flight, 1, none, fp(&[(104, 4)], &[]));
        assert_eq!(v.len(), 1);
        assert_eq!(
            (v[0].rule, v[0].queue, v[0].aql_packet, v[0].address),
            (Rule::CrossQueueRace, 1, 1, 104)
        );
        assert!(v[0].detail.contains("queue 0 packet 1"), "{}", v[0]);
    }

    #[test]
    fn ordered_disjoint_or_read_only_sharing_passes() {
        let flight = Arc::new(InFlight::default());
        let none = VectorClock::default();
        let (v, released) = packet_on_new_queue(&flight, 0, none.clone(), fp(&[], &[(100, 8)]));
        assert_eq!(v, vec![]);
        // Acquired what queue 0's packet released (its completion): ordered.
        let (v, _) = packet_on_new_queue(&flight, 1, released, fp(&[], &[(100, 8)]));
        assert_eq!(v, vec![]);
        // Disjoint writes and shared reads need no order.
        let (v, _) = packet_on_new_queue(&flight, 2, none.clone(), fp(&[(0, 64)], &[(200, 8)]));
        assert_eq!(v, vec![]);
        let (v, _) = packet_on_new_queue(&flight, 3, none, fp(&[(0, 64)], &[(300, 8)]));
        assert_eq!(v, vec![]);
    }

    #[test]
    fn a_queue_never_races_with_itself_and_the_history_is_bounded() {
        let flight = Arc::new(InFlight::default());
        let f2 = Arc::clone(&flight);
        std::thread::spawn(move || {
            clock::enter_queue();
            for packet in 0..(KEPT as u64 + 10) {
                let start = f2.begin(&VectorClock::default());
                assert_eq!(f2.end(5, packet, start, fp(&[], &[(0, 8)])), vec![]);
            }
        })
        .join()
        .unwrap();
        assert_eq!(flight.finished.lock().len(), KEPT);
    }
}
