//! Graph authoring: buffers, kernel nodes with declared accesses, and
//! dependencies. Everything a caller can get wrong is rejected here, at
//! record time, so `instantiate` only has to reason about hazards.

use std::sync::Arc;

use relaunch_encoders::dma::{DmaOp, MAX_DMA_PACKETS_PER_NODE};
use relaunch_facts::Limits;

use crate::error::RecordError;
use crate::store::Store;

/// Largest buffer label, kernel name or symbol accepted (bytes).
pub const MAX_NAME_BYTES: usize = 1024;
/// Largest kernarg block accepted for one node (bytes).
pub const MAX_KERNARG_BYTES: usize = 64 * 1024;
/// Most declared accesses on one node.
pub const MAX_ACCESSES_PER_NODE: usize = 1024;
/// Most nodes in one graph (node handles are `u32`).
pub const MAX_NODES: usize = 1 << 24;
/// Most buffers in one graph.
pub const MAX_BUFFERS: usize = 1 << 20;
/// Largest workgroup (work-items) any supported target allows: a graph is
/// recorded before it meets a GPU; the encoder checks the target's own.
pub const MAX_BLOCK_ITEMS: u64 = Limits::ANY_TARGET.max_workgroup_items as u64;
/// Largest dynamic group (LDS) allocation per workgroup any supported
/// target allows (bytes); the encoder checks the target's own.
pub const MAX_DYNAMIC_GROUP_BYTES: u32 = Limits::ANY_TARGET.max_lds_bytes;

/// Handle of a buffer declared with [`Graph::buffer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferId(pub(crate) u32);

/// Handle of a kernel node added with [`Graph::kernel`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub(crate) u32);

impl BufferId {
    /// Rebuild a handle from its raw number (front ends pass `u32`s);
    /// the graph checks it when it is used.
    pub fn from_raw(raw: u32) -> Self {
        BufferId(raw)
    }
    pub fn raw(self) -> u32 {
        self.0
    }
    pub(crate) fn idx(self) -> usize {
        self.0 as usize
    }
}

impl NodeId {
    /// Rebuild a handle from its raw number; checked when used.
    pub fn from_raw(raw: u32) -> Self {
        NodeId(raw)
    }
    pub fn raw(self) -> u32 {
        self.0
    }
    pub(crate) fn idx(self) -> usize {
        self.0 as usize
    }
}

/// How the compiled plan uses the queues it may get (see `schedule`).
///
/// A plan orders work within one replay. Replays that are in flight at
/// the same time must touch disjoint memory (for example kernargs patched
/// to per-replay buffers); each replay must start after the previous
/// replay's writes on the same memory are visible (the IB prologue and
/// epilogue's job).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// One replay at a time, finished as soon as possible: lanes are
    /// balanced by critical-path length.
    #[default]
    Latency,
    /// The next replay is prepared (patched, queued) while one runs: lanes
    /// are balanced by total work so every queue drains together.
    Overlap,
    /// Up to `max_in_flight` replays run at once and share the lane budget:
    /// each replay gets `lanes / max_in_flight` lanes, balanced by work.
    Throughput,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Latency => "latency",
            Mode::Overlap => "overlap",
            Mode::Throughput => "throughput",
        }
    }
}

/// Tuning chosen when the graph is created; checked at instantiate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GraphOptions {
    pub mode: Mode,
    /// Most lanes (hardware queues) one replay may use; the queue policy's
    /// cap. Independent components are merged when there are more of them.
    pub lanes: usize,
    /// Most replays of this plan in flight at once.
    pub max_in_flight: usize,
}

impl Default for GraphOptions {
    fn default() -> Self {
        GraphOptions {
            mode: Mode::Latency,
            lanes: 1,
            max_in_flight: 1,
        }
    }
}

/// Which kernel a node dispatches.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KernelRef {
    /// A bare name: authoring and mock launch only.
    Named(String),
    /// A symbol in a loaded module. `module` is an opaque identity chosen
    /// by the caller; it enters the fingerprint, so it should identify the
    /// code object's content (e.g. a hash), not a process-local handle.
    Module { module: u64, symbol: String },
    /// No kernel: copies and fills run by the CP (`DMA_DATA`), in order, at
    /// GPU addresses (a graph's memcpy/memset node). Recorded with
    /// [`KernelNode::transfer`]; its accesses order it like a kernel's.
    Transfer(Arc<[DmaOp]>),
}

