//! An executable graph replayed by relaunch: the `GraphExec`, the node
//! map that kernarg patches and exec updates go through, and when it must
//! fall through to the real HIP instead (it fell back, or a module of its
//! kernels was tainted).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use relaunch::DmaOp;
use relaunch::NodeId;
use relaunch::{Gpu, GraphExec};

use crate::ordered::{InFlight, StreamOrder};
use crate::reason::Reason;
use crate::shadow::{NodeKernel, NodeWork, ShadowGraph, ShadowModule};

/// An exec's kernel nodes (handle -> relaunch node, launch) and its
/// memset/memcpy nodes (handle -> ops).
pub(crate) type Transfers = (
    HashMap<usize, (NodeId, NodeKernel)>,
    HashMap<usize, Arc<[DmaOp]>>,
);

/// An executable graph replayed by relaunch.
pub struct ShadowExec {
    pub exec: GraphExec,
    pub gpu: Gpu,
    /// Node handle -> relaunch node and its current launch.
    pub(crate) nodes: Mutex<HashMap<usize, (NodeId, NodeKernel)>>,
    /// Memset/memcpy node handle -> its ops (fixed: an update or patch
    /// that changes them makes the exec fall back).
    transfers: HashMap<usize, Arc<[DmaOp]>>,
    /// The instantiated graph's node handles in its node order, and its
    /// edges by position: what `hipGraphExecUpdate` pairs a graph against.
    order: Vec<usize>,
    edges: Vec<(usize, usize)>,
    /// The modules its kernels come from (a tainted one stops replays).
    modules: Vec<Arc<ShadowModule>>,
    /// Set once this exec can no longer be replayed (later launches go to
    /// the real HIP, which has every update).
    fallen: Mutex<Option<Reason>>,
    /// The words its replays are stream-ordered through (made at the
    /// first launch; an error when the real HIP cannot order them).
    pub(crate) stream_order: OnceLock<Result<StreamOrder, Reason>>,
    /// Stream-ordered launches not known to be finished.
    pub(crate) in_flight: InFlight,
    /// Events the graph's record nodes record: recorded for real on the
    /// launch stream after each replay (`events.rs`).
    pub(crate) events: Vec<usize>,
}

impl Drop for ShadowExec {
    fn drop(&mut self) {
        // The words are freed after this: no replay may still use them.
        self.in_flight.wait_all();
    }
}

impl ShadowExec {
    /// An exec of `exec` on `gpu`: its nodes by handle, the instantiated
    /// graph's (node order, edges) and the modules its kernels come from.
    pub(crate) fn new(
        exec: GraphExec,
        gpu: Gpu,
        (nodes, transfers): Transfers,
        (order, edges): (Vec<usize>, Vec<(usize, usize)>),
        modules: Vec<Arc<ShadowModule>>,
    ) -> Self {
        ShadowExec {
            exec,
            gpu,
            nodes: Mutex::new(nodes),
            transfers,
            order,
            edges,
            modules,
            fallen: Mutex::new(None),
            stream_order: OnceLock::new(),
            in_flight: InFlight::default(),
            events: Vec::new(),
        }
    }

    /// The exec records `events` after each replay.
    pub(crate) fn recording(mut self, events: Vec<usize>) -> Self {
        self.events = events;
        self
    }

    /// Why this exec no longer replays: it fell back, or one of its
    /// modules was tainted since it was instantiated.
    pub fn fallen(&self) -> Option<Reason> {
        if let Some(why) = self.fallen.lock().clone() {
            return Some(why);
        }
        self.modules.iter().find_map(|m| m.tainted())
    }

    pub fn fall_back(&self, why: Reason) {
        tracing::warn!(reason = %why, "hipGraphExec falls through to the real HIP from now on");
        *self.fallen.lock() = Some(why);
    }

    /// Applies `hipGraphExecKernelNodeSetParams`: kernarg bytes are patched
    /// in place; a different kernel or geometry makes the exec fall back.
    pub fn set_params(&self, node: usize, new: Result<NodeKernel, Reason>) {
        let mut nodes = self.nodes.lock();
        let Some((id, current)) = nodes.get_mut(&node) else {
            return self.fall_back(Reason::NotExecNode { node });
        };
        let new = match new {
            Ok(k) if k.same_launch(current) => k,
            Ok(_) => return self.fall_back(Reason::PatchChangesLaunch),
            Err(why) => return self.fall_back(why),
        };
        match self.exec.set_node_kernargs(*id, 0, &new.kernarg) {
            Ok(()) => *current = new,
            Err(e) => self.fall_back(Reason::relaunch("patching kernargs", e)),
        }
    }

