//! `Graph`, `GraphExec` and their handles: the Python face of the facade's
//! device graphs. All graph logic (hazards, lanes, boundaries, fingerprint,
//! mock launch, DOT) is the facade's and the lanes crate's; this file only
//! converts arguments and results. Buffer and node handles remember which
//! graph made them, so a handle from another graph is a HandleError.

use std::sync::atomic::{AtomicU64, Ordering};

use facade::NodeSpec;
use facade::{
    Access, BufferId, GraphOptions, KernelNode, KernelRef, MockEvent, Mode, NodeId, Plan,
};
use parking_lot::{Mutex, RwLock};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::args::{boolean, bytes_like, dims, opt_uint, type_name, uint};
use crate::errors::call;
use crate::gpu::{Gpu, Module};
use crate::handles::{buffer_id, node_id};
use crate::mock::{MockLaunch, MockStep};

/// Ids of Python graph objects (handles carry the id of their graph).
static NEXT_GRAPH: AtomicU64 = AtomicU64::new(1);

/// A buffer declared in a graph (not memory: a label and a size).
#[pyclass(module = "relaunch", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct GraphBuffer {
    pub(crate) graph: u64,
    #[pyo3(get)]
    pub(crate) id: u32,
    #[pyo3(get)]
    label: String,
    #[pyo3(get)]
    size: u64,
}

#[pymethods]
impl GraphBuffer {
    fn __repr__(&self) -> String {
        format!(
            "<relaunch.GraphBuffer {} {:?} {} bytes>",
            self.id, self.label, self.size
        )
    }
}

/// A kernel node of a graph.
#[pyclass(module = "relaunch", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Node {
    pub(crate) graph: u64,
    #[pyo3(get)]
    pub(crate) id: u32,
    #[pyo3(get)]
    name: String,
}

#[pymethods]
impl Node {
    fn __repr__(&self) -> String {
        format!("<relaunch.Node {} {:?}>", self.id, self.name)
    }
}

/// A graph being recorded.
#[pyclass(module = "relaunch", frozen)]
pub struct Graph {
    id: u64,
    graph: Mutex<facade::Graph>,
}

fn mode(name: &str) -> PyResult<Mode> {
    match name {
        "latency" => Ok(Mode::Latency),
        "overlap" => Ok(Mode::Overlap),
        "throughput" => Ok(Mode::Throughput),
        _ => Err(PyValueError::new_err(format!(
            "mode {name:?} is not known; use \"latency\", \"overlap\" or \"throughput\""
        ))),
    }
}

impl Graph {
    fn access(&self, index: usize, item: &Bound<'_, PyAny>) -> PyResult<Access> {
        let shape = "(buffer, offset, len, write)";
        let fields: Vec<Bound<'_, PyAny>> =
            if item.is_instance_of::<PyTuple>() || item.is_instance_of::<PyList>() {
                item.try_iter()?.collect::<PyResult<_>>()?
            } else {
                return Err(PyTypeError::new_err(format!(
                    "accesses[{index}] must be a tuple {shape}, not {}",
                    type_name(item)
                )));
            };
        if fields.len() != 4 {
            return Err(PyValueError::new_err(format!(
                "accesses[{index}] has {} fields; expected {shape}",
                fields.len()
            )));
        }
        let buffer = buffer_id(&fields[0], self.id, &format!("accesses[{index}][0]"))?;
        Ok(Access {
            buffer: BufferId::from_raw(buffer),
            offset: uint(&fields[1], &format!("accesses[{index}].offset"), u64::MAX)?,
            len: uint(&fields[2], &format!("accesses[{index}].len"), u64::MAX)?,
            write: boolean(&fields[3], &format!("accesses[{index}].write"))?,
        })
    }

    fn node_ids(&self, deps: &Bound<'_, PyAny>) -> PyResult<Vec<NodeId>> {
        let mut out = Vec::new();
        for (i, d) in deps.try_iter()?.enumerate() {
            let node = node_id(&d?, self.id, &format!("deps[{i}]"))?;
            out.push(NodeId::from_raw(node));
        }
        Ok(out)
    }
}

