//! Stream capture's entry points: `hipStreamBeginCapture` /
//! `hipStreamEndCapture` / `hipStreamIsCapturing`, and the launches it
//! records: `hipModuleLaunchKernel` (module kernels) and `hipLaunchKernel`
//! (statically registered kernels, by host stub: what `kernel<<<...>>>`
//! calls). The capture itself is the model's (`model/capture.rs`). While the shadow
//! knows a stream is capturing (BeginCapture succeeded, no EndCapture yet),
//! each successful module launch on it becomes a shadow kernel node that
//! depends on the node captured before it on that stream (stream order is a
//! chain). A successful EndCapture files the captured nodes as the shadow
//! of the real `hipGraph_t` it returned, so instantiate, launch and the
//! node/edge count check run exactly as for a graph built node by node.
//!
//! Every capture mode (global, thread-local, relaxed) is recorded the same
//! way: the mode only decides which other API calls HIP refuses during the
//! capture, which the real HIP enforces. Cross-stream capture (events
//! joining other streams into the capture) is not followed: the
//! interposer does not see the join, so a launch on a stream the real HIP
//! reports as capturing but the shadow does not marks every capture in
//! progress unsupported (they fall through). Node handles of a captured
//! graph are the real HIP's and unknown here, so
//! `hipGraphExecKernelNodeSetParams` on such an exec makes it fall through.
//!
//! Signatures and enum values from the public HIP headers/docs
//! (`hip_runtime_api.h`; HIP Runtime API reference, "Graph management":
//! `hipStreamBeginCapture(hipStream_t, hipStreamCaptureMode)`,
//! `hipStreamEndCapture(hipStream_t, hipGraph_t *)`,
//! `hipStreamIsCapturing(hipStream_t, hipStreamCaptureStatus *)` with
//! `hipStreamCaptureStatusNone = 0`, `Active = 1`, `Invalidated = 2`;
//! "Module management": `hipModuleLaunchKernel(f, gridDimX, gridDimY,
//! gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, stream,
//! kernelParams, extra)`, grid dimensions in blocks; "Execution control":
//! `hipLaunchKernel(const void *function_address, dim3 numBlocks, dim3
//! dimBlocks, void **args, size_t sharedMemBytes, hipStream_t)`; the same values in
//! the generated bindings, e.g. docs.rs/cubecl-hip-sys
//! `hipStreamCaptureStatus_hipStreamCaptureStatusActive = 1`).

use std::ffi::c_void;

use crate::exports::forward;
use crate::hip::{key, real_is_capturing, Dim3, Handle, HipError, KernelNodeParams};
use crate::hip::{CAPTURE_STATUS_ACTIVE, HIP_SUCCESS};
use crate::model::capture::Capture;
use crate::model::reason::Reason;
use crate::state::with_state;

/// # Safety
/// HIP's `hipStreamBeginCapture` contract.
#[no_mangle]
pub unsafe extern "C" fn hipStreamBeginCapture(stream: Handle, mode: i32) -> HipError {
    let rc = forward!(hipStreamBeginCapture(stream, mode));
    if rc == HIP_SUCCESS {
        tracing::debug!(mode, "stream capture begins");
        with_state("hipStreamBeginCapture", |s| {
            s.captures.insert(key(stream), Capture::default());
        });
    }
    rc
}

/// # Safety
/// HIP's `hipStreamBeginCaptureToGraph(stream, graph, dependencies,
/// dependencyData, numDependencies, mode)` contract. Capturing into an
/// existing graph is not followed: the capture is recorded as unsupported
/// (so its graph falls through), and while it runs a launch does not
/// synchronise streams (see `hipGraphLaunch`).
#[no_mangle]
pub unsafe extern "C" fn hipStreamBeginCaptureToGraph(
    stream: Handle,
    graph: Handle,
    dependencies: *const Handle,
    dependency_data: *const c_void,
    num_dependencies: usize,
    mode: i32,
) -> HipError {
    let rc = forward!(hipStreamBeginCaptureToGraph(
        stream,
        graph,
        dependencies,
        dependency_data,
        num_dependencies,
        mode
    ));
    if rc == HIP_SUCCESS {
        with_state("hipStreamBeginCaptureToGraph", |s| {
            let mut capture = Capture::default();
            capture.mark_unsupported(Reason::CaptureToGraph);
            s.captures.insert(key(stream), capture);
        });
    }
    rc
}

/// # Safety
/// HIP's `hipStreamEndCapture` contract.
#[no_mangle]
pub unsafe extern "C" fn hipStreamEndCapture(stream: Handle, graph: *mut Handle) -> HipError {
    let rc = forward!(hipStreamEndCapture(stream, graph));
    let made = if rc == HIP_SUCCESS && !graph.is_null() {
        // SAFETY: written by the successful real call.
        Some(key(unsafe { *graph })).filter(|&g| g != 0)
    } else {
        None
    };
    // The capture sequence is over either way; a graph that was not made
    // has no shadow, so anything made from it later falls through.
    with_state("hipStreamEndCapture", |s| {
        let capture = s.captures.remove(&key(stream));
        if let (Some(capture), Some(g)) = (capture, made) {
            s.graphs.insert(g, capture.into_graph());
        }
    });
    rc
}

