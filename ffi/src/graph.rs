//! Graphs: `RlGraph` records buffers and kernel nodes with declared
//! accesses (named kernels for authoring, module kernels for devices);
//! `rl_graph_instantiate` checks hazards and compiles an `RlGraphExec`,
//! which launches on the mock or on a GPU with retained IBs.

use std::ffi::c_char;
use std::sync::Arc;

use facade::MAX_ACCESSES_PER_NODE;
use facade::{Access, BufferId, GraphOptions, KernelNode, Mode, NodeId};
use facade::{Error, Graph, GraphExec, NodeSpec};
use parking_lot::Mutex;

use crate::enums::RlModeArg;
use crate::gpu::{gpu_obj, GpuObj, RlGpu};
use crate::handles::{self, Handled};
use crate::module::{ModuleObj, RlModule};
use crate::pm4::{kernel_kernarg, RL_MAX_KERNARG_BYTES};
use crate::status::{guard, status};
use crate::util::{clear, dims, non_null, put, record, slice, slice_mut, text};

mod submission;
pub use submission::*;

/// Most dependencies one node may list in one call.
pub const RL_MAX_DEPS_PER_NODE: usize = 1 << 16;

/// A graph being recorded. Opaque; free with `rl_graph_free`.
pub struct RlGraph {
    _opaque: [u8; 0],
}

/// A compiled graph. Opaque; free with `rl_graphexec_free`.
pub struct RlGraphExec {
    _opaque: [u8; 0],
}

/// One declared access of a node to `len` bytes at `offset` of a buffer
/// from `rl_graph_buffer`; `write` is 0 (read) or 1 (write).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RlAccess {
    pub buffer: u32,
    pub offset: u64,
    pub len: u64,
    pub write: u8,
}

struct GraphObj {
    graph: Mutex<Graph>,
    /// Modules of `rl_graph_kernel_ex` nodes (and so their GPUs' memory).
    modules: Mutex<Vec<Arc<ModuleObj>>>,
}

impl Handled for GraphObj {
    type C = RlGraph;
    const KIND: u8 = 6;
}

struct ExecObj {
    exec: GraphExec,
    _modules: Vec<Arc<ModuleObj>>,
    /// The GPU the IBs were installed on (kept alive with its memory).
    launched_on: Mutex<Option<Arc<GpuObj>>>,
}

impl Handled for ExecObj {
    type C = RlGraphExec;
    const KIND: u8 = 7;
}

fn new_graph(func: &str, options: impl FnOnce() -> Result<GraphOptions, Error>) -> *mut RlGraph {
    guard(func, std::ptr::null_mut(), || {
        let options = options()?;
        handles::insert(GraphObj {
            graph: Mutex::new(Graph::new(options)),
            modules: Mutex::new(Vec::new()),
        })
    })
}

/// A new graph with the seed's default tuning: latency mode, ONE serial
/// lane ("one stream"), one replay in flight. Independent nodes overlap
/// only with `rl_graph_new_tuned(lanes, Overlap, ...)`.
#[no_mangle]
pub extern "C" fn rl_graph_new() -> *mut RlGraph {
    new_graph("rl_graph_new", || {
        Ok(GraphOptions {
            lanes: 1,
            ..facade::default_graph_options()
        })
    })
}

/// A new graph with tuning: at most `lanes` hardware queues, `mode`
/// `Latency` (0), `Overlap` (1) or `Throughput` (2) (also spelled
/// `RlModeLatency`..), and `max_in_flight` replays at once. Checked again
/// at instantiate.
#[no_mangle]
pub extern "C" fn rl_graph_new_tuned(
    lanes: usize,
    mode: RlModeArg,
    max_in_flight: usize,
) -> *mut RlGraph {
    new_graph("rl_graph_new_tuned", || {
        let mode = match mode.0 {
            0 => Mode::Latency,
            1 => Mode::Overlap,
            2 => Mode::Throughput,
            other => {
                return Err(record(format!(
                    "graph mode {other} is unknown; use Latency = 0, Overlap = 1 or \
                     Throughput = 2"
                )))
            }
        };
        Ok(GraphOptions {
            mode,
            lanes,
            max_in_flight,
        })
    })
}