#[pymethods]
impl Graph {
    /// `Graph(lanes, mode, max_in_flight)`, as the reference module takes
    /// them positionally; a lone string first is the mode (`Graph("overlap")`).
    #[new]
    #[pyo3(signature = (lanes = None, mode = None, max_in_flight = None))]
    fn new(
        lanes: Option<&Bound<'_, PyAny>>,
        mode: Option<&Bound<'_, PyAny>>,
        max_in_flight: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let (lanes, mode) = match (lanes, mode) {
            (Some(l), None) if l.extract::<String>().is_ok_and(|s| self::mode(&s).is_ok()) => {
                (None, Some(l))
            }
            other => other,
        };
        let mode = match mode.filter(|m| !m.is_none()) {
            Some(m) if m.is_instance_of::<pyo3::types::PyString>() => {
                self::mode(&crate::args::text(m, "mode")?)?
            }
            Some(m) => match uint(m, "mode", 2)? {
                0 => Mode::Latency,
                1 => Mode::Overlap,
                _ => Mode::Throughput,
            },
            None => Mode::Latency,
        };
        let options = GraphOptions {
            mode,
            lanes: opt_uint(lanes, "lanes", 1 << 16, 1)? as usize,
            max_in_flight: opt_uint(max_in_flight, "max_in_flight", 1 << 16, 1)? as usize,
        };
        Ok(Graph {
            id: NEXT_GRAPH.fetch_add(1, Ordering::Relaxed),
            graph: Mutex::new(facade::Graph::new(options)),
        })
    }

    /// Declares a buffer of `size` bytes.
    fn buffer(&self, label: &str, size: &Bound<'_, PyAny>) -> PyResult<GraphBuffer> {
        let size = uint(size, "size", u64::MAX)?;
        let id = call("Graph.buffer", || self.graph.lock().buffer(label, size))?;
        Ok(GraphBuffer {
            graph: self.id,
            id: id.raw(),
            label: label.to_string(),
            size,
        })
    }

    /// Adds a kernel node (from `module`, or named for authoring only).
    #[pyo3(signature = (name, grid, block, accesses = None, deps = None, module = None,
                        kernarg = None, dynamic_group_bytes = None))]
    #[allow(clippy::too_many_arguments)]
    fn kernel(
        &self,
        name: &str,
        grid: &Bound<'_, PyAny>,
        block: &Bound<'_, PyAny>,
        accesses: Option<&Bound<'_, PyAny>>,
        deps: Option<&Bound<'_, PyAny>>,
        module: Option<&Bound<'_, PyAny>>,
        kernarg: Option<&Bound<'_, PyAny>>,
        dynamic_group_bytes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Node> {
        let grid = dims(grid, "grid")?;
        let block = dims(block, "block")?;
        let mut access_list = Vec::new();
        if let Some(a) = accesses.filter(|a| !a.is_none()) {
            for (i, item) in a.try_iter()?.enumerate() {
                access_list.push(self.access(i, &item?)?);
            }
        }
        let deps = match deps.filter(|d| !d.is_none()) {
            Some(d) => self.node_ids(d)?,
            None => Vec::new(),
        };
        let kernarg = match kernarg.filter(|k| !k.is_none()) {
            Some(k) => bytes_like(k, "kernarg")?,
            None => Vec::new(),
        };
        let dynamic_group_bytes = match dynamic_group_bytes.filter(|d| !d.is_none()) {
            Some(d) => uint(d, "dynamic_group_bytes", u32::MAX.into())? as u32,
            None => 0,
        };
        let module = match module.filter(|m| !m.is_none()) {
            Some(m) => Some(m.cast::<Module>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "module must be a Module from Gpu.load_module() or None, not {}",
                    type_name(m)
                ))
            })?),
            None => None,
        };
        let id = call("Graph.kernel", || {
            let mut graph = self.graph.lock();
            match module {
                Some(m) => graph.kernel(NodeSpec {
                    module: &m.get().module,
                    symbol: name,
                    grid,
                    block,
                    dynamic_group_bytes,
                    kernarg,
                    accesses: access_list,
                    deps,
                }),
                None => graph.kernel_named(KernelNode {
                    kernel: KernelRef::Named(name.to_string()),
                    grid,
                    block,
                    dynamic_group_bytes,
                    kernarg,
                    accesses: access_list,
                    deps,
                    vmem_only: false,
                }),
            }
        })?;
        let stored = self
            .graph
            .lock()
            .inner()
            .node(id)
            .map(|n| n.kernel.display_name().to_string())
            .unwrap_or_else(|| name.to_string());
        Ok(Node {
            graph: self.id,
            id: id.raw(),
            name: stored,
        })
    }

    /// Adds an edge: `to` runs after `src`.
    fn add_dependency(&self, src: &Bound<'_, PyAny>, to: &Bound<'_, PyAny>) -> PyResult<()> {
        let (a, b) = (
            NodeId::from_raw(node_id(src, self.id, "src")?),
            NodeId::from_raw(node_id(to, self.id, "to")?),
        );
        call("Graph.add_dependency", || {
            self.graph.lock().add_dependency(a, b)
        })
    }

    #[getter]
    fn node_count(&self) -> usize {
        self.graph.lock().inner().node_count()
    }

    /// Checks hazards and compiles lanes and boundaries; `submission`
    /// ("auto", "pm4" or "aql") chooses how lanes are submitted.
    #[pyo3(signature = (submission = "auto"))]
    fn instantiate(&self, py: Python<'_>, submission: &str) -> PyResult<GraphExec> {
        let submission = facade::Submission::parse(submission).ok_or_else(|| {
            PyValueError::new_err(format!(
                "submission {submission:?}: expected \"auto\", \"pm4\" or \"aql\""
            ))
        })?;
        let exec = py.detach(|| {
            call("Graph.instantiate", || {
                self.graph.lock().instantiate_with(submission)
            })
        })?;
        Ok(GraphExec {
            graph: self.id,
            exec: RwLock::new(exec),
        })
    }
}

