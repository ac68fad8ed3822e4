//! The compiled plan (`GraphExec`): lanes of nodes with the boundaries
//! before them, node locations for kernarg patches, the fingerprint, and
//! lowering of a lane into a `LaneSink`. The plan shares the graph's node
//! store and keeps its own copy of the kernarg bytes, which it patches.

use std::fmt;
use std::sync::Arc;

use crate::boundary::{self, Boundary, BoundaryReason};
use crate::error::{CompileError, LowerError, PatchError};
use crate::graph::{Access, BufferId, BufferInfo, Graph, GraphOptions, KernelRef, NodeId};
use crate::reach::{Adj, Reach};
use crate::store::Store;
use crate::{fingerprint, hazard, schedule, sweep, BoundaryKind};

/// One node as it will be replayed (a view into the plan).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedNode<'a> {
    pub node: NodeId,
    pub kernel: &'a KernelRef,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_group_bytes: u32,
    /// Current kernarg bytes (updated by `Plan::set_node_kernargs`).
    pub kernarg: &'a [u8],
    pub accesses: &'a [Access],
    pub vmem_only: bool,
    /// The boundary replayed right before this node, if any.
    pub boundary_before: Option<Boundary>,
}

/// Where a node sits: its lane and its dispatch index in that lane (the
/// index a per-lane IB uses for kernarg patches).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NodeLocation {
    pub lane: usize,
    pub index: usize,
}

/// Dispatches and boundaries of one lane, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BoundaryCounts {
    pub dispatches: usize,
    /// Dependency edges into this lane's nodes: the boundaries a scheme
    /// that fences every dependency would emit (the dword-ratio baseline).
    pub dependencies: usize,
    pub wait: usize,
    pub rmw_vmem: usize,
    pub rmw: usize,
}

impl BoundaryCounts {
    pub fn boundaries(&self) -> usize {
        self.wait + self.rmw_vmem + self.rmw
    }
}

/// Receives one lane's replay, in order: the scheduler implements it with
/// the PM4 encoder (one IB per lane); `MockRecorder` records it.
pub trait LaneSink {
    type Error: fmt::Display;
    fn dispatch(&mut self, node: &PlannedNode<'_>) -> Result<(), Self::Error>;
    fn boundary(&mut self, kind: BoundaryKind, reason: &BoundaryReason) -> Result<(), Self::Error>;
}

/// A node's place in a lane.
#[derive(Debug, Clone, Copy)]
struct Slot {
    node: u32,
    boundary: Option<Boundary>,
}

/// A compiled graph: hazard-free, partitioned into lanes, with minimal
/// boundaries and a fingerprint.
#[derive(Debug, Clone)]
pub struct Plan {
    options: GraphOptions,
    store: Arc<Store>,
    preds: Adj,
    /// The plan's kernarg bytes, laid out like the store's.
    kernargs: Vec<u8>,
    lanes: Vec<Vec<Slot>>,
    /// By node id: (lane, index in lane).
    locations: Vec<(u32, u32)>,
    fingerprint: [u8; 32],
}

/// The name the API uses for a compiled plan.
pub type GraphExec = Plan;

impl Graph {
    /// Check hazards, partition into lanes, order them, derive boundaries
    /// and fingerprint the result. The graph is left unchanged.
    pub fn instantiate(&self) -> Result<Plan, CompileError> {
        let store = &self.store;
        let span = tracing::debug_span!("instantiate", nodes = store.len());
        let _enter = span.enter();
        if store.len() == 0 {
            return Err(CompileError::Empty);
        }
        schedule::check_options(&self.options)?;
        let preds = store.preds();
        let succs = preds.transpose();
        let order = schedule::topo_order(&preds, &succs);
        let mut pos = vec![0u32; store.len()];
        for (i, &n) in order.iter().enumerate() {
            pos[n as usize] = i as u32;
        }
        // The near-linear sweep decides; only a graph it finds unordered
        // pays for the pairwise sweep that lists every hazard.
        let sweep = match sweep::check(store, &preds, &succs, &order) {
            Some(sweep) => sweep,
            None => hazard::check(store, &order, &preds, &mut Reach::new(&preds, &pos))?,
        };
        let lane_ids =
            schedule::plan_lanes(&self.options, store, &order, &preds, &succs, &sweep.level);
        let mut locations = vec![(0u32, 0u32); store.len()];
        let mut lanes = Vec::with_capacity(lane_ids.len());
        let mut scratch = boundary::Scratch::new(sweep::coords(store, &sweep.written));
        for (l, ids) in lane_ids.iter().enumerate() {
            let boundaries = boundary::derive(store, &sweep.written, ids, &mut scratch);
            let mut lane = Vec::with_capacity(ids.len());
            for (i, (&node, boundary)) in ids.iter().zip(boundaries).enumerate() {
                locations[node as usize] = (l as u32, i as u32);
                lane.push(Slot { node, boundary });
            }
            lanes.push(lane);
        }
        let mut plan = Plan {
            options: self.options,
            store: Arc::clone(store),
            preds,
            kernargs: store.kernargs.clone(),
            lanes,
            locations,
            fingerprint: [0; 32],
        };
        plan.fingerprint = fingerprint::compute(&plan);
        tracing::debug!(
            lanes = plan.lane_count(),
            fingerprint = %plan.fingerprint_hex(),
            "graph instantiated"
        );
        Ok(plan)
    }
}

impl Plan {
    pub fn options(&self) -> GraphOptions {
        self.options
    }

