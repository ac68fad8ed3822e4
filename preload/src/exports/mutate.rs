//! The entry points changing a graph or an exec through calls other than the ones
//! that build them: the shadow either follows them or gives up on that
//! graph or exec, so a replay never runs stale parameters. A kernel node's
//! parameters set with `hipGraphKernelNodeSetParams` are followed (packed
//! again, as when the node was added); changes the shadow does not model
//! (the generic `hipGraphNodeSetParams` / `hipGraphExecNodeSetParams`, a
//! node attribute, a node disabled in an exec) make the graph unsupported
//! or the exec fall through. Changes of node or edge counts need nothing
//! here: instantiate compares the counts.
//!
//! Signatures from the public HIP API reference ("Graph management"):
//! `hipGraphKernelNodeSetParams(hipGraphNode_t, const hipKernelNodeParams *)`,
//! `hipGraphNodeSetParams(hipGraphNode_t, hipGraphNodeParams *)`,
//! `hipGraphExecNodeSetParams(hipGraphExec_t, hipGraphNode_t,
//! hipGraphNodeParams *)`, `hipGraphKernelNodeSetAttribute(hipGraphNode_t,
//! hipLaunchAttributeID, const hipLaunchAttributeValue *)`,
//! `hipGraphNodeSetEnabled(hipGraphExec_t, hipGraphNode_t, unsigned int)`.

use std::ffi::c_void;

use crate::exports::forward;
use crate::hip::{key, Handle, HipError, KernelNodeParams, HIP_SUCCESS};
use crate::model::reason::Reason;
use crate::model::shadow::NodeWork;
use crate::state::{give_up_exec, with_state};

/// Marks the graph holding `node` unsupported (the first reason is kept).
fn give_up_graph(node: Handle, why: Reason, call: &'static str) {
    with_state(call, |s| s.give_up_graph(key(node), why));
}

/// # Safety
/// HIP's `hipGraphKernelNodeSetParams` contract.
#[no_mangle]
pub unsafe extern "C" fn hipGraphKernelNodeSetParams(
    node: Handle,
    params: *const KernelNodeParams,
) -> HipError {
    let rc = forward!(hipGraphKernelNodeSetParams(node, params));
    if rc == HIP_SUCCESS {
        with_state("hipGraphKernelNodeSetParams", |s| {
            // SAFETY: `params` was valid for the real call.
            let kernel = unsafe { s.kernel_of(params) };
            match s.graph_of(key(node)) {
                Some((g, at)) => g.nodes[at].1 = kernel.map(NodeWork::Kernel),
                None => s.give_up_graph(
                    key(node),
                    Reason::NodeChanged {
                        call: "hipGraphKernelNodeSetParams",
                    },
                ),
            }
        });
    }
    rc
}

/// # Safety
/// HIP's `hipGraphNodeSetParams` contract.
#[no_mangle]
pub unsafe extern "C" fn hipGraphNodeSetParams(node: Handle, params: *mut c_void) -> HipError {
    let rc = forward!(hipGraphNodeSetParams(node, params));
    if rc == HIP_SUCCESS {
        let why = Reason::NodeChanged {
            call: "hipGraphNodeSetParams",
        };
        give_up_graph(node, why, "hipGraphNodeSetParams");
    }
    rc
}

/// # Safety
/// HIP's `hipGraphKernelNodeSetAttribute` contract.
#[no_mangle]
pub unsafe extern "C" fn hipGraphKernelNodeSetAttribute(
    node: Handle,
    attr: i32,
    value: *const c_void,
) -> HipError {
    let rc = forward!(hipGraphKernelNodeSetAttribute(node, attr, value));
    if rc == HIP_SUCCESS {
        let why = Reason::Attribute { attr };
        give_up_graph(node, why, "hipGraphKernelNodeSetAttribute");
    }
    rc
}

/// # Safety
/// HIP's `hipGraphExecNodeSetParams` contract.
#[no_mangle]
pub unsafe extern "C" fn hipGraphExecNodeSetParams(
    exec: Handle,
    node: Handle,
    params: *mut c_void,
) -> HipError {
    let rc = forward!(hipGraphExecNodeSetParams(exec, node, params));
    if rc == HIP_SUCCESS {
        let why = Reason::NodeChanged {
            call: "hipGraphExecNodeSetParams",
        };
        give_up_exec(exec, why, "hipGraphExecNodeSetParams");
    }
    rc
}

/// # Safety
/// HIP's `hipGraphNodeSetEnabled` contract.
#[no_mangle]
pub unsafe extern "C" fn hipGraphNodeSetEnabled(
    exec: Handle,
    node: Handle,
    enabled: u32,
) -> HipError {
    let rc = forward!(hipGraphNodeSetEnabled(exec, node, enabled));
    if rc == HIP_SUCCESS {
        let why = Reason::NodeEnabled {
            enabled: enabled != 0,
        };
        give_up_exec(exec, why, "hipGraphNodeSetEnabled");
    }
    rc
}