/// Frees the graph (execs instantiated from it live on). NULL is a no-op.
#[no_mangle]
pub extern "C" fn rl_graph_free(graph: *mut RlGraph) {
    handles::free::<GraphObj>("rl_graph_free", graph);
}

/// Declares a buffer of `size` bytes; its id goes to `*out`.
///
/// # Safety
/// `label` is NULL or NUL-terminated; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_graph_buffer(
    graph: *mut RlGraph,
    label: *const c_char,
    size: u64,
    out: *mut u32,
) -> i32 {
    status("rl_graph_buffer", || {
        let g = handles::get::<GraphObj>(graph)?;
        // SAFETY: forwarded caller contract.
        let label = unsafe { text(label, "label") }?;
        non_null(out, "out")?;
        let id = g.graph.lock().buffer(label, size)?;
        // SAFETY: checked non-NULL; caller contract for validity.
        unsafe { put(out, id.raw(), "out") }
    })
}

/// Accesses and dependencies of a node, read from C.
///
/// # Safety
/// `accesses`/`deps` are valid for `n_access`/`n_deps` reads.
unsafe fn node_inputs(
    accesses: *const RlAccess,
    n_access: usize,
    deps: *const u32,
    n_deps: usize,
) -> Result<(Vec<Access>, Vec<NodeId>), Error> {
    // SAFETY: forwarded caller contract.
    let raw = unsafe { slice(accesses, n_access, "accesses", MAX_ACCESSES_PER_NODE) }?;
    let accesses = raw
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let write = match a.write {
                0 => false,
                1 => true,
                other => {
                    return Err(record(format!(
                        "accesses[{i}].write is {other}; use 0 (read) or 1 (write)"
                    )))
                }
            };
            Ok(Access {
                buffer: BufferId::from_raw(a.buffer),
                offset: a.offset,
                len: a.len,
                write,
            })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    // SAFETY: forwarded caller contract.
    let deps = unsafe { slice(deps, n_deps, "deps", RL_MAX_DEPS_PER_NODE) }?;
    Ok((
        accesses,
        deps.iter().map(|&d| NodeId::from_raw(d)).collect(),
    ))
}

/// Adds an authoring-only node running kernel `name` (grid and block in
/// work-items): it instantiates and mock-launches but cannot run on a
/// GPU (use `rl_graph_kernel_ex`). Its id goes to `*out`.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `accesses`/`deps` are valid for
/// `n_access`/`n_deps` reads; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_graph_kernel(
    graph: *mut RlGraph,
    name: *const c_char,
    gx: u32,
    gy: u32,
    gz: u32,
    bx: u32,
    by: u32,
    bz: u32,
    accesses: *const RlAccess,
    n_access: usize,
    deps: *const u32,
    n_deps: usize,
    out: *mut u32,
) -> i32 {
    status("rl_graph_kernel", || {
        let g = handles::get::<GraphObj>(graph)?;
        // SAFETY: forwarded caller contract.
        let name = unsafe { text(name, "name") }?;
        // SAFETY: forwarded caller contract.
        let (accesses, deps) = unsafe { node_inputs(accesses, n_access, deps, n_deps) }?;
        non_null(out, "out")?;
        let node = KernelNode {
            accesses,
            deps,
            ..KernelNode::named(name, dims(gx, gy, gz), dims(bx, by, bz))
        };
        let id = g.graph.lock().kernel_named(node)?;
        // SAFETY: checked non-NULL; caller contract for validity.
        unsafe { put(out, id.raw(), "out") }
    })
}