/// A compiled graph. The first `launch` installs one retained IB per lane;
/// later launches only replay.
///
/// The facade guards the plan with a lock that a kernarg patch holds while
/// the queue applies it (after in-flight replays, whose twins need the
/// GIL), so every method here reads the plan with the GIL released.
#[pyclass(module = "relaunch", frozen)]
pub struct GraphExec {
    graph: u64,
    /// Write-locked only to patch (the facade's patch may come to take
    /// `&mut self`); always locked with the GIL released.
    exec: RwLock<facade::GraphExec>,
}

/// One boundary as plain data (converted to a dict with the GIL held).
struct BoundaryInfo {
    before: Node,
    kind: String,
    hazard: &'static str,
    producer: Node,
    buffer: String,
    range: (u64, u64),
    why: String,
}

impl GraphExec {
    fn node(&self, plan: &Plan, id: NodeId) -> Node {
        Node {
            graph: self.graph,
            id: id.raw(),
            name: plan
                .node(id)
                .map(|n| n.kernel.display_name().to_string())
                .unwrap_or_else(|| "?".to_string()),
        }
    }

    /// Runs `f` on the plan with the GIL released.
    fn read_plan<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&Plan) -> T + Send) -> T {
        py.detach(|| self.exec.read().with_plan(f))
    }

    fn boundary_infos(&self, plan: &Plan) -> Vec<Vec<BoundaryInfo>> {
        plan.lanes()
            .map(|lane| {
                lane.iter()
                    .filter_map(|n| n.boundary_before.map(|b| (n.node, b)))
                    .map(|(before, b)| BoundaryInfo {
                        before: self.node(plan, before),
                        kind: b.kind.to_string(),
                        hazard: b.reason.hazard.name(),
                        producer: self.node(plan, b.reason.producer),
                        buffer: b
                            .reason
                            .buffer
                            .and_then(|buffer| plan.buffer_info(buffer))
                            .map(|i| i.label.clone())
                            .unwrap_or_default(),
                        range: b.reason.range,
                        why: plan.explain(&b),
                    })
                    .collect()
            })
            .collect()
    }
}

#[pymethods]
impl GraphExec {
    #[getter]
    fn lane_count(&self, py: Python<'_>) -> usize {
        self.read_plan(py, Plan::lane_count)
    }

