//! Child graph nodes, flattened: `hipGraphAddChildGraphNode` copies the
//! child graph (HIP clones it at that call), so its nodes are added to
//! the parent under fresh handles, between two ordering nodes: an entry
//! (edges into the child node go there) and an exit (the child node's own
//! handle, so edges out of it start there). Event record and wait nodes
//! of the child come along with their events. The real graph counts the
//! child as one node: what flattening adds is kept out of the count check.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::model::reason::Reason;
use crate::model::shadow::ShadowGraph;

/// Handles for flattened nodes: the top bit set, which no user-space
/// pointer (a real HIP handle) has.
fn fresh_handle() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    (1 << (usize::BITS - 1)) | NEXT.fetch_add(1, Ordering::Relaxed)
}

impl ShadowGraph {
    /// Adds child graph node `handle` after `deps`, flattening `child`.
    pub fn add_child_graph(&mut self, handle: usize, child: &ShadowGraph, deps: &[usize]) {
        if let Some(why) = &child.unsupported {
            self.unsupported
                .get_or_insert_with(|| Reason::Child(Box::new(why.clone())));
            return;
        }
        let entry = fresh_handle();
        self.ordering.add(entry);
        self.ordering.add(handle);
        let edges_before = self.edges.len() + self.ordering.edge_count();
        let mut map: HashMap<usize, usize> = HashMap::new();
        for (h, work) in &child.nodes {
            let new = fresh_handle();
            map.insert(*h, new);
            self.add_work(new, work.clone(), &[]);
        }
        for h in child.ordering.handles() {
            let new = fresh_handle();
            map.insert(h, new);
            self.ordering.add(new);
        }
        for &(f, t) in &child.edges {
            let (f, t) = (child.nodes[f].0, child.nodes[t].0);
            self.add_edge(map[&f], map[&t]);
        }
        for (f, t) in child.ordering.handle_edges() {
            if let (Some(&f), Some(&t)) = (map.get(&f), map.get(&t)) {
                self.add_edge(f, t);
            }
        }
        // The child's event record and wait nodes (ordering nodes, mapped
        // above) keep their events: a wait pairs with its record wherever
        // it lies in the flattened graph (`events.rs`), and each launch
        // records the child's events as the parent's.
        for &(h, event) in &child.events.records {
            self.events.records.push((map[&h], event));
        }
        for &(h, event) in &child.events.waits {
            self.events.waits.push((map[&h], event));
        }
        // The child's kernel nodes run after the entry and before the exit
        // (entry -> exit directly too, so an empty child still orders).
        self.add_edge(entry, handle);
        for (h, _) in &child.nodes {
            self.add_edge(entry, map[h]);
            self.add_edge(map[h], handle);
        }
        self.hidden.0 += map.len() + 1;
        self.hidden.1 += self.edges.len() + self.ordering.edge_count() - edges_before;
        // From now on an edge into the child node goes to its entry (not
        // before: the child's nodes' edges into the exit are wired above).
        self.child_entries.insert(handle, entry);
        for &d in deps {
            self.add_edge(d, handle);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::shadow::{counter_for, node_kernel, ShadowGraph};

    #[test]
    fn a_child_is_flattened_between_its_neighbours_and_counted_as_one_node() {
        let f = counter_for("gfx1201");
        let k = || node_kernel(&f, [1, 1, 1], [4, 1, 1], 0, &|_, _| Ok(vec![0; 8])).unwrap();
        let mut child = ShadowGraph::default();
        child.add_node(1, Ok(k()), &[]);
        child.add_node(2, Ok(k()), &[1]);
        let mut parent = ShadowGraph::default();
        parent.add_node(10, Ok(k()), &[]);
        parent.add_child_graph(11, &child, &[10]);
        parent.add_node(12, Ok(k()), &[11]);
        assert_eq!(parent.real_counts(), (3, 2));
        let edges = parent.all_edges().unwrap();
        let idx = |h: usize| parent.nodes.iter().position(|(x, _)| *x == h);
        let (p0, p1) = (idx(10).unwrap(), idx(12).unwrap());
        // 10 -> both child nodes -> 12, the child's own edge, and 10 -> 12
        // through entry -> exit (which orders an empty child).
        assert_eq!(edges.len(), 6, "{edges:?}");
        assert_eq!(edges.iter().filter(|e| e.0 == p0).count(), 3);
        assert_eq!(edges.iter().filter(|e| e.1 == p1).count(), 3);
    }

    #[test]
    fn a_childs_event_nodes_keep_their_order_when_flattened() {
        let f = counter_for("gfx1201");
        let k = || node_kernel(&f, [1, 1, 1], [4, 1, 1], 0, &|_, _| Ok(vec![0; 8])).unwrap();
        // Child: 1 -> record(E) ; wait(E) -> 2 (no direct edge 1 -> 2).
        let mut child = ShadowGraph::default();
        child.add_node(1, Ok(k()), &[]);
        child.add_event_node(3, 0xE, false, &[1]);
        child.add_event_node(4, 0xE, true, &[3]);
        child.add_node(2, Ok(k()), &[4]);
        let mut parent = ShadowGraph::default();
        parent.add_child_graph(11, &child, &[]);
        assert!(parent.unsupported.is_none());
        assert_eq!(parent.real_counts(), (1, 0));
        assert_eq!(parent.events.recorded(), vec![0xE]);
        let edges = parent.all_edges().unwrap();
        // The child's first kernel orders before its second through the
        // record -> wait pair.
        assert!(edges.contains(&(0, 1)), "{edges:?}");
        // Waits for an event the child does not record still fall through.
        let mut waits = ShadowGraph::default();
        waits.add_event_node(1, 0xF, true, &[]);
        waits.add_node(2, Ok(k()), &[1]);
        let mut parent = ShadowGraph::default();
        parent.add_child_graph(11, &waits, &[]);
        assert!(matches!(
            parent.all_edges(),
            Err(crate::model::reason::Reason::WaitUnrecorded { event: 0xF })
        ));
    }
}
