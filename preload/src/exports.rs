//! The exported HIP entry points. Each forwards to the real function
//! first and returns its result unchanged; the shadow is updated only when
//! the real call succeeded. `hipGraphLaunch`, the one that replays instead
//! of calling the real function, lives in `launch`; stream capture and
//! `hipModuleLaunchKernel` in `capture`.
//!
//! Signatures follow the public HIP headers (`hip_runtime_api.h`).

use std::ffi::{c_char, c_void, CStr};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

use crate::args::kernel_of;
use crate::hip::{key, Handle, HipError, KernelNodeParams, HIP_SUCCESS};
use crate::image::copy_image;
use crate::real;
use crate::reason::Reason;
use crate::shadow::ShadowModule;
use crate::state::{gpu, guarded, with_state};

/// Calls the real function or returns the "not found" error.
macro_rules! forward {
    ($name:ident ( $($arg:expr),* )) => {
        match $crate::real::$name() {
            // SAFETY: forwarded unchanged under the caller's HIP contract.
            Some(f) => unsafe { f($($arg),*) },
            None => return $crate::hip::HIP_ERROR_SYMBOL_NOT_FOUND,
        }
    };
}
pub(crate) use forward;

/// # Safety
/// HIP's `hipModuleLoadData` contract.
#[no_mangle]
pub unsafe extern "C" fn hipModuleLoadData(module: *mut Handle, image: *const c_void) -> HipError {
    let rc = forward!(hipModuleLoadData(module, image));
    // SAFETY: the real HIP took the same image.
    unsafe { shadow_loaded(rc, module, image, "hipModuleLoadData") };
    rc
}

/// # Safety
/// HIP's `hipModuleLoadDataEx(module, image, numOptions, options,
/// optionValues)` contract; the JIT options concern the real HIP only.
#[no_mangle]
pub unsafe extern "C" fn hipModuleLoadDataEx(
    module: *mut Handle,
    image: *const c_void,
    num_options: u32,
    options: *mut c_void,
    values: *mut *mut c_void,
) -> HipError {
    let rc = forward!(hipModuleLoadDataEx(
        module,
        image,
        num_options,
        options,
        values
    ));
    // SAFETY: the real HIP took the same image.
    unsafe { shadow_loaded(rc, module, image, "hipModuleLoadDataEx") };
    rc
}

/// # Safety
/// HIP's `hipModuleLoad(module, fname)` contract: `fname` is a
/// NUL-terminated path.
#[no_mangle]
pub unsafe extern "C" fn hipModuleLoad(module: *mut Handle, path: *const c_char) -> HipError {
    let rc = forward!(hipModuleLoad(module, path));
    if rc == HIP_SUCCESS && !module.is_null() && !path.is_null() {
        // SAFETY: the real call succeeded, so `module` was written and
        // `path` is the C string it read.
        let (handle, path) = unsafe { (key(*module), CStr::from_ptr(path)) };
        let code = guarded("hipModuleLoad", || {
            let path = std::path::Path::new(std::ffi::OsStr::from_bytes(path.to_bytes()));
            // The file is read again (the real HIP keeps its copy private),
            // once, bounded like an image read through a pointer.
            let failed = |e: std::io::Error| Reason::ReadFile {
                path: path.to_path_buf(),
                source: Arc::new(e),
            };
            let mut bytes = Vec::new();
            std::fs::File::open(path)
                .and_then(|f| {
                    f.take(crate::image::MAX_IMAGE_BYTES + 1)
                        .read_to_end(&mut bytes)
                })
                .map_err(failed)?;
            if bytes.len() as u64 > crate::image::MAX_IMAGE_BYTES {
                return Err(Reason::FileTooLarge {
                    path: path.to_path_buf(),
                    max: crate::image::MAX_IMAGE_BYTES,
                });
            }
            code_of_image(&bytes)
        });
        if let Some(code) = code {
            file_module(handle, code, "hipModuleLoad");
        }
    }
    rc
}

/// The shadow of a module the real HIP loaded from `image`.
///
/// # Safety
/// `rc` is the real call's result; on success `module` was written and
/// `image` is the image it read.
unsafe fn shadow_loaded(rc: HipError, module: *mut Handle, image: *const c_void, call: &str) {
    if rc != HIP_SUCCESS || module.is_null() {
        return;
    }
    // SAFETY: the real call succeeded, so `module` was written.
    let handle = key(unsafe { *module });
    let code = guarded(call, || {
        // SAFETY: the real HIP just read the same image (its first 24
        // bytes at least: every ELF header and bundle is longer).
        if !image.is_null()
            && crate::bundle::looks_like_bundle(unsafe {
                std::slice::from_raw_parts(image as *const u8, 24)
            })
        {
            // SAFETY: as above.
            return unsafe { crate::registry::code_of_loaded_bundle(image as *const u8) };
        }
        // SAFETY: as above.
        let bytes = unsafe { copy_image(image as *const u8) }?;
        Ok(relaunch::CodeObject::parse(&bytes)?)
    });
    if let Some(code) = code {
        file_module(handle, code, call);
    }
}