    /// Per lane: how it is submitted, `("pm4", None)` or `("aql", reason)`
    /// (the kernel the PM4 path refuses and why, or that AQL was asked for).
    #[getter]
    fn lane_submissions(&self, py: Python<'_>) -> Vec<(String, Option<String>)> {
        py.detach(|| {
            let exec = self.exec.read();
            exec.lane_submissions()
                .iter()
                .map(|l| (l.kind.to_string(), l.reason.clone()))
                .collect()
        })
    }

    /// Nodes of every lane, in replay order.
    #[getter]
    fn lanes(&self, py: Python<'_>) -> Vec<Vec<Node>> {
        self.read_plan(py, |plan| {
            plan.lane_node_ids()
                .into_iter()
                .map(|lane| lane.into_iter().map(|n| self.node(plan, n)).collect())
                .collect()
        })
    }

    /// Per lane, the boundaries replayed: where each sits and why.
    #[getter]
    fn boundaries<'py>(&self, py: Python<'py>) -> PyResult<Vec<Vec<Bound<'py, PyDict>>>> {
        let lanes = self.read_plan(py, |plan| self.boundary_infos(plan));
        lanes
            .into_iter()
            .map(|lane| {
                lane.into_iter()
                    .map(|b| {
                        let d = PyDict::new(py);
                        d.set_item("before", b.before)?;
                        d.set_item("kind", b.kind)?;
                        d.set_item("hazard", b.hazard)?;
                        d.set_item("producer", b.producer)?;
                        d.set_item("buffer", b.buffer)?;
                        d.set_item("range", b.range)?;
                        d.set_item("why", b.why)?;
                        Ok(d)
                    })
                    .collect()
            })
            .collect()
    }

    /// SHA-256 of the compiled plan, as hex.
    fn fingerprint(&self, py: Python<'_>) -> String {
        self.read_plan(py, Plan::fingerprint_hex)
    }

    /// Replays the plan into a recorder (no device).
    fn launch_mock(&self, py: Python<'_>) -> MockLaunch {
        self.read_plan(py, |plan| {
            let rec = plan.launch_mock();
            MockLaunch {
                text: rec.to_text(),
                lanes: (0..rec.lane_count())
                    .map(|l| {
                        rec.events(l)
                            .iter()
                            .map(|e| match e {
                                MockEvent::Dispatch { node, .. } => {
                                    MockStep::Dispatch(self.node(plan, *node))
                                }
                                MockEvent::Boundary { kind, .. } => {
                                    MockStep::Boundary(kind.to_string())
                                }
                            })
                            .collect()
                    })
                    .collect(),
            }
        })
    }

    /// Replays the graph on `gpu` and waits (the first launch installs it).
    fn launch(&self, py: Python<'_>, gpu: &Bound<'_, Gpu>) -> PyResult<()> {
        let gpu = &gpu.get().gpu;
        call("GraphExec.launch", || {
            facade::refuse_inside_twin("GraphExec.launch")
        })?;
        py.detach(|| call("GraphExec.launch", || self.exec.read().launch(gpu)))
    }

    /// Overwrites kernarg bytes of `node` for every later launch.
    #[pyo3(signature = (node, data, byte_offset = None))]
    fn set_kernargs(
        &self,
        py: Python<'_>,
        node: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
        byte_offset: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let id = NodeId::from_raw(node_id(node, self.graph, "node")?);
        let data = bytes_like(data, "data")?;
        let offset = opt_uint(byte_offset, "byte_offset", usize::MAX as u64, 0)? as usize;
        call("GraphExec.set_kernargs", || {
            facade::refuse_inside_twin("GraphExec.set_kernargs")
        })?;
        py.detach(|| {
            call("GraphExec.set_kernargs", || {
                #[allow(unused_mut)]
                let mut exec = self.exec.write();
                exec.set_node_kernargs(id, offset, &data)
            })
        })
    }

    /// Graphviz DOT of the plan (lanes as clusters, boundaries on edges).
    fn to_dot(&self, py: Python<'_>) -> String {
        self.read_plan(py, Plan::to_dot)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let (lanes, fingerprint) =
            self.read_plan(py, |plan| (plan.lane_count(), plan.fingerprint_hex()));
        format!(
            "<relaunch.GraphExec {lanes} lane(s) {}>",
            &fingerprint[..16]
        )
    }
}
