//! Compact storage of a graph: fixed-size node records, shared arenas for
//! accesses, dependencies and kernarg bytes, and interned kernel
//! identities. Passes over 100k nodes read memory in order instead of
//! chasing one heap allocation per field, and a plan shares the store
//! (`Arc`) instead of copying it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::graph::{Access, BufferInfo, KernelNode, KernelRef, Order};
use crate::reach::Adj;

/// One node; its variable-size parts live in the store's arenas.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NodeRec {
    pub(crate) kernel: u32,
    pub(crate) grid: [u32; 3],
    pub(crate) block: [u32; 3],
    pub(crate) dynamic_group_bytes: u32,
    pub(crate) vmem_only: bool,
    accesses: (usize, u32),
    deps: (usize, u32),
    pub(crate) kernarg: (usize, u32),
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Store {
    pub(crate) buffers: Vec<BufferInfo>,
    pub(crate) kernels: Vec<KernelRef>,
    kernel_ids: HashMap<KernelRef, u32>,
    pub(crate) nodes: Vec<NodeRec>,
    accesses: Vec<Access>,
    deps: Vec<u32>,
    /// Edges added with `add_dependency`, as (to, from).
    extra: BTreeSet<(u32, u32)>,
    /// What explicitly ordered dependencies need, as (to, from) -> order.
    orders: BTreeMap<(u32, u32), Order>,
    pub(crate) kernargs: Vec<u8>,
}

impl Store {
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Append a checked node whose deps are sorted, deduplicated and exist.
    pub(crate) fn push(&mut self, node: KernelNode, deps: &[u32]) -> u32 {
        let kernel = match self.kernel_ids.get(&node.kernel) {
            Some(&k) => k,
            None => {
                let k = self.kernels.len() as u32;
                self.kernel_ids.insert(node.kernel.clone(), k);
                self.kernels.push(node.kernel);
                k
            }
        };
        let rec = NodeRec {
            kernel,
            grid: node.grid,
            block: node.block,
            dynamic_group_bytes: node.dynamic_group_bytes,
            vmem_only: node.vmem_only,
            accesses: (self.accesses.len(), node.accesses.len() as u32),
            deps: (self.deps.len(), deps.len() as u32),
            kernarg: (self.kernargs.len(), node.kernarg.len() as u32),
        };
        self.accesses.extend_from_slice(&node.accesses);
        self.deps.extend_from_slice(deps);
        self.kernargs.extend_from_slice(&node.kernarg);
        self.nodes.push(rec);
        (self.nodes.len() - 1) as u32
    }

    pub(crate) fn add_edge(&mut self, from: u32, to: u32) {
        self.extra.insert((to, from));
    }

    /// Records what the existing edge `from -> to` needs (the stronger of
    /// two orders given for one edge).
    pub(crate) fn add_order(&mut self, from: u32, to: u32, order: Order) {
        let slot = self.orders.entry((to, from)).or_insert(order);
        *slot = (*slot).max(order);
    }

    /// The ordered dependencies of `n`: (from, order).
    pub(crate) fn orders_of(&self, n: u32) -> impl Iterator<Item = (u32, Order)> + '_ {
        self.orders
            .range((n, 0)..=(n, u32::MAX))
            .map(|(&(_, from), &order)| (from, order))
    }

    pub(crate) fn has_orders(&self) -> bool {
        !self.orders.is_empty()
    }

    pub(crate) fn has_edge(&self, from: u32, to: u32) -> bool {
        self.first_deps(to).binary_search(&from).is_ok() || self.extra.contains(&(to, from))
    }

    pub(crate) fn edge_count(&self) -> usize {
        self.deps.len() + self.extra.len()
    }

    pub(crate) fn accesses_of(&self, n: u32) -> &[Access] {
        let (start, len) = self.nodes[n as usize].accesses;
        &self.accesses[start..start + len as usize]
    }

    pub(crate) fn kernel_of(&self, n: u32) -> &KernelRef {
        &self.kernels[self.nodes[n as usize].kernel as usize]
    }

    pub(crate) fn name_of(&self, n: u32) -> &str {
        self.kernel_of(n).display_name()
    }

    pub(crate) fn kernarg_of(&self, n: u32) -> &[u8] {
        let (start, len) = self.nodes[n as usize].kernarg;
        &self.kernargs[start..start + len as usize]
    }

    /// Deps given when the node was added.
    fn first_deps(&self, n: u32) -> &[u32] {
        let (start, len) = self.nodes[n as usize].deps;
        &self.deps[start..start + len as usize]
    }

    /// Every dependency of `n`, sorted.
    pub(crate) fn deps_of(&self, n: u32) -> Vec<u32> {
        let mut out = self.first_deps(n).to_vec();
        out.extend(
            self.extra
                .range((n, 0)..=(n, u32::MAX))
                .map(|&(_, from)| from),
        );
        out.sort_unstable();
        out
    }

    /// Dependencies of every node as compact rows, each sorted.
    pub(crate) fn preds(&self) -> Adj {
        if self.extra.is_empty() {
            let rows = (0..self.len() as u32).map(|n| self.first_deps(n).iter().copied());
            return Adj::from_rows(rows);
        }
        Adj::from_rows((0..self.len() as u32).map(|n| self.deps_of(n)))
    }
}
