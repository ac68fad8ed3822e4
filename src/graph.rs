//! Graphs on a device: `Graph` records nodes whose kernels come from loaded
//! modules (or bare names for authoring), `GraphExec` is the compiled plan
//! plus, after the first `launch`, one retained IB per lane installed on
//! the family's queue width. Later launches only replay; per-node kernarg
//! patches go to the plan and to the installed IBs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use relaunch_encoders::StreamWords;
use relaunch_lanes::{
    Access, BufferId, GraphOptions, KernelNode, KernelRef, MockRecorder, NodeId, Order, Plan,
    ResolvedKernel,
};
use relaunch_sched::hsa::HsaBackend;
use relaunch_sched::hsa::HsaWatch;
use relaunch_sched::scheduler::{MultiCompletion, MultiIb};
use relaunch_sched::Completion;

use crate::error::{Error, Result};
use crate::gpu::{Gpu, HsaScheduler};
use crate::module::Module;
use crate::pm4::REPLAY_TIMEOUT;
use crate::refusal::Refusal;
use crate::submission::{LaneKind, LaneSubmission, Submission};
use crate::QueuePolicy;

/// Process-wide module ids for `KernelRef::Module` (never reused, so a
/// graph can not confuse a freed module with a new one).
static NEXT_MODULE_ID: AtomicU64 = AtomicU64::new(1);

impl Module {
    /// This module's id in graphs.
    pub fn graph_id(&self) -> u64 {
        *self
            .inner
            .graph_id
            .get_or_init(|| NEXT_MODULE_ID.fetch_add(1, Ordering::Relaxed))
    }
}

/// A graph being recorded. Modules used by its nodes are kept alive.
pub struct Graph {
    graph: relaunch_lanes::Graph,
    modules: HashMap<u64, Module>,
}

/// One kernel node of a device graph.
#[derive(Debug, Clone)]
pub struct NodeSpec<'a> {
    pub module: &'a Module,
    pub symbol: &'a str,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_group_bytes: u32,
    pub kernarg: Vec<u8>,
    pub accesses: Vec<Access>,
    pub deps: Vec<NodeId>,
}

impl Graph {
    pub fn new(options: GraphOptions) -> Self {
        Graph {
            graph: relaunch_lanes::Graph::new(options),
            modules: HashMap::new(),
        }
    }

    /// Wraps a graph recorded with the lanes API whose module kernels
    /// (`KernelRef::Module { module: m.graph_id(), .. }`) come from
    /// `modules` (e.g. `lanes::reference::decode_step_with`).
    pub fn from_lanes(graph: relaunch_lanes::Graph, modules: &[Module]) -> Self {
        Graph {
            graph,
            modules: modules.iter().map(|m| (m.graph_id(), m.clone())).collect(),
        }
    }

    pub fn buffer(&mut self, label: &str, size: u64) -> Result<BufferId> {
        Ok(self.graph.buffer(label, size)?)
    }

    /// An authoring-only node (kernel by name): instantiates and mock
    /// launches, but cannot run on a device.
    pub fn kernel_named(&mut self, node: KernelNode) -> Result<NodeId> {
        if matches!(node.kernel, KernelRef::Module { .. }) {
            return Err(Refusal::NotANamedKernel.into());
        }
        Ok(self.graph.kernel(node)?)
    }

    /// A node running `spec.symbol` from a loaded module; its kernarg
    /// must fill its segment. A kernel the PM4 path refuses is recorded
    /// too: instantiate decides its lane's path ([`Submission`]).
    pub fn kernel(&mut self, spec: NodeSpec<'_>) -> Result<NodeId> {
        let info = spec.module.graph_kernel(spec.symbol)?;
        let geometry = crate::Geometry {
            grid: spec.grid,
            block: spec.block,
            dynamic_group_bytes: spec.dynamic_group_bytes,
        };
        let kernarg = match crate::kernargs::complete(&info, &spec.kernarg, &geometry)? {
            std::borrow::Cow::Borrowed(_) => spec.kernarg,
            std::borrow::Cow::Owned(packed) => packed,
        };
        let id = spec.module.graph_id();
        let node = self.graph.kernel(KernelNode {
            kernel: KernelRef::Module {
                module: id,
                symbol: info.name.clone(),
            },
            grid: spec.grid,
            block: spec.block,
            dynamic_group_bytes: spec.dynamic_group_bytes,
            kernarg,
            accesses: spec.accesses,
            deps: spec.deps,
            // Proven VMEM-only consumers get the narrower boundary.
            vmem_only: spec.module.read_cache(&info.name)
                == relaunch_device::codeobj::certify::ReadCache::VmemOnly,
        })?;
        self.modules
            .entry(id)
            .or_insert_with(|| spec.module.clone());
        Ok(node)
    }

