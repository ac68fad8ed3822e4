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
//!
//! Because a boundary covers everything before it, only the latest unmet
//! producer of each kind matters: per buffer an `AccessTree` gives the
//! latest writer and reader index over a range in O(log n), and the
//! segment bookkeeping (`Starts`) gives the byte range the reason names.

use std::collections::BTreeSet;

use crate::error::HazardKind;
use crate::graph::{BufferId, NodeId};
use crate::segtree::{AccessTree, Coords};
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

/// The strongest need found so far for one node: (kind, producer index,
/// hazard, buffer, range).
pub(crate) type Need = Option<(BoundaryKind, u32, HazardKind, u32, (u64, u64))>;

/// Position (index of the node it precedes) of the last boundary covering
/// each kind (shared with the reference derivation in `sweep_props`).
#[derive(Default)]
pub(crate) struct Covers {
    wait: Option<u32>,
    rmw_vmem: Option<u32>,
    rmw: Option<u32>,
}

impl Covers {
    pub(crate) fn met(&self, kind: BoundaryKind, producer: u32) -> bool {
        let at = match kind {
            BoundaryKind::Wait => self.wait,
            BoundaryKind::RmwVmem => self.rmw_vmem,
            BoundaryKind::Rmw => self.rmw,
        };
        at.is_some_and(|j| j > producer)
    }
    pub(crate) fn place(&mut self, kind: BoundaryKind, at: u32) {
        self.wait = Some(at);
        if kind.covers(BoundaryKind::RmwVmem) {
            self.rmw_vmem = Some(at);
        }
        if kind.covers(BoundaryKind::Rmw) {
            self.rmw = Some(at);
        }
    }
}

/// Where the byte segments of one buffer's access history start: a read
/// splits at its ends, a write makes its range one segment. A boundary's
/// reason names the segment it was found in, clipped to the access.
struct Starts {
    set: BTreeSet<u64>,
    size: u64,
}

impl Starts {
    fn new(size: u64) -> Self {
        Starts {
            set: BTreeSet::from([0]),
            size,
        }
    }
    fn split(&mut self, start: u64, end: u64) {
        self.set.insert(start);
        if end < self.size {
            self.set.insert(end);
        }
    }
    fn merge(&mut self, start: u64, end: u64) {
        while let Some(&k) = self.set.range(start + 1..end).next() {
            self.set.remove(&k);
        }
        self.split(start, end);
    }
    /// The segment holding byte `x`, clipped to `[start, end)`.
    fn around(&self, x: u64, start: u64, end: u64) -> (u64, u64) {
        let s = self.set.range(..=x).next_back().copied().unwrap_or(0);
        let e = self.set.range(x + 1..).next().copied().unwrap_or(self.size);
        (s.max(start), e.min(end))
    }
}

/// Per-buffer trees reused across lanes; only the touched ones are reset.
pub(crate) struct Scratch {
    coords: Vec<Coords>,
    trees: Vec<Option<(AccessTree, Starts)>>,
    touched: Vec<u32>,
}

impl Scratch {
    pub(crate) fn new(coords: Vec<Coords>) -> Self {
        Scratch {
            trees: (0..coords.len()).map(|_| None).collect(),
            coords,
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
        if let Some((tree, starts)) = scratch.trees[b as usize].as_mut() {
            tree.clear();
            *starts = Starts::new(starts.size);
        }
    }
    let mut live = vec![false; store.buffers.len()];
    let coords = &scratch.coords;
    let trees = &mut scratch.trees;
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
        for a in accesses.iter().filter(|a| written[a.buffer.idx()]) {
            let buf = a.buffer.0;
            if !live[buf as usize] {
                continue;
            }
            let Some((tree, starts)) = trees[buf as usize].as_mut() else {
                continue;
            };
            let c = &coords[buf as usize];
            let (l, r) = (c.leaf(a.offset), c.leaf(a.end()));
            let s = tree.query(l, r);
            // Keys are lane index + 1. Only the latest producer of a kind
            // can be unmet when anything is; the first segment holding it
            // names the range (the writer first within a segment).
            let found = if !a.write {
                (s.wmax != 0).then(|| {
                    let leaf = tree.first(l, r, s.wmax, false);
                    (raw_kind, s.wmax - 1, HazardKind::Raw, leaf)
                })
            } else {
                let top = s.wmax.max(s.rmax);
                (top != 0).then(|| {
                    let w = (s.wmax == top)
                        .then(|| tree.first(l, r, top, false))
                        .flatten();
                    let rd = (s.rmax == top)
                        .then(|| tree.first(l, r, top, true))
                        .flatten();
                    match (w, rd) {
                        (Some(w), Some(rd)) if rd < w => {
                            (BoundaryKind::Wait, top - 1, HazardKind::War, Some(rd))
                        }
                        (None, rd) => (BoundaryKind::Wait, top - 1, HazardKind::War, rd),
                        (w, _) => (BoundaryKind::Wait, top - 1, HazardKind::Waw, w),
                    }
                })
            };
            let Some((kind, p, hazard, Some(leaf))) = found else {
                continue;
            };
            if covers.met(kind, p) {
                continue;
            }
            if need.is_none_or(|(k, q, ..)| (kind, p) > (k, q)) {
                let range = starts.around(c.start(leaf).max(a.offset), a.offset, a.end());
                need = Some((kind, p, hazard, buf, range));
            }
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
            let b = a.buffer.idx();
            if !live[b] {
                live[b] = true;
                scratch.touched.push(b as u32);
            }
            let size = store.buffers[b].size;
            let (tree, starts) = trees[b]
                .get_or_insert_with(|| (AccessTree::new(coords[b].leaves()), Starts::new(size)));
            if !a.write {
                let c = &coords[b];
                tree.read(c.leaf(a.offset), c.leaf(a.end()), i + 1);
                starts.split(a.offset, a.end());
            }
        }
        for a in accesses.iter().filter(|a| a.write) {
            let b = a.buffer.idx();
            if let Some((tree, starts)) = trees[b].as_mut() {
                let c = &coords[b];
                tree.write(c.leaf(a.offset), c.leaf(a.end()), i + 1, 0);
                starts.merge(a.offset, a.end());
            }
        }
    }
    out
}