/// Adds a node running `symbol` from `module` (grid and block in
/// work-items). `kernarg` is the full kernarg segment, hidden arguments
/// included (`rl_module_pack_kernargs`). Its id goes to `*out`.
///
/// # Safety
/// `symbol` is NULL or NUL-terminated; `kernarg`, `accesses` and `deps`
/// are valid for their lengths; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_graph_kernel_ex(
    graph: *mut RlGraph,
    module: *const RlModule,
    symbol: *const c_char,
    gx: u32,
    gy: u32,
    gz: u32,
    bx: u32,
    by: u32,
    bz: u32,
    dynamic_group_bytes: u32,
    kernarg: *const u8,
    kernarg_len: usize,
    accesses: *const RlAccess,
    n_access: usize,
    deps: *const u32,
    n_deps: usize,
    out: *mut u32,
) -> i32 {
    status("rl_graph_kernel_ex", || {
        let g = handles::get::<GraphObj>(graph)?;
        // SAFETY: forwarded caller contract.
        let (m, symbol, kernarg) = unsafe { kernel_kernarg(module, symbol, kernarg, kernarg_len) }?;
        // SAFETY: forwarded caller contract.
        let (accesses, deps) = unsafe { node_inputs(accesses, n_access, deps, n_deps) }?;
        non_null(out, "out")?;
        let id = g.graph.lock().kernel(NodeSpec {
            module: &m.module,
            symbol,
            grid: dims(gx, gy, gz),
            block: dims(bx, by, bz),
            dynamic_group_bytes,
            kernarg: kernarg.to_vec(),
            accesses,
            deps,
        })?;
        let mut modules = g.modules.lock();
        if !modules.iter().any(|known| Arc::ptr_eq(known, &m)) {
            modules.push(m);
        }
        // SAFETY: checked non-NULL; caller contract for validity.
        unsafe { put(out, id.raw(), "out") }
    })
}

/// Orders node `from` before node `to`.
#[no_mangle]
pub extern "C" fn rl_graph_add_dependency(graph: *mut RlGraph, from: u32, to: u32) -> i32 {
    status("rl_graph_add_dependency", || {
        let g = handles::get::<GraphObj>(graph)?;
        let result = g
            .graph
            .lock()
            .add_dependency(NodeId::from_raw(from), NodeId::from_raw(to));
        result
    })
}

/// Checks the graph for unordered hazards (refused with `RL_ERR_COMPILE`,
/// naming every pair), derives the minimal boundaries and partitions it
/// into lanes. The exec goes to `*out`; the graph stays usable.
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_graph_instantiate(
    graph: *mut RlGraph,
    out: *mut *mut RlGraphExec,
) -> i32 {
    // SAFETY: forwarded caller contract.
    unsafe { instantiate("rl_graph_instantiate", graph, facade::Submission::Auto, out) }
}

/// `rl_graph_instantiate` with lanes submitted as `submission` says.
///
/// # Safety
/// `out` is NULL or writable.
unsafe fn instantiate(
    function: &'static str,
    graph: *mut RlGraph,
    submission: facade::Submission,
    out: *mut *mut RlGraphExec,
) -> i32 {
    // SAFETY: forwarded caller contract.
    unsafe { clear(out) };
    status(function, || {
        let g = handles::get::<GraphObj>(graph)?;
        non_null(out, "out")?;
        let exec = g.graph.lock().instantiate_with(submission)?;
        let exec = ExecObj {
            exec,
            _modules: g.modules.lock().clone(),
            launched_on: Mutex::new(None),
        };
        // SAFETY: forwarded caller contract.
        unsafe { handles::insert_into(out, exec) }
    })
}

fn exec_obj(exec: *const RlGraphExec) -> Result<Arc<ExecObj>, Error> {
    handles::get::<ExecObj>(exec)
}

