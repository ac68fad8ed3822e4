//! The ordering and coherence model of one IB (one AQL packet) on a queue.
//!
//! The PM4 executor feeds events in program order; dispatches carry the
//! address ranges their twins touched. The model:
//!
//! - **Completion.** Only `EVENT_WRITE CS_PARTIAL_FLUSH` (a *wait*) makes
//!   the CP hold later work until earlier dispatches have finished. Dispatches
//!   with no wait between them are *unordered*: the simulator runs them in a
//!   seeded random order, and any overlap where one writes (plain or atomic)
//!   and the other reads or writes is a **race**. Two atomics on the same
//!   address are not a race (both are performed at GL2).
//! - **Caches.** Stores and atomics are performed at GL2 (vector L0 is
//!   write-through, GL1 is read-only). A finished dispatch's writes may still
//!   be stale in the per-CU caches: vector loads go through V$ (L0) and GL1,
//!   scalar loads (kernel arguments) through K$ and GL1. So a read of data a
//!   dispatch wrote earlier in the IB needs, after a wait that follows the
//!   write, an `ACQUIRE_MEM` whose GCR_CNTL invalidates GLV_INV+GL1_INV
//!   (vector) or GLK_INV+GL1_INV (scalar); otherwise it is a **stale read**.
//!   Atomics bypass those caches and never read stale.
//! - **Host writes.** The host may have written anything (kernarg patches,
//!   inputs) before the IB was submitted, and the vendor packet's header
//!   fences are not trusted to invalidate caches. Every non-atomic read made
//!   before an `ACQUIRE_MEM` that invalidated the path's caches (the IB
//!   prologue) is a **host write not acquired**.
//! - **Release.** Results are visible to the host once written back from GL2:
//!   an `ACQUIRE_MEM` with GL2_WB after a wait, or a `RELEASE_MEM` whose GCR
//!   field has GL2_WB (RELEASE_MEM acts at end of pipe, after all earlier
//!   dispatches). The host learns that work is done when a packet's
//!   completion signal reaches zero: anything written but not released by
//!   then is an **unreleased result**. Writes a packet leaves unreleased
//!   while its signal stays above zero (the segments of a long IB share one
//!   signal armed at their count) carry over to the queue's next packet,
//!   which runs after it (BARRIER bit) and may release them.
//! - **Across queues** (`cross_queue`, `clock`): packets of different
//!   queues that no synchronisation the simulator saw orders (completion
//!   signals, barrier packets, host waits, doorbells, memory waits; tracked
//!   as vector clocks) must not conflict (one writes what the other reads or
//!   writes), whether or not they happened to run at the same time; lanes
//!   never share memory they write.
//!
//! What it refuses to model: GL2 invalidation for coarse-grained memory
//! written by the host; ordering between host threads (the host is one
//! agent, see `clock`); a completion
//! signal shared by several queues (only the queue whose packet brings it to
//! zero is held to the release rule).

pub mod clock;
mod cross_queue;
mod floor;

use std::collections::VecDeque;
use std::fmt;

use relaunch_facts::packet::gcr;

use crate::trace::{AccessTrace, RangeSet};

pub use cross_queue::{InFlight, Start};
pub use floor::FloorCounts;

/// How many recent writers are remembered to name the culprit of a violation.
const WRITER_HISTORY: usize = 4096;

/// Cache actions of an ACQUIRE_MEM GCR_CNTL or a RELEASE_MEM GCR field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheOps {
    pub glk_inv: bool,
    pub glv_inv: bool,
    pub gl1_inv: bool,
    pub gl2_inv: bool,
    pub gl2_wb: bool,
    /// I$: counted (`counters`), never modelled (code is not written by
    /// the work the model checks).
    pub gli_inv: bool,
}

