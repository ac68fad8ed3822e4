//! The entry points adding graph nodes other than kernel nodes. Empty
//! nodes only order others and become dependencies
//! (`model/ordering_nodes.rs`); child graphs are flattened
//! (`model/child_graph.rs`); memset and memcpy nodes (explicit here,
//! captured ones in `stream_transfers.rs`, both through
//! `model/transfers.rs`) become copy/fill nodes run by the CP inside the
//! IB, or make the graph fall through with the reason (pageable host
//! memory, shapes DMA_DATA cannot express); event record and wait nodes
//! within one graph are ordering only (`model/events.rs`). Host nodes make the graph
//! fall through (a host callback in the middle of a replay is not
//! modelled). Every function forwards first and changes the shadow only
//! after the real call succeeded.

use std::ffi::c_void;

use relaunch::DmaOp;

use crate::exports::forward;
use crate::hip::{deps_of, key, real, Handle, HipError, HIP_ERROR_SYMBOL_NOT_FOUND, HIP_SUCCESS};
use crate::model::reason::Reason;
use crate::model::transfers::{
    copy_3d_ops, copy_ops, memset_ops, Memcpy3DParams, MemoryMap, MemsetParams,
};
use crate::state::with_state;

/// # Safety
/// HIP's `hipGraphAddEmptyNode(node, graph, deps, numDeps)` contract.
#[no_mangle]
pub unsafe extern "C" fn hipGraphAddEmptyNode(
    node: *mut Handle,
    graph: Handle,
    deps: *const Handle,
    num_deps: usize,
) -> HipError {
    let rc = forward!(hipGraphAddEmptyNode(node, graph, deps, num_deps));
    if rc == HIP_SUCCESS && !node.is_null() {
        // SAFETY: written and read by the successful real call.
        let (n, deps) = unsafe { (key(*node), deps_of(deps, num_deps)) };
        with_state("hipGraphAddEmptyNode", |s| {
            if let Some(g) = s.graphs.get_mut(&key(graph)) {
                g.add_ordering_node(n, &deps);
            }
        });
    }
    rc
}

/// # Safety
/// HIP's `hipGraphAddChildGraphNode(node, graph, deps, numDeps, child)`
/// contract. The child is copied now, as HIP clones it.
#[no_mangle]
pub unsafe extern "C" fn hipGraphAddChildGraphNode(
    node: *mut Handle,
    graph: Handle,
    deps: *const Handle,
    num_deps: usize,
    child: Handle,
) -> HipError {
    let rc = forward!(hipGraphAddChildGraphNode(
        node, graph, deps, num_deps, child
    ));
    if rc == HIP_SUCCESS && !node.is_null() {
        // SAFETY: written and read by the successful real call.
        let (n, deps) = unsafe { (key(*node), deps_of(deps, num_deps)) };
        with_state("hipGraphAddChildGraphNode", |s| {
            let copy = s.graphs.get(&key(child)).cloned();
            if let Some(g) = s.graphs.get_mut(&key(graph)) {
                match copy {
                    Some(c) => g.add_child_graph(n, &c, &deps),
                    None => {
                        g.unsupported.get_or_insert(Reason::UnseenChild);
                    }
                }
            }
        });
    }
    rc
}

/// Marks `graph` unsupported with `why` (the first reason is kept).
pub(crate) fn unsupported(graph: Handle, call: &str, why: Reason) {
    with_state(call, |s| {
        if let Some(g) = s.graphs.get_mut(&key(graph)) {
            tracing::info!(
                reason = %why,
                "graph node not replayable; its graph falls through"
            );
            g.unsupported.get_or_insert(why);
        }
    });
}