    /// A copy/fill node: `ops` run in order by the CP inside the IB
    /// (`DMA_DATA`, see `docs/pm4.md`), at GPU addresses the device can
    /// reach. `accesses` and `deps` order it like a kernel node; a
    /// relaunch allocation it touches is kept alive by the launched graph.
    pub fn transfer(
        &mut self,
        ops: Vec<relaunch_encoders::DmaOp>,
        accesses: Vec<Access>,
        deps: Vec<NodeId>,
    ) -> Result<NodeId> {
        Ok(self.graph.kernel(KernelNode {
            accesses,
            deps,
            ..KernelNode::transfer(ops)
        })?)
    }

    pub fn add_dependency(&mut self, from: NodeId, to: NodeId) -> Result<()> {
        Ok(self.graph.add_dependency(from, to)?)
    }

    /// `from` before `to` with the boundary `order` says `to` needs, for
    /// an edge whose data the caller cannot describe as accesses (a HIP
    /// graph edge): `Order::Memory` gives `rmw` (`rmw_vmem` before a
    /// kernel proven VMEM-only), `Order::Execution` gives `wait`.
    pub fn add_ordered_dependency(&mut self, from: NodeId, to: NodeId, order: Order) -> Result<()> {
        Ok(self.graph.add_ordered_dependency(from, to, order)?)
    }

    /// The recorded graph (for inspection).
    pub fn inner(&self) -> &relaunch_lanes::Graph {
        &self.graph
    }

    /// Checks hazards and compiles lanes and boundaries; lanes take the
    /// default path ([`Submission::Auto`]).
    pub fn instantiate(&self) -> Result<GraphExec> {
        self.instantiate_with(Submission::default())
    }

    /// [`Graph::instantiate`] choosing how lanes are submitted: every lane
    /// as PM4, every lane as public AQL, or (`Auto`) AQL only for lanes
    /// with a kernel the PM4 path refuses ([`GraphExec::lane_submissions`]
    /// says which and why).
    pub fn instantiate_with(&self, submission: Submission) -> Result<GraphExec> {
        let plan = self.graph.instantiate()?;
        let hip = crate::submission::hip_modules(self.modules.values())?;
        let lanes = if hip {
            crate::submission::choose_hip(&plan, submission)?
        } else {
            crate::submission::choose(&plan, submission, |k| match k {
                KernelRef::Module { module, symbol } => {
                    self.modules.get(module)?.kernel_info(symbol)
                }
                _ => None,
            })?
        };
        Ok(GraphExec {
            lanes,
            plan: Mutex::new(plan),
            modules: self.modules.clone(),
            launched: Mutex::new(None),
            hip: Mutex::new(None),
            stream: Mutex::new(None),
            last: Mutex::new(Vec::new()),
        })
    }
}

struct Launched {
    gpu: Gpu,
    /// The GPU's hostcall service, when a kernel of an AQL lane needs it.
    hostcall: Option<Arc<crate::hostcall::Hostcall>>,
    multi: MultiIb<HsaBackend>,
    /// Per lane: allocations its kernargs point into (dropped after the IBs).
    kept: Vec<crate::keepalive::KeptAlive>,
    _scheduler: Arc<HsaScheduler>,
}

/// A compiled graph; retains its IBs across launches.
pub struct GraphExec {
    /// Per lane: PM4, public AQL or a HIP stream, and why.
    pub(crate) lanes: Vec<LaneSubmission>,
    pub(crate) plan: Mutex<Plan>,
    pub(crate) modules: HashMap<u64, Module>,
    launched: Mutex<Option<Launched>>,
    /// The HIP streams of a graph of HIP modules (after its first launch).
    pub(crate) hip: Mutex<Option<crate::hip_streams::HipLanes>>,
    /// Per lane, the words its IB is stream-ordered through (set before
    /// the first launch, see [`GraphExec::order_by_stream_words`]).
    stream: Mutex<Option<Vec<StreamWords>>>,
    /// Every lane of the last launch: dropping the exec while it runs hands
    /// the installed IBs and the modules to `settle` until it settled (a
    /// stream-ordered launch returns before its replay ends).
    last: Mutex<Vec<Completion<HsaWatch>>>,
}

