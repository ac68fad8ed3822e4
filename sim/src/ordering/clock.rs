//! Happens-before between the simulated device's queues and the host, as
//! vector clocks, so the cross-queue race check does not depend on timing.
//!
//! Agents: every queue's packet processor is one agent (its thread carries
//! its clock), and the host is one more: its threads hand work to each other
//! in ways the simulator cannot see (channels, mutexes), so they share one
//! clock. Each packet a queue executes gets an *epoch* (the queue's own
//! component, advanced at the packet's start). An edge exists where the
//! simulator sees a synchronisation:
//! - a signal operation releases the caller's clock into the signal
//!   (stores, subtractions: a completion signal, a host store) and a load or
//!   wait acquires the signal's clock into the caller;
//! - a doorbell write releases the host's clock *for the packets it covers*
//!   (the first write whose value reaches a packet's id), which the queue
//!   acquires when it starts that packet, however early it picked it up;
//! - a PM4 `WRITE_DATA` or `RELEASE_MEM` data write releases into the memory
//!   clock, and a satisfied `WAIT_REG_MEM` acquires the memory clock joined
//!   with the host's (a gate word may have been written by any host thread,
//!   and the simulator cannot see plain host stores).
//!
//! - destroying a queue orders everything it did before what the host does
//!   next: its processor stopped (or was abandoned with every later access
//!   refused), so none of its accesses can follow.
//!
//! Approximations, each in the direction of fewer reports (a race is never
//! invented): the host is one agent; clocks acquired mid-packet apply to the
//! whole packet; the memory clock is not per address.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock};

use arc_swap::ArcSwap;
use parking_lot::Mutex;

/// An agent: a queue's packet processor or the host.
pub type Agent = u32;

/// The host's agent id.
pub const HOST: Agent = 0;

/// A vector clock: for each agent, the latest epoch of it that is known to
/// have happened before. Sorted by agent; small (one entry per queue that
/// was ever synchronised with).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VectorClock {
    entries: Vec<(Agent, u64)>,
}

impl VectorClock {
    /// The epoch of `agent` this clock knows of (0: none).
    pub fn get(&self, agent: Agent) -> u64 {
        match self.entries.binary_search_by_key(&agent, |e| e.0) {
            Ok(i) => self.entries[i].1,
            Err(_) => 0,
        }
    }

    fn set(&mut self, agent: Agent, epoch: u64) {
        match self.entries.binary_search_by_key(&agent, |e| e.0) {
            Ok(i) => self.entries[i].1 = epoch,
            Err(i) => self.entries.insert(i, (agent, epoch)),
        }
    }

    /// Take the later epoch of every agent.
    pub fn join(&mut self, other: &VectorClock) {
        for &(agent, epoch) in &other.entries {
            if epoch > self.get(agent) {
                self.set(agent, epoch);
            }
        }
    }

    /// True when this clock already knows everything `other` does (a join
    /// would change nothing).
    pub fn covers(&self, other: &VectorClock) -> bool {
        other
            .entries
            .iter()
            .all(|&(agent, epoch)| self.knows(agent, epoch))
    }

    /// True when the packet of `agent` at `epoch` happened before whatever
    /// holds this clock.
    pub fn knows(&self, agent: Agent, epoch: u64) -> bool {
        self.get(agent) >= epoch
    }
}

static NEXT_AGENT: AtomicU32 = AtomicU32::new(HOST + 1);
/// The host's clock. Every host thread reads it on every submission (a
/// doorbell remembers it, a signal store releases it) and writes it only
/// when it learns something (a wait on a completion): a shared snapshot
/// swapped on write, so a reader never waits for another thread (a mutex
/// here cost the four-lane fan-out over a microsecond when its holder was
/// preempted: nine threads on two cores).
static HOST_CLOCK: LazyLock<ArcSwap<VectorClock>> =
    LazyLock::new(|| ArcSwap::from_pointee(VectorClock::default()));
static MEMORY_CLOCK: Mutex<VectorClock> = Mutex::new(VectorClock {
    entries: Vec::new(),
});

struct QueueAgent {
    agent: Agent,
    clock: VectorClock,
}

thread_local! {
    /// Set on a queue's packet-processor thread; `None` on host threads.
    static QUEUE_AGENT: RefCell<Option<QueueAgent>> = const { RefCell::new(None) };
}

/// Make the calling thread a queue agent (a packet processor calls this
/// first). Its clock starts empty: every packet acquires what the host knew
/// when it submitted it, and the moment this thread happens to start must
/// not order anything.
pub fn enter_queue() -> Agent {
    let agent = NEXT_AGENT.fetch_add(1, Ordering::Relaxed);
    let clock = VectorClock::default();
    QUEUE_AGENT.with(|q| *q.borrow_mut() = Some(QueueAgent { agent, clock }));
    agent
}

/// The calling thread stops being a queue agent (its processor is
/// exiting): its last clock, for [`retire_queue`].
pub fn leave_queue() -> Option<VectorClock> {
    QUEUE_AGENT.with(|q| q.borrow_mut().take()).map(|a| a.clock)
}

