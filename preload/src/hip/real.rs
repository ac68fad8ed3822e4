//! The real HIP functions, each resolved once: first with
//! `dlsym(RTLD_NEXT, name)` (the next object in lookup order after this
//! preloaded library); when HIP is not in the global scope, because it was
//! loaded as a dependency of something `dlopen`ed with `RTLD_LOCAL` (a
//! Python extension, a plugin), with `dlsym` on a handle to the already
//! loaded HIP library (`dlopen(name, RTLD_NOLOAD)`: `RELAUNCH_REAL_HIP` if
//! set, else the `libamdhip64` sonames). A missing function is remembered
//! as missing and reported with a `tracing` error on every call that
//! needs it.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

extern "C" {
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
}

/// glibc's `RTLD_NEXT` (`((void *) -1l)` in `<dlfcn.h>`).
const RTLD_NEXT: *mut c_void = -1isize as *mut c_void;
/// glibc's `RTLD_LAZY` and `RTLD_NOLOAD` (`<bits/dlfcn.h>`): a handle to a
/// library only if it is already loaded.
const RTLD_LAZY: c_int = 0x1;
const RTLD_NOLOAD: c_int = 0x4;

/// Sonames of the HIP runtime library, newest first.
const HIP_LIBRARIES: [&str; 4] = [
    "libamdhip64.so.7",
    "libamdhip64.so.6",
    "libamdhip64.so.5",
    "libamdhip64.so",
];

/// A handle to the loaded HIP library, for when `RTLD_NEXT` does not see
/// it; `None` if none is loaded (looked for once).
fn hip_library() -> Option<usize> {
    static HANDLE: OnceLock<Option<usize>> = OnceLock::new();
    *HANDLE.get_or_init(|| {
        let named = std::env::var("RELAUNCH_REAL_HIP").ok();
        let found = named
            .iter()
            .map(String::as_str)
            .chain(HIP_LIBRARIES)
            .find_map(|name| {
                let cname = CString::new(name).ok()?;
                // SAFETY: a NUL-terminated name; RTLD_NOLOAD never loads
                // (so runs no constructors), it only returns a handle to a
                // library already in the process, or null.
                let handle = unsafe { dlopen(cname.as_ptr(), RTLD_LAZY | RTLD_NOLOAD) };
                (!handle.is_null()).then(|| {
                    tracing::debug!(library = name, "real HIP found outside the global scope");
                    handle as usize
                })
            });
        found
    })
}

/// The address of the next definition of `name`, or `None`.
pub fn lookup(name: &CStr) -> Option<usize> {
    // SAFETY: dlsym reads a NUL-terminated name; RTLD_NEXT is a valid
    // pseudo-handle for a call made from a loaded shared object.
    let addr = unsafe { dlsym(RTLD_NEXT, name.as_ptr()) };
    if !addr.is_null() {
        return Some(addr as usize);
    }
    let handle = hip_library()?;
    // SAFETY: a live handle from dlopen (never closed) and a NUL-terminated
    // name. The search covers that library and its dependencies, which do
    // not include this interposer, so it cannot return our own export.
    let addr = unsafe { dlsym(handle as *mut c_void, name.as_ptr()) };
    (!addr.is_null()).then_some(addr as usize)
}

macro_rules! real_functions {
    ($($name:ident : fn($($ty:ty),*) -> $ret:ty;)*) => {
        $(
            /// The real function of this name, resolved once.
            #[allow(non_snake_case)]
            pub fn $name() -> Option<unsafe extern "C" fn($($ty),*) -> $ret> {
                static CELL: OnceLock<Option<usize>> = OnceLock::new();
                let addr = (*CELL.get_or_init(|| {
                    let name = concat!(stringify!($name), "\0");
                    let cname = CStr::from_bytes_with_nul(name.as_bytes()).ok()?;
                    let found = lookup(cname);
                    // Info, not error: some are optional (the stream
                    // memory operations: without them launches synchronise
                    // the stream), and callers that need one say so.
                    if found.is_none() {
                        tracing::info!(
                            function = stringify!($name),
                            "the real HIP function is not loaded (no definition after the interposer); \
                             link or load libamdhip64 in the application"
                        );
                    }
                    found
                }))?;
                // SAFETY: the symbol is the HIP function of this name, whose C
                // signature is the one declared here (HIP headers).
                Some(unsafe { std::mem::transmute::<usize, unsafe extern "C" fn($($ty),*) -> $ret>(addr) })
            }
        )*
    };
}

