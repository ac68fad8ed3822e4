//! The hazard check of a graph that compiles, near-linear in nodes plus
//! accesses whatever the shape (a chain where each node reads the whole
//! buffer and writes its slice, wide fan-in, wide fan-out, many small
//! overlapping ranges).
//!
//! It checks, in one topological order, every read against the last
//! writer of each of its bytes (read-after-write), every write against the
//! last writer (write-after-write), and, sweeping backwards, every read
//! against the next writer of each byte (write-after-read). By induction
//! over each byte's access history this orders every conflicting pair.
//!
//! Per buffer an `AccessTree` answers "earliest and latest writer over
//! this range" in O(log n). Each node knows one interval of positions
//! that are all its ancestors (and one of descendants): the nodes a
//! depth-first post-order emitted while visiting it, or a dependency's
//! interval grown by that dependency. When every writer of a range falls
//! inside, nothing is enumerated; otherwise only the writers outside are
//! checked one by one (`Reach`).
//!
//! Levels (`Sweep::level`) come out as the pairwise sweep in `hazard`
//! defines them: one more than every last writer and reader-since a node
//! must follow, at least every dependency's. Anything unordered makes the
//! caller rerun `hazard::check`, which builds the complete error.

use crate::graph::Access;
use crate::hazard::Sweep;
use crate::reach::{Adj, Reach};
use crate::segtree::{AccessTree, Coords};
use crate::store::Store;

/// Per-buffer coordinates of the buffers some node writes (others: empty).
pub(crate) fn coords(store: &Store, written: &[bool]) -> Vec<Coords> {
    let mut points: Vec<Vec<u64>> = vec![Vec::new(); store.buffers.len()];
    for n in 0..store.len() as u32 {
        for a in store.accesses_of(n) {
            let b = a.buffer.idx();
            if written[b] {
                points[b].extend([a.offset, a.end()]);
            }
        }
    }
    points
        .into_iter()
        .enumerate()
        .map(|(b, mut p)| {
            if written[b] {
                p.extend([0, store.buffers[b].size]);
            }
            Coords::new(p)
        })
        .collect()
}

/// Buffers some node writes.
pub(crate) fn written(store: &Store) -> Vec<bool> {
    let mut written = vec![false; store.buffers.len()];
    for n in 0..store.len() as u32 {
        for a in store.accesses_of(n).iter().filter(|a| a.write) {
            written[a.buffer.idx()] = true;
        }
    }
    written
}

/// The check order and, per node, position intervals `[lo, hi)` of
/// known ancestors and known descendants.
struct CheckOrder {
    order: Vec<u32>,
    pos: Vec<u32>,
    anc: Vec<(u32, u32)>,
    desc: Vec<(u32, u32)>,
}

fn longer(a: (u32, u32), b: (u32, u32)) -> (u32, u32) {
    if b.1 - b.0 > a.1 - a.0 {
        b
    } else {
        a
    }
}

/// Depth-first post-order over dependencies from the sinks, deepest sink
/// first, so a chain's ancestors sit right before it.
fn check_order(preds: &Adj, succs: &Adj, topo: &[u32]) -> CheckOrder {
    let n = preds.len();
    let mut depth = vec![0u32; n];
    for &v in topo {
        depth[v as usize] = preds
            .of(v)
            .iter()
            .map(|&p| depth[p as usize] + 1)
            .max()
            .unwrap_or(0);
    }
    let mut sinks: Vec<u32> = (0..n as u32).filter(|&v| succs.of(v).is_empty()).collect();
    sinks.sort_unstable_by_key(|&v| (std::cmp::Reverse(depth[v as usize]), v));
    let mut order = Vec::with_capacity(n);
    let mut entry = vec![u32::MAX; n];
    let mut stack: Vec<(u32, usize)> = Vec::new();
    for s in sinks {
        if entry[s as usize] != u32::MAX {
            continue;
        }
        entry[s as usize] = order.len() as u32;
        stack.push((s, 0));
        while let Some(top) = stack.last_mut() {
            let (v, i) = *top;
            if let Some(&p) = preds.of(v).get(i) {
                top.1 += 1;
                if entry[p as usize] == u32::MAX {
                    entry[p as usize] = order.len() as u32;
                    stack.push((p, 0));
                }
            } else {
                order.push(v);
                stack.pop();
            }
        }
    }
    let mut pos = vec![0u32; n];
    for (i, &v) in order.iter().enumerate() {
        pos[v as usize] = i as u32;
    }
    let mut anc = vec![(0u32, 0u32); n];
    for &v in &order {
        let mut best = (entry[v as usize], pos[v as usize]);
        for &p in preds.of(v) {
            let (lo, hi) = anc[p as usize];
            let pp = pos[p as usize];
            let grown = if hi == pp { (lo, pp + 1) } else { (pp, pp + 1) };
            best = longer(best, longer(anc[p as usize], grown));
        }
        anc[v as usize] = best;
    }
    let mut desc = vec![(0u32, 0u32); n];
    for &v in order.iter().rev() {
        let after = pos[v as usize] + 1;
        let mut best = (after, after);
        for &s in succs.of(v) {
            let (lo, hi) = desc[s as usize];
            let sp = pos[s as usize];
            let grown = if lo == sp + 1 { (sp, hi) } else { (sp, sp + 1) };
            best = longer(best, longer(desc[s as usize], grown));
        }
        desc[v as usize] = best;
    }
    CheckOrder {
        order,
        pos,
        anc,
        desc,
    }
}

