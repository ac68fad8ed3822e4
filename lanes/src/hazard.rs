//! The hazard check: every pair of nodes whose accesses overlap with at
//! least one write must be ordered by a dependency path.
//!
//! Fast path (a graph that compiles): walk nodes in topological order and
//! keep, per byte range of each written buffer, the last writer and the
//! readers since it. A read must be reachable from the last writer; a write
//! from the last writer and from every reader since. By induction over each
//! byte's access history these checks order every conflicting pair, and each
//! check is between neighbours in that history, so they are cheap.
//!
//! Error path: the pairs the sweep caught are listed first; then the
//! buffers with hazards are enumerated pair by pair so the error names
//! every unordered pair, up to `MAX_REPORTED_HAZARDS` entries and a
//! reachability work budget (a long chain over one buffer has quadratically
//! many ordered pairs); past either, the error says the list was cut short.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{CompileError, Hazard, HazardKind, MAX_REPORTED_HAZARDS};
use crate::history::Histories;
use crate::reach::{Adj, Reach};
use crate::store::Store;

/// What a passing sweep learned on the way.
pub(crate) struct Sweep {
    /// Phase level per node: at least every dependency's, and one more
    /// than every node whose data it must be ordered after.
    pub(crate) level: Vec<u32>,
    /// Buffers some node writes (the others never need a boundary).
    pub(crate) written: Vec<bool>,
}

/// Check every conflicting pair; `order` is a topological order.
pub(crate) fn check(
    store: &Store,
    order: &[u32],
    preds: &Adj,
    reach: &mut Reach,
) -> Result<Sweep, CompileError> {
    let mut written = vec![false; store.buffers.len()];
    for n in 0..store.len() as u32 {
        for a in store.accesses_of(n).iter().filter(|a| a.write) {
            written[a.buffer.idx()] = true;
        }
    }
    let mut history = Histories::new(store.buffers.len());
    let mut bad_buffers = BTreeSet::new();
    let mut bad_pairs: Vec<(u32, u32, u32)> = Vec::new();
    let mut cands: Vec<(u32, u32)> = Vec::new();
    let mut ids: Vec<u32> = Vec::new();
    let mut found: Vec<bool> = Vec::new();
    let mut level = vec![0u32; store.len()];
    for &n in order {
        let accesses = store.accesses_of(n);
        let mut lv = preds
            .of(n)
            .iter()
            .map(|&p| level[p as usize])
            .max()
            .unwrap_or(0);
        cands.clear();
        for a in accesses.iter().filter(|a| written[a.buffer.idx()]) {
            let size = store.buffers[a.buffer.idx()].size;
            history.must_follow(a, size, n, |c| cands.push((c, a.buffer.0)));
        }
        if !cands.is_empty() {
            cands.sort_unstable();
            cands.dedup();
            ids.clear();
            ids.extend(cands.iter().map(|c| c.0));
            ids.dedup();
            found.clear();
            found.resize(ids.len(), false);
            reach.ancestors_among(n, &ids, &mut found);
            lv = ids
                .iter()
                .map(|&c| level[c as usize] + 1)
                .fold(lv, u32::max);
            for &(c, buf) in &cands {
                let i = ids.binary_search(&c).unwrap_or(0);
                if !found[i] {
                    bad_buffers.insert(buf);
                    if bad_pairs.len() < MAX_REPORTED_HAZARDS {
                        bad_pairs.push((c, n, buf));
                    }
                }
            }
        }
        level[n as usize] = lv;
        // A writer ordered after `n` is ordered after its direct dependency
        // too: the sweep keeps chains of readers short.
        history.record(accesses, n, |r| reach.is_pred(r, n));
    }
    if bad_buffers.is_empty() {
        return Ok(Sweep { level, written });
    }
    let (hazards, truncated) = enumerate(store, &bad_buffers, &bad_pairs, reach);
    Err(CompileError::Hazards { hazards, truncated })
}

type HazardKey = (u32, u32, u32, u64, u64, HazardKind);

