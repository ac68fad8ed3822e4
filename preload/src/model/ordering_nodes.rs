//! Nodes of a HIP graph that only order others (empty nodes): they run
//! nothing, so they become dependencies. An edge into or out of one is
//! kept by handle; at instantiate every kernel node reaching an ordering
//! node (through any chain of them) gets an edge to every kernel node the
//! ordering node reaches, which is the order HIP gives.

use std::collections::{HashMap, HashSet};

/// The ordering nodes of one graph and the edges that touch them.
#[derive(Debug, Default, Clone)]
pub struct OrderingNodes {
    /// Handle -> (predecessor handles, successor handles).
    nodes: HashMap<usize, (Vec<usize>, Vec<usize>)>,
    /// Every recorded edge, to keep a repeated one once in O(1).
    known: HashSet<(usize, usize)>,
    /// Real edges that touch an ordering node (for the count check).
    edges: usize,
}

impl OrderingNodes {
    pub fn contains(&self, handle: usize) -> bool {
        self.nodes.contains_key(&handle)
    }

    pub fn add(&mut self, handle: usize) {
        self.nodes.entry(handle).or_default();
    }

    /// Node count, for the comparison with the real graph.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Real edges touching ordering nodes.
    pub fn edge_count(&self) -> usize {
        self.edges
    }

    /// Records `from -> to` where at least one end is an ordering node;
    /// false when neither is (the caller handles it). A repeated edge is
    /// kept once, as HIP keeps it.
    pub fn add_edge(&mut self, from: usize, to: usize) -> bool {
        if !self.contains(from) && !self.contains(to) {
            return false;
        }
        if !self.known.insert((from, to)) {
            return true;
        }
        self.edges += 1;
        if let Some(n) = self.nodes.get_mut(&from) {
            n.1.push(to);
        }
        if let Some(n) = self.nodes.get_mut(&to) {
            n.0.push(from);
        }
        true
    }

    /// The ordering nodes' handles.
    pub fn handles(&self) -> Vec<usize> {
        let mut h: Vec<usize> = self.nodes.keys().copied().collect();
        h.sort_unstable();
        h
    }

    /// Every recorded edge touching an ordering node, as handles.
    pub fn handle_edges(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (&o, (preds, succs)) in &self.nodes {
            out.extend(succs.iter().map(|&s| (o, s)));
            out.extend(
                preds
                    .iter()
                    .filter(|p| !self.contains(**p))
                    .map(|&p| (p, o)),
            );
        }
        out.sort_unstable();
        out
    }

    /// Kernel-to-kernel edges (as handles) implied through ordering nodes.
    pub fn implied_edges(&self) -> Vec<(usize, usize)> {
        let mut out = HashSet::new();
        for &o in self.nodes.keys() {
            let preds = self.reach(o, |n| &n.0);
            let succs = self.reach(o, |n| &n.1);
            for &p in &preds {
                out.extend(succs.iter().map(|&s| (p, s)));
            }
        }
        let mut out: Vec<(usize, usize)> = out.into_iter().collect();
        out.sort_unstable();
        out
    }

    /// Non-ordering nodes reached from `start` following `next`, through
    /// ordering nodes only.
    fn reach(
        &self,
        start: usize,
        next: impl Fn(&(Vec<usize>, Vec<usize>)) -> &Vec<usize>,
    ) -> Vec<usize> {
        let mut seen = HashSet::new();
        let mut stack = vec![start];
        let mut out = Vec::new();
        while let Some(h) = stack.pop() {
            if !seen.insert(h) {
                continue;
            }
            match self.nodes.get(&h) {
                Some(n) => stack.extend(next(n).iter().copied()),
                None => out.push(h),
            }
        }
        out.sort_unstable();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_pass_through_chains_of_ordering_nodes_in_any_order() {
        // 1, 2 -> E1 -> E2 -> 3, 4 ; E2's out-edges added before its in-edge.
        let mut o = OrderingNodes::default();
        o.add(10);
        o.add(11);
        assert!(o.add_edge(11, 3));
        assert!(o.add_edge(11, 4));
        assert!(o.add_edge(1, 10));
        assert!(o.add_edge(2, 10));
        assert!(o.add_edge(10, 11));
        assert!(o.add_edge(10, 11), "a repeated edge is kept once");
        assert!(!o.add_edge(1, 2));
        assert_eq!(o.edge_count(), 5);
        assert_eq!(o.implied_edges(), vec![(1, 3), (1, 4), (2, 3), (2, 4)]);
    }
}