/// # Safety
/// HIP's `hipStreamIsCapturing` contract.
#[no_mangle]
pub unsafe extern "C" fn hipStreamIsCapturing(stream: Handle, status: *mut i32) -> HipError {
    let rc = forward!(hipStreamIsCapturing(stream, status));
    if rc == HIP_SUCCESS && !status.is_null() {
        // SAFETY: written by the successful real call.
        let status = unsafe { *status };
        if status != CAPTURE_STATUS_ACTIVE {
            // Invalidated, or ended behind the shadow's back: whatever the
            // shadow holds for this stream no longer matches the real one.
            with_state("hipStreamIsCapturing", |s| {
                if let Some(c) = s.captures.get_mut(&key(stream)) {
                    c.mark_unsupported(Reason::CaptureStatus { status });
                }
            });
        }
    }
    rc
}

/// # Safety
/// HIP's `hipModuleLaunchKernel` contract: `kernelParams` holds one valid
/// pointer per explicit kernel argument (or `extra` is used).
#[no_mangle]
#[allow(clippy::too_many_arguments)] // HIP's signature
pub unsafe extern "C" fn hipModuleLaunchKernel(
    function: Handle,
    grid_x: u32,
    grid_y: u32,
    grid_z: u32,
    block_x: u32,
    block_y: u32,
    block_z: u32,
    shared_mem_bytes: u32,
    stream: Handle,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> HipError {
    let rc = forward!(hipModuleLaunchKernel(
        function,
        grid_x,
        grid_y,
        grid_z,
        block_x,
        block_y,
        block_z,
        shared_mem_bytes,
        stream,
        kernel_params,
        extra
    ));
    if rc != HIP_SUCCESS {
        return rc;
    }
    let params = KernelNodeParams {
        block_dim: Dim3 {
            x: block_x,
            y: block_y,
            z: block_z,
        },
        extra,
        func: function,
        grid_dim: Dim3 {
            x: grid_x,
            y: grid_y,
            z: grid_z,
        },
        kernel_params,
        shared_mem_bytes,
    };
    record_launch(stream, &params, "hipModuleLaunchKernel");
    rc
}

/// # Safety
/// HIP's `hipLaunchKernel` contract: `function` is a host stub registered
/// with `__hipRegisterFunction` and `args` holds one valid pointer per
/// kernel argument. This is what a hipcc-built `kernel<<<...>>>` launch
/// calls (grid in blocks; `dim3` by value).
#[no_mangle]
pub unsafe extern "C" fn hipLaunchKernel(
    function: *const c_void,
    num_blocks: Dim3,
    dim_blocks: Dim3,
    args: *mut *mut c_void,
    shared_mem_bytes: usize,
    stream: Handle,
) -> HipError {
    let rc = forward!(hipLaunchKernel(
        function,
        num_blocks,
        dim_blocks,
        args,
        shared_mem_bytes,
        stream
    ));
    if rc != HIP_SUCCESS {
        return rc;
    }
    let Ok(shared) = u32::try_from(shared_mem_bytes) else {
        with_state("hipLaunchKernel", |s| {
            if let Some(c) = s.captures.get_mut(&key(stream)) {
                c.mark_unsupported(Reason::LaunchLds {
                    bytes: shared_mem_bytes,
                });
            }
        });
        return rc;
    };
    let params = KernelNodeParams {
        block_dim: dim_blocks,
        extra: std::ptr::null_mut(),
        func: function.cast_mut(),
        grid_dim: num_blocks,
        kernel_params: args,
        shared_mem_bytes: shared,
    };
    record_launch(stream, &params, "hipLaunchKernel");
    rc
}

/// After a successful real launch: a node of the capture on `stream`, if
/// the shadow is capturing it (the common case, no capture, only looks).
fn record_launch(stream: Handle, params: &KernelNodeParams, call: &'static str) {
    // True: not this stream's capture, but others run.
    let others = with_state(call, |s| {
        if !s.captures.contains_key(&key(stream)) {
            return !s.captures.is_empty();
        }
        // SAFETY: `params` describes the launch the real HIP just took.
        let kernel = unsafe { s.kernel_of(params) };
        if let Some(c) = s.captures.get_mut(&key(stream)) {
            c.push(kernel);
        }
        false
    });
    // A stream joined into a capture through events: its launches land in
    // a captured graph the shadow cannot attribute.
    if others == Some(true) && real_is_capturing(stream) {
        with_state(call, |s| s.mark_all_captures(stream));
    }
}
