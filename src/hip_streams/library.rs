//! The HIP runtime library and the slice of its C ABI the multistream
//! fallback calls, resolved once per process.
//!
//! Found the way the interposer finds the real HIP: a HIP already in the
//! process first (`RELAUNCH_REAL_HIP` if set, else the `libamdhip64`
//! sonames, newest first, opened with `RTLD_NOLOAD`), so an engine that
//! links HIP shares its runtime; else loaded: the library named in
//! `RELAUNCH_REAL_HIP` (the user's choice, nothing else tried), else the
//! first soname that loads. ABI facts (signatures, flag values, error
//! codes) are those of the public `hip_runtime_api.h`.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::{Arc, OnceLock};

use libloading::os::unix::{Library, RTLD_LAZY, RTLD_LOCAL};

use super::HipError;

/// Environment variable naming the HIP library (shared with the interposer).
pub const REAL_HIP_ENV: &str = "RELAUNCH_REAL_HIP";

/// Sonames of the HIP runtime library, newest first (as the interposer).
const HIP_LIBRARIES: [&str; 4] = [
    "libamdhip64.so.7",
    "libamdhip64.so.6",
    "libamdhip64.so.5",
    "libamdhip64.so",
];

/// glibc's `RTLD_NOLOAD` (`<bits/dlfcn.h>`): a handle only to a library
/// already loaded.
const RTLD_NOLOAD: c_int = 0x4;

/// `hipError_t`.
pub(crate) type HipStatus = c_int;
/// `hipSuccess`.
pub(crate) const HIP_SUCCESS: HipStatus = 0;
/// `hipErrorNotReady`: work recorded before an event is still running.
pub(crate) const HIP_ERROR_NOT_READY: HipStatus = 600;
/// `hipStreamNonBlocking`: no implicit ordering with the null stream.
pub(crate) const HIP_STREAM_NON_BLOCKING: c_uint = 0x01;
/// `hipEventDisableTiming`: completion only, the cheapest event.
pub(crate) const HIP_EVENT_DISABLE_TIMING: c_uint = 0x2;
/// `hipMemcpyDefault`: the direction from the pointers (unified addressing).
pub(crate) const HIP_MEMCPY_DEFAULT: c_int = 4;
/// `HIP_LAUNCH_PARAM_BUFFER_POINTER`, `_SIZE`, `_END`: the `extra` array
/// of `hipModuleLaunchKernel` passing a packed kernarg block.
pub(crate) const LAUNCH_PARAM_BUFFER_POINTER: usize = 0x01;
pub(crate) const LAUNCH_PARAM_BUFFER_SIZE: usize = 0x02;
pub(crate) const LAUNCH_PARAM_END: usize = 0x03;

/// Opaque HIP handles (`hipModule_t`, `hipFunction_t`, `hipStream_t`,
/// `hipEvent_t`): pointers HIP owns.
pub(crate) type Handle = *mut c_void;

macro_rules! hip_table {
    ($($name:ident : fn($($arg:ty),*) -> $ret:ty;)*) => {
        /// The HIP functions used here, resolved from one library.
        #[allow(non_snake_case)]
        pub(crate) struct HipFns {
            $(pub(crate) $name: unsafe extern "C" fn($($arg),*) -> $ret,)*
        }

        impl HipFns {
            fn resolve(lib: &Library, path: &str) -> Result<HipFns, HipError> {
                Ok(HipFns {
                    $($name: {
                        let name = concat!(stringify!($name), "\0");
                        // SAFETY: the symbol is the HIP function of this
                        // name, whose C signature is declared here as in
                        // hip_runtime_api.h; the library outlives the table
                        // (both live in the process-wide `HipLibrary`).
                        let sym = unsafe { lib.get::<unsafe extern "C" fn($($arg),*) -> $ret>(name.as_bytes()) }
                            .map_err(|e| HipError::Library {
                                message: format!(
                                    "{path} has no {} ({e}); it is not a HIP runtime library",
                                    stringify!($name)
                                ),
                            })?;
                        *sym
                    },)*
                })
            }
        }
    };
}

