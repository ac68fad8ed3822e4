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
use crate::model::reason::{NodeKind, Reason};
use crate::state::{give_up_exec, with_state};

/// Marks the graph holding `node` (a memset, memcpy or event node)
/// unsupported.
fn give_up_node_graph(node: Handle, kind: NodeKind, call: &'static str) {
    let why = Reason::KindChanged { kind, call };
    with_state(call, |s| s.give_up_node_graph(key(node), why));
}

macro_rules! graph_node_setters {
    ($($name:ident ( $($arg:ident : $ty:ty),* ) => $kind:expr;)*) => {
        $(
            /// # Safety
            /// HIP's contract for this function (`hip_runtime_api.h`).
            #[no_mangle]
            pub unsafe extern "C" fn $name(node: Handle, $($arg: $ty),*) -> HipError {
                let rc = forward!($name(node $(, $arg)*));
                if rc == HIP_SUCCESS {
                    give_up_node_graph(node, $kind, stringify!($name));
                }
                rc
            }
        )*
    };
}

macro_rules! exec_node_setters {
    ($($name:ident ( $($arg:ident : $ty:ty),* ) => $kind:expr;)*) => {
        $(
            /// # Safety
            /// HIP's contract for this function (`hip_runtime_api.h`).
            #[no_mangle]
            pub unsafe extern "C" fn $name(exec: Handle, node: Handle, $($arg: $ty),*) -> HipError {
                let rc = forward!($name(exec, node $(, $arg)*));
                if rc == HIP_SUCCESS {
                    let why = Reason::ExecNodeChanged { kind: $kind, call: stringify!($name) };
                    give_up_exec(exec, why, stringify!($name));
                }
                rc
            }
        )*
    };
}

graph_node_setters! {
    hipGraphMemsetNodeSetParams(params: *const c_void) =>
        NodeKind::Memset;
    hipGraphMemcpyNodeSetParams(params: *const c_void) =>
        NodeKind::Memcpy;
    hipGraphMemcpyNodeSetParams1D(dst: *mut c_void, src: *const c_void, count: usize, kind: i32) =>
        NodeKind::Memcpy;
    hipGraphEventRecordNodeSetEvent(event: Handle) =>
        NodeKind::EventRecord;
    hipGraphEventWaitNodeSetEvent(event: Handle) =>
        NodeKind::EventWait;
}

exec_node_setters! {
    hipGraphExecMemsetNodeSetParams(params: *const c_void) =>
        NodeKind::Memset;
    hipGraphExecMemcpyNodeSetParams(params: *mut c_void) =>
        NodeKind::Memcpy;
    hipGraphExecMemcpyNodeSetParams1D(dst: *mut c_void, src: *const c_void, count: usize, kind: i32) =>
        NodeKind::Memcpy;
    hipGraphExecEventRecordNodeSetEvent(event: Handle) =>
        NodeKind::EventRecord;
    hipGraphExecEventWaitNodeSetEvent(event: Handle) =>
        NodeKind::EventWait;
}