impl CacheOps {
    /// From ACQUIRE_MEM GCR_CNTL, by what each field does (the facts'
    /// `gcr::effect`). Ranged actions, GL2_DISCARD and GL2_US are refused
    /// before this (`pm4::strict::acquire_mem`).
    pub fn from_acquire_gcr(gcr_cntl: u32) -> Self {
        use gcr::{Cache, Effect};
        let mut ops = CacheOps::default();
        for f in gcr::FIELDS.iter().filter(|f| f.get(gcr_cntl) != 0) {
            let Some(effect) = gcr::effect(f.name) else {
                continue;
            };
            match effect {
                Effect::Invalidate(Cache::Scalar) => ops.glk_inv = true,
                Effect::Invalidate(Cache::Vector) => ops.glv_inv = true,
                Effect::Invalidate(Cache::Gl1) => ops.gl1_inv = true,
                Effect::Invalidate(Cache::Gl2) => ops.gl2_inv = true,
                Effect::WriteBack(Cache::Gl2) => ops.gl2_wb = true,
                Effect::Invalidate(Cache::Instruction) => ops.gli_inv = true,
                // The model holds no state for these: there is no
                // compression (GLM), and no scalar stores (K$ write-back).
                Effect::Invalidate(Cache::Metadata)
                | Effect::WriteBack(
                    Cache::Instruction
                    | Cache::Metadata
                    | Cache::Scalar
                    | Cache::Vector
                    | Cache::Gl1,
                ) => {}
                // Modifiers of the actions above; every action is done
                // when the packet completes, whatever the sequence.
                Effect::Range(_)
                | Effect::Sequence
                | Effect::RangeIsPhysical
                | Effect::Discard
                | Effect::Gl2Us => {}
            }
        }
        ops
    }

    /// Everything (a system-scope acquire plus release).
    pub fn all() -> Self {
        CacheOps {
            glk_inv: true,
            glv_inv: true,
            gl1_inv: true,
            gl2_inv: true,
            gl2_wb: true,
            gli_inv: true,
        }
    }
}

/// Which rule a violation broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    Race,
    StaleRead,
    HostWriteNotAcquired,
    UnreleasedResult,
    CrossQueueRace,
}

impl Rule {
    pub fn name(self) -> &'static str {
        match self {
            Rule::Race => "race",
            Rule::StaleRead => "stale read",
            Rule::HostWriteNotAcquired => "host write not acquired",
            Rule::UnreleasedResult => "unreleased result",
            Rule::CrossQueueRace => "cross-queue race",
        }
    }
}

/// Where an IB runs (for messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IbLocation {
    pub queue: u64,
    /// AQL packet id (write index) of the packet that carried the IB.
    pub aql_packet: u64,
}

/// One broken rule, naming everything needed to find it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub rule: Rule,
    pub queue: u64,
    pub aql_packet: u64,
    /// Index of the PM4 packet (DISPATCH_DIRECT) within the IB.
    pub pm4_packet: usize,
    /// Index of the dispatch within the IB.
    pub dispatch: usize,
    pub kernel: String,
    pub address: u64,
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at {:#x}: queue {}, AQL packet {}, PM4 packet {}, dispatch {} ({}): {}",
            self.rule.name(),
            self.address,
            self.queue,
            self.aql_packet,
            self.pm4_packet,
            self.dispatch,
            self.kernel,
            self.detail
        )
    }
}

/// A dispatch as the model sees it.
#[derive(Debug, Clone, Copy)]
pub struct DispatchRef<'a> {
    pub pm4_packet: usize,
    pub dispatch: usize,
    pub kernel: &'a str,
    pub trace: &'a AccessTrace,
}

#[derive(Debug, Clone)]
struct Writer {
    dispatch: usize,
    kernel: String,
    writes: RangeSet,
}

/// Dispatches since the last wait.
#[derive(Debug, Default)]
struct Group {
    members: Vec<(usize, String, AccessTrace)>,
    reads: RangeSet,
    writes: RangeSet,
    atomics: RangeSet,
}

/// Everything an IB touched (for the cross-queue check).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Footprint {
    pub reads: RangeSet,
    pub writes: RangeSet,
    pub atomics: RangeSet,
}

impl Footprint {
    fn add(&mut self, t: &AccessTrace) {
        self.reads.extend(&t.scalar_reads);
        self.reads.extend(&t.vector_reads);
        self.writes.extend(&t.writes);
        self.atomics.extend(&t.atomics);
    }

