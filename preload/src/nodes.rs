//! Graph nodes other than kernel nodes. Empty nodes only order others and
//! become dependencies (`ordering_nodes.rs`); child graphs are flattened
//! (`child_graph.rs`). The rest are followed only
//! to say why their graph falls through: host nodes (a host callback in
//! the middle of a replay is not modelled), memset and memcpy nodes (not
//! replayed inside the IB yet), event record and wait
//! nodes (an event recorded inside the graph may be waited for outside it,
//! which a replay would not record). Every function forwards first and
//! changes the shadow only after the real call succeeded.

use std::ffi::c_void;

use crate::exports::forward;
use crate::hip::{key, Handle, HipError, HIP_SUCCESS};
use crate::state::with_state;

/// The dependency handles of a successful real add-node call.
///
/// # Safety
/// `deps` is null or points to `n` handles (the real call read them).
unsafe fn deps_of(deps: *const Handle, n: usize) -> Vec<usize> {
    if deps.is_null() || n == 0 {
        return Vec::new();
    }
    // SAFETY: per the caller.
    unsafe { std::slice::from_raw_parts(deps, n) }
        .iter()
        .map(|d| key(*d))
        .collect()
}

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
                        g.unsupported.get_or_insert_with(|| {
                            "a child graph this library did not see being built".into()
                        });
                    }
                }
            }
        });
    }
    rc
}

/// Marks `graph` unsupported with `why` (the first reason is kept).
fn unsupported(graph: Handle, call: &str, why: &str) {
    with_state(call, |s| {
        if let Some(g) = s.graphs.get_mut(&key(graph)) {
            tracing::info!(
                reason = why,
                "graph node not replayable; its graph falls through"
            );
            g.unsupported.get_or_insert_with(|| why.to_string());
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
        "a host node (a host callback inside the graph) is not replayed";
    hipGraphAddMemsetNode(params: *const c_void) =>
        "a memset node is not replayed inside the IB yet";
    hipGraphAddMemcpyNode(params: *const c_void) =>
        "a memcpy node is not replayed inside the IB yet";
    hipGraphAddMemcpyNode1D(dst: *mut c_void, src: *const c_void, count: usize, kind: i32) =>
        "a memcpy node is not replayed inside the IB yet";
    hipGraphAddEventRecordNode(event: Handle) =>
        "an event record node (the event may be waited for outside the graph) is not replayed";
    hipGraphAddEventWaitNode(event: Handle) =>
        "an event wait node is not replayed";
}
