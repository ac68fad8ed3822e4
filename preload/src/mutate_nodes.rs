//! Changes to memset, memcpy and event nodes after they were added: the
//! shadow does not follow them (the ops are fixed in the retained IB), so
//! a change to a graph's node makes that graph fall through and a change
//! to an exec's node makes the exec fall through from then on.
//!
//! Signatures from the public HIP API reference ("Graph management"):
//! `hipGraphMemsetNodeSetParams(node, const hipMemsetParams *)`,
//! `hipGraphMemcpyNodeSetParams(node, const hipMemcpy3DParms *)`,
//! `hipGraphMemcpyNodeSetParams1D(node, dst, src, count, kind)`,
//! `hipGraphEventRecordNodeSetEvent(node, event)`,
//! `hipGraphEventWaitNodeSetEvent(node, event)`, and the `hipGraphExec*`
//! forms taking the exec first.

use std::ffi::c_void;

use crate::exports::forward;
use crate::hip::{key, Handle, HipError, HIP_SUCCESS};
use crate::mutate::{give_up_exec, give_up_graph_in};
use crate::state::with_state;

/// Marks the graph holding `node` (a memset, memcpy or event node)
/// unsupported.
fn give_up_node_graph(node: Handle, why: &str, call: &'static str) {
    with_state(call, |s| {
        let k = key(node);
        let graph = s
            .graphs
            .values_mut()
            .find(|g| g.index.contains_key(&k) || g.ordering.contains(k));
        match graph {
            Some(g) => {
                tracing::info!(reason = why, "graph falls through");
                g.unsupported.get_or_insert_with(|| why.to_string());
            }
            None => give_up_graph_in(s, node, why.to_string()),
        }
    });
}

macro_rules! graph_node_setters {
    ($($name:ident ( $($arg:ident : $ty:ty),* ) => $why:expr;)*) => {
        $(
            /// # Safety
            /// HIP's contract for this function (`hip_runtime_api.h`).
            #[no_mangle]
            pub unsafe extern "C" fn $name(node: Handle, $($arg: $ty),*) -> HipError {
                let rc = forward!($name(node $(, $arg)*));
                if rc == HIP_SUCCESS {
                    give_up_node_graph(node, $why, stringify!($name));
                }
                rc
            }
        )*
    };
}

macro_rules! exec_node_setters {
    ($($name:ident ( $($arg:ident : $ty:ty),* ) => $why:expr;)*) => {
        $(
            /// # Safety
            /// HIP's contract for this function (`hip_runtime_api.h`).
            #[no_mangle]
            pub unsafe extern "C" fn $name(exec: Handle, node: Handle, $($arg: $ty),*) -> HipError {
                let rc = forward!($name(exec, node $(, $arg)*));
                if rc == HIP_SUCCESS {
                    give_up_exec(exec, $why.into(), stringify!($name));
                }
                rc
            }
        )*
    };
}

graph_node_setters! {
    hipGraphMemsetNodeSetParams(params: *const c_void) =>
        "a memset node was changed (hipGraphMemsetNodeSetParams), which is not followed";
    hipGraphMemcpyNodeSetParams(params: *const c_void) =>
        "a memcpy node was changed (hipGraphMemcpyNodeSetParams), which is not followed";
    hipGraphMemcpyNodeSetParams1D(dst: *mut c_void, src: *const c_void, count: usize, kind: i32) =>
        "a memcpy node was changed (hipGraphMemcpyNodeSetParams1D), which is not followed";
    hipGraphEventRecordNodeSetEvent(event: Handle) =>
        "an event record node's event was changed, which is not followed";
    hipGraphEventWaitNodeSetEvent(event: Handle) =>
        "an event wait node's event was changed, which is not followed";
}

exec_node_setters! {
    hipGraphExecMemsetNodeSetParams(params: *const c_void) =>
        "a memset node of the exec was changed; copies and fills are fixed in the retained IB";
    hipGraphExecMemcpyNodeSetParams(params: *mut c_void) =>
        "a memcpy node of the exec was changed; copies and fills are fixed in the retained IB";
    hipGraphExecMemcpyNodeSetParams1D(dst: *mut c_void, src: *const c_void, count: usize, kind: i32) =>
        "a memcpy node of the exec was changed; copies and fills are fixed in the retained IB";
    hipGraphExecEventRecordNodeSetEvent(event: Handle) =>
        "an event record node of the exec was changed, which is not followed";
    hipGraphExecEventWaitNodeSetEvent(event: Handle) =>
        "an event wait node of the exec was changed, which is not followed";
}