use super::{Dim3, Handle, HipError, KernelNodeParams};

real_functions! {
    hipModuleLoadData: fn(*mut Handle, *const c_void) -> HipError;
    hipModuleLoadDataEx: fn(*mut Handle, *const c_void, u32, *mut c_void, *mut *mut c_void) -> HipError;
    hipModuleLoad: fn(*mut Handle, *const c_char) -> HipError;
    hipModuleGetFunction: fn(*mut Handle, Handle, *const c_char) -> HipError;
    hipModuleUnload: fn(Handle) -> HipError;
    hipGraphCreate: fn(*mut Handle, u32) -> HipError;
    hipGraphDestroy: fn(Handle) -> HipError;
    hipGraphAddKernelNode: fn(*mut Handle, Handle, *const Handle, usize, *const KernelNodeParams) -> HipError;
    hipGraphAddDependencies: fn(Handle, *const Handle, *const Handle, usize) -> HipError;
    // Other node kinds (exports/nodes.rs).
    hipGraphAddEmptyNode: fn(*mut Handle, Handle, *const Handle, usize) -> HipError;
    hipGraphAddHostNode: fn(*mut Handle, Handle, *const Handle, usize, *const c_void) -> HipError;
    hipGraphAddMemsetNode: fn(*mut Handle, Handle, *const Handle, usize, *const c_void) -> HipError;
    hipGraphAddMemcpyNode: fn(*mut Handle, Handle, *const Handle, usize, *const c_void) -> HipError;
    hipGraphAddMemcpyNode1D: fn(*mut Handle, Handle, *const Handle, usize, *mut c_void, *const c_void, usize, i32) -> HipError;
    hipGraphAddChildGraphNode: fn(*mut Handle, Handle, *const Handle, usize, Handle) -> HipError;
    hipGraphAddEventRecordNode: fn(*mut Handle, Handle, *const Handle, usize, Handle) -> HipError;
    hipGraphAddEventWaitNode: fn(*mut Handle, Handle, *const Handle, usize, Handle) -> HipError;
    hipGraphGetNodes: fn(Handle, *mut Handle, *mut usize) -> HipError;
    hipGraphGetEdges: fn(Handle, *mut Handle, *mut Handle, *mut usize) -> HipError;
    hipGraphInstantiate: fn(*mut Handle, Handle, *mut Handle, *mut c_char, usize) -> HipError;
    hipGraphInstantiateWithFlags: fn(*mut Handle, Handle, u64) -> HipError;
    hipGraphExecDestroy: fn(Handle) -> HipError;
    hipGraphLaunch: fn(Handle, Handle) -> HipError;
    hipGraphExecKernelNodeSetParams: fn(Handle, Handle, *const KernelNodeParams) -> HipError;
    hipGraphExecUpdate: fn(Handle, Handle, *mut Handle, *mut i32) -> HipError;
    // Changes the shadow follows or gives up on (exports/mutate.rs).
    hipGraphKernelNodeSetParams: fn(Handle, *const KernelNodeParams) -> HipError;
    hipGraphNodeSetParams: fn(Handle, *mut c_void) -> HipError;
    hipGraphKernelNodeSetAttribute: fn(Handle, i32, *const c_void) -> HipError;
    hipGraphExecNodeSetParams: fn(Handle, Handle, *mut c_void) -> HipError;
    hipGraphNodeSetEnabled: fn(Handle, Handle, u32) -> HipError;
    hipStreamSynchronize: fn(Handle) -> HipError;
    // Memory the memset/memcpy nodes may reach, and captured copies (exports/nodes.rs, exports/stream_transfers.rs, exports/allocators.rs).
    hipMalloc: fn(*mut *mut c_void, usize) -> HipError;
    hipFree: fn(*mut c_void) -> HipError;
    hipMallocAsync: fn(*mut *mut c_void, usize, Handle) -> HipError;
    hipFreeAsync: fn(*mut c_void, Handle) -> HipError;
    hipMallocManaged: fn(*mut *mut c_void, usize, u32) -> HipError;
    hipHostRegister: fn(*mut c_void, usize, u32) -> HipError;
    hipHostUnregister: fn(*mut c_void) -> HipError;
    hipHostGetDevicePointer: fn(*mut *mut c_void, *mut c_void, u32) -> HipError;
    hipMemcpyAsync: fn(*mut c_void, *const c_void, usize, i32, Handle) -> HipError;
    hipMemsetAsync: fn(*mut c_void, i32, usize, Handle) -> HipError;
    hipMemsetD32Async: fn(*mut c_void, i32, usize, Handle) -> HipError;
    hipMemsetD8Async: fn(*mut c_void, u8, usize, Handle) -> HipError;
    hipMemsetD16Async: fn(*mut c_void, u16, usize, Handle) -> HipError;
    hipMemcpy2DAsync: fn(*mut c_void, usize, *const c_void, usize, usize, usize, i32, Handle) -> HipError;
    hipMemset2DAsync: fn(*mut c_void, usize, i32, usize, usize, Handle) -> HipError;
    hipEventRecord: fn(Handle, Handle) -> HipError;
    // Node changes that make a graph or exec fall through (exports/mutate_nodes.rs).
    hipGraphMemsetNodeSetParams: fn(Handle, *const c_void) -> HipError;
    hipGraphMemcpyNodeSetParams: fn(Handle, *const c_void) -> HipError;
    hipGraphMemcpyNodeSetParams1D: fn(Handle, *mut c_void, *const c_void, usize, i32) -> HipError;
    hipGraphEventRecordNodeSetEvent: fn(Handle, Handle) -> HipError;
    hipGraphEventWaitNodeSetEvent: fn(Handle, Handle) -> HipError;
    hipGraphExecMemsetNodeSetParams: fn(Handle, Handle, *const c_void) -> HipError;
    hipGraphExecMemcpyNodeSetParams: fn(Handle, Handle, *mut c_void) -> HipError;
    hipGraphExecMemcpyNodeSetParams1D: fn(Handle, Handle, *mut c_void, *const c_void, usize, i32) -> HipError;
    hipGraphExecEventRecordNodeSetEvent: fn(Handle, Handle, Handle) -> HipError;
    hipGraphExecEventWaitNodeSetEvent: fn(Handle, Handle, Handle) -> HipError;
    // Stream-ordered replays (model/ordered.rs).
    hipHostMalloc: fn(*mut *mut c_void, usize, u32) -> HipError;
    hipHostFree: fn(*mut c_void) -> HipError;
    hipStreamWriteValue32: fn(Handle, *mut c_void, u32, u32) -> HipError;
    hipStreamWaitValue32: fn(Handle, *mut c_void, u32, u32, u32) -> HipError;
    // Which GPU HIP's current device is (state/gpu.rs).
    hipGetDevice: fn(*mut i32) -> HipError;
    hipDeviceGetPCIBusId: fn(*mut c_char, i32, i32) -> HipError;
    hipStreamBeginCapture: fn(Handle, i32) -> HipError;
    hipStreamEndCapture: fn(Handle, *mut Handle) -> HipError;
    hipStreamIsCapturing: fn(Handle, *mut i32) -> HipError;
    hipStreamBeginCaptureToGraph: fn(Handle, Handle, *const Handle, *const c_void, usize, i32) -> HipError;
    hipModuleLaunchKernel: fn(
        Handle, u32, u32, u32, u32, u32, u32, u32, Handle, *mut *mut c_void, *mut *mut c_void
    ) -> HipError;
    hipLaunchKernel: fn(*const c_void, Dim3, Dim3, *mut *mut c_void, usize, Handle) -> HipError;
    // Static registration (exports/registry.rs, state/registry.rs).
    __hipRegisterFatBinary: fn(*const c_void) -> *mut Handle;
    __hipRegisterFunction: fn(*mut Handle, *const c_void, *mut c_char, *const c_char, u32, *mut c_void, *mut c_void, *mut Dim3, *mut Dim3, *mut i32) -> ();
    __hipUnregisterFatBinary: fn(*mut Handle) -> ();
    __hipRegisterVar: fn(*mut Handle, *mut c_void, *mut c_char, *mut c_char, i32, usize, i32, i32) -> ();
    __hipRegisterManagedVar: fn(*mut c_void, *mut *mut c_void, *mut c_void, *const c_char, usize, u32) -> ();
    __hipRegisterSurface: fn(*mut Handle, *mut c_void, *mut c_char, *mut c_char, i32, i32) -> ();
    __hipRegisterTexture: fn(*mut Handle, *mut c_void, *mut c_char, *mut c_char, i32, i32, i32) -> ();
    hipModuleGetGlobal: fn(*mut *mut c_void, *mut usize, Handle, *const c_char) -> HipError;
}