impl Drop for GraphExec {
    fn drop(&mut self) {
        let last = std::mem::take(self.last.get_mut());
        if last.is_empty() {
            return;
        }
        // IBs and kernarg allocations first, then the modules' code.
        let launched = self.launched.get_mut().take();
        let Some(gpu) = launched.as_ref().map(|l| l.gpu.clone()) else {
            // Never installed, so nothing of it runs.
            return;
        };
        let keep = (launched, std::mem::take(&mut self.modules));
        crate::settle::until_settled(&gpu, last, keep);
    }
}

/// A launch submitted and not waited for ([`GraphExec::launch_async`]).
pub struct LaunchInFlight {
    completion: MultiCompletion<HsaWatch>,
}

impl LaunchInFlight {
    /// Waits for every lane (up to `timeout`); every failing lane is named.
    pub fn wait(&self, timeout: std::time::Duration) -> Result<()> {
        self.completion.wait(timeout).map_err(Error::Replay)
    }

    /// True once every lane finished (an error when one failed).
    pub fn is_complete(&self) -> Result<bool> {
        self.completion.is_complete().map_err(Error::Replay)
    }
}

impl GraphExec {
    pub fn lane_count(&self) -> usize {
        self.plan.lock().lane_count()
    }

    pub fn fingerprint(&self) -> [u8; 32] {
        self.plan.lock().fingerprint()
    }

    pub fn fingerprint_hex(&self) -> String {
        self.plan.lock().fingerprint_hex()
    }

    pub fn launch_mock(&self) -> MockRecorder {
        self.plan.lock().launch_mock()
    }

    pub fn to_dot(&self) -> String {
        self.plan.lock().to_dot()
    }

    /// Per lane: how it is submitted (PM4 or public AQL) and, for AQL, why.
    pub fn lane_submissions(&self) -> &[LaneSubmission] {
        &self.lanes
    }

    /// Runs `f` with the compiled plan (lanes, boundaries, explanations).
    pub fn with_plan<T>(&self, f: impl FnOnce(&Plan) -> T) -> T {
        f(&self.plan.lock())
    }

    /// Queues the launch uses (after the first launch).
    pub fn queues_used(&self) -> Option<usize> {
        self.launched.lock().as_ref().map(|l| l.multi.queues_used())
    }

    /// IB dwords per lane (after the first launch).
    pub fn lane_dwords(&self) -> Option<Vec<usize>> {
        let launched = self.launched.lock();
        let l = launched.as_ref()?;
        (0..l.multi.lane_count())
            .map(|i| l.multi.lane(i).ok().map(|ib| ib.layout().dwords))
            .collect()
    }

    /// Orders every lane's IB with another queue's work through `words`
    /// (one gate per lane, see `relaunch_encoders::stream_order`): each
    /// replay then waits for its lane's gate to open and closes it when done.
    /// Must be called before the first launch.
    pub fn order_by_stream_words(&self, words: Vec<StreamWords>) -> Result<()> {
        if self.launched.lock().is_some() {
            return Err(Refusal::AlreadyInstalled.into());
        }
        let lanes = self.lane_count();
        if let Some((lane, why)) = self.lanes.iter().enumerate().find_map(|(i, l)| {
            (l.kind == LaneKind::Aql).then(|| (i, l.reason.clone().unwrap_or_default()))
        }) {
            return Err(Refusal::StreamOrderOfAqlLane { lane, reason: why }.into());
        }
        if words.len() != lanes {
            return Err(Refusal::StreamGateCount {
                gates: words.len(),
                lanes,
            }
            .into());
        }
        *self.stream.lock() = Some(words);
        Ok(())
    }

    /// Submits a replay on `gpu` without waiting for it (installing the IBs
    /// at the first launch, as [`GraphExec::launch`]).
    pub fn launch_async(&self, gpu: &Gpu) -> Result<LaunchInFlight> {
        let completion = self.submit(gpu, "graph launch_async")?;
        Ok(LaunchInFlight { completion })
    }

    /// Replays the graph on `gpu` and waits. The first launch encodes one
    /// IB per lane (in parallel) and installs them on the Auto queue width;
    /// the IBs stay bound to that GPU.
    pub fn launch(&self, gpu: &Gpu) -> Result<()> {
        self.submit(gpu, "graph launch")?
            .wait_or_abandon(REPLAY_TIMEOUT)
            .map_err(Error::Replay)?;
        // Every hostcall request of the replay was answered before its
        // waves ended: report what could not be served.
        let hostcall = self
            .launched
            .lock()
            .as_ref()
            .and_then(|l| l.hostcall.clone());
        hostcall.map_or(Ok(()), |h| h.check())
    }