/// Add-node functions whose node makes the graph fall through: forwarded,
/// then the graph is marked with the reason.
macro_rules! falls_through {
    ($($name:ident ( $($arg:ident : $ty:ty),* ) => $why:expr;)*) => {
        $(
            /// # Safety
            /// HIP's contract for this function (`hip_runtime_api.h`).
            #[no_mangle]
            pub unsafe extern "C" fn $name(
                node: *mut Handle,
                graph: Handle,
                deps: *const Handle,
                num_deps: usize,
                $($arg: $ty),*
            ) -> HipError {
                let rc = forward!($name(node, graph, deps, num_deps $(, $arg)*));
                if rc == HIP_SUCCESS {
                    unsupported(graph, stringify!($name), $why);
                }
                rc
            }
        )*
    };
}

falls_through! {
    hipGraphAddHostNode(params: *const c_void) =>
        Reason::HostNode;
}

/// Where a successful real add-node call put its node: the arguments
/// every `hipGraphAdd*Node` takes first.
#[derive(Clone, Copy)]
struct AddedNode {
    node: *mut Handle,
    graph: Handle,
    deps: *const Handle,
    num_deps: usize,
}

/// Adds a memset/memcpy node built from the shadow state (`ops`) to
/// `at.graph` after a successful real add-node call.
///
/// # Safety
/// `at.node` and `at.deps` as the real call read and wrote them.
unsafe fn add_transfer_node(
    call: &str,
    at: AddedNode,
    ops: impl FnOnce(&MemoryMap) -> Result<Vec<DmaOp>, Reason>,
) {
    if at.node.is_null() {
        return;
    }
    // SAFETY: written and read by the successful real call.
    let (n, deps) = unsafe { (key(*at.node), deps_of(at.deps, at.num_deps)) };
    with_state(call, |s| {
        let ops = ops(&s.memory);
        if let Err(why) = &ops {
            tracing::info!(reason = %why, "memset/memcpy node not replayable; its graph falls through");
        }
        if let Some(g) = s.graphs.get_mut(&key(at.graph)) {
            g.add_transfer(n, ops, &deps);
        }
    });
}

/// The real `hipGraphAddMemsetNode` / `hipGraphAddMemcpyNode` (one
/// signature: the parameters behind a `const void *`).
type AddParamsNode =
    unsafe extern "C" fn(*mut Handle, Handle, *const Handle, usize, *const c_void) -> HipError;

/// `hipGraphAddMemsetNode` and `hipGraphAddMemcpyNode`: the real call
/// (`None`: not loaded), then, when it succeeded, a node of the ops `ops`
/// makes of the parameter struct `P` (`hipMemsetParams` /
/// `hipMemcpy3DParms`) at `params`.
///
/// # Safety
/// HIP's contract for the add-node call `real` (`params` a `P`).
unsafe fn add_params_node<P: Copy>(
    call: &str,
    real: Option<AddParamsNode>,
    at: AddedNode,
    params: *const c_void,
    ops: fn(&MemoryMap, &P) -> Result<Vec<DmaOp>, Reason>,
) -> HipError {
    let Some(real) = real else {
        return HIP_ERROR_SYMBOL_NOT_FOUND;
    };
    // SAFETY: forwarded unchanged under the caller's HIP contract.
    let rc = unsafe { real(at.node, at.graph, at.deps, at.num_deps, params) };
    if rc == HIP_SUCCESS && !params.is_null() {
        // SAFETY: the real call read `params` as a `P`.
        let p = unsafe { *params.cast::<P>() };
        // SAFETY: as the real call.
        unsafe { add_transfer_node(call, at, |m| ops(m, &p)) };
    }
    rc
}

/// # Safety
/// HIP's `hipGraphAddMemsetNode(node, graph, deps, numDeps, params)`
/// contract (`params` a `hipMemsetParams`).
#[no_mangle]
pub unsafe extern "C" fn hipGraphAddMemsetNode(
    node: *mut Handle,
    graph: Handle,
    deps: *const Handle,
    num_deps: usize,
    params: *const c_void,
) -> HipError {
    let at = AddedNode {
        node,
        graph,
        deps,
        num_deps,
    };
    let real = real::hipGraphAddMemsetNode();
    // SAFETY: the caller's contract.
    unsafe {
        add_params_node::<MemsetParams>("hipGraphAddMemsetNode", real, at, params, memset_ops)
    }
}

