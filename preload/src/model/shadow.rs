//! The shadow record, keyed by the real HIP handles: modules (their code
//! object bytes, parsed without a device), functions (module + symbol),
//! graphs (kernel nodes with packed kernargs and edges), instantiated
//! into executable graphs (`exec`).
//!
//! A graph is replayable only when every node is a supported kernel,
//! memset or memcpy node (or only orders others) and nothing was added
//! behind our back (node/edge counts are checked
//! against the real graph at instantiate). Anything else keeps the reason
//! and the graph falls through to the real HIP.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use parking_lot::Mutex;
use relaunch::DmaOp;
use relaunch::{CodeObject, KernelInfo};
use relaunch::{Geometry, Gpu};

use crate::model::exec::ShadowExec;
use crate::model::ordering_nodes::OrderingNodes;
use crate::model::reason::Reason;

/// A module as loaded by `hipModuleLoadData`.
pub struct ShadowModule {
    /// The code object, or why this module cannot be replayed.
    pub code: Result<CodeObject, Reason>,
    /// Set once the application reached the module's device variables
    /// (`hipModuleGetGlobal`): relaunch's copy of the module would no
    /// longer see what the application writes, so nothing of it replays.
    tainted: Mutex<Option<Reason>>,
    /// The module on each relaunch device (by its description), loaded at
    /// the first instantiate there.
    loaded: Mutex<Vec<(String, relaunch::Module)>>,
}

impl std::fmt::Debug for ShadowModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.code {
            Ok(code) => write!(
                f,
                "ShadowModule({}, {} kernels)",
                code.target(),
                code.kernels().len()
            ),
            Err(why) => write!(f, "ShadowModule(unsupported: {why})"),
        }
    }
}

impl ShadowModule {
    pub fn new(code: Result<CodeObject, Reason>) -> Self {
        ShadowModule {
            code,
            tainted: Mutex::new(None),
            loaded: Mutex::new(Vec::new()),
        }
    }

    /// The code object, unless the module is unsupported or tainted.
    pub fn code(&self) -> Result<&CodeObject, Reason> {
        if let Some(why) = self.tainted() {
            return Err(why);
        }
        self.code.as_ref().map_err(Clone::clone)
    }

    /// Why the module stopped being replayable after it was loaded.
    pub fn tainted(&self) -> Option<Reason> {
        self.tainted.lock().clone()
    }

    /// Stops every replay of this module's kernels (the first reason is
    /// kept); execs check at each launch.
    pub fn taint(&self, why: Reason) {
        tracing::info!(reason = %why, "module no longer replayable; its graphs fall through");
        self.tainted.lock().get_or_insert(why);
    }

    pub(crate) fn on(&self, gpu: &Gpu) -> Result<relaunch::Module, Reason> {
        let code = self.code()?;
        let mut loaded = self.loaded.lock();
        if let Some((_, m)) = loaded.iter().find(|(on, _)| on == gpu.describe()) {
            return Ok(m.clone());
        }
        let m = gpu.load_module(code.bytes())?;
        loaded.push((gpu.describe().to_string(), m.clone()));
        Ok(m)
    }
}

/// A `hipFunction_t`: a kernel of a module.
#[derive(Debug, Clone)]
pub struct Function {
    pub module: Arc<ShadowModule>,
    pub symbol: String,
}

/// A kernel node's launch, as relaunch records it.
#[derive(Debug, Clone)]
pub struct NodeKernel {
    pub function: Function,
    /// Work-items per dimension (`gridDim * blockDim`).
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_group_bytes: u32,
    /// The full kernarg segment (explicit and hidden arguments).
    pub kernarg: Vec<u8>,
}

impl NodeKernel {
    /// The same kernel of the same module (its geometry may differ).
    pub fn same_kernel(&self, other: &NodeKernel) -> bool {
        Arc::ptr_eq(&self.function.module, &other.function.module)
            && self.function.symbol == other.function.symbol
    }

    /// Same kernel and geometry: only kernarg bytes differ, so a patch can
    /// update the retained IB in place.
    pub fn same_launch(&self, other: &NodeKernel) -> bool {
        self.same_kernel(other)
            && self.grid == other.grid
            && self.block == other.block
            && self.dynamic_group_bytes == other.dynamic_group_bytes
            && self.kernarg.len() == other.kernarg.len()
    }
}

