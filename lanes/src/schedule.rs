//! Lanes and replay order.
//!
//! Components: nodes connected by dependencies. After the hazard check every
//! conflicting pair is ordered by a path, so conflicting accesses never
//! cross components and lanes never share written memory.
//!
//! Lane count and assignment (documented in `Mode`): the lane budget is
//! `lanes` (latency, overlap) or `lanes / max_in_flight` (throughput, since
//! concurrent replays share the queues); `lane_count = min(budget,
//! components)`. Components are placed largest first on the least loaded
//! lane, where size is the critical path (latency) or the node count.
//!
//! Replay order inside a lane sorts nodes by phase level (one more than
//! the nodes whose data it must be ordered after, from the hazard sweep; at
//! least that of every dependency), then by longest remaining path
//! (critical path first). This is a
//! topological order, and it interleaves the components sharing a lane so
//! one boundary serves all of them.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::error::CompileError;
use crate::graph::{GraphOptions, KernelRef, Mode};
use crate::reach::{mix, Adj};
use crate::store::Store;

/// Kahn's algorithm, first-in first-out, over compact adjacency; the graph
/// is acyclic by construction (cycles are refused at record time).
pub(crate) fn topo_order(preds: &Adj, succs: &Adj) -> Vec<u32> {
    let n = preds.len();
    let mut indegree: Vec<u32> = (0..n as u32).map(|v| preds.of(v).len() as u32).collect();
    let mut order: Vec<u32> = (0..n as u32)
        .filter(|&v| indegree[v as usize] == 0)
        .collect();
    order.reserve(n - order.len());
    let mut head = 0;
    while head < order.len() {
        let x = order[head];
        head += 1;
        for &s in succs.of(x) {
            indegree[s as usize] -= 1;
            if indegree[s as usize] == 0 {
                order.push(s);
            }
        }
    }
    if order.len() != n {
        invariant_broken("a dependency cycle survived the record-time cycle check");
    }
    order
}

#[cold]
#[track_caller]
fn invariant_broken(what: &str) -> ! {
    panic!("relaunch-lanes invariant broken: {what}")
}

/// A stable hash of a kernel identity.
fn kernel_key(kernel: &KernelRef) -> u64 {
    let (tag, module, name) = match kernel {
        KernelRef::Named(name) => (0, 0, name.as_bytes()),
        KernelRef::Module { module, symbol } => (1, *module, symbol.as_bytes()),
        KernelRef::Transfer(ops) => {
            // Content: every op's addresses and length.
            let mut h = mix(0xcbf2_9ce4_8422_2325, 2);
            for op in ops.iter() {
                let (dst, bytes) = op.dst();
                let src = op.src().map_or(0, |(s, _)| s);
                h = mix(mix(mix(h, dst), src), bytes);
            }
            return h;
        }
    };
    let mut h = mix(mix(0xcbf2_9ce4_8422_2325, tag), module);
    for chunk in name.chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h = mix(h, u64::from_le_bytes(word));
    }
    mix(h, name.len() as u64)
}

/// A stable content hash of a node, used to break ties without depending
/// on the order nodes were added in.
fn content_key(store: &Store, kernel_keys: &[u64], n: u32) -> u64 {
    let rec = &store.nodes[n as usize];
    let mut h = kernel_keys[rec.kernel as usize];
    for v in rec.grid.iter().chain(&rec.block) {
        h = mix(h, u64::from(*v));
    }
    h = mix(h, u64::from(rec.dynamic_group_bytes));
    h = mix(h, u64::from(rec.kernarg.1) << 1 | u64::from(rec.vmem_only));
    for a in store.accesses_of(n) {
        h = mix(mix(h, a.offset), a.len << 1 | u64::from(a.write));
    }
    h
}

fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let up = parent[parent[x as usize] as usize];
        parent[x as usize] = up;
        x = up;
    }
    x
}