/// A code object from bytes in memory: a plain ELF, or an offload bundle
/// whose entry for the device is picked.
fn code_of_image(bytes: &[u8]) -> Result<relaunch::CodeObject, Reason> {
    if crate::bundle::looks_like_bundle(bytes) {
        return crate::registry::code_of_bundle_bytes(bytes);
    }
    Ok(relaunch::CodeObject::parse(bytes)?)
}

/// Files the shadow of module `handle`.
fn file_module(handle: usize, code: Result<relaunch::CodeObject, Reason>, call: &str) {
    if let Err(why) = &code {
        tracing::info!(reason = %why, "module is not replayable; its graphs fall through");
    }
    with_state(call, |s| {
        s.modules.insert(handle, Arc::new(ShadowModule::new(code)));
    });
}

/// # Safety
/// HIP's `hipModuleGetGlobal(hipDeviceptr_t *dptr, size_t *bytes,
/// hipModule_t, const char *name)` contract. The application now reaches
/// a device variable in HIP's copy of the module, which relaunch's copy
/// would not see: nothing of the module replays from then on (execs made
/// earlier fall through at their next launch).
#[no_mangle]
pub unsafe extern "C" fn hipModuleGetGlobal(
    dptr: *mut *mut c_void,
    bytes: *mut usize,
    module: Handle,
    name: *const c_char,
) -> HipError {
    let rc = forward!(hipModuleGetGlobal(dptr, bytes, module, name));
    if rc == HIP_SUCCESS {
        // SAFETY: the NUL-terminated name the real call read.
        let name = unsafe { crate::hip::c_name(name) };
        with_state("hipModuleGetGlobal", |s| {
            if let Some(m) = s.modules.get(&key(module)) {
                m.taint(Reason::ModuleGlobal { name });
            }
        });
    }
    rc
}

/// # Safety
/// HIP's `hipModuleGetFunction` contract.
#[no_mangle]
pub unsafe extern "C" fn hipModuleGetFunction(
    function: *mut Handle,
    module: Handle,
    name: *const c_char,
) -> HipError {
    let rc = forward!(hipModuleGetFunction(function, module, name));
    if rc == HIP_SUCCESS && !function.is_null() && !name.is_null() {
        // SAFETY: written by the successful real call / NUL-terminated name.
        let (f, symbol) = unsafe { (key(*function), CStr::from_ptr(name)) };
        let symbol = symbol.to_string_lossy().into_owned();
        with_state("hipModuleGetFunction", |s| {
            if let Some(m) = s.modules.get(&key(module)) {
                let module = Arc::clone(m);
                s.functions
                    .insert(f, crate::shadow::Function { module, symbol });
            }
        });
    }
    rc
}

/// # Safety
/// HIP's `hipModuleUnload` contract.
#[no_mangle]
pub unsafe extern "C" fn hipModuleUnload(module: Handle) -> HipError {
    let rc = forward!(hipModuleUnload(module));
    with_state("hipModuleUnload", |s| {
        if let Some(m) = s.modules.remove(&key(module)) {
            s.functions.retain(|_, f| !Arc::ptr_eq(&f.module, &m));
        }
    });
    rc
}

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
        let (n, deps) = unsafe { (key(*node), crate::nodes::deps_of(deps, num_deps)) };
        with_state("hipGraphAddKernelNode", |s| {
            // SAFETY: `params` was valid for the real call.
            let kernel = unsafe { kernel_of(s, params) };
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
            let on_hip = crate::inspect::OnHip {
                reason: Reason::UnseenGraph,
                launches: 0,
            };
            s.on_hip.insert(e, on_hip);
            return;
        };
        let built = counts
            .unwrap_or(Err(Reason::Panicked("counting the real graph's nodes")))
            .and_then(|(n, edges)| {
                // A node already known to fall through names the reason
                // better than the count it leaves the shadow short of.
                if let Some(why) = &g.unsupported {
                    return Err(why.clone());
                }
                let (shadow_n, shadow_edges) = g.real_counts();
                if n != shadow_n || edges != shadow_edges {
                    return Err(Reason::CountMismatch {
                        nodes: n,
                        edges,
                        shadow_nodes: shadow_n,
                        shadow_edges,
                    });
                }
                g.instantiate(&gpu()?)
            });
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
                let on_hip = crate::inspect::OnHip {
                    reason: why,
                    launches: 0,
                };
                s.on_hip.insert(e, on_hip);
            }
        }
    });
}

/// The real `hipStreamSynchronize(stream)` (its status is logged, the
/// caller has nothing better to do with it).
pub(crate) fn sync_stream(stream: Handle) {
    match crate::real::hipStreamSynchronize() {
        // SAFETY: the application's stream.
        Some(f) => {
            let rc = unsafe { f(stream) };
            if rc != HIP_SUCCESS {
                tracing::warn!(status = rc, "hipStreamSynchronize failed");
            }
        }
        None => tracing::warn!("the real hipStreamSynchronize is missing"),
    }
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
        Some((shadow, unsafe { kernel_of(s, params) }))
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