/// Builds a node's launch from HIP's view: `grid_blocks` blocks of `block`
/// work-items, `args[i]` the bytes of the i-th explicit argument.
pub fn node_kernel(
    function: &Function,
    grid_blocks: [u32; 3],
    block: [u32; 3],
    dynamic_group_bytes: u32,
    args: &dyn Fn(usize, usize) -> Result<Vec<u8>, Reason>,
) -> Result<NodeKernel, Reason> {
    let info = kernel_info(function)?;
    let mut explicit = Vec::new();
    for (i, arg) in info.explicit_args().enumerate() {
        let (at, size) = (arg.offset as usize, arg.size as usize);
        let bytes = args(i, size)?;
        if explicit.len() < at + size {
            explicit.resize(at + size, 0);
        }
        explicit[at..at + size].copy_from_slice(&bytes);
    }
    launch_of(
        function,
        info,
        grid_blocks,
        block,
        dynamic_group_bytes,
        &explicit,
    )
}

/// [`node_kernel`] with the explicit arguments already laid out as the
/// kernel expects (HIP's `extra` form: `HIP_LAUNCH_PARAM_BUFFER_POINTER`);
/// the buffer must cover every explicit argument.
pub fn node_kernel_packed(
    function: &Function,
    grid_blocks: [u32; 3],
    block: [u32; 3],
    dynamic_group_bytes: u32,
    buffer: &[u8],
) -> Result<NodeKernel, Reason> {
    let info = kernel_info(function)?;
    let need = info
        .explicit_args()
        .map(|a| (a.offset + a.size) as usize)
        .max()
        .unwrap_or(0);
    if buffer.len() < need {
        return Err(Reason::ShortExtraBuffer {
            held: buffer.len(),
            kernel: info.name.clone(),
            need,
        });
    }
    launch_of(
        function,
        info,
        grid_blocks,
        block,
        dynamic_group_bytes,
        &buffer[..need],
    )
}

fn kernel_info(function: &Function) -> Result<&KernelInfo, Reason> {
    let code = function.module.code()?;
    code.kernel(&function.symbol)
        .ok_or_else(|| Reason::NoKernel {
            symbol: function.symbol.clone(),
        })
}

/// The launch of `info` with its explicit arguments `explicit`: grid in
/// work-items, hidden arguments filled.
fn launch_of(
    function: &Function,
    info: &KernelInfo,
    grid_blocks: [u32; 3],
    block: [u32; 3],
    dynamic_group_bytes: u32,
    explicit: &[u8],
) -> Result<NodeKernel, Reason> {
    let mut grid = [0u32; 3];
    for d in 0..3 {
        grid[d] = grid_blocks[d]
            .checked_mul(block[d])
            .ok_or_else(|| Reason::GridOverflow {
                kernel: info.name.clone(),
                grid: grid_blocks,
                block,
            })?;
    }
    let geometry = Geometry {
        grid,
        block,
        dynamic_group_bytes,
    };
    let kernarg =
        relaunch::pack_kernargs(info, explicit, &geometry).map_err(relaunch::Error::from)?;
    Ok(NodeKernel {
        function: function.clone(),
        grid,
        block,
        dynamic_group_bytes,
        kernarg,
    })
}

/// What a node does: a kernel launch, or copies/fills the CP runs inside
/// the IB (memset and memcpy nodes, `transfers.rs`).
#[derive(Debug, Clone)]
pub enum NodeWork {
    Kernel(NodeKernel),
    Transfer(Arc<[DmaOp]>),
}