    /// What both launches do: install at the first launch, check the GPU
    /// is the one the IBs are on, replay, and keep the lanes for `Drop`.
    fn submit(&self, gpu: &Gpu, what: &str) -> Result<MultiCompletion<HsaWatch>> {
        crate::pm4::refuse_inside_twin(what)?;
        let mut launched = self.launched.lock();
        if launched.is_none() {
            *launched = Some(self.install(gpu)?);
        }
        let l = launched.as_ref().expect("installed above");
        if !Arc::ptr_eq(&l.gpu.inner, &gpu.inner) {
            return Err(Refusal::InstalledElsewhere {
                installed_on: l.gpu.describe().to_string(),
                asked: gpu.describe().to_string(),
            }
            .into());
        }
        let completion = l.multi.replay().map_err(Error::Replay)?;
        *self.last.lock() = completion.lanes().cloned().collect();
        Ok(completion)
    }

    /// The runtime-owned kernarg slots of a node of `lane` running
    /// `kernel` and what they hold (public-AQL lanes only), as (offset,
    /// bytes): see [`crate::hostcall::aql_fills`].
    fn runtime_fills(
        &self,
        lane: usize,
        kernel: &KernelRef,
        hostcall: Option<u64>,
    ) -> Vec<(usize, Vec<u8>)> {
        match self.kernel_info(kernel) {
            Some(info) if self.lanes.get(lane).map(|l| l.kind) == Some(LaneKind::Aql) => {
                crate::hostcall::aql_fills(info, hostcall)
            }
            _ => Vec::new(),
        }
    }

    fn install(&self, gpu: &Gpu) -> Result<Launched> {
        let mut plan = self.plan.lock();
        for module in self.modules.values() {
            let on = match (module.gpu(), module.hip_device()) {
                (Some(on), _) => on,
                (None, Some(hip)) => {
                    return Err(Refusal::LaunchOfHipModules {
                        device: hip.describe(),
                    }
                    .into())
                }
                (None, None) => unreachable!("a module is loaded through ROCr or HIP"),
            };
            if !Arc::ptr_eq(&on.inner, &gpu.inner) {
                return Err(Refusal::ModuleOnOtherDevice {
                    loaded_on: on.describe().to_string(),
                    asked: gpu.describe().to_string(),
                }
                .into());
            }
        }
        // Runtime-owned hidden arguments of public-AQL lanes, written into
        // the plan's kernargs before lowering (HIP fills them per launch).
        let needs_hostcall = plan.lanes().enumerate().any(|(lane, nodes)| {
            nodes.iter().any(|n| {
                self.lanes.get(lane).map(|l| l.kind) == Some(LaneKind::Aql)
                    && self.kernel_info(n.kernel).is_some_and(|i| {
                        relaunch_encoders::verdict::kernel_verdict(i).needs_hostcall()
                    })
            })
        });
        let hostcall = if needs_hostcall {
            Some(gpu.hostcall()?)
        } else {
            None
        };
        let mut fills = Vec::new();
        for (lane, nodes) in plan.lanes().enumerate() {
            for n in &nodes {
                let address = hostcall.as_ref().map(|h| h.address());
                for fill in self.runtime_fills(lane, n.kernel, address) {
                    fills.push((n.node, fill));
                }
            }
        }
        for (node, (offset, bytes)) in fills {
            plan.set_node_kernargs(node, offset, &bytes)?;
        }
        let lanes = plan.lane_count();
        let stream = self.stream.lock().clone();
        let encoded = crate::submission::lower(&plan, gpu, &self.lanes, stream.as_deref(), |_| {
            |kernel: &KernelRef| self.resolve(kernel)
        })?;
        let queues = gpu.pm4_queue_count(QueuePolicy::Auto, lanes);
        let scheduler = gpu.scheduler(queues)?;
        let multi = scheduler.install(encoded).map_err(Error::Install)?;
        let mut kept = Vec::with_capacity(lanes);
        for lane in plan.lanes() {
            let mut k = crate::keepalive::KeptAlive::default();
            for (index, node) in lane.iter().enumerate() {
                if let KernelRef::Transfer(ops) = node.kernel {
                    k.record_transfer(&gpu.inner.allocations, ops);
                }
                if let Some(info) = self.kernel_info(node.kernel) {
                    k.record(&gpu.inner.allocations, index, info, node.kernarg);
                }
            }
            kept.push(k);
        }
        Ok(Launched {
            gpu: gpu.clone(),
            hostcall,
            multi,
            kept,
            _scheduler: scheduler,
        })
    }

    /// The metadata of a module kernel (its pointer slots for `keepalive`).
    fn kernel_info(&self, kernel: &KernelRef) -> Option<&relaunch_device::codeobj::KernelInfo> {
        match kernel {
            KernelRef::Named(_) | KernelRef::Transfer(_) => None,
            KernelRef::Module { module, symbol } => self.modules.get(module)?.kernel_info(symbol),
        }
    }