    /// The lowest address where `self` and `other` conflict (one writes,
    /// the other reads or writes; two atomics do not conflict).
    pub fn conflict(&self, other: &Footprint) -> Option<u64> {
        let pairs = [
            (&self.writes, &other.reads),
            (&self.writes, &other.writes),
            (&self.writes, &other.atomics),
            (&self.atomics, &other.reads),
            (&self.atomics, &other.writes),
            (&self.reads, &other.writes),
            (&self.reads, &other.atomics),
        ];
        pairs.iter().filter_map(|(a, b)| a.first_overlap(b)).min()
    }
}

/// The model state for one IB.
#[derive(Debug)]
pub struct OrderingModel {
    at: IbLocation,
    group: Group,
    /// Completed writes not yet invalidated from each cache.
    stale_k: RangeSet,
    stale_v: RangeSet,
    stale_gl1: RangeSet,
    /// Host writes not yet invalidated (everything, until the prologue).
    host_k: bool,
    host_v: bool,
    host_gl1: bool,
    /// Completed writes not yet written back from GL2.
    unreleased: RangeSet,
    /// Writes of the current group not yet released by a RELEASE_MEM.
    group_unreleased: RangeSet,
    writers: VecDeque<Writer>,
    violations: Vec<Violation>,
    last_dispatch: Option<(usize, usize, String)>,
    footprint: Footprint,
    /// The fewest invalidations these dispatches needed (a measure).
    floor: floor::Floor,
}

impl OrderingModel {
    pub fn new(at: IbLocation) -> Self {
        OrderingModel {
            at,
            group: Group::default(),
            stale_k: RangeSet::new(),
            stale_v: RangeSet::new(),
            stale_gl1: RangeSet::new(),
            host_k: true,
            host_v: true,
            host_gl1: true,
            unreleased: RangeSet::new(),
            group_unreleased: RangeSet::new(),
            writers: VecDeque::new(),
            violations: Vec::new(),
            last_dispatch: None,
            footprint: Footprint::default(),
            floor: floor::Floor::new(),
        }
    }

    fn report(&mut self, rule: Rule, d: &DispatchRef<'_>, address: u64, detail: String) {
        tracing::debug!(
            rule = rule.name(),
            address,
            dispatch = d.dispatch,
            "sim violation"
        );
        self.violations.push(Violation {
            rule,
            queue: self.at.queue,
            aql_packet: self.at.aql_packet,
            pm4_packet: d.pm4_packet,
            dispatch: d.dispatch,
            kernel: d.kernel.to_string(),
            address,
            detail,
        });
    }

    fn writer_of(&self, addr: u64) -> String {
        self.writers
            .iter()
            .rev()
            .find(|w| w.writes.first_in(addr, addr + 1).is_some())
            .map(|w| format!("dispatch {} ({})", w.dispatch, w.kernel))
            .unwrap_or_else(|| "an earlier dispatch".to_string())
    }

    /// A dispatch, in program order, with what it touched.
    pub fn dispatch(&mut self, d: DispatchRef<'_>) {
        let t = d.trace;
        self.footprint.add(t);
        let mut reads = t.vector_reads.clone();
        reads.extend(&t.scalar_reads);
        self.check_race(&d, &reads);
        self.check_stale(&d);
        self.check_host(&d);
        self.floor.dispatch(t);
        let mut written = t.writes.clone();
        written.extend(&t.atomics);
        self.group.reads.extend(&reads);
        self.group.writes.extend(&t.writes);
        self.group.atomics.extend(&t.atomics);
        self.group_unreleased.extend(&written);
        self.group
            .members
            .push((d.dispatch, d.kernel.to_string(), t.clone()));
        if !written.is_empty() {
            if self.writers.len() == WRITER_HISTORY {
                self.writers.pop_front();
            }
            self.writers.push_back(Writer {
                dispatch: d.dispatch,
                kernel: d.kernel.to_string(),
                writes: written,
            });
        }
        self.last_dispatch = Some((d.pm4_packet, d.dispatch, d.kernel.to_string()));
    }