    /// Lanes actually used.
    pub fn lane_count(&self) -> usize {
        self.lanes.len()
    }

    /// Dispatches in one lane.
    pub fn lane_len(&self, lane: usize) -> Option<usize> {
        self.lanes.get(lane).map(Vec::len)
    }

    /// Nodes of one lane in replay order.
    pub fn lane(&self, lane: usize) -> Option<Vec<PlannedNode<'_>>> {
        let slots = self.lanes.get(lane)?;
        Some(slots.iter().map(|s| self.view(s)).collect())
    }

    /// Every lane's nodes in replay order.
    pub fn lanes(&self) -> impl Iterator<Item = Vec<PlannedNode<'_>>> + '_ {
        self.lanes
            .iter()
            .map(|slots| slots.iter().map(|s| self.view(s)).collect())
    }

    pub fn node_count(&self) -> usize {
        self.locations.len()
    }

    pub fn buffer_info(&self, buffer: BufferId) -> Option<&BufferInfo> {
        self.store.buffers.get(buffer.idx())
    }

    /// Lane and dispatch index of a node (for kernarg patches).
    pub fn locate(&self, node: NodeId) -> Option<NodeLocation> {
        self.locations
            .get(node.idx())
            .map(|&(lane, index)| NodeLocation {
                lane: lane as usize,
                index: index as usize,
            })
    }

