//! What the command processor did, counted per device: the GPU-side work
//! a submission costs (packets, PM4 dwords, waits, cache actions by kind),
//! comparable between two ways of launching the same work on the same
//! simulated GPU (`relaunch-bench`'s `cp_*_vs_hip`).
//!
//! AQL header fences are counted as the CP performs them for that scope
//! (the HSA memory model as LLVM's AMDGPU documentation states it for
//! GFX10+): an acquire invalidates K$, the vector L0 and GL1, and at system
//! scope also L2; a system-scope release writes L2 back. PM4 packets are
//! counted by the GCR fields they carry.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::aql::Scope as FenceScope;
use crate::ordering::{CacheOps, FloorCounts};

/// A snapshot of [`CpCounters`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpCounts {
    /// AQL packets processed: kernel dispatches, barriers, vendor PM4-IB.
    pub aql_dispatch: u64,
    pub aql_barrier: u64,
    pub aql_pm4_ib: u64,
    /// PM4 dwords fetched from IBs, and the packets they held.
    pub pm4_dwords: u64,
    pub pm4_packets: u64,
    /// Kernel dispatches, however submitted (AQL or DISPATCH_DIRECT).
    pub dispatches: u64,
    /// Points where the CP waits for earlier work or memory: barrier
    /// packets, CS_PARTIAL_FLUSH, WAIT_REG_MEM, AQL BARRIER bits.
    pub waits: u64,
    pub l2_writeback: u64,
    pub l2_invalidate: u64,
    pub gl1_invalidate: u64,
    pub l0_invalidate: u64,
    pub k_invalidate: u64,
    pub i_invalidate: u64,
    /// Actions that invalidate every level and write L2 back at once.
    pub full_flush: u64,
    /// The copy engine's work (SDMA queues), apart from the CP's: packets
    /// it executed (padding not counted) and bytes it copied or filled.
    pub sdma_packets: u64,
    pub sdma_bytes: u64,
    /// The K$, V$ and GL1 invalidations PM4 packets in IBs performed
    /// (part of the counts above), and the fewest those IBs' dispatches
    /// needed by the same cache rules (`ordering::FloorCounts`): how much
    /// of an IB's invalidation work its data flow required.
    pub ib: FloorCounts,
    pub ib_floor: FloorCounts,
}

/// The kinds a full flush performs: L2 write-back and invalidate, GL1, V$,
/// K$ and I$ invalidate (`CacheOps::all()`).
const FULL_FLUSH_KINDS: u64 = 6;

impl CpCounts {
    /// AQL packets plus PM4 packets: what the CP parsed.
    pub fn packets(&self) -> u64 {
        self.aql_dispatch + self.aql_barrier + self.aql_pm4_ib + self.pm4_packets
    }

    /// Cache actions of every kind. A full flush counts once per kind it
    /// performs, so trading targeted actions for full flushes never makes
    /// the figure look smaller.
    pub fn cache_actions(&self) -> u64 {
        self.l2_writeback
            + self.l2_invalidate
            + self.gl1_invalidate
            + self.l0_invalidate
            + self.k_invalidate
            + self.i_invalidate
            + self.full_flush * FULL_FLUSH_KINDS
    }

    /// `name value` lines, one per counter (the thunk's exit report).
    pub fn lines(&self) -> String {
        let rows: [(&str, u64); 24] = [
            ("aql_dispatch", self.aql_dispatch),
            ("aql_barrier", self.aql_barrier),
            ("aql_pm4_ib", self.aql_pm4_ib),
            ("pm4_dwords", self.pm4_dwords),
            ("pm4_packets", self.pm4_packets),
            ("dispatches", self.dispatches),
            ("waits", self.waits),
            ("l2_writeback", self.l2_writeback),
            ("l2_invalidate", self.l2_invalidate),
            ("gl1_invalidate", self.gl1_invalidate),
            ("l0_invalidate", self.l0_invalidate),
            ("k_invalidate", self.k_invalidate),
            ("i_invalidate", self.i_invalidate),
            ("full_flush", self.full_flush),
            ("sdma_packets", self.sdma_packets),
            ("sdma_bytes", self.sdma_bytes),
            ("packets", self.packets()),
            ("cache_actions", self.cache_actions()),
            ("ib_k_invalidate", self.ib.k_invalidate),
            ("ib_l0_invalidate", self.ib.l0_invalidate),
            ("ib_gl1_invalidate", self.ib.gl1_invalidate),
            ("ib_floor_k_invalidate", self.ib_floor.k_invalidate),
            ("ib_floor_l0_invalidate", self.ib_floor.l0_invalidate),
            ("ib_floor_gl1_invalidate", self.ib_floor.gl1_invalidate),
        ];
        rows.iter().map(|(k, v)| format!("{k} {v}\n")).collect()
    }
}

#[derive(Debug, Default)]
pub struct CpCounters {
    aql_dispatch: AtomicU64,
    aql_barrier: AtomicU64,
    aql_pm4_ib: AtomicU64,
    pm4_dwords: AtomicU64,
    pm4_packets: AtomicU64,
    dispatches: AtomicU64,
    waits: AtomicU64,
    l2_writeback: AtomicU64,
    l2_invalidate: AtomicU64,
    gl1_invalidate: AtomicU64,
    l0_invalidate: AtomicU64,
    k_invalidate: AtomicU64,
    i_invalidate: AtomicU64,
    full_flush: AtomicU64,
    sdma_packets: AtomicU64,
    sdma_bytes: AtomicU64,
    ib: [AtomicU64; 3],
    ib_floor: [AtomicU64; 3],
}