    fn check_race(&mut self, d: &DispatchRef<'_>, reads: &RangeSet) {
        let t = d.trace;
        let g = &self.group;
        // (earlier set, this dispatch's set, what happened)
        let pairs: [(&RangeSet, &RangeSet, &str); 6] = [
            (&g.writes, reads, "reads data an unordered dispatch writes"),
            (
                &g.writes,
                &t.writes,
                "writes data an unordered dispatch writes",
            ),
            (
                &g.writes,
                &t.atomics,
                "atomically updates data an unordered dispatch writes",
            ),
            (
                &g.atomics,
                reads,
                "reads data an unordered dispatch updates atomically",
            ),
            (
                &g.atomics,
                &t.writes,
                "writes data an unordered dispatch updates atomically",
            ),
            (
                &g.reads,
                &t.writes,
                "writes data an unordered dispatch reads",
            ),
        ];
        let mut found: Option<(u64, &str)> = None;
        for (earlier, mine, what) in pairs {
            if let Some(addr) = earlier.first_overlap(mine) {
                if found.is_none_or(|(a, _)| addr < a) {
                    found = Some((addr, what));
                }
            }
        }
        if let Some((addr, what)) = found {
            let other = g
                .members
                .iter()
                .find(|(_, _, tr)| {
                    [&tr.writes, &tr.atomics, &tr.vector_reads, &tr.scalar_reads]
                        .iter()
                        .any(|s| s.first_in(addr, addr + 1).is_some())
                })
                .map(|(i, k, _)| format!("dispatch {i} ({k})"))
                .unwrap_or_else(|| "another dispatch".to_string());
            // Name the fix in the front ends' words too (C and Python).
            let detail = format!(
                "{what} ({other}) with no CS_PARTIAL_FLUSH between them: add a boundary after \
                 {other} (C: rl_pm4_wait_rmw or rl_pm4_wait_idle; Python gpu.build: \
                 serialize=True in {other}'s tuple)"
            );
            self.report(Rule::Race, d, addr, detail);
        }
    }

    fn check_stale(&mut self, d: &DispatchRef<'_>) {
        let t = d.trace;
        let checks: [(&RangeSet, &RangeSet, &str, &str); 4] = [
            (&t.vector_reads, &self.stale_v, "vector", "GLV_INV (V$)"),
            (&t.vector_reads, &self.stale_gl1, "vector", "GL1_INV"),
            (&t.scalar_reads, &self.stale_k, "scalar", "GLK_INV (K$)"),
            (&t.scalar_reads, &self.stale_gl1, "scalar", "GL1_INV"),
        ];
        let hit = checks.iter().find_map(|(reads, stale, path, missing)| {
            reads.first_overlap(stale).map(|a| (a, *path, *missing))
        });
        if let Some((addr, path, missing)) = hit {
            let writer = self.writer_of(addr);
            let detail = format!(
                "{path} read of data written by {writer}: a wait separates them but no \
                 ACQUIRE_MEM with {missing} follows it (use an RMW boundary)"
            );
            self.report(Rule::StaleRead, d, addr, detail);
        }
    }

    fn check_host(&mut self, d: &DispatchRef<'_>) {
        let t = d.trace;
        let first = |s: &RangeSet| s.iter().next().map(|(a, _)| a);
        let hit = if self.host_k || self.host_gl1 {
            first(&t.scalar_reads).map(|a| (a, "scalar (kernarg)", self.host_k))
        } else {
            None
        }
        .or_else(|| {
            if self.host_v || self.host_gl1 {
                first(&t.vector_reads).map(|a| (a, "vector", self.host_v))
            } else {
                None
            }
        });
        if let Some((addr, path, first_cache_dirty)) = hit {
            let missing = if first_cache_dirty {
                if path == "vector" {
                    "GLV_INV"
                } else {
                    "GLK_INV"
                }
            } else {
                "GL1_INV"
            };
            let detail = format!(
                "{path} read before any ACQUIRE_MEM with {missing} in this IB: host writes \
                 (kernarg patches, inputs) since the last replay may be stale (add the IB prologue)"
            );
            self.report(Rule::HostWriteNotAcquired, d, addr, detail);
        }
    }

