//! The entry points building, instantiating, patching and destroying
//! graphs and execs: `hipGraphCreate` / `hipGraphAddKernelNode` /
//! `hipGraphAddDependencies` build the shadow graph (`model/shadow.rs`),
//! instantiate builds the relaunch exec when the shadow matches the real
//! graph (`model/exec.rs`), SetParams and ExecUpdate patch or rebuild it.

use std::ffi::c_char;
use std::sync::Arc;

use crate::exports::forward;
use crate::hip::{deps_of, key, real, Handle, HipError, KernelNodeParams, HIP_SUCCESS};
use crate::model::reason::Reason;
use crate::state::counters::OnHip;
use crate::state::{gpu, guarded, with_state};

/// # Safety
/// HIP's `hipGraphCreate` contract.
#[no_mangle]
pub unsafe extern "C" fn hipGraphCreate(graph: *mut Handle, flags: u32) -> HipError {
    let rc = forward!(hipGraphCreate(graph, flags));
    if rc == HIP_SUCCESS && !graph.is_null() {
        // SAFETY: written by the successful real call.
        let g = key(unsafe { *graph });
        with_state("hipGraphCreate", |s| {
            s.graphs.insert(g, Default::default());
        });
    }
    rc
}

/// # Safety
/// HIP's `hipGraphDestroy` contract.
#[no_mangle]
pub unsafe extern "C" fn hipGraphDestroy(graph: Handle) -> HipError {
    let rc = forward!(hipGraphDestroy(graph));
    with_state("hipGraphDestroy", |s| s.graphs.remove(&key(graph)));
    rc
}

/// # Safety
/// HIP's `hipGraphAddKernelNode` contract.
#[no_mangle]
pub unsafe extern "C" fn hipGraphAddKernelNode(
    node: *mut Handle,
    graph: Handle,
    deps: *const Handle,
    num_deps: usize,
    params: *const KernelNodeParams,
) -> HipError {
    let rc = forward!(hipGraphAddKernelNode(node, graph, deps, num_deps, params));
    if rc == HIP_SUCCESS && !node.is_null() {
        // SAFETY: written by the successful real call, which also read
        // `num_deps` dependencies.
        let (n, deps) = unsafe { (key(*node), deps_of(deps, num_deps)) };
        with_state("hipGraphAddKernelNode", |s| {
            // SAFETY: `params` was valid for the real call.
            let kernel = unsafe { s.kernel_of(params) };
            if let Err(why) = &kernel {
                tracing::info!(reason = %why, "kernel node not replayable; its graph falls through");
            }
            if let Some(g) = s.graphs.get_mut(&key(graph)) {
                g.add_node(n, kernel, &deps);
            }
        });
    }
    rc
}

/// # Safety
/// HIP's `hipGraphAddDependencies` contract.
#[no_mangle]
pub unsafe extern "C" fn hipGraphAddDependencies(
    graph: Handle,
    from: *const Handle,
    to: *const Handle,
    count: usize,
) -> HipError {
    let rc = forward!(hipGraphAddDependencies(graph, from, to, count));
    if rc == HIP_SUCCESS && count > 0 && !from.is_null() && !to.is_null() {
        // SAFETY: the successful real call read `count` of each.
        let (from, to) = unsafe {
            (
                std::slice::from_raw_parts(from, count),
                std::slice::from_raw_parts(to, count),
            )
        };
        with_state("hipGraphAddDependencies", |s| {
            if let Some(g) = s.graphs.get_mut(&key(graph)) {
                for (f, t) in from.iter().zip(to) {
                    g.add_edge(key(*f), key(*t));
                }
            }
        });
    }
    rc
}

/// Node and edge counts of the real graph (to catch nodes added through
/// calls this library does not intercept).
fn real_counts(graph: Handle) -> Result<(usize, usize), Reason> {
    let nodes = real::hipGraphGetNodes().ok_or(Reason::RealMissing {
        function: "hipGraphGetNodes",
    })?;
    let edges = real::hipGraphGetEdges().ok_or(Reason::RealMissing {
        function: "hipGraphGetEdges",
    })?;
    let (mut n, mut e) = (0usize, 0usize);
    // SAFETY: null arrays ask HIP for the counts only.
    let rc = unsafe { nodes(graph, std::ptr::null_mut(), &mut n) };
    if rc != HIP_SUCCESS {
        return Err(Reason::RealFailed {
            function: "hipGraphGetNodes",
            status: rc,
        });
    }
    // SAFETY: as above.
    let rc = unsafe { edges(graph, std::ptr::null_mut(), std::ptr::null_mut(), &mut e) };
    if rc != HIP_SUCCESS {
        return Err(Reason::RealFailed {
            function: "hipGraphGetEdges",
            status: rc,
        });
    }
    Ok((n, e))
}