    pub fn node(&self, node: NodeId) -> Option<PlannedNode<'_>> {
        let at = self.locate(node)?;
        Some(self.view(self.lanes.get(at.lane)?.get(at.index)?))
    }

    /// Dependencies of a node, sorted (empty for an unknown node).
    pub fn deps(&self, node: NodeId) -> Vec<NodeId> {
        if node.idx() >= self.locations.len() {
            return Vec::new();
        }
        self.preds.of(node.0).iter().map(|&d| NodeId(d)).collect()
    }

    /// Node ids of every lane, in replay order.
    pub fn lane_node_ids(&self) -> Vec<Vec<NodeId>> {
        self.lanes
            .iter()
            .map(|lane| lane.iter().map(|s| NodeId(s.node)).collect())
            .collect()
    }

    /// One line saying where a boundary sits and why, with names:
    /// `rmw before "consume" (node 1): RAW on "activations" [2048, 4096)
    /// after "project" (node 0)`.
    pub fn explain(&self, boundary: &Boundary) -> String {
        let r = &boundary.reason;
        let name = |n: NodeId| {
            if n.idx() < self.store.len() {
                self.store.name_of(n.0)
            } else {
                "?"
            }
        };
        let buffer = self.buffer_info(r.buffer).map_or("?", |b| b.label.as_str());
        format!(
            "{} before {:?} (node {}): {} on {:?} [{}, {}) after {:?} (node {})",
            boundary.kind,
            name(r.consumer),
            r.consumer.0,
            r.hazard,
            buffer,
            r.range.0,
            r.range.1,
            name(r.producer),
            r.producer.0
        )
    }

    /// SHA-256 of the canonical serialization (see `fingerprint`).
    pub fn fingerprint(&self) -> [u8; 32] {
        self.fingerprint
    }

    pub fn fingerprint_hex(&self) -> String {
        self.fingerprint
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// Per lane: dispatches and boundaries by kind.
    pub fn boundary_counts(&self) -> Vec<BoundaryCounts> {
        self.lanes
            .iter()
            .map(|lane| {
                let mut c = BoundaryCounts {
                    dispatches: lane.len(),
                    dependencies: lane.iter().map(|s| self.preds.of(s.node).len()).sum(),
                    ..BoundaryCounts::default()
                };
                for b in lane.iter().filter_map(|s| s.boundary) {
                    match b.kind {
                        BoundaryKind::Wait => c.wait += 1,
                        BoundaryKind::RmwVmem => c.rmw_vmem += 1,
                        BoundaryKind::Rmw => c.rmw += 1,
                    }
                }
                c
            })
            .collect()
    }

    /// Replay one lane into `sink`: each boundary, then its node.
    pub fn lower_lane<S: LaneSink>(
        &self,
        lane: usize,
        sink: &mut S,
    ) -> Result<(), LowerError<S::Error>> {
        let slots = self.lanes.get(lane).ok_or(LowerError::NoSuchLane {
            lane,
            count: self.lanes.len(),
        })?;
        for slot in slots {
            if let Some(b) = &slot.boundary {
                sink.boundary(b.kind, &b.reason).map_err(LowerError::Sink)?;
            }
            sink.dispatch(&self.view(slot)).map_err(LowerError::Sink)?;
        }
        Ok(())
    }

    /// Overwrite `data.len()` kernarg bytes of `node` at `byte_offset` in
    /// the plan's copy (what the next lowering or mock launch sees).
    pub fn set_node_kernargs(
        &mut self,
        node: NodeId,
        byte_offset: usize,
        data: &[u8],
    ) -> Result<(), PatchError> {
        let Some(rec) = self.store.nodes.get(node.idx()) else {
            return Err(PatchError::UnknownNode {
                node: node.0,
                count: self.store.len(),
            });
        };
        let (start, size) = (rec.kernarg.0, rec.kernarg.1 as usize);
        match byte_offset.checked_add(data.len()) {
            Some(end) if end <= size => {
                self.kernargs[start + byte_offset..start + end].copy_from_slice(data);
                Ok(())
            }
            _ => Err(PatchError::OutOfBounds {
                node: node.0,
                offset: byte_offset,
                len: data.len(),
                size,
            }),
        }
    }

    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    pub(crate) fn preds(&self) -> &Adj {
        &self.preds
    }

    /// Lanes as (node, boundary kind) pairs, for the fingerprint.
    pub(crate) fn slots(&self) -> impl Iterator<Item = Vec<(u32, Option<BoundaryKind>)>> + '_ {
        self.lanes.iter().map(|lane| {
            lane.iter()
                .map(|s| (s.node, s.boundary.map(|b| b.kind)))
                .collect()
        })
    }

    pub(crate) fn location(&self, node: u32) -> (u32, u32) {
        self.locations[node as usize]
    }

    fn view(&self, slot: &Slot) -> PlannedNode<'_> {
        let n = slot.node;
        let rec = &self.store.nodes[n as usize];
        let (start, len) = rec.kernarg;
        PlannedNode {
            node: NodeId(n),
            kernel: self.store.kernel_of(n),
            grid: rec.grid,
            block: rec.block,
            dynamic_group_bytes: rec.dynamic_group_bytes,
            kernarg: &self.kernargs[start..start + len as usize],
            accesses: self.store.accesses_of(n),
            vmem_only: rec.vmem_only,
            boundary_before: slot.boundary,
        }
    }
}