    /// EVENT_WRITE CS_PARTIAL_FLUSH: earlier dispatches have finished.
    pub fn wait(&mut self) {
        let g = std::mem::take(&mut self.group);
        let mut written = g.writes;
        written.extend(&g.atomics);
        self.floor.wait(&written);
        self.stale_k.extend(&written);
        self.stale_v.extend(&written);
        self.stale_gl1.extend(&written);
        let released_later = std::mem::take(&mut self.group_unreleased);
        self.unreleased.extend(&released_later);
    }

    /// ACQUIRE_MEM: cache actions now, on what has completed (no wait).
    pub fn acquire(&mut self, ops: CacheOps) {
        if ops.glk_inv {
            self.stale_k = RangeSet::new();
            self.host_k = false;
        }
        if ops.glv_inv {
            self.stale_v = RangeSet::new();
            self.host_v = false;
        }
        if ops.gl1_inv {
            self.stale_gl1 = RangeSet::new();
            self.host_gl1 = false;
        }
        if ops.gl2_wb {
            self.unreleased = RangeSet::new();
        }
    }

    /// RELEASE_MEM: at end of pipe (after every earlier dispatch) perform
    /// `ops`. Only write-back counts: the CP does not wait for it, so its
    /// invalidations are not trusted for later dispatches.
    pub fn release(&mut self, ops: CacheOps) {
        if ops.gl2_wb {
            // Group writes stay unordered for later dispatches, but are released.
            self.unreleased = RangeSet::new();
            self.group_unreleased = RangeSet::new();
        }
    }

    /// The fewest invalidations the dispatches so far needed.
    pub fn floor(&self) -> FloorCounts {
        self.floor.counts()
    }

    /// Writes completed by earlier packets of the same queue that were not
    /// released yet (their packets did not let the host observe anything).
    pub fn carry_in(&mut self, unreleased: &RangeSet) {
        self.unreleased.extend(unreleased);
    }

    /// End of the IB when the host is told it finished: anything not
    /// released is reported; returns all violations.
    pub fn finish(self) -> Vec<Violation> {
        self.finish_with_footprint().0
    }

    /// [`OrderingModel::finish`], also returning what the IB touched.
    pub fn finish_with_footprint(self) -> (Vec<Violation>, Footprint) {
        let end = self.finish_parts(true);
        (end.violations, end.footprint)
    }

    /// End of the IB. When `host_observes` (its completion signal reaches
    /// zero) unreleased writes are violations; otherwise they are returned
    /// to be carried into the queue's next packet.
    pub fn finish_parts(mut self, host_observes: bool) -> IbEnd {
        let mut pending = std::mem::take(&mut self.unreleased);
        pending.extend(&self.group_unreleased);
        if !host_observes {
            return IbEnd {
                violations: self.violations,
                footprint: self.footprint,
                unreleased: pending,
            };
        }
        if let Some((lo, _)) = pending.iter().next() {
            let (pm4, idx, kernel) =
                self.last_dispatch
                    .clone()
                    .unwrap_or((0, 0, "(no dispatch)".to_string()));
            let writer = self.writer_of(lo);
            let d = DispatchRef {
                pm4_packet: pm4,
                dispatch: idx,
                kernel: &kernel,
                trace: &AccessTrace::default(),
            };
            let detail = format!(
                "data written by {writer} is not written back (no wait + GL2_WB, nor RELEASE_MEM \
                 with GL2_WB) when the completion signal fires: the host may read it before it is \
                 visible (add the epilogue)"
            );
            self.report(Rule::UnreleasedResult, &d, lo, detail);
        }
        IbEnd {
            violations: self.violations,
            footprint: self.footprint,
            unreleased: RangeSet::new(),
        }
    }
}

/// What the model leaves at the end of an IB.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IbEnd {
    pub violations: Vec<Violation>,
    pub footprint: Footprint,
    /// Writes still unreleased (only when the host did not observe the end).
    pub unreleased: RangeSet,
}

#[cfg(test)]
mod tests;