/// Refuse options that have no meaning (see `Mode`).
pub(crate) fn check_options(opts: &GraphOptions) -> Result<(), CompileError> {
    if opts.lanes == 0 {
        return Err(CompileError::Options(
            "lanes is 0: allow at least one lane".into(),
        ));
    }
    if opts.max_in_flight == 0 {
        return Err(CompileError::Options(
            "max_in_flight is 0: allow at least one replay in flight".into(),
        ));
    }
    if opts.mode == Mode::Latency && opts.max_in_flight != 1 {
        return Err(CompileError::Options(format!(
            "latency mode runs one replay at a time but max_in_flight is {}; use throughput mode for several",
            opts.max_in_flight
        )));
    }
    Ok(())
}

/// Partition into lanes and order each lane; returns node ids per lane.
/// `level` is each node's phase level from the hazard sweep.
pub(crate) fn plan_lanes(
    opts: &GraphOptions,
    store: &Store,
    order: &[u32],
    preds: &Adj,
    succs: &Adj,
    level: &[u32],
) -> Vec<Vec<u32>> {
    let n = store.len();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    for v in 0..n as u32 {
        for &u in preds.of(v) {
            let (ru, rv) = (find(&mut parent, u), find(&mut parent, v));
            if ru != rv {
                parent[ru.max(rv) as usize] = ru.min(rv);
            }
        }
    }
    // Longest remaining path in nodes, critical path first.
    let mut remaining = vec![1u32; n];
    for &u in order.iter().rev() {
        for &s in succs.of(u) {
            remaining[u as usize] = remaining[u as usize].max(remaining[s as usize] + 1);
        }
    }
    let kernel_keys: Vec<u64> = store.kernels.iter().map(kernel_key).collect();
    let keys: Vec<u64> = (0..n as u32)
        .map(|v| content_key(store, &kernel_keys, v))
        .collect();

    // Components: (root, node count, critical path, smallest key).
    let mut comp_of_root = vec![u32::MAX; n];
    let mut comps: Vec<(u32, u64, u32, u64)> = Vec::new();
    for v in 0..n as u32 {
        let root = find(&mut parent, v) as usize;
        if comp_of_root[root] == u32::MAX {
            comp_of_root[root] = comps.len() as u32;
            comps.push((v, 0, 0, u64::MAX));
        }
        let c = &mut comps[comp_of_root[root] as usize];
        c.1 += 1;
        c.2 = c.2.max(remaining[v as usize]);
        c.3 = c.3.min(keys[v as usize]);
    }
    let budget = match opts.mode {
        Mode::Throughput => (opts.lanes / opts.max_in_flight).max(1),
        Mode::Latency | Mode::Overlap => opts.lanes,
    };
    let lane_count = budget.min(comps.len());
    let cost = |c: &(u32, u64, u32, u64)| match opts.mode {
        Mode::Latency => u64::from(c.2),
        Mode::Overlap | Mode::Throughput => c.1,
    };
    let mut by_size: Vec<usize> = (0..comps.len()).collect();
    by_size.sort_by_key(|&i| (Reverse(cost(&comps[i])), comps[i].3, comps[i].0));
    let mut lane_of_comp = vec![0u32; comps.len()];
    let mut loads: BinaryHeap<Reverse<(u64, u32)>> =
        (0..lane_count as u32).map(|l| Reverse((0, l))).collect();
    for &c in &by_size {
        let Reverse((load, lane)) = loads.pop().unwrap_or(Reverse((0, 0)));
        lane_of_comp[c] = lane;
        loads.push(Reverse((load + cost(&comps[c]), lane)));
    }

    // Sort keys gathered contiguously: sorting through indirections into
    // per-node arrays would miss the cache at every comparison.
    type Key = (u32, Reverse<u32>, u64, u32);
    let mut keyed: Vec<Vec<Key>> = vec![Vec::new(); lane_count];
    for v in 0..n as u32 {
        let i = v as usize;
        let root = find(&mut parent, v) as usize;
        let lane = lane_of_comp[comp_of_root[root] as usize] as usize;
        keyed[lane].push((level[i], Reverse(remaining[i]), keys[i], v));
    }
    keyed
        .into_iter()
        .map(|mut lane| {
            lane.sort_unstable();
            lane.into_iter().map(|k| k.3).collect()
        })
        .collect()
}
