//! Minimal boundaries in a lane's replay order.
//!
//! Each node needs, against the latest earlier node it conflicts with:
//! read-after-write -> `Rmw` (`RmwVmem` for a certified VMEM-only consumer);
//! write-after-read or write-after-write -> `Wait`; nothing for a
//! dependency that carries no data. A boundary covers everything before it,
//! so a need is met when a boundary of sufficient kind already sits after
//! its producer; otherwise one boundary, of the strongest unmet kind, goes
//! right before the node (as late as possible, so it covers the most).
//! Needs against older producers are implied: per byte, the access history
//! is a chain whose links each got their boundary.

use crate::error::HazardKind;
use crate::graph::{BufferId, NodeId};
use crate::intervals::IntervalMap;
use crate::store::Store;
use crate::BoundaryKind;

/// Why a boundary sits where it does: the pair that needed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BoundaryReason {
    pub hazard: HazardKind,
    pub producer: NodeId,
    pub consumer: NodeId,
    pub buffer: BufferId,
    /// Overlapping byte range `[start, end)`.
    pub range: (u64, u64),
}

/// A boundary placed before a node in its lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Boundary {
    pub kind: BoundaryKind,
    pub reason: BoundaryReason,
}

/// Indices in the lane of the last writer and latest reader since it.
#[derive(Debug, Clone, Copy, Default)]
struct Last {
    writer: Option<u32>,
    reader: Option<u32>,
}

/// The strongest need found so far for one node: (kind, producer index,
/// hazard, buffer, range).
type Need = Option<(BoundaryKind, u32, HazardKind, u32, (u64, u64))>;

/// Position (index of the node it precedes) of the last boundary covering
/// each kind.
#[derive(Default)]
struct Covers {
    wait: Option<u32>,
    rmw_vmem: Option<u32>,
    rmw: Option<u32>,
}

impl Covers {
    fn met(&self, kind: BoundaryKind, producer: u32) -> bool {
        let at = match kind {
            BoundaryKind::Wait => self.wait,
            BoundaryKind::RmwVmem => self.rmw_vmem,
            BoundaryKind::Rmw => self.rmw,
        };
        at.is_some_and(|j| j > producer)
    }
    fn place(&mut self, kind: BoundaryKind, at: u32) {
        self.wait = Some(at);
        if kind.covers(BoundaryKind::RmwVmem) {
            self.rmw_vmem = Some(at);
        }
        if kind.covers(BoundaryKind::Rmw) {
            self.rmw = Some(at);
        }
    }
}

/// Per-buffer maps reused across lanes; only the touched ones are reset.
pub(crate) struct Scratch {
    maps: Vec<Option<IntervalMap<Last>>>,
    touched: Vec<u32>,
}

impl Scratch {
    pub(crate) fn new(buffers: usize) -> Self {
        Scratch {
            maps: vec![None; buffers],
            touched: Vec::new(),
        }
    }
}

/// Boundaries before each node of `lane` (node ids in replay order).
pub(crate) fn derive(
    store: &Store,
    written: &[bool],
    lane: &[u32],
    scratch: &mut Scratch,
) -> Vec<Option<Boundary>> {
    for b in scratch.touched.drain(..) {
        scratch.maps[b as usize] = None;
    }
    let maps = &mut scratch.maps;
    let mut covers = Covers::default();
    let mut out = Vec::with_capacity(lane.len());
    for (i, &n) in lane.iter().enumerate() {
        let i = i as u32;
        let accesses = store.accesses_of(n);
        let raw_kind = if store.nodes[n as usize].vmem_only {
            BoundaryKind::RmwVmem
        } else {
            BoundaryKind::Rmw
        };
        let mut need: Need = None;
        let mut consider = |kind: BoundaryKind, p: u32, hazard, buf: u32, range| {
            if covers.met(kind, p) {
                return;
            }
            if need.is_none_or(|(k, q, ..)| (kind, p) > (k, q)) {
                need = Some((kind, p, hazard, buf, range));
            }
        };
        for a in accesses.iter().filter(|a| written[a.buffer.idx()]) {
            let buf = a.buffer.0;
            let Some(map) = &maps[buf as usize] else {
                continue;
            };
            map.visit(a.offset, a.end(), |s, e, last| {
                if let Some(w) = last.writer {
                    if a.write {
                        consider(BoundaryKind::Wait, w, HazardKind::Waw, buf, (s, e));
                    } else {
                        consider(raw_kind, w, HazardKind::Raw, buf, (s, e));
                    }
                }
                if let Some(r) = last.reader.filter(|_| a.write) {
                    consider(BoundaryKind::Wait, r, HazardKind::War, buf, (s, e));
                }
            });
        }
        let boundary = need.map(|(kind, p, hazard, buf, range)| {
            covers.place(kind, i);
            Boundary {
                kind,
                reason: BoundaryReason {
                    hazard,
                    producer: NodeId(lane[p as usize]),
                    consumer: NodeId(n),
                    buffer: BufferId(buf),
                    range,
                },
            }
        });
        out.push(boundary);
        for a in accesses.iter().filter(|a| written[a.buffer.idx()]) {
            let slot = &mut maps[a.buffer.idx()];
            if slot.is_none() {
                scratch.touched.push(a.buffer.0);
            }
            let size = store.buffers[a.buffer.idx()].size;
            let map = slot.get_or_insert_with(|| IntervalMap::new(size));
            if !a.write {
                map.update(a.offset, a.end(), |last| last.reader = Some(i));
            }
        }
        for a in accesses.iter().filter(|a| a.write) {
            if let Some(map) = maps[a.buffer.idx()].as_mut() {
                let last = Last {
                    writer: Some(i),
                    reader: None,
                };
                map.assign(a.offset, a.end(), last);
            }
        }
    }
    out
}