    fn resolve(&self, kernel: &KernelRef) -> Result<ResolvedKernel> {
        match kernel {
            KernelRef::Named(name) => Err(Refusal::NamedOnly { name: name.clone() }.into()),
            KernelRef::Transfer(_) => Err(Refusal::TransferRunsNoKernel.into()),
            KernelRef::Module { module, symbol } => {
                let m = self
                    .modules
                    .get(module)
                    .ok_or_else(|| Refusal::UnknownModule {
                        module: *module,
                        symbol: symbol.clone(),
                    })?;
                let k = m.loaded_kernel(symbol)?;
                Ok(ResolvedKernel {
                    descriptor: k.info.descriptor,
                    kd_address: k.kd_address,
                    kernarg_align: k.info.kernarg_align,
                    unread: k.info.unread,
                })
            }
        }
    }

    /// Replaces `node`'s whole kernarg block for every later launch: the
    /// full segment, or (module kernels) exactly the explicit arguments,
    /// completed from the node's geometry as recording does.
    pub fn replace_node_kernargs(&self, node: NodeId, bytes: &[u8]) -> Result<()> {
        let (size, completed) = {
            let plan = self.plan.lock();
            let planned = plan
                .node(node)
                .ok_or(Refusal::NoSuchNode { node: node.raw() })?;
            let size = planned.kernarg.len();
            let completed = match planned.kernel {
                KernelRef::Module { module, symbol } if bytes.len() < size => {
                    let info = self
                        .modules
                        .get(module)
                        .ok_or(Refusal::NodeModuleMissing { node: node.raw() })?
                        .graph_kernel(symbol)?;
                    let geometry = crate::Geometry {
                        grid: planned.grid,
                        block: planned.block,
                        dynamic_group_bytes: planned.dynamic_group_bytes,
                    };
                    Some(crate::kernargs::complete(&info, bytes, &geometry)?.into_owned())
                }
                _ => None,
            };
            (size, completed)
        };
        let bytes = completed.as_deref().unwrap_or(bytes);
        if bytes.len() != size {
            return Err(Refusal::KernargBlockSize {
                node: node.raw(),
                given: bytes.len(),
                size,
            }
            .into());
        }
        self.set_node_kernargs(node, 0, bytes)
    }

    /// Overwrites kernarg bytes of `node`, for every later launch.
    pub fn set_node_kernargs(&self, node: NodeId, byte_offset: usize, bytes: &[u8]) -> Result<()> {
        crate::pm4::refuse_inside_twin("graph set_node_kernargs")?;
        // Lock order: `launched`, then `plan` (as `launch` -> `install`).
        let mut launched = self.launched.lock();
        let mut plan = self.plan.lock();
        let at = plan
            .locate(node)
            .ok_or(Refusal::NoSuchNode { node: node.raw() })?;
        plan.set_node_kernargs(node, byte_offset, bytes)?;
        // A patch over a runtime-owned slot (a whole-block replace) keeps
        // the runtime's value there; install writes them before the first.
        let end = byte_offset + bytes.len();
        let kernel = plan.node(node).map(|n| n.kernel.clone());
        let hostcall = launched
            .as_ref()
            .and_then(|l| l.hostcall.as_ref().map(|h| h.address()));
        let refills: Vec<(usize, Vec<u8>)> = match (launched.is_some(), kernel) {
            (true, Some(kernel)) => self
                .runtime_fills(at.lane, &kernel, hostcall)
                .into_iter()
                .filter(|(o, b)| *o < end && byte_offset < o + b.len())
                .collect(),
            _ => Vec::new(),
        };
        for (offset, value) in &refills {
            plan.set_node_kernargs(node, *offset, value)?;
        }
        if let Some(l) = launched.as_mut() {
            l.multi
                .set_kernargs(at.lane, at.index, byte_offset, bytes)
                .map_err(Error::Patch)?;
            for (offset, value) in &refills {
                l.multi
                    .set_kernargs(at.lane, at.index, *offset, value)
                    .map_err(Error::Patch)?;
            }
            if let Some(kept) = l.kept.get_mut(at.lane) {
                kept.patch(&l.gpu.inner.allocations, at.index, byte_offset, bytes);
            }
        }
        Ok(())
    }
}

/// Default options: latency mode, one lane per independent component up
/// to four.
pub fn default_options() -> GraphOptions {
    GraphOptions {
        lanes: 4,
        ..GraphOptions::default()
    }
}