    /// Applies a successful `hipGraphExecUpdate` from `graph`: nodes are
    /// paired by position (the order they were added or captured in), as
    /// HIP pairs them; when the topology, every kernel and every geometry
    /// match, the changed kernarg blocks are patched in place; otherwise
    /// the exec falls back (the real HIP has the update).
    pub fn update_from(&self, graph: &ShadowGraph) {
        if let Some(why) = &graph.unsupported {
            return self.fall_back(Reason::UpdateGraph(Box::new(why.clone())));
        }
        let edges = match graph.all_edges() {
            Ok(e) => e,
            Err(why) => return self.fall_back(Reason::UpdateGraph(Box::new(why))),
        };
        if graph.nodes.len() != self.order.len() || edges != self.edges {
            return self.fall_back(Reason::UpdateTopology {
                nodes: graph.nodes.len(),
                edges: edges.len(),
                exec_nodes: self.order.len(),
                exec_edges: self.edges.len(),
            });
        }
        let mut nodes = self.nodes.lock();
        // Checked whole before anything is patched: all or nothing.
        let mut changed = Vec::new();
        for (i, (_, new)) in graph.nodes.iter().enumerate() {
            if let Some(ops) = self.transfers.get(&self.order[i]) {
                match new {
                    Ok(NodeWork::Transfer(n)) if n == ops => continue,
                    _ => return self.fall_back(Reason::UpdateChangesTransfer { node: i }),
                }
            }
            let Some((id, current)) = nodes.get(&self.order[i]) else {
                return self.fall_back(Reason::UnknownExecNode { node: i });
            };
            match new {
                Ok(NodeWork::Transfer(_)) => {
                    return self.fall_back(Reason::UpdateKernelToTransfer { node: i })
                }
                Ok(NodeWork::Kernel(k)) if k.same_launch(current) => {
                    if k.kernarg != current.kernarg {
                        changed.push((self.order[i], *id, k.clone()));
                    }
                }
                Ok(_) => return self.fall_back(Reason::UpdateChangesLaunch { node: i }),
                Err(why) => {
                    return self.fall_back(Reason::UpdateNode {
                        node: i,
                        reason: Box::new(why.clone()),
                    })
                }
            }
        }
        for (handle, id, new) in changed {
            if let Err(e) = self.exec.set_node_kernargs(id, 0, &new.kernarg) {
                return self.fall_back(Reason::relaunch("patching kernargs for the update", e));
            }
            if let Some(entry) = nodes.get_mut(&handle) {
                entry.1 = new;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use relaunch::Gpu;

    use crate::shadow::{counter_for, node_kernel, NodeKernel, ShadowGraph};

    #[test]
    fn an_exec_update_patches_kernargs_and_falls_back_on_anything_more() {
        let gpu = Gpu::open("sim:gfx1201").unwrap();
        let f = counter_for("gfx1201");
        let at = |addr: u64, grid: u32| {
            node_kernel(&f, [grid, 1, 1], [4, 1, 1], 0, &|_, _| {
                Ok(addr.to_le_bytes().to_vec())
            })
            .unwrap()
        };
        let chain = |kernels: &[NodeKernel]| {
            let mut g = ShadowGraph::default();
            for (i, k) in kernels.iter().enumerate() {
                let deps: Vec<usize> = (i > 0).then_some(i).into_iter().collect();
                g.add_node(i + 1, Ok(k.clone()), &deps);
            }
            g
        };
        let x = chain(&[at(0x1000, 1), at(0x1000, 1)])
            .instantiate(&gpu)
            .unwrap();
        // Other node handles (a re-capture), new kernargs: patched in place.
        let mut update = chain(&[at(0x2000, 1), at(0x1000, 1)]);
        update.nodes.iter_mut().for_each(|(h, _)| *h += 100);
        x.update_from(&update);
        assert!(x.fallen().is_none());
        assert_eq!(x.nodes.lock()[&1].1.kernarg[..8], 0x2000u64.to_le_bytes());

        x.update_from(&chain(&[at(0x2000, 1)]));
        let why = x.fallen().unwrap().to_string();
        assert!(why.contains("another topology (1 nodes, 0 edges"), "{why}");

        let x = chain(&[at(0x1000, 1), at(0x1000, 1)])
            .instantiate(&gpu)
            .unwrap();
        x.update_from(&chain(&[at(0x1000, 1), at(0x1000, 2)]));
        let why = x.fallen().unwrap();
        assert!(
            matches!(why, crate::reason::Reason::UpdateChangesLaunch { node: 1 }),
            "{why}"
        );
        // Refused whole: node 0 was not patched either.
        assert_eq!(x.nodes.lock()[&1].1.kernarg[..8], 0x1000u64.to_le_bytes());
    }
}