/// Reachability work (nodes visited) the pairwise listing may spend before
/// it stops and reports the list as truncated.
const LISTING_WORK_BUDGET: u64 = 5_000_000;

/// The hazard between a first and a second access, given which write.
fn kind_of(first_writes: bool, second_writes: bool) -> HazardKind {
    match (first_writes, second_writes) {
        (true, true) => HazardKind::Waw,
        (true, false) => HazardKind::Raw,
        _ => HazardKind::War,
    }
}

/// Record the conflicting access pairs of nodes `m` and `n` on `buf`.
fn pair_hazards(found: &mut BTreeSet<HazardKey>, store: &Store, m: u32, n: u32, buf: u32) {
    let (first, second) = (m.min(n), m.max(n));
    for x in store
        .accesses_of(first)
        .iter()
        .filter(|a| a.buffer.0 == buf)
    {
        for y in store
            .accesses_of(second)
            .iter()
            .filter(|a| a.buffer.0 == buf)
        {
            if (x.write || y.write) && x.offset < y.end() && y.offset < x.end() {
                let kind = kind_of(x.write, y.write);
                let range = (x.offset.max(y.offset), x.end().min(y.end()));
                found.insert((first, second, buf, range.0, range.1, kind));
            }
        }
    }
}

/// Every unordered conflicting pair on the given buffers, sorted by node:
/// first the pairs the sweep caught, then an exhaustive pairwise pass
/// (bounded by `MAX_REPORTED_HAZARDS` and `LISTING_WORK_BUDGET`).
fn enumerate(
    store: &Store,
    buffers: &BTreeSet<u32>,
    sweep_pairs: &[(u32, u32, u32)],
    reach: &mut Reach,
) -> (Vec<Hazard>, bool) {
    let mut found: BTreeSet<HazardKey> = BTreeSet::new();
    for &(m, n, buf) in sweep_pairs {
        pair_hazards(&mut found, store, m, n, buf);
    }
    let mut truncated = found.len() > MAX_REPORTED_HAZARDS;
    let budget = reach.work() + LISTING_WORK_BUDGET;
    // One pass gathers the accesses of every affected buffer.
    let mut per_buffer: BTreeMap<u32, Vec<(u64, u64, u32, bool)>> =
        buffers.iter().map(|&b| (b, Vec::new())).collect();
    for n in 0..store.len() as u32 {
        for a in store.accesses_of(n) {
            if let Some(list) = per_buffer.get_mut(&a.buffer.0) {
                list.push((a.offset, a.end(), n, a.write));
            }
        }
    }
    'buffers: for (buf, mut accesses) in per_buffer {
        if truncated {
            break;
        }
        accesses.sort_unstable();
        let mut active: Vec<(u64, u64, u32, bool)> = Vec::new();
        for &(start, end, n, write) in &accesses {
            active.retain(|&(_, e, _, _)| e > start);
            for &(s2, e2, m, w2) in &active {
                if reach.work() > budget {
                    truncated = true;
                    break 'buffers;
                }
                if m == n || !(write || w2) || reach.ordered(m, n) {
                    continue;
                }
                let (first, fw, second, sw) = if m < n {
                    (m, w2, n, write)
                } else {
                    (n, write, m, w2)
                };
                let kind = kind_of(fw, sw);
                found.insert((first, second, buf, start.max(s2), end.min(e2), kind));
                if found.len() > MAX_REPORTED_HAZARDS {
                    truncated = true;
                    break 'buffers;
                }
            }
            active.push((start, end, n, write));
        }
    }
    let hazards = found
        .into_iter()
        .take(MAX_REPORTED_HAZARDS)
        .map(|(first, second, buf, start, end, kind)| Hazard {
            kind,
            buffer: buf,
            buffer_label: store.buffers[buf as usize].label.clone(),
            range: (start, end),
            first,
            first_name: store.name_of(first).to_string(),
            second,
            second_name: store.name_of(second).to_string(),
        })
        .collect();
    (hazards, truncated)
}
