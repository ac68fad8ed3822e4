//! Reachability questions "is `a` an ancestor of `n`?" asked by the hazard
//! sweep, answered without a transitive closure.
//!
//! Candidates always come from the same buffer range as `n`, so in a
//! dependency chain they are close to `n`. A backward best-first search from
//! `n` (highest topological position first) stops at the candidates'
//! position and reuses earlier positive answers (`a` reaches `x`, `x`
//! reaches `n`), which keeps chains of readers of one old write linear.

use std::collections::{BinaryHeap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// Mix one word into a running hash (multiply-rotate; stable across
/// platforms and runs, so orders derived from it are too).
pub(crate) fn mix(h: u64, v: u64) -> u64 {
    (h ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(31)
}

/// Multiply-rotate hasher for the `(ancestor, node)` memo keys.
#[derive(Default)]
pub(crate) struct PairHasher(u64);

impl Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix(self.0, u64::from(b));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = mix(self.0, v);
    }
}

/// Adjacency lists in one flat array (compressed rows).
#[derive(Debug, Clone, Default)]
pub(crate) struct Adj {
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

impl Adj {
    /// Build from one row per node, in node order.
    pub(crate) fn from_rows<R: IntoIterator<Item = u32>>(rows: impl Iterator<Item = R>) -> Self {
        let mut adj = Adj {
            offsets: vec![0],
            targets: Vec::new(),
        };
        for row in rows {
            adj.targets.extend(row);
            adj.offsets.push(adj.targets.len() as u32);
        }
        adj
    }
    /// The same edges, reversed: row `t` lists every `f` whose row had `t`.
    pub(crate) fn transpose(&self) -> Adj {
        let n = self.offsets.len() - 1;
        let mut offsets = vec![0u32; n + 1];
        for &t in &self.targets {
            offsets[t as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut targets = vec![0u32; self.targets.len()];
        for f in 0..n as u32 {
            for &t in self.of(f) {
                targets[fill[t as usize] as usize] = f;
                fill[t as usize] += 1;
            }
        }
        Adj { offsets, targets }
    }

    pub(crate) fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub(crate) fn of(&self, n: u32) -> &[u32] {
        let n = n as usize;
        &self.targets[self.offsets[n] as usize..self.offsets[n + 1] as usize]
    }
}

type PairSet = HashSet<u64, BuildHasherDefault<PairHasher>>;

fn key(ancestor: u32, node: u32) -> u64 {
    (u64::from(ancestor) << 32) | u64::from(node)
}

/// Memo lookups at every visited node only pay off for a few candidates;
/// many candidates are found by marking them instead.
const MEMO_SCAN: usize = 8;

pub(crate) struct Reach<'a> {
    preds: &'a Adj,
    pos: &'a [u32],
    /// Visited marks and candidate marks, valid when equal to `epoch`.
    stamp: Vec<u32>,
    cand_mark: Vec<u32>,
    cand_slot: Vec<u32>,
    epoch: u32,
    heap: BinaryHeap<(u32, u32)>,
    unresolved: Vec<u32>,
    memo: PairSet,
    /// Questions asked plus nodes visited, to bound optional work.
    work: u64,
}

impl<'a> Reach<'a> {
    /// `preds.of(n)`: direct dependencies of `n`, sorted; `pos[n]`:
    /// topological position.
    pub(crate) fn new(preds: &'a Adj, pos: &'a [u32]) -> Self {
        Reach {
            preds,
            pos,
            stamp: vec![0; pos.len()],
            cand_mark: vec![0; pos.len()],
            cand_slot: vec![0; pos.len()],
            epoch: 0,
            heap: BinaryHeap::new(),
            unresolved: Vec::new(),
            memo: PairSet::default(),
            work: 0,
        }
    }

    pub(crate) fn work(&self) -> u64 {
        self.work
    }

    /// Is `p` a direct dependency of `n`?
    pub(crate) fn is_pred(&self, p: u32, n: u32) -> bool {
        self.preds.of(n).binary_search(&p).is_ok()
    }

    /// Does a dependency path lead from `a` to `b` or from `b` to `a`?
    pub(crate) fn ordered(&mut self, a: u32, b: u32) -> bool {
        let (early, late) = if self.pos[a as usize] < self.pos[b as usize] {
            (a, b)
        } else {
            (b, a)
        };
        let mut found = [false];
        // Pairwise listing asks about arbitrary pairs: remembering them
        // would grow the memo without helping the sweep.
        self.answer(late, &[early], &mut found, false);
        found[0]
    }

    /// Set `found[i]` when `cands[i]` (no duplicates) is an ancestor of `n`.
    pub(crate) fn ancestors_among(&mut self, n: u32, cands: &[u32], found: &mut [bool]) {
        self.answer(n, cands, found, true);
    }

    fn answer(&mut self, n: u32, cands: &[u32], found: &mut [bool], remember: bool) {
        let n_pos = self.pos[n as usize];
        let preds = self.preds.of(n);
        self.work += cands.len() as u64;
        let few = cands.len() <= MEMO_SCAN;
        self.unresolved.clear();
        for (i, &c) in cands.iter().enumerate() {
            let c_pos = self.pos[c as usize];
            if c_pos >= n_pos {
                found[i] = false;
                continue;
            }
            found[i] = preds.binary_search(&c).is_ok() || self.memo.contains(&key(c, n));
            if !found[i] && few && preds.iter().any(|&p| self.known(c, p)) {
                found[i] = true;
                if remember {
                    self.memo.insert(key(c, n));
                }
            }
            if !found[i] {
                self.unresolved.push(i as u32);
            }
        }
        if self.unresolved.is_empty() {
            return;
        }
        self.search(n, cands, found);
        // Direct edges are answered by the adjacency; remember the rest.
        for &i in self.unresolved.iter().filter(|_| remember) {
            if found[i as usize] {
                self.memo.insert(key(cands[i as usize], n));
            }
        }
    }

    /// `c` reaches `p` by a direct edge or a remembered path.
    fn known(&self, c: u32, p: u32) -> bool {
        self.is_pred(c, p) || self.memo.contains(&key(c, p))
    }

    /// Best-first backward search from `n` for the unresolved candidates.
    fn search(&mut self, n: u32, cands: &[u32], found: &mut [bool]) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.fill(0);
            self.cand_mark.fill(0);
            self.epoch = 1;
        }
        let mut min = u32::MAX;
        for &i in &self.unresolved {
            let c = cands[i as usize] as usize;
            self.cand_mark[c] = self.epoch;
            self.cand_slot[c] = i;
            min = min.min(self.pos[c]);
        }
        let mut left = self.unresolved.len();
        self.heap.clear();
        self.push_preds(n, min);
        while let Some((_, x)) = self.heap.pop() {
            self.work += 1;
            if self.cand_mark[x as usize] == self.epoch {
                let i = self.cand_slot[x as usize] as usize;
                if !found[i] {
                    found[i] = true;
                    left -= 1;
                }
            }
            if left > 0 && left <= MEMO_SCAN {
                for &i in &self.unresolved {
                    let i = i as usize;
                    if !found[i] && self.known(cands[i], x) {
                        found[i] = true;
                        left -= 1;
                    }
                }
            }
            if left == 0 {
                return;
            }
            self.push_preds(x, min);
        }
    }

    fn push_preds(&mut self, x: u32, min: u32) {
        for &p in self.preds.of(x) {
            let p_pos = self.pos[p as usize];
            if p_pos >= min && self.stamp[p as usize] != self.epoch {
                self.stamp[p as usize] = self.epoch;
                self.heap.push((p_pos, p));
            }
        }
    }
}
