//! One relaunch build of a HIP graph: its nodes recorded into a
//! `relaunch::Graph` (every HIP edge an ordered dependency on memory) and
//! instantiated, with the words its replays are stream-ordered through.
//! An exec is built at instantiate and built again when a patch or an
//! update changes a kernel node's geometry (`exec.rs`): the new build has
//! its own IBs, kernarg blocks, dispatch packets and stream words, so
//! launches of the old one still in flight finish untouched (each keeps
//! its build alive) and launches of the new one are ordered after them by
//! the stream.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use relaunch::{Gpu, GraphExec, NodeId, NodeSpec, Order};

use crate::ordered::StreamOrder;
use crate::reason::Reason;
use crate::shadow::{NodeWork, ShadowModule};

/// A built exec.
pub struct Build {
    pub exec: GraphExec,
    /// Kernel node handle -> its relaunch node in `exec`.
    pub ids: HashMap<usize, NodeId>,
    /// The words its replays are stream-ordered through (made at its first
    /// launch; an error when the real HIP cannot order them).
    pub(crate) stream_order: OnceLock<Result<StreamOrder, Reason>>,
}

/// What recording a graph yields besides the build: the modules its
/// kernels come from.
pub(crate) type Recorded = (Build, Vec<Arc<ShadowModule>>);

impl Build {
    /// Records `works` (node handle and work, in the graph's node order)
    /// with `edges` (indices into `works`) on `gpu` and instantiates it.
    /// A HIP edge says nothing of the data it carries, so every edge is an
    /// ordered dependency on memory (`Order::Memory`): each gets an RMW
    /// boundary unless one already covers it, the full one or the
    /// vector-cache one before a consumer proven VMEM-only.
    pub(crate) fn record(
        gpu: &Gpu,
        works: &[(usize, &NodeWork)],
        edges: &[(usize, usize)],
    ) -> Result<Recorded, Reason> {
        let order = topological(works.len(), edges)?;
        let mut g = relaunch::Graph::new(relaunch::default_graph_options());
        let mut placed: Vec<Option<NodeId>> = vec![None; works.len()];
        let mut ids = HashMap::new();
        let mut modules: Vec<Arc<ShadowModule>> = Vec::new();
        for &i in &order {
            let (handle, work) = works[i];
            let id = match work {
                // The copy's own memory is HIP's, not declared: its edges
                // order it, as they do kernels.
                NodeWork::Transfer(ops) => g.transfer(ops.to_vec(), Vec::new(), Vec::new())?,
                NodeWork::Kernel(kernel) => {
                    let module = kernel.function.module.on(gpu)?;
                    if !modules
                        .iter()
                        .any(|m| Arc::ptr_eq(m, &kernel.function.module))
                    {
                        modules.push(Arc::clone(&kernel.function.module));
                    }
                    let id = g.kernel(NodeSpec {
                        module: &module,
                        symbol: &kernel.function.symbol,
                        grid: kernel.grid,
                        block: kernel.block,
                        dynamic_group_bytes: kernel.dynamic_group_bytes,
                        kernarg: kernel.kernarg.clone(),
                        accesses: Vec::new(),
                        deps: Vec::new(),
                    })?;
                    ids.insert(handle, id);
                    id
                }
            };
            // Producers come first in topological order: placed already.
            for &(f, _) in edges.iter().filter(|&&(_, t)| t == i) {
                let from =
                    placed[f].ok_or(Reason::Internal("an edge from a node not yet placed"))?;
                g.add_ordered_dependency(from, id, Order::Memory)?;
            }
            placed[i] = Some(id);
        }
        let build = Build {
            exec: g.instantiate()?,
            ids,
            stream_order: OnceLock::new(),
        };
        Ok((build, modules))
    }

    /// The relaunch node of kernel node `handle`.
    pub fn id(&self, handle: usize) -> Result<NodeId, Reason> {
        self.ids
            .get(&handle)
            .copied()
            .ok_or(Reason::NotExecNode { node: handle })
    }
}

/// Node indices (of `n`) in an order where every edge goes forward.
pub(crate) fn topological(n: usize, edges: &[(usize, usize)]) -> Result<Vec<usize>, Reason> {
    let mut indegree = vec![0usize; n];
    let mut out = vec![Vec::new(); n];
    for &(f, t) in edges {
        indegree[t] += 1;
        out[f].push(t);
    }
    let mut ready: Vec<usize> = (0..n).rev().filter(|&i| indegree[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop() {
        order.push(i);
        for &t in out[i].iter().rev() {
            indegree[t] -= 1;
            if indegree[t] == 0 {
                ready.push(t);
            }
        }
    }
    if order.len() != n {
        return Err(Reason::Cycle);
    }
    Ok(order)
}