/// A graph being built with `hipGraphCreate` / `hipGraphAdd*`.
#[derive(Default, Clone)]
pub struct ShadowGraph {
    /// Node handle and its work (or why it is not replayable), in order.
    pub nodes: Vec<(usize, Result<NodeWork, Reason>)>,
    pub index: HashMap<usize, usize>,
    /// Edges as node indices, without duplicates.
    pub edges: Vec<(usize, usize)>,
    /// The same edges as a set: a repeated edge is found in O(1), so a
    /// graph of n nodes is built in O(n + edges), not O(edges^2).
    edge_set: HashSet<(usize, usize)>,
    /// Set when something made the whole graph unsupported.
    pub unsupported: Option<Reason>,
    /// Node keys are positions, not the real handles (a captured graph:
    /// the real HIP made its nodes where the shadow cannot see them).
    pub positional: bool,
    /// Empty nodes: dependencies only (`ordering_nodes.rs`).
    pub ordering: OrderingNodes,
    /// Child graph node -> the entry ordering node of its flattened copy
    /// (`child_graph.rs`): edges into the child node go there.
    pub child_entries: HashMap<usize, usize>,
    /// (nodes, edges) flattening added that the real graph does not count.
    pub hidden: (usize, usize),
    /// Event record and wait nodes (also ordering nodes, `events.rs`).
    pub events: crate::model::events::EventNodes,
}

impl ShadowGraph {
    pub fn add_node(&mut self, handle: usize, kernel: Result<NodeKernel, Reason>, deps: &[usize]) {
        self.add_work(handle, kernel.map(NodeWork::Kernel), deps);
    }

    /// A memset/memcpy node (its ops, or why it is not replayable).
    pub fn add_transfer(&mut self, handle: usize, ops: Result<Vec<DmaOp>, Reason>, deps: &[usize]) {
        self.add_work(handle, ops.map(|o| NodeWork::Transfer(o.into())), deps);
    }

    pub fn add_work(&mut self, handle: usize, work: Result<NodeWork, Reason>, deps: &[usize]) {
        let at = self.nodes.len();
        self.nodes.push((handle, work));
        self.index.insert(handle, at);
        for &d in deps {
            self.add_edge(d, handle);
        }
    }

    /// An empty node: it orders `deps` before its successors.
    pub fn add_ordering_node(&mut self, handle: usize, deps: &[usize]) {
        self.ordering.add(handle);
        for &d in deps {
            self.add_edge(d, handle);
        }
    }

    /// Nodes and edges as the real graph counts them.
    pub fn real_counts(&self) -> (usize, usize) {
        (
            self.nodes.len() + self.ordering.len() - self.hidden.0,
            self.edges.len() + self.ordering.edge_count() - self.hidden.1,
        )
    }

    /// Kernel-node edges (indices): the direct ones and those implied
    /// through ordering nodes, without duplicates.
    pub fn all_edges(&self) -> Result<Vec<(usize, usize)>, Reason> {
        let mut edges = self.edges.clone();
        let mut seen = self.edge_set.clone();
        // A wait on an event recorded in the graph orders after the record.
        let mut ordering = self.ordering.clone();
        for (record, wait) in self.event_edges()? {
            ordering.add_edge(record, wait);
        }
        for (from, to) in ordering.implied_edges() {
            let (Some(&f), Some(&t)) = (self.index.get(&from), self.index.get(&to)) else {
                return Err(Reason::ForeignEdge { from, to });
            };
            if seen.insert((f, t)) {
                edges.push((f, t));
            }
        }
        Ok(edges)
    }

    pub fn add_edge(&mut self, from: usize, to: usize) {
        // An edge into a child graph node starts its flattened copy.
        let to = self.child_entries.get(&to).copied().unwrap_or(to);
        if self.ordering.add_edge(from, to) {
            return;
        }
        match (self.index.get(&from), self.index.get(&to)) {
            (Some(&f), Some(&t)) => {
                if self.edge_set.insert((f, t)) {
                    self.edges.push((f, t));
                }
            }
            _ => {
                self.unsupported = Some(Reason::ForeignEdge { from, to });
            }
        }
    }

