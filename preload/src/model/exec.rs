//! An executable graph replayed by relaunch: its current build (`build.rs`),
//! the node map that kernarg patches and exec updates go through, and when
//! it must fall through to the real HIP instead (it fell back, or a module
//! of its kernels was tainted). A patch or update that changes only
//! kernarg bytes is patched into the retained IBs; one that changes a
//! kernel node's geometry (same kernel) builds the exec again with it, so
//! the dispatch and its hidden arguments and dispatch packet follow; a
//! change of kernel makes the exec fall back.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use relaunch::DmaOp;
use relaunch::Gpu;

use crate::model::build::Build;
use crate::model::launches::LaunchCounts;
use crate::model::ordered::InFlight;
use crate::model::reason::Reason;
use crate::model::shadow::{NodeKernel, NodeWork, ShadowGraph, ShadowModule};

/// An executable graph replayed by relaunch.
pub struct ShadowExec {
    pub gpu: Gpu,
    /// The build launches use; replaced whole by a geometry change
    /// (launches in flight keep theirs).
    build: Mutex<Arc<Build>>,
    /// Kernel node handle -> its current launch. Locked for a whole patch
    /// or rebuild, so those are applied one at a time.
    pub(crate) nodes: Mutex<HashMap<usize, NodeKernel>>,
    /// Memset/memcpy node handle -> its ops (fixed: an update or patch
    /// that changes them makes the exec fall back).
    transfers: HashMap<usize, Arc<[DmaOp]>>,
    /// The instantiated graph's node handles in its node order, and its
    /// edges by position: what `hipGraphExecUpdate` pairs a graph against,
    /// and what a rebuild records again.
    order: Vec<usize>,
    edges: Vec<(usize, usize)>,
    /// The modules its kernels come from (a tainted one stops replays).
    modules: Vec<Arc<ShadowModule>>,
    /// Set once this exec can no longer be replayed (later launches go to
    /// the real HIP, which has every update).
    fallen: Mutex<Option<Reason>>,
    /// Stream-ordered launches not known to be finished.
    pub(crate) in_flight: InFlight,
    /// Events the graph's record nodes record: recorded for real on the
    /// launch stream after each replay (`events.rs`).
    pub(crate) events: Vec<usize>,
    /// Its launches, each way (the inspection API).
    pub(crate) launches: LaunchCounts,
}

impl Drop for ShadowExec {
    fn drop(&mut self) {
        // The words are freed after this: no replay may still use them.
        self.in_flight.wait_all();
    }
}

impl ShadowExec {
    /// The exec of `works` (node handle and work, in the graph's node
    /// order) with `edges` (by position) on `gpu`, recording `events`
    /// after each replay.
    pub(crate) fn instantiate(
        gpu: &Gpu,
        works: &[(usize, &NodeWork)],
        edges: Vec<(usize, usize)>,
        events: Vec<usize>,
    ) -> Result<ShadowExec, Reason> {
        let (build, modules) = Build::record(gpu, works, &edges)?;
        let mut nodes = HashMap::new();
        let mut transfers = HashMap::new();
        for &(handle, work) in works {
            match work {
                NodeWork::Kernel(k) => {
                    nodes.insert(handle, k.clone());
                }
                NodeWork::Transfer(ops) => {
                    transfers.insert(handle, Arc::clone(ops));
                }
            }
        }
        Ok(ShadowExec {
            gpu: gpu.clone(),
            build: Mutex::new(Arc::new(build)),
            nodes: Mutex::new(nodes),
            transfers,
            order: works.iter().map(|&(h, _)| h).collect(),
            edges,
            modules,
            fallen: Mutex::new(None),
            in_flight: InFlight::default(),
            events,
            launches: Default::default(),
        })
    }