fn leaves(coords: &[Coords], a: &Access) -> (usize, usize) {
    let c = &coords[a.buffer.idx()];
    (c.leaf(a.offset), c.leaf(a.end()))
}

/// Every pair ordered: the levels; `None` when something is unordered.
pub(crate) fn check(store: &Store, preds: &Adj, succs: &Adj, topo: &[u32]) -> Option<Sweep> {
    let written = written(store);
    let coords = coords(store, &written);
    let co = check_order(preds, succs, topo);
    let mut reach = Reach::new(preds, &co.pos);
    let mut trees: Vec<Option<AccessTree>> = coords
        .iter()
        .enumerate()
        .map(|(b, c)| written[b].then(|| AccessTree::new(c.leaves())))
        .collect();
    let mut level = vec![0u32; store.len()];
    let mut keys: Vec<u32> = Vec::new();
    let mut found: Vec<bool> = Vec::new();
    // Forward: levels, read-after-write and write-after-write.
    for &n in &co.order {
        let accesses = store.accesses_of(n);
        let mut lv = preds
            .of(n)
            .iter()
            .map(|&p| level[p as usize])
            .max()
            .unwrap_or(0);
        let (lo, hi) = co.anc[n as usize];
        let band = (lo + 1, hi + 1);
        keys.clear();
        for a in accesses {
            let Some(tree) = trees[a.buffer.idx()].as_mut() else {
                continue;
            };
            let (l, r) = leaves(&coords, a);
            let s = tree.query(l, r);
            // `waux` and `rmax` are levels + 1.
            lv = lv.max(s.waux);
            if a.write {
                lv = lv.max(s.rmax);
            }
            if s.wmax != 0 && !(s.wmin >= band.0 && s.wmax < band.1) {
                tree.writers_outside(l, r, band, &mut keys);
            }
        }
        level[n as usize] = lv;
        if !keys.is_empty() {
            keys.sort_unstable();
            keys.dedup();
            let cands: Vec<u32> = keys.iter().map(|&k| co.order[k as usize - 1]).collect();
            found.clear();
            found.resize(cands.len(), false);
            reach.ancestors_among(n, &cands, &mut found);
            if found.contains(&false) {
                return None;
            }
        }
        let key = co.pos[n as usize] + 1;
        for a in accesses.iter().filter(|a| !a.write) {
            if let Some(tree) = trees[a.buffer.idx()].as_mut() {
                let (l, r) = leaves(&coords, a);
                tree.read(l, r, lv + 1);
            }
        }
        for a in accesses.iter().filter(|a| a.write) {
            if let Some(tree) = trees[a.buffer.idx()].as_mut() {
                let (l, r) = leaves(&coords, a);
                tree.write(l, r, key, lv + 1);
            }
        }
    }
    // Backward: every read against the next writer of its bytes. A node's
    // own write comes after its read, but any later writer of those bytes
    // must follow that write anyway, so checking it against the read
    // (instead of skipping it) adds no requirement.
    for tree in trees.iter_mut().flatten() {
        tree.clear();
    }
    for &m in co.order.iter().rev() {
        let accesses = store.accesses_of(m);
        let (lo, hi) = co.desc[m as usize];
        let band = (lo + 1, hi + 1);
        keys.clear();
        for a in accesses.iter().filter(|a| !a.write) {
            let Some(tree) = trees[a.buffer.idx()].as_mut() else {
                continue;
            };
            let (l, r) = leaves(&coords, a);
            let s = tree.query(l, r);
            if s.wmax != 0 && !(s.wmin >= band.0 && s.wmax < band.1) {
                tree.writers_outside(l, r, band, &mut keys);
            }
        }
        if !keys.is_empty() {
            keys.sort_unstable();
            keys.dedup();
            for &k in &keys {
                let w = co.order[k as usize - 1];
                let mut f = [false];
                reach.ancestors_among(w, &[m], &mut f);
                if !f[0] {
                    return None;
                }
            }
        }
        let key = co.pos[m as usize] + 1;
        for a in accesses.iter().filter(|a| a.write) {
            if let Some(tree) = trees[a.buffer.idx()].as_mut() {
                let (l, r) = leaves(&coords, a);
                tree.write(l, r, key, 0);
            }
        }
    }
    Some(Sweep { level, written })
}