/// # Safety
/// HIP's `hipGraphInstantiate` contract.
#[no_mangle]
pub unsafe extern "C" fn hipGraphInstantiate(
    exec: *mut Handle,
    graph: Handle,
    error_node: *mut Handle,
    log: *mut c_char,
    log_size: usize,
) -> HipError {
    let rc = forward!(hipGraphInstantiate(exec, graph, error_node, log, log_size));
    if rc != HIP_SUCCESS || exec.is_null() {
        return rc;
    }
    // SAFETY: written by the successful real call.
    shadow_instantiate(key(unsafe { *exec }), graph);
    rc
}

/// # Safety
/// HIP's `hipGraphInstantiateWithFlags` contract. The flags (auto-free on
/// launch, device launch, ...) only matter to the real exec: a replayed
/// exec waits for its work, so there is nothing left to free.
#[no_mangle]
pub unsafe extern "C" fn hipGraphInstantiateWithFlags(
    exec: *mut Handle,
    graph: Handle,
    flags: u64,
) -> HipError {
    let rc = forward!(hipGraphInstantiateWithFlags(exec, graph, flags));
    if rc != HIP_SUCCESS || exec.is_null() {
        return rc;
    }
    // SAFETY: written by the successful real call.
    shadow_instantiate(key(unsafe { *exec }), graph);
    rc
}

/// Builds the relaunch exec for the real exec `e` of `graph`, when the
/// shadow graph is supported; otherwise logs why it falls through.
fn shadow_instantiate(e: usize, graph: Handle) {
    let counts = guarded("hipGraphInstantiate", || real_counts(graph));
    with_state("hipGraphInstantiate", |s| {
        let Some(g) = s.graphs.get(&key(graph)) else {
            let on_hip = OnHip {
                reason: Reason::UnseenGraph,
                launches: 0,
            };
            s.on_hip.insert(e, on_hip);
            return;
        };
        let counts = counts.unwrap_or(Err(Reason::Panicked("counting the real graph's nodes")));
        let built = g.instantiate_checked(counts, gpu);
        match built {
            Ok(x) => {
                tracing::info!(
                    lanes = x.current().exec.lane_count(),
                    "hipGraphExec replays as retained PM4"
                );
                s.execs.insert(e, Arc::new(x));
            }
            Err(why) => {
                tracing::info!(reason = %why, "hipGraphExec falls through to the real HIP");
                let on_hip = OnHip {
                    reason: why,
                    launches: 0,
                };
                s.on_hip.insert(e, on_hip);
            }
        }
    });
}

/// # Safety
/// HIP's `hipGraphExecKernelNodeSetParams` contract.
#[no_mangle]
pub unsafe extern "C" fn hipGraphExecKernelNodeSetParams(
    exec: Handle,
    node: Handle,
    params: *const KernelNodeParams,
) -> HipError {
    let rc = forward!(hipGraphExecKernelNodeSetParams(exec, node, params));
    if rc != HIP_SUCCESS {
        return rc;
    }
    let found = with_state("hipGraphExecKernelNodeSetParams", |s| {
        let shadow = s.execs.get(&key(exec)).cloned()?;
        // SAFETY: `params` was valid for the real call.
        Some((shadow, unsafe { s.kernel_of(params) }))
    })
    .flatten();
    if let Some((shadow, kernel)) = found {
        guarded("hipGraphExecKernelNodeSetParams", || {
            shadow.set_params(key(node), kernel)
        });
    }
    rc
}

/// # Safety
/// HIP's `hipGraphExecUpdate(hGraphExec, hGraph, hipGraphNode_t
/// *hErrorNode_out, hipGraphExecUpdateResult *updateResult_out)` contract
/// (HIP Runtime API, "Graph management"). Only a successful real update
/// reaches the shadow: its kernarg changes are patched into the retained
/// IBs, anything more makes the exec fall through.
#[no_mangle]
pub unsafe extern "C" fn hipGraphExecUpdate(
    exec: Handle,
    graph: Handle,
    error_node: *mut Handle,
    result: *mut i32,
) -> HipError {
    let rc = forward!(hipGraphExecUpdate(exec, graph, error_node, result));
    if rc != HIP_SUCCESS {
        return rc;
    }
    let found = with_state("hipGraphExecUpdate", |s| {
        let shadow = s.execs.get(&key(exec)).cloned()?;
        Some((shadow, s.graphs.get(&key(graph)).cloned()))
    })
    .flatten();
    // Patched outside the state lock, like a node's SetParams.
    if let Some((shadow, graph)) = found {
        guarded("hipGraphExecUpdate", || match graph {
            Some(g) => shadow.update_from(&g),
            None => shadow.fall_back(Reason::UpdateFromUnseen),
        });
    }
    rc
}

/// # Safety
/// HIP's `hipGraphExecDestroy` contract.
#[no_mangle]
pub unsafe extern "C" fn hipGraphExecDestroy(exec: Handle) -> HipError {
    let rc = forward!(hipGraphExecDestroy(exec));
    let dropped = with_state("hipGraphExecDestroy", |s| {
        s.on_hip.remove(&key(exec));
        s.execs.remove(&key(exec))
    });
    // The retained IBs are released outside the state lock.
    guarded("hipGraphExecDestroy", move || drop(dropped));
    rc
}