impl KernelRef {
    /// The name shown in errors, dumps and DOT output.
    pub fn display_name(&self) -> &str {
        match self {
            KernelRef::Named(name) => name,
            KernelRef::Module { symbol, .. } => symbol,
            KernelRef::Transfer(_) => "DMA_DATA transfer",
        }
    }
}

/// One declared access of a node to a byte range of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Access {
    pub buffer: BufferId,
    pub offset: u64,
    pub len: u64,
    pub write: bool,
}

impl Access {
    pub fn read(buffer: BufferId, offset: u64, len: u64) -> Self {
        Access {
            buffer,
            offset,
            len,
            write: false,
        }
    }
    pub fn write(buffer: BufferId, offset: u64, len: u64) -> Self {
        Access {
            buffer,
            offset,
            len,
            write: true,
        }
    }
    /// End of the range; never overflows once the access was accepted.
    pub fn end(&self) -> u64 {
        self.offset + self.len
    }
}

/// A kernel dispatch to add to the graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelNode {
    pub kernel: KernelRef,
    /// Global work-items per dimension.
    pub grid: [u32; 3],
    /// Work-items per workgroup per dimension.
    pub block: [u32; 3],
    pub dynamic_group_bytes: u32,
    pub kernarg: Vec<u8>,
    pub accesses: Vec<Access>,
    /// Nodes that must finish before this one (sorted, no duplicates once
    /// stored in the graph).
    pub deps: Vec<NodeId>,
    /// The kernel is certified to read mutable data only through vector
    /// memory, so a read-after-write boundary before it may skip K$.
    pub vmem_only: bool,
}

impl KernelNode {
    /// A node dispatching `symbol` from a module, with nothing else yet.
    pub fn module(module: u64, symbol: &str, grid: [u32; 3], block: [u32; 3]) -> Self {
        KernelNode {
            kernel: KernelRef::Module {
                module,
                symbol: symbol.to_string(),
            },
            ..KernelNode::named(symbol, grid, block)
        }
    }

    /// A copy/fill node running `ops` in order (no kernel, no kernargs,
    /// geometry 1x1x1); give it the accesses and deps its data needs.
    pub fn transfer(ops: Vec<DmaOp>) -> Self {
        KernelNode {
            kernel: KernelRef::Transfer(ops.into()),
            ..KernelNode::named("transfer", [1, 1, 1], [1, 1, 1])
        }
    }

    /// A named node with the given geometry and nothing else.
    pub fn named(name: &str, grid: [u32; 3], block: [u32; 3]) -> Self {
        KernelNode {
            kernel: KernelRef::Named(name.to_string()),
            grid,
            block,
            dynamic_group_bytes: 0,
            kernarg: Vec::new(),
            accesses: Vec::new(),
            deps: Vec::new(),
            vmem_only: false,
        }
    }
}

/// A declared buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferInfo {
    pub label: String,
    pub size: u64,
}

/// A node as the graph stores it (see `Graph::node`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeView<'a> {
    pub kernel: &'a KernelRef,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_group_bytes: u32,
    pub kernarg: &'a [u8],
    pub accesses: &'a [Access],
    /// Every dependency, sorted, including edges added later.
    pub deps: Vec<NodeId>,
    pub vmem_only: bool,
}

/// The graph being authored.
#[derive(Debug, Clone)]
pub struct Graph {
    pub(crate) options: GraphOptions,
    /// Shared with plans; copied on the first change after an instantiate.
    pub(crate) store: Arc<Store>,
    /// Successors, for the record-time cycle check only.
    succs: Vec<Vec<u32>>,
    /// True while every edge goes from a lower to a higher node id: then no
    /// edge can close a cycle and the cycle search is skipped.
    forward_only: bool,
}

impl Graph {
    pub fn new(options: GraphOptions) -> Self {
        Graph {
            options,
            store: Arc::new(Store::default()),
            succs: Vec::new(),
            forward_only: true,
        }
    }

    pub fn options(&self) -> GraphOptions {
        self.options
    }

    pub fn node_count(&self) -> usize {
        self.store.len()
    }

    /// Dependency edges (each counted once).
    pub fn edge_count(&self) -> usize {
        self.store.edge_count()
    }