    /// The build a launch now uses.
    pub fn current(&self) -> Arc<Build> {
        Arc::clone(&self.build.lock())
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
    /// in place, a new geometry rebuilds the exec, a different kernel makes
    /// it fall back.
    pub fn set_params(&self, node: usize, new: Result<NodeKernel, Reason>) {
        let mut nodes = self.nodes.lock();
        let Some(current) = nodes.get(&node) else {
            return self.fall_back(Reason::NotExecNode { node });
        };
        let new = match new {
            Ok(k) if k.same_kernel(current) => k,
            Ok(k) => {
                return self.fall_back(Reason::PatchChangesKernel {
                    symbol: k.function.symbol,
                })
            }
            Err(why) => return self.fall_back(why),
        };
        if new.same_launch(current) {
            let build = self.current();
            let patched = build
                .id(node)
                .and_then(|id| Ok(build.exec.set_node_kernargs(id, 0, &new.kernarg)?));
            match patched {
                Ok(()) => {
                    nodes.insert(node, new);
                }
                Err(why) => self.fall_back(Reason::Context {
                    context: "patching kernargs",
                    reason: Box::new(why),
                }),
            }
            return;
        }
        let mut next = nodes.clone();
        next.insert(node, new);
        self.rebuild(&mut nodes, next);
    }

    /// Builds the exec again with the kernel launches `next` (a geometry
    /// changed) and makes it the one later launches use; on failure the
    /// exec falls back. Launches in flight keep the build they started
    /// with; the stream orders the next one after them.
    fn rebuild(&self, nodes: &mut HashMap<usize, NodeKernel>, next: HashMap<usize, NodeKernel>) {
        let works = self
            .order
            .iter()
            .map(|h| match (self.transfers.get(h), next.get(h)) {
                (Some(ops), _) => Ok(NodeWork::Transfer(Arc::clone(ops))),
                (None, Some(k)) => Ok(NodeWork::Kernel(k.clone())),
                (None, None) => Err(Reason::NotExecNode { node: *h }),
            })
            .collect::<Result<Vec<_>, _>>();
        let works = match works {
            Ok(w) => w,
            Err(why) => return self.fall_back(Reason::Rebuild(Box::new(why))),
        };
        let works: Vec<(usize, &NodeWork)> = self.order.iter().copied().zip(&works).collect();
        match Build::record(&self.gpu, &works, &self.edges) {
            Ok((build, _)) => {
                tracing::info!("a geometry change rebuilt the hipGraphExec's IBs");
                *self.build.lock() = Arc::new(build);
                *nodes = next;
            }
            Err(why) => self.fall_back(Reason::Rebuild(Box::new(why))),
        }
    }

    /// Applies a successful `hipGraphExecUpdate` from `graph`: nodes are
    /// paired by position (the order they were added or captured in), as
    /// HIP pairs them; when the topology, every kernel and every memset or
    /// memcpy match, the changed kernarg blocks are patched in place, or,
    /// when a geometry changed, the exec is built again; otherwise it falls
    /// back (the real HIP has the update).
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
        let mut next = nodes.clone();
        let (mut changed, mut regeometry) = (Vec::new(), false);
        for (i, (_, new)) in graph.nodes.iter().enumerate() {
            let handle = self.order[i];
            if let Some(ops) = self.transfers.get(&handle) {
                match new {
                    Ok(NodeWork::Transfer(n)) if n == ops => continue,
                    _ => return self.fall_back(Reason::UpdateChangesTransfer { node: i }),
                }
            }
            let Some(current) = nodes.get(&handle) else {
                return self.fall_back(Reason::UnknownExecNode { node: i });
            };
            match new {
                Ok(NodeWork::Transfer(_)) => {
                    return self.fall_back(Reason::UpdateKernelToTransfer { node: i })
                }
                Ok(NodeWork::Kernel(k)) if k.same_kernel(current) => {
                    regeometry |= !k.same_launch(current);
                    if k.kernarg != current.kernarg {
                        changed.push(handle);
                    }
                    next.insert(handle, k.clone());
                }
                Ok(_) => return self.fall_back(Reason::UpdateChangesKernel { node: i }),
                Err(why) => {
                    return self.fall_back(Reason::UpdateNode {
                        node: i,
                        reason: Box::new(why.clone()),
                    })
                }
            }
        }
        if regeometry {
            return self.rebuild(&mut nodes, next);
        }
        let build = self.current();
        for handle in changed {
            let patched = build.id(handle).and_then(|id| {
                Ok(build
                    .exec
                    .set_node_kernargs(id, 0, &next[&handle].kernarg)?)
            });
            if let Err(why) = patched {
                return self.fall_back(Reason::Context {
                    context: "patching kernargs for the update",
                    reason: Box::new(why),
                });
            }
            nodes.insert(handle, next[&handle].clone());
        }
    }
}

#[cfg(test)]
mod tests;