/// # Safety
/// HIP's `hipGraphAddMemcpyNode(node, graph, deps, numDeps, params)`
/// contract (`params` a `hipMemcpy3DParms`).
#[no_mangle]
pub unsafe extern "C" fn hipGraphAddMemcpyNode(
    node: *mut Handle,
    graph: Handle,
    deps: *const Handle,
    num_deps: usize,
    params: *const c_void,
) -> HipError {
    let at = AddedNode {
        node,
        graph,
        deps,
        num_deps,
    };
    let real = real::hipGraphAddMemcpyNode();
    // SAFETY: the caller's contract.
    unsafe {
        add_params_node::<Memcpy3DParams>("hipGraphAddMemcpyNode", real, at, params, copy_3d_ops)
    }
}

/// # Safety
/// HIP's `hipGraphAddMemcpyNode1D(node, graph, deps, numDeps, dst, src,
/// count, kind)` contract.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // HIP's signature
pub unsafe extern "C" fn hipGraphAddMemcpyNode1D(
    node: *mut Handle,
    graph: Handle,
    deps: *const Handle,
    num_deps: usize,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: i32,
) -> HipError {
    let rc = forward!(hipGraphAddMemcpyNode1D(
        node, graph, deps, num_deps, dst, src, count, kind
    ));
    if rc == HIP_SUCCESS {
        // SAFETY: as the real call.
        let at = AddedNode {
            node,
            graph,
            deps,
            num_deps,
        };
        unsafe {
            add_transfer_node("hipGraphAddMemcpyNode1D", at, |m| {
                copy_ops(m, dst as u64, src as u64, count as u64, kind)
            })
        };
    }
    rc
}

/// Adds an event node after a successful real call.
///
/// # Safety
/// `node` and `deps` as the real call wrote and read them.
unsafe fn event_node(
    call: &str,
    node: *mut Handle,
    graph: Handle,
    deps: *const Handle,
    num_deps: usize,
    event: Handle,
    wait: bool,
) {
    if node.is_null() {
        return;
    }
    // SAFETY: per the caller.
    let (n, deps) = unsafe { (key(*node), deps_of(deps, num_deps)) };
    with_state(call, |s| {
        if let Some(g) = s.graphs.get_mut(&key(graph)) {
            g.add_event_node(n, key(event), wait, &deps);
        }
    });
}

/// # Safety
/// HIP's `hipGraphAddEventRecordNode(node, graph, deps, numDeps, event)`
/// contract.
#[no_mangle]
pub unsafe extern "C" fn hipGraphAddEventRecordNode(
    node: *mut Handle,
    graph: Handle,
    deps: *const Handle,
    num_deps: usize,
    event: Handle,
) -> HipError {
    let rc = forward!(hipGraphAddEventRecordNode(
        node, graph, deps, num_deps, event
    ));
    if rc == HIP_SUCCESS {
        // SAFETY: as the real call.
        unsafe {
            event_node(
                "hipGraphAddEventRecordNode",
                node,
                graph,
                deps,
                num_deps,
                event,
                false,
            )
        };
    }
    rc
}

/// # Safety
/// HIP's `hipGraphAddEventWaitNode(node, graph, deps, numDeps, event)`
/// contract.
#[no_mangle]
pub unsafe extern "C" fn hipGraphAddEventWaitNode(
    node: *mut Handle,
    graph: Handle,
    deps: *const Handle,
    num_deps: usize,
    event: Handle,
) -> HipError {
    let rc = forward!(hipGraphAddEventWaitNode(node, graph, deps, num_deps, event));
    if rc == HIP_SUCCESS {
        // SAFETY: as the real call.
        unsafe {
            event_node(
                "hipGraphAddEventWaitNode",
                node,
                graph,
                deps,
                num_deps,
                event,
                true,
            )
        };
    }
    rc
}