fn floor_counts(c: &[AtomicU64; 3]) -> FloorCounts {
    let g = |i: usize| c[i].load(Ordering::Relaxed);
    FloorCounts {
        k_invalidate: g(0),
        l0_invalidate: g(1),
        gl1_invalidate: g(2),
    }
}

fn bump(c: &AtomicU64, by: u64) {
    c.fetch_add(by, Ordering::Relaxed);
}

/// Which AQL packet the CP processed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum AqlKind {
    Dispatch,
    Barrier,
    Pm4Ib,
}

impl CpCounters {
    pub fn snapshot(&self) -> CpCounts {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        CpCounts {
            aql_dispatch: g(&self.aql_dispatch),
            aql_barrier: g(&self.aql_barrier),
            aql_pm4_ib: g(&self.aql_pm4_ib),
            pm4_dwords: g(&self.pm4_dwords),
            pm4_packets: g(&self.pm4_packets),
            dispatches: g(&self.dispatches),
            waits: g(&self.waits),
            l2_writeback: g(&self.l2_writeback),
            l2_invalidate: g(&self.l2_invalidate),
            gl1_invalidate: g(&self.gl1_invalidate),
            l0_invalidate: g(&self.l0_invalidate),
            k_invalidate: g(&self.k_invalidate),
            i_invalidate: g(&self.i_invalidate),
            full_flush: g(&self.full_flush),
            sdma_packets: g(&self.sdma_packets),
            sdma_bytes: g(&self.sdma_bytes),
            ib: floor_counts(&self.ib),
            ib_floor: floor_counts(&self.ib_floor),
        }
    }

    /// One AQL packet with its header: BARRIER bit and fence scopes.
    pub(crate) fn aql(
        &self,
        kind: AqlKind,
        barrier: bool,
        acquire: FenceScope,
        release: FenceScope,
    ) {
        match kind {
            AqlKind::Dispatch => {
                bump(&self.aql_dispatch, 1);
                bump(&self.dispatches, 1);
            }
            AqlKind::Barrier => {
                bump(&self.aql_barrier, 1);
                bump(&self.waits, 1);
            }
            AqlKind::Pm4Ib => bump(&self.aql_pm4_ib, 1),
        }
        if barrier {
            bump(&self.waits, 1);
        }
        if acquire != FenceScope::None {
            self.cache(CacheOps {
                glk_inv: true,
                glv_inv: true,
                gl1_inv: true,
                gl2_inv: acquire == FenceScope::System,
                ..CacheOps::default()
            });
        }
        if release == FenceScope::System {
            self.cache(CacheOps {
                gl2_wb: true,
                ..CacheOps::default()
            });
        }
    }

    /// The copy engine executed a packet that moved `bytes` bytes.
    pub(crate) fn sdma(&self, bytes: u64) {
        bump(&self.sdma_packets, 1);
        bump(&self.sdma_bytes, bytes);
    }

    /// An IB of `dwords` dwords was fetched.
    pub(crate) fn ib(&self, dwords: usize) {
        bump(&self.pm4_dwords, dwords as u64);
    }

    /// A PM4 packet was parsed; `dispatch` and `wait` say what it was.
    pub(crate) fn pm4_packet(&self, dispatch: bool, wait: bool) {
        bump(&self.pm4_packets, 1);
        if dispatch {
            bump(&self.dispatches, 1);
        }
        if wait {
            bump(&self.waits, 1);
        }
    }

    /// The cache actions of a PM4 packet in an IB: counted as any packet's,
    /// and apart as the IB's own invalidations.
    pub(crate) fn ib_cache(&self, ops: CacheOps) {
        self.cache(ops);
        for (on, c) in [ops.glk_inv, ops.glv_inv, ops.gl1_inv]
            .into_iter()
            .zip(&self.ib)
        {
            if on {
                bump(c, 1);
            }
        }
    }

    /// The fewest invalidations an IB needed (`OrderingModel::floor`).
    pub(crate) fn ib_floor(&self, f: FloorCounts) {
        for (by, c) in [f.k_invalidate, f.l0_invalidate, f.gl1_invalidate]
            .into_iter()
            .zip(&self.ib_floor)
        {
            bump(c, by);
        }
    }

    /// The cache actions of one packet.
    pub(crate) fn cache(&self, ops: CacheOps) {
        if ops == CacheOps::all() {
            bump(&self.full_flush, 1);
            return;
        }
        for (on, c) in [
            (ops.gl2_wb, &self.l2_writeback),
            (ops.gl2_inv, &self.l2_invalidate),
            (ops.gl1_inv, &self.gl1_invalidate),
            (ops.glv_inv, &self.l0_invalidate),
            (ops.glk_inv, &self.k_invalidate),
            (ops.gli_inv, &self.i_invalidate),
        ] {
            if on {
                bump(c, 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_fences_count_by_scope_and_a_full_flush_once_per_kind() {
        let c = CpCounters::default();
        c.aql(
            AqlKind::Dispatch,
            true,
            FenceScope::System,
            FenceScope::System,
        );
        c.aql(AqlKind::Pm4Ib, false, FenceScope::Agent, FenceScope::Agent);
        c.cache(CacheOps::all());
        let n = c.snapshot();
        assert_eq!(
            (n.aql_dispatch, n.aql_pm4_ib, n.dispatches, n.waits),
            (1, 1, 1, 1)
        );
        assert_eq!((n.l2_invalidate, n.l2_writeback, n.k_invalidate), (1, 1, 2));
        assert_eq!(
            (n.gl1_invalidate, n.l0_invalidate, n.i_invalidate),
            (2, 2, 0)
        );
        assert_eq!(n.full_flush, 1);
        assert_eq!(n.cache_actions(), 1 + 1 + 2 + 2 + 2 + FULL_FLUSH_KINDS);
        assert_eq!(n.packets(), 2);
    }
}
