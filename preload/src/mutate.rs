//! Changes to a graph or an exec made through calls other than the ones
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

use crate::args::kernel_of;
use crate::exports::forward;
use crate::hip::{key, Handle, HipError, KernelNodeParams, HIP_SUCCESS};
use crate::reason::Reason;
use crate::shadow::ShadowGraph;
use crate::state::{guarded, with_state, State};

/// The shadow graph holding node `node`, and the node's position in it.
fn graph_of(s: &mut State, node: Handle) -> Option<(&mut ShadowGraph, usize)> {
    s.graphs
        .values_mut()
        .find_map(|g| g.index.get(&key(node)).copied().map(|at| (g, at)))
}

/// Marks the graph holding `node` unsupported (the first reason is kept).
fn give_up_graph(node: Handle, why: Reason, call: &'static str) {
    with_state(call, |s| give_up_graph_in(s, node, why));
}

/// [`give_up_graph`] with the state locked. A node of no shadow graph may
/// belong to a captured one (whose real node handles the shadow never
/// saw): every captured graph gives up then, as any may hold it.
pub(crate) fn give_up_graph_in(s: &mut State, node: Handle, why: Reason) {
    if let Some((g, _)) = graph_of(s, node) {
        tracing::info!(reason = %why, "graph falls through");
        g.unsupported.get_or_insert(why);
        return;
    }
    for g in s.graphs.values_mut().filter(|g| g.positional) {
        tracing::info!(reason = %why, "captured graph falls through (the node may be one of its)");
        g.unsupported.get_or_insert(Reason::PossiblyCaptured {
            reason: Box::new(why.clone()),
            node: key(node),
        });
    }
}

/// Makes exec `exec` fall through from now on.
pub(crate) fn give_up_exec(exec: Handle, why: Reason, call: &'static str) {
    let shadow = with_state(call, |s| s.execs.get(&key(exec)).cloned()).flatten();
    if let Some(shadow) = shadow {
        guarded(call, || shadow.fall_back(why));
    }
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
            let kernel = unsafe { kernel_of(s, params) };
            match graph_of(s, node) {
                Some((g, at)) => g.nodes[at].1 = kernel.map(crate::shadow::NodeWork::Kernel),
                None => give_up_graph_in(
                    s,
                    node,
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