    pub fn buffer_count(&self) -> usize {
        self.store.buffers.len()
    }

    /// A node as stored: deps sorted and deduplicated, including edges
    /// added later with `add_dependency`.
    pub fn node(&self, id: NodeId) -> Option<NodeView<'_>> {
        let rec = self.store.nodes.get(id.idx())?;
        Some(NodeView {
            kernel: self.store.kernel_of(id.0),
            grid: rec.grid,
            block: rec.block,
            dynamic_group_bytes: rec.dynamic_group_bytes,
            kernarg: self.store.kernarg_of(id.0),
            accesses: self.store.accesses_of(id.0),
            deps: self.store.deps_of(id.0).into_iter().map(NodeId).collect(),
            vmem_only: rec.vmem_only,
        })
    }

    pub fn buffer_info(&self, id: BufferId) -> Option<&BufferInfo> {
        self.store.buffers.get(id.idx())
    }

    /// Declare a buffer of `size` bytes.
    pub fn buffer(&mut self, label: &str, size: u64) -> Result<BufferId, RecordError> {
        check_name("buffer label", label)?;
        if size == 0 {
            return Err(RecordError::ZeroSizeBuffer {
                label: label.to_string(),
            });
        }
        if self.store.buffers.len() >= MAX_BUFFERS {
            return Err(RecordError::TooMany {
                what: "buffers",
                limit: MAX_BUFFERS,
            });
        }
        let buffers = &mut Arc::make_mut(&mut self.store).buffers;
        buffers.push(BufferInfo {
            label: label.to_string(),
            size,
        });
        Ok(BufferId((buffers.len() - 1) as u32))
    }

    /// Add a kernel node. Its deps must already exist, so it cannot close a
    /// cycle.
    pub fn kernel(&mut self, node: KernelNode) -> Result<NodeId, RecordError> {
        if self.store.len() >= MAX_NODES {
            return Err(RecordError::TooMany {
                what: "nodes",
                limit: MAX_NODES,
            });
        }
        self.check_node(&node)?;
        for dep in &node.deps {
            self.check_node_id(*dep)?;
        }
        let mut deps: Vec<u32> = node.deps.iter().map(|d| d.0).collect();
        deps.sort_unstable();
        deps.dedup();
        let id = self.store.len() as u32;
        for &dep in &deps {
            self.succs[dep as usize].push(id);
        }
        Arc::make_mut(&mut self.store).push(node, &deps);
        self.succs.push(Vec::new());
        Ok(NodeId(id))
    }

    /// Require `from` to finish before `to`. An edge that would close a
    /// cycle is refused and not added; the graph stays usable.
    pub fn add_dependency(&mut self, from: NodeId, to: NodeId) -> Result<(), RecordError> {
        self.check_node_id(from)?;
        self.check_node_id(to)?;
        if from == to {
            return Err(self.cycle_error(from, to));
        }
        if self.store.has_edge(from.0, to.0) {
            return Ok(());
        }
        let backward = from.0 > to.0;
        if (backward || !self.forward_only) && self.reaches(to, from) {
            return Err(self.cycle_error(from, to));
        }
        Arc::make_mut(&mut self.store).add_edge(from.0, to.0);
        self.succs[from.idx()].push(to.0);
        if backward {
            self.forward_only = false;
        }
        Ok(())
    }

    fn cycle_error(&self, from: NodeId, to: NodeId) -> RecordError {
        RecordError::Cycle {
            from: from.0,
            from_name: self.store.name_of(from.0).to_string(),
            to: to.0,
            to_name: self.store.name_of(to.0).to_string(),
        }
    }

    /// Is `target` reachable from `start` along dependency edges?
    fn reaches(&self, start: NodeId, target: NodeId) -> bool {
        let mut seen = vec![false; self.store.len()];
        let mut stack = vec![start.0];
        seen[start.idx()] = true;
        while let Some(n) = stack.pop() {
            if n == target.0 {
                return true;
            }
            for &s in &self.succs[n as usize] {
                if !seen[s as usize] {
                    seen[s as usize] = true;
                    stack.push(s);
                }
            }
        }
        false
    }

    fn check_node_id(&self, id: NodeId) -> Result<(), RecordError> {
        if id.idx() >= self.store.len() {
            return Err(RecordError::UnknownNode {
                node: id.0,
                count: self.store.len(),
            });
        }
        Ok(())
    }

    fn check_node(&self, node: &KernelNode) -> Result<(), RecordError> {
        let name = node.kernel.display_name();
        check_name("kernel name", name)?;
        if let KernelRef::Transfer(ops) = &node.kernel {
            check_transfer(node, ops)?;
        }
        if node.grid.contains(&0) || node.block.contains(&0) {
            return Err(RecordError::ZeroGeometry {
                kernel: name.to_string(),
                grid: node.grid,
                block: node.block,
            });
        }
        if relaunch_encoders::dispatch::grid_work_items(node.grid).is_none() {
            return Err(RecordError::GridTooLarge {
                kernel: name.to_string(),
                grid: node.grid,
            });
        }
        let items: u64 = node.block.iter().map(|&b| u64::from(b)).product();
        if items > MAX_BLOCK_ITEMS {
            return Err(RecordError::BlockTooLarge {
                kernel: name.to_string(),
                block: node.block,
                items,
            });
        }
        if node.dynamic_group_bytes > MAX_DYNAMIC_GROUP_BYTES {
            return Err(RecordError::GroupMemoryTooLarge {
                kernel: name.to_string(),
                bytes: node.dynamic_group_bytes,
            });
        }
        if node.kernarg.len() > MAX_KERNARG_BYTES {
            return Err(RecordError::KernargTooLarge {
                kernel: name.to_string(),
                len: node.kernarg.len(),
            });
        }
        if node.accesses.len() > MAX_ACCESSES_PER_NODE {
            return Err(RecordError::TooMany {
                what: "accesses on one node",
                limit: MAX_ACCESSES_PER_NODE,
            });
        }
        for access in &node.accesses {
            self.check_access(name, access)?;
        }
        Ok(())
    }

    fn check_access(&self, kernel: &str, access: &Access) -> Result<(), RecordError> {
        let Some(buffer) = self.store.buffers.get(access.buffer.idx()) else {
            return Err(RecordError::UnknownBuffer {
                buffer: access.buffer.0,
                count: self.store.buffers.len(),
            });
        };
        if access.len == 0 {
            return Err(RecordError::ZeroLengthAccess {
                kernel: kernel.to_string(),
                buffer: buffer.label.clone(),
                offset: access.offset,
            });
        }
        let Some(end) = access.offset.checked_add(access.len) else {
            return Err(RecordError::AccessOverflow {
                kernel: kernel.to_string(),
                buffer: buffer.label.clone(),
                offset: access.offset,
                len: access.len,
            });
        };
        if end > buffer.size {
            return Err(RecordError::AccessOutOfBounds {
                kernel: kernel.to_string(),
                buffer: buffer.label.clone(),
                offset: access.offset,
                len: access.len,
                size: buffer.size,
            });
        }
        Ok(())
    }
}