hip_table! {
    hipGetDeviceCount: fn(*mut c_int) -> HipStatus;
    hipSetDevice: fn(c_int) -> HipStatus;
    hipGetErrorString: fn(HipStatus) -> *const c_char;
    hipModuleLoadData: fn(*mut Handle, *const c_void) -> HipStatus;
    hipModuleGetFunction: fn(*mut Handle, Handle, *const c_char) -> HipStatus;
    hipModuleUnload: fn(Handle) -> HipStatus;
    hipModuleLaunchKernel: fn(
        Handle, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Handle,
        *mut *mut c_void, *mut *mut c_void
    ) -> HipStatus;
    hipStreamCreateWithFlags: fn(*mut Handle, c_uint) -> HipStatus;
    hipStreamDestroy: fn(Handle) -> HipStatus;
    hipEventCreateWithFlags: fn(*mut Handle, c_uint) -> HipStatus;
    hipEventRecord: fn(Handle, Handle) -> HipStatus;
    hipEventQuery: fn(Handle) -> HipStatus;
    hipEventDestroy: fn(Handle) -> HipStatus;
    hipMemcpyAsync: fn(*mut c_void, *const c_void, usize, c_int, Handle) -> HipStatus;
    hipMemsetD32Async: fn(*mut c_void, c_int, usize, Handle) -> HipStatus;
    hipMalloc: fn(*mut *mut c_void, usize) -> HipStatus;
    hipFree: fn(*mut c_void) -> HipStatus;
    hipMemcpy: fn(*mut c_void, *const c_void, usize, c_int) -> HipStatus;
}

/// The loaded HIP library and its functions.
pub(crate) struct HipLibrary {
    pub(crate) fns: HipFns,
    /// Which library (a path or soname), for messages.
    pub(crate) name: String,
    _lib: Library,
}

impl HipLibrary {
    /// The process's HIP library, found once (a failure is kept too, so
    /// every caller sees the same reason).
    pub(crate) fn get() -> Result<Arc<HipLibrary>, HipError> {
        static LIB: OnceLock<Result<Arc<HipLibrary>, HipError>> = OnceLock::new();
        LIB.get_or_init(|| HipLibrary::find().map(Arc::new)).clone()
    }

    fn find() -> Result<HipLibrary, HipError> {
        let named = std::env::var(REAL_HIP_ENV).ok().filter(|v| !v.is_empty());
        let candidates: Vec<&str> = named
            .iter()
            .map(String::as_str)
            .chain(HIP_LIBRARIES)
            .collect();
        // A HIP already in the process: share its runtime.
        for name in &candidates {
            // SAFETY: RTLD_NOLOAD never loads (so runs no initialisers); it
            // returns a new reference to a library already loaded, or fails.
            if let Ok(lib) = unsafe { Library::open(Some(name), RTLD_LAZY | RTLD_NOLOAD) } {
                tracing::debug!(library = name, "using the HIP already loaded");
                return Self::with(lib, name);
            }
        }
        let to_load: Vec<&str> = match &named {
            Some(n) => vec![n.as_str()],
            None => HIP_LIBRARIES.to_vec(),
        };
        let mut tried = Vec::new();
        for name in to_load {
            // SAFETY: loading runs the library's initialisers; only the
            // HIP runtime the user or the ROCm install names is loaded.
            match unsafe { Library::open(Some(name), RTLD_LAZY | RTLD_LOCAL) } {
                Ok(lib) => return Self::with(lib, name),
                Err(e) => tried.push(format!("{name}: {e}")),
            }
        }
        let how = match named {
            Some(n) => format!("{REAL_HIP_ENV}={n} does not load"),
            None => "no HIP runtime library loads".to_string(),
        };
        Err(HipError::Library {
            message: format!(
                "{how} ({}); install HIP (libamdhip64) or name it in {REAL_HIP_ENV}",
                tried.join("; ")
            ),
        })
    }

    fn with(lib: Library, name: &str) -> Result<HipLibrary, HipError> {
        Ok(HipLibrary {
            fns: HipFns::resolve(&lib, name)?,
            name: name.to_string(),
            _lib: lib,
        })
    }

    /// `Ok` for `hipSuccess`, else the error naming `function` and HIP's
    /// own text for the code.
    pub(crate) fn check(&self, function: &'static str, status: HipStatus) -> Result<(), HipError> {
        if status == HIP_SUCCESS {
            return Ok(());
        }
        Err(HipError::Call {
            function,
            code: status,
            message: self.error_text(status),
        })
    }

    /// HIP's text for a status code.
    pub(crate) fn error_text(&self, status: HipStatus) -> String {
        // SAFETY: hipGetErrorString takes any code and returns a static,
        // NUL-terminated string (or null, handled).
        let text = unsafe { (self.fns.hipGetErrorString)(status) };
        if text.is_null() {
            return format!("hipError {status}");
        }
        // SAFETY: non-null, NUL-terminated, static (above).
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    }
}