    /// [`ShadowGraph::instantiate`] once the real graph's node and edge
    /// counts (`real`, or why they are unknown) match the shadow's: a node
    /// added through a call the interposer does not follow leaves the
    /// shadow short. A node already known to fall through names the reason
    /// better than the count it leaves the shadow short of. `gpu` opens
    /// the device, only when the graph is replayable.
    pub fn instantiate_checked(
        &self,
        real: Result<(usize, usize), Reason>,
        gpu: impl FnOnce() -> Result<Gpu, Reason>,
    ) -> Result<ShadowExec, Reason> {
        let (nodes, edges) = real?;
        if let Some(why) = &self.unsupported {
            return Err(why.clone());
        }
        let (shadow_nodes, shadow_edges) = self.real_counts();
        if nodes != shadow_nodes || edges != shadow_edges {
            return Err(Reason::CountMismatch {
                nodes,
                edges,
                shadow_nodes,
                shadow_edges,
            });
        }
        self.instantiate(&gpu()?)
    }

    /// The relaunch exec for this HIP graph on `gpu`, or why it cannot be
    /// (recorded by `build.rs`).
    pub fn instantiate(&self, gpu: &Gpu) -> Result<ShadowExec, Reason> {
        if let Some(why) = &self.unsupported {
            return Err(why.clone());
        }
        if self.nodes.is_empty() {
            return Err(Reason::NoWork);
        }
        let edges = self.all_edges()?;
        let works: Vec<(usize, &NodeWork)> = self
            .nodes
            .iter()
            .map(|(h, w)| w.as_ref().map(|w| (*h, w)).map_err(Clone::clone))
            .collect::<Result<_, _>>()?;
        ShadowExec::instantiate(gpu, &works, edges, self.events.recorded())
    }
}