/// A transfer node is its ops alone: nothing a kernel would have, at most
/// `MAX_DMA_PACKETS_PER_NODE` packets, each op one DMA_DATA can express.
fn check_transfer(node: &KernelNode, ops: &[DmaOp]) -> Result<(), RecordError> {
    let bad = |why: String| Err(RecordError::BadTransfer { why });
    if ops.is_empty() {
        return bad("it has no copy or fill".into());
    }
    if node.grid != [1, 1, 1]
        || node.block != [1, 1, 1]
        || node.dynamic_group_bytes != 0
        || !node.kernarg.is_empty()
        || node.vmem_only
    {
        return bad(
            "a transfer has no geometry, group memory, kernargs or cache certificate".into(),
        );
    }
    let packets: usize = ops.iter().map(DmaOp::packets).sum();
    if packets > MAX_DMA_PACKETS_PER_NODE {
        return bad(format!(
            "it takes {packets} DMA_DATA packets, more than the {MAX_DMA_PACKETS_PER_NODE} allowed"
        ));
    }
    for op in ops {
        if let Err(e) = op.check() {
            return bad(e.to_string());
        }
    }
    Ok(())
}

fn check_name(what: &'static str, name: &str) -> Result<(), RecordError> {
    if name.is_empty() {
        return Err(RecordError::EmptyName { what });
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(RecordError::NameTooLong {
            what,
            len: name.len(),
            limit: MAX_NAME_BYTES,
        });
    }
    Ok(())
}
