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

use relaunch::{DmaOp, Gpu, GraphExec, NodeId, NodeSpec, Order};

use crate::model::ordered::StreamOrder;
use crate::model::reason::Reason;
use crate::model::shadow::{NodeWork, ShadowModule};

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
        // Each node's producers, found once (not by a scan of every edge
        // per node: quadratic on a 100k-node chain).
        let mut producers: Vec<Vec<usize>> = vec![Vec::new(); works.len()];
        for &(f, t) in edges {
            producers[t].push(f);
        }
        let producers = without_implied(&producers);
        let mut g = relaunch::Graph::new(relaunch::default_graph_options());
        let mut placed: Vec<Option<NodeId>> = vec![None; works.len()];
        let mut ids = HashMap::new();
        let mut modules: Vec<Arc<ShadowModule>> = Vec::new();
        for &i in &order {
            let (handle, work) = works[i];
            // Edges into the node go to `id`, edges out of it leave `last`.
            let (id, last) = match work {
                // The copy's own memory is HIP's, not declared: its edges
                // order it, as they do kernels.
                NodeWork::Transfer(ops) => {
                    let mut stages = stages(ops).into_iter();
                    let first =
                        g.transfer(stages.next().unwrap_or_default(), Vec::new(), Vec::new())?;
                    let mut last = first;
                    for stage in stages {
                        let next = g.transfer(stage, Vec::new(), Vec::new())?;
                        g.add_ordered_dependency(last, next, Order::Memory)?;
                        last = next;
                    }
                    (first, last)
                }
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
                    (id, id)
                }
            };
            // Producers come first in topological order: placed already.
            for &f in &producers[i] {
                let from =
                    placed[f].ok_or(Reason::Internal("an edge from a node not yet placed"))?;
                g.add_ordered_dependency(from, id, Order::Memory)?;
            }
            placed[i] = Some(last);
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

/// A transfer's ops cut where an op reads bytes an earlier op of the same
/// piece writes (a memset's unaligned ends copied from its filled middle,
/// `fills.rs`): each piece is its own transfer node, ordered after the
/// previous one with a boundary, so no copy reads a fill it races with.
fn stages(ops: &[DmaOp]) -> Vec<Vec<DmaOp>> {
    let mut out: Vec<Vec<DmaOp>> = vec![Vec::new()];
    for op in ops {
        let current = out.last_mut().expect("never empty");
        let reads_written = op.src().is_some_and(|(src, n)| {
            current.iter().any(|w| {
                let (dst, m) = w.dst();
                src < dst + m && dst < src + n
            })
        });
        if reads_written {
            out.push(vec![*op]);
        } else {
            current.push(*op);
        }
    }
    out
}

/// Producers of a node with at most this many are checked for edges
/// implied by others (the check is quadratic in them).
const IMPLIED_CHECK_UP_TO: usize = 64;

/// `producers` without an edge p -> t where another producer q of t comes
/// after p (p -> q -> t). A HIP edge is a memory order, and memory orders
/// compose, so every order is kept while relaunch records fewer
/// dependencies: a graph whose nodes each follow the 16 before it hands
/// over a chain, not 16 edges a node. Removing edges implied by a path of
/// the original graph keeps its reachability (its transitive reduction
/// stays a subgraph).
fn without_implied(producers: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let sorted: Vec<Vec<usize>> = producers
        .iter()
        .map(|p| {
            let mut p = p.clone();
            p.sort_unstable();
            p
        })
        .collect();
    producers
        .iter()
        .map(|ps| {
            if ps.len() < 2 || ps.len() > IMPLIED_CHECK_UP_TO {
                return ps.clone();
            }
            let implied = |p: usize| {
                ps.iter()
                    .any(|&q| q != p && sorted[q].binary_search(&p).is_ok())
            };
            ps.iter().copied().filter(|&p| !implied(p)).collect()
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_of_bytes_its_node_fills_starts_a_new_stage() {
        let fill = DmaOp::Fill {
            dst: 0x1004,
            pattern: 0xABAB_ABAB,
            bytes: 8,
        };
        let head = DmaOp::Copy {
            dst: 0x1001,
            src: 0x1005,
            bytes: 3,
        };
        let tail = DmaOp::Copy {
            dst: 0x100C,
            src: 0x1008,
            bytes: 2,
        };
        let apart = DmaOp::Copy {
            dst: 0x2000,
            src: 0x3000,
            bytes: 4,
        };
        assert_eq!(
            stages(&[fill, head, tail]),
            vec![vec![fill], vec![head, tail]]
        );
        assert_eq!(stages(&[fill, apart]), vec![vec![fill, apart]]);
    }

    #[test]
    fn edges_implied_through_another_producer_are_dropped() {
        // 0 -> 1 -> 2 -> 3, plus 0 -> 2, 0 -> 3 and 1 -> 3 (implied).
        let producers = vec![vec![], vec![0], vec![0, 1], vec![0, 1, 2]];
        assert_eq!(
            without_implied(&producers),
            vec![vec![], vec![0], vec![1], vec![2]]
        );
        // Two independent producers stay.
        let join = vec![vec![], vec![], vec![0, 1]];
        assert_eq!(without_implied(&join), join);
    }

    #[test]
    fn an_unaligned_memset_replays_exactly_on_the_simulator() {
        let gpu = Gpu::open("sim:gfx1201").unwrap();
        let buf = gpu.alloc(64, true).unwrap();
        let z = buf.address();
        buf.write(0, &[0x11; 64]).unwrap();
        let ops = crate::model::fills::span_ops(z + 1, 13, 0xABAB_ABAB).unwrap();
        let work = NodeWork::Transfer(ops.into());
        let (build, _) = Build::record(&gpu, &[(1, &work)], &[]).unwrap();
        build.exec.launch(&gpu).unwrap();
        let mut want = [0x11u8; 16];
        want[1..14].fill(0xAB);
        let got: Vec<u8> = (0..4)
            .flat_map(|i| buf.read_u32(4 * i).unwrap().to_le_bytes())
            .collect();
        assert_eq!(got, want);
    }
}