/// Lanes the compiled plan actually uses (0 on a bad handle).
#[no_mangle]
pub extern "C" fn rl_graphexec_lane_count(exec: *const RlGraphExec) -> usize {
    guard("rl_graphexec_lane_count", 0, || {
        Ok(exec_obj(exec)?.exec.lane_count())
    })
}

/// Writes the plan's 32-byte fingerprint (equal plans, equal bytes).
///
/// # Safety
/// `out` is NULL or valid for 32 bytes of writes.
#[no_mangle]
pub unsafe extern "C" fn rl_graphexec_fingerprint(exec: *const RlGraphExec, out: *mut u8) -> i32 {
    status("rl_graphexec_fingerprint", || {
        let e = exec_obj(exec)?;
        non_null(out, "out")?;
        // SAFETY: forwarded caller contract (32 writable bytes).
        let dst = unsafe { slice_mut(out, 32, "out", 32) }?;
        dst.copy_from_slice(&e.exec.fingerprint());
        Ok(())
    })
}

/// Replays the plan on the record-only mock (no GPU work): checks that
/// every lane lowers in order.
#[no_mangle]
pub extern "C" fn rl_graphexec_launch_mock(exec: *const RlGraphExec) -> i32 {
    status("rl_graphexec_launch_mock", || {
        let e = exec_obj(exec)?;
        let recorder = e.exec.launch_mock();
        tracing::debug!(lanes = recorder.lane_count(), "mock launch");
        Ok(())
    })
}

/// Launches the graph on `gpu` and waits. The first launch encodes one IB
/// per lane and installs them; later launches only replay (on that GPU).
#[no_mangle]
pub extern "C" fn rl_graphexec_launch(gpu: *const RlGpu, exec: *const RlGraphExec) -> i32 {
    status("rl_graphexec_launch", || {
        let gpu = gpu_obj(gpu)?;
        let e = exec_obj(exec)?;
        e.exec.launch(&gpu.gpu)?;
        e.launched_on.lock().get_or_insert(gpu);
        Ok(())
    })
}

/// Replaces `node`'s whole kernarg block (`len` must be its size) for
/// every later launch, patched in place in installed IBs. To change part
/// of it, use `rl_graphexec_set_node_kernargs_at`.
///
/// # Safety
/// `kernarg` is valid for `len` bytes of reads.
#[no_mangle]
pub unsafe extern "C" fn rl_graphexec_set_node_kernargs(
    exec: *mut RlGraphExec,
    node: u32,
    kernarg: *const u8,
    len: usize,
) -> i32 {
    status("rl_graphexec_set_node_kernargs", || {
        let e = exec_obj(exec)?;
        // SAFETY: forwarded caller contract.
        let bytes = unsafe { slice(kernarg, len, "kernarg", RL_MAX_KERNARG_BYTES) }?;
        e.exec.replace_node_kernargs(NodeId::from_raw(node), bytes)
    })
}

/// Extension: overwrites `len` kernarg bytes of `node` at `byte_offset`
/// for every later launch (patched in place in installed IBs).
///
/// # Safety
/// `src` is valid for `len` bytes of reads.
#[no_mangle]
pub unsafe extern "C" fn rl_graphexec_set_node_kernargs_at(
    exec: *mut RlGraphExec,
    node: u32,
    byte_offset: usize,
    src: *const u8,
    len: usize,
) -> i32 {
    status("rl_graphexec_set_node_kernargs_at", || {
        let e = exec_obj(exec)?;
        // SAFETY: forwarded caller contract.
        let bytes = unsafe { slice(src, len, "src", RL_MAX_KERNARG_BYTES) }?;
        e.exec
            .set_node_kernargs(NodeId::from_raw(node), byte_offset, bytes)
    })
}

/// Frees the exec and its installed IBs. NULL is a no-op.
#[no_mangle]
pub extern "C" fn rl_graphexec_free(exec: *mut RlGraphExec) {
    handles::free::<ExecObj>("rl_graphexec_free", exec);
}