/// The `counter` fixture's kernel for `target`, as a module function
/// (test support for this crate's unit tests).
#[cfg(test)]
pub(crate) fn counter_for(target: &str) -> Function {
    let bytes = relaunch_testsupport::fixture(target, "counter");
    Function {
        module: Arc::new(ShadowModule::new(
            CodeObject::parse(&bytes).map_err(Reason::from),
        )),
        symbol: "counter".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counter_function() -> Function {
        counter_for("gfx1201")
    }

    #[test]
    fn kernel_params_are_packed_at_their_metadata_offsets() {
        let f = counter_function();
        let ptr = 0x1234_5678_9abc_u64.to_le_bytes();
        let k = node_kernel(&f, [2, 1, 1], [32, 1, 1], 0, &|i, size| {
            assert_eq!((i, size), (0, 8));
            Ok(ptr.to_vec())
        })
        .unwrap();
        assert_eq!(k.grid, [64, 1, 1]);
        assert_eq!(&k.kernarg[..8], &ptr);
        let missing = node_kernel(
            &Function {
                symbol: "nope".into(),
                ..f.clone()
            },
            [1; 3],
            [1; 3],
            0,
            &|_, _| Ok(vec![]),
        );
        assert!(missing
            .unwrap_err()
            .to_string()
            .contains("no kernel \"nope\""));
        let overflow = node_kernel(&f, [u32::MAX, 1, 1], [2, 1, 1], 0, &|_, _| Ok(vec![0; 8]));
        assert!(overflow.unwrap_err().to_string().contains("overflows"));
    }

    #[test]
    fn cycles_and_foreign_nodes_make_the_graph_unsupported() {
        let gpu = Gpu::open("sim:gfx1201").unwrap();
        let f = counter_function();
        let k = node_kernel(&f, [1; 3], [1; 3], 0, &|_, _| Ok(vec![0; 8])).unwrap();
        let mut g = ShadowGraph::default();
        g.add_node(1, Ok(k.clone()), &[]);
        g.add_node(2, Ok(k.clone()), &[1]);
        g.add_edge(2, 1);
        let err = g.instantiate(&gpu).err().unwrap();
        assert!(matches!(err, Reason::Cycle), "{err}");
        let mut g = ShadowGraph::default();
        g.add_node(1, Ok(k), &[7]);
        let err = g.instantiate(&gpu).err().unwrap();
        assert!(
            matches!(err, Reason::ForeignEdge { from: 7, to: 1 }),
            "{err}"
        );
    }

    #[test]
    fn every_hip_edge_is_an_rmw_boundary_and_chains_get_their_own_lanes() {
        use relaunch::BoundaryKind;
        let gpu = Gpu::open("sim:gfx1201").unwrap();
        let f = counter_function();
        let k = node_kernel(&f, [1; 3], [4, 1, 1], 0, &|_, _| Ok(vec![0; 8])).unwrap();
        let mut g = ShadowGraph::default();
        // Chain 10 -> 11 -> 12 (the last edge added after the fact, out of
        // insertion order), and the independent pair 20 -> 21.
        g.add_node(12, Ok(k.clone()), &[]);
        g.add_node(10, Ok(k.clone()), &[]);
        g.add_node(11, Ok(k.clone()), &[10]);
        g.add_edge(11, 12);
        g.add_node(20, Ok(k.clone()), &[]);
        g.add_node(21, Ok(k), &[20]);
        let x = g.instantiate(&gpu).unwrap();
        let build = x.current();
        assert_eq!(build.exec.lane_count(), 2);
        build.exec.with_plan(|plan| {
            for (handle, first) in [
                (10, true),
                (11, false),
                (12, false),
                (20, true),
                (21, false),
            ] {
                let id = build.ids[&handle];
                let before = plan.node(id).unwrap().boundary_before;
                if first {
                    assert!(before.is_none(), "node {handle}: {before:?}");
                } else {
                    // A read-after-write boundary, narrowed to the vector
                    // caches because the counter kernel is proven to read
                    // no producer data through the scalar cache (#17).
                    assert_eq!(
                        before.map(|b| b.kind),
                        Some(BoundaryKind::RmwVmem),
                        "node {handle}"
                    );
                    // From the edge's stated order, not a faked access.
                    assert_eq!(
                        before.map(|b| (b.reason.hazard, b.reason.buffer)),
                        Some((relaunch::HazardKind::Order, None)),
                        "node {handle}"
                    );
                }
            }
        });
    }

    #[test]
    fn a_module_for_another_target_falls_through_with_the_reason() {
        let gpu = Gpu::open("sim:gfx1201").unwrap();
        let f = counter_for("gfx1100");
        let k = node_kernel(&f, [1; 3], [1; 3], 0, &|_, _| Ok(vec![0; 8])).unwrap();
        let mut g = ShadowGraph::default();
        g.add_node(1, Ok(k), &[]);
        let err = g.instantiate(&gpu).err().unwrap().to_string();
        assert!(err.contains("gfx1100"), "{err}");
    }

    #[test]
    fn instantiate_checks_the_real_counts_and_names_the_better_reason() {
        let f = counter_function();
        let k = node_kernel(&f, [1; 3], [4, 1, 1], 0, &|_, _| Ok(vec![0; 8])).unwrap();
        let mut g = ShadowGraph::default();
        g.add_node(1, Ok(k.clone()), &[]);
        g.add_node(2, Ok(k), &[1]);
        let no_device = || -> Result<Gpu, Reason> { panic!("the device is not opened") };
        // A node added behind the shadow's back.
        let e = g.instantiate_checked(Ok((3, 1)), no_device).err().unwrap();
        assert!(
            matches!(
                e,
                Reason::CountMismatch {
                    nodes: 3,
                    edges: 1,
                    shadow_nodes: 2,
                    shadow_edges: 1
                }
            ),
            "{e}"
        );
        // Counting the real graph failed: that reason, first.
        let failed = Err(Reason::RealMissing {
            function: "hipGraphGetNodes",
        });
        let e = g.instantiate_checked(failed, no_device).err().unwrap();
        assert!(matches!(e, Reason::RealMissing { .. }), "{e}");
        // A node known to fall through names the reason, not the count.
        let mut host = g.clone();
        host.unsupported = Some(Reason::HostNode);
        let e = host
            .instantiate_checked(Ok((3, 2)), no_device)
            .err()
            .unwrap();
        assert!(matches!(e, Reason::HostNode), "{e}");
        // Matching counts: built on the device given.
        let x = g
            .instantiate_checked(Ok((2, 1)), || Ok(Gpu::open("sim:gfx1201").unwrap()))
            .unwrap();
        assert_eq!(x.current().exec.lane_count(), 1);
        let e = g
            .instantiate_checked(Ok((2, 1)), || Err(Reason::Internal("no device")))
            .err()
            .unwrap();
        assert!(matches!(e, Reason::Internal("no device")), "{e}");
    }
}