/// A queue of `agent` was destroyed (called on the host): every packet it
/// ran or will run happened before what the host does next. `last` is the
/// clock its processor left with (`None` when it was abandoned mid-packet;
/// that packet's later accesses are refused, so it cannot race either).
pub fn retire_queue(agent: Agent, last: Option<&VectorClock>) {
    let mut known = last.cloned().unwrap_or_default();
    known.set(agent, u64::MAX);
    host_acquire(&known);
}

/// The calling agent's clock (the host's on a host thread).
pub fn current() -> VectorClock {
    QUEUE_AGENT.with(|q| match &*q.borrow() {
        Some(a) => a.clock.clone(),
        None => VectorClock::clone(&HOST_CLOCK.load()),
    })
}

/// The calling agent's clock as a shared snapshot: the host's without a
/// copy (a doorbell write keeps one per write).
pub fn current_shared() -> Arc<VectorClock> {
    QUEUE_AGENT.with(|q| match &*q.borrow() {
        Some(a) => Arc::new(a.clock.clone()),
        None => host(),
    })
}

/// Join the calling agent's clock into `target` (a release into a signal),
/// without copying it first: signal stores are on the submit path.
pub fn release_into(target: &mut VectorClock) {
    QUEUE_AGENT.with(|q| match &*q.borrow() {
        Some(a) => target.join(&a.clock),
        None => target.join(&HOST_CLOCK.load()),
    })
}

/// The host's clock (a shared snapshot: a queue takes it per packet).
pub fn host() -> Arc<VectorClock> {
    HOST_CLOCK.load_full()
}

/// Join `other` into the host's clock; a copy only when it brings news.
fn host_acquire(other: &VectorClock) {
    if HOST_CLOCK.load().covers(other) {
        return;
    }
    HOST_CLOCK.rcu(|now| {
        let mut next = VectorClock::clone(now);
        next.join(other);
        next
    });
}

/// Join `other` into the calling agent's clock (an acquire).
pub fn acquire(other: &VectorClock) {
    QUEUE_AGENT.with(|q| match &mut *q.borrow_mut() {
        Some(a) => a.clock.join(other),
        None => host_acquire(other),
    })
}

/// A queue agent starts a packet: acquire `submitted` (what the host knew
/// when it made the packet visible), advance the agent's own epoch and
/// return (agent, epoch). On a thread that is not a queue agent (unit tests
/// driving the executor directly) the packet counts as the host's.
pub fn begin_packet(submitted: &VectorClock) -> (Agent, u64) {
    QUEUE_AGENT.with(|q| match &mut *q.borrow_mut() {
        Some(a) => {
            a.clock.join(submitted);
            let epoch = a.clock.get(a.agent) + 1;
            a.clock.set(a.agent, epoch);
            (a.agent, epoch)
        }
        None => (HOST, 0),
    })
}

/// A PM4 data write that others may wait on: publish the agent's clock.
pub fn release_to_memory() {
    release_into(&mut MEMORY_CLOCK.lock());
}

/// What a host that may have read any completion so far knows: the memory
/// clock joined with the host's.
pub fn memory_and_host() -> Arc<VectorClock> {
    let mut seen = MEMORY_CLOCK.lock().clone();
    seen.join(&HOST_CLOCK.load());
    Arc::new(seen)
}

/// A satisfied wait on memory: the word's writer may have been a queue (the
/// memory clock) or any host thread (the host clock).
pub fn acquire_from_memory() {
    let mut seen = MEMORY_CLOCK.lock().clone();
    seen.join(&HOST_CLOCK.load());
    acquire(&seen);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_takes_the_later_epoch_per_agent() {
        let mut a = VectorClock::default();
        a.set(3, 5);
        a.set(1, 2);
        let mut b = VectorClock::default();
        b.set(1, 4);
        b.set(7, 1);
        a.join(&b);
        assert_eq!((a.get(1), a.get(3), a.get(7), a.get(9)), (4, 5, 1, 0));
        assert!(a.knows(3, 5) && !a.knows(3, 6) && a.knows(9, 0));
    }

    #[test]
    fn a_retired_queue_is_known_to_the_host_whatever_it_ran() {
        let (agent, last) = std::thread::spawn(|| {
            let agent = enter_queue();
            let mut other = VectorClock::default();
            other.set(5000, 2);
            begin_packet(&other);
            begin_packet(&VectorClock::default());
            (agent, leave_queue().unwrap())
        })
        .join()
        .unwrap();
        assert!(!host().knows(agent, 1));
        retire_queue(agent, Some(&last));
        let h = host();
        assert!(h.knows(agent, 2) && h.knows(agent, u64::MAX) && h.knows(5000, 2));
        assert_eq!(leave_queue(), None, "a host thread is no queue agent");
    }

    #[test]
    fn a_queue_agent_advances_its_epoch_per_packet_and_acquires_the_submission() {
        std::thread::spawn(|| {
            let me = enter_queue();
            let mut host = VectorClock::default();
            host.set(1000, 3);
            assert_eq!(begin_packet(&host), (me, 1));
            assert_eq!(begin_packet(&VectorClock::default()), (me, 2));
            let now = current();
            assert_eq!((now.get(me), now.get(1000)), (2, 3));
        })
        .join()
        .unwrap();
    }
}
