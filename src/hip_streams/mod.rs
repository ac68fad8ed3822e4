//! HIP multistream fallback: a graph launched through HIP streams and
//! events, for a process where relaunch cannot reach ROCr itself (neither
//! retained PM4 nor public AQL is possible) but HIP runs.
//!
//! Modules loaded through [`HipDevice::load_module`] are HIP modules; a
//! graph of them instantiates with every lane on a HIP stream
//! ([`crate::LaneKind::Hip`]) and replays with [`crate::GraphExec::launch_hip`]:
//! one non-blocking stream per lane, each node a `hipModuleLaunchKernel`
//! (or a HIP copy/fill for a transfer node) in lane order, one event per
//! lane marking the replay's end. Kernarg patches between replays apply
//! to the next launch, as on the other paths. What this path cannot save
//! is HIP's per-launch host cost: it is correct, not fast.

mod exec;
mod library;

use std::ffi::{c_int, c_void, CString};
use std::sync::Arc;

use relaunch_device::codeobj::CodeObject;

use crate::error::{Error, Result};
use crate::module::{Loaded, Module, ModuleInner};
use crate::refusal::Refusal;
use library::{Handle, HipLibrary, HIP_MEMCPY_DEFAULT};

pub use library::REAL_HIP_ENV;

pub(crate) use exec::{blocks, HipLanes};

/// A failure of the HIP path.
#[derive(Debug, Clone, thiserror::Error)]
pub enum HipError {
    /// No usable HIP runtime library (device class).
    #[error("HIP runtime: {message}")]
    Library { message: String },
    /// A HIP call failed: which, its code and HIP's text.
    #[error("{function} failed: {message} (hipError {code})")]
    Call {
        function: &'static str,
        code: i32,
        message: String,
    },
    /// A replay did not finish in time; names the lanes still running.
    #[error(
        "HIP stream replay did not finish within {waited_ms} ms: lane(s) {lanes:?} still running"
    )]
    Timeout { waited_ms: u128, lanes: Vec<usize> },
}

/// A GPU as HIP numbers it, reached only through HIP.
#[derive(Clone)]
pub struct HipDevice {
    inner: Arc<DeviceInner>,
}

struct DeviceInner {
    lib: Arc<HipLibrary>,
    ordinal: i32,
}

impl std::fmt::Debug for HipDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl HipDevice {
    /// HIP device `ordinal` (after `ROCR_VISIBLE_DEVICES` /
    /// `HIP_VISIBLE_DEVICES` filtering, as HIP numbers them).
    pub fn open(ordinal: i32) -> Result<HipDevice> {
        let lib = HipLibrary::get().map_err(Error::Hip)?;
        let mut count: c_int = 0;
        // SAFETY: a valid out pointer for the count.
        let status = unsafe { (lib.fns.hipGetDeviceCount)(&mut count) };
        lib.check("hipGetDeviceCount", status)
            .map_err(|e| Error::Hip(e).context("opening a HIP device"))?;
        if ordinal < 0 || ordinal >= count {
            return Err(Refusal::NoHipDevice {
                ordinal,
                library: lib.name.clone(),
                count,
            }
            .into());
        }
        Ok(HipDevice {
            inner: Arc::new(DeviceInner { lib, ordinal }),
        })
    }

    /// HIP's ordinal of this device.
    pub fn ordinal(&self) -> i32 {
        self.inner.ordinal
    }

    /// `hip:<ordinal> (<library>)`, for messages.
    pub fn describe(&self) -> String {
        format!("hip:{} ({})", self.inner.ordinal, self.inner.lib.name)
    }

    pub(crate) fn lib(&self) -> &HipLibrary {
        &self.inner.lib
    }

    pub(crate) fn same_as(&self, other: &HipDevice) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Makes this device HIP's current one on the calling thread (HIP's
    /// streams, modules and allocations belong to the current device).
    pub(crate) fn make_current(&self) -> Result<&HipLibrary> {
        let lib = self.lib();
        // SAFETY: any ordinal is accepted; a bad one returns an error.
        let status = unsafe { (lib.fns.hipSetDevice)(self.inner.ordinal) };
        lib.check("hipSetDevice", status).map_err(Error::Hip)?;
        Ok(lib)
    }

    /// Loads a code object (an ELF, or an offload bundle with one GPU
    /// entry) as a HIP module. Its kernels run only on HIP streams.
    pub fn load_module(&self, bytes: &[u8]) -> Result<Module> {
        let code = CodeObject::from_bundle_or_elf(bytes, None)
            .map_err(|e| Error::from(e).context("loading module through HIP"))?;
        let lib = self.make_current()?;
        let mut module: Handle = std::ptr::null_mut();
        // SAFETY: the image is a complete ELF code object that stays alive
        // for the call (HIP copies what it keeps); valid out pointer.
        let status =
            unsafe { (lib.fns.hipModuleLoadData)(&mut module, code.bytes().as_ptr().cast()) };
        lib.check("hipModuleLoadData", status)
            .map_err(|e| Error::Hip(e).context(format!("loading a {} module", code.target())))?;
        let mut loaded = HipModule {
            device: self.clone(),
            module,
            functions: Vec::with_capacity(code.kernels().len()),
        };
        for kernel in code.kernels() {
            let name =
                CString::new(kernel.name.as_str()).map_err(|_| Refusal::NulInKernelName {
                    name: kernel.name.clone(),
                })?;
            let mut function: Handle = std::ptr::null_mut();
            // SAFETY: a live module handle, a NUL-terminated name, a valid
            // out pointer.
            let status =
                unsafe { (lib.fns.hipModuleGetFunction)(&mut function, module, name.as_ptr()) };
            lib.check("hipModuleGetFunction", status)
                .map_err(|e| Error::Hip(e).context(format!("kernel {}", kernel.name)))?;
            loaded.functions.push(function as usize);
        }
        Ok(Module {
            inner: Arc::new(ModuleInner {
                code,
                certs: Vec::new(),
                manifest: None,
                graph_id: std::sync::OnceLock::new(),
                loaded: Loaded::Hip(loaded),
            }),
        })
    }

    /// Device memory from `hipMalloc` (for the graph's buffers and tests).
    pub fn alloc(&self, bytes: usize) -> Result<HipBuffer> {
        let lib = self.make_current()?;
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out pointer; HIP owns the memory until hipFree.
        let status = unsafe { (lib.fns.hipMalloc)(&mut ptr, bytes) };
        lib.check("hipMalloc", status).map_err(Error::Hip)?;
        Ok(HipBuffer {
            device: self.clone(),
            ptr: ptr as usize,
            len: bytes,
        })
    }
}

/// A kernel-bearing module as HIP loaded it: one function per kernel of
/// the code object, in its order.
pub(crate) struct HipModule {
    device: HipDevice,
    module: Handle,
    functions: Vec<usize>,
}

// SAFETY: the handles are HIP's, which HIP allows any thread to use; they
// are only read here, and freed once (Drop).
unsafe impl Send for HipModule {}
// SAFETY: as above; shared use is read-only.
unsafe impl Sync for HipModule {}

impl HipModule {
    pub(crate) fn device(&self) -> &HipDevice {
        &self.device
    }

    /// The function of the code object's kernel at `index`.
    pub(crate) fn function(&self, index: usize) -> Option<Handle> {
        self.functions.get(index).map(|&f| f as Handle)
    }
}

impl Drop for HipModule {
    fn drop(&mut self) {
        let Ok(lib) = self.device.make_current() else {
            return;
        };
        // SAFETY: the module handle is live and unloaded once; graphs
        // using it hold the `Module` (so nothing launches it any more).
        let status = unsafe { (lib.fns.hipModuleUnload)(self.module) };
        if let Err(e) = lib.check("hipModuleUnload", status) {
            tracing::warn!("{e}");
        }
    }
}

/// Device memory allocated through HIP; freed on drop.
pub struct HipBuffer {
    device: HipDevice,
    ptr: usize,
    len: usize,
}

impl std::fmt::Debug for HipBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HipBuffer({:#x}, {} bytes)", self.ptr, self.len)
    }
}

impl HipBuffer {
    /// Its device address (what kernargs carry).
    pub fn address(&self) -> u64 {
        self.ptr as u64
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn span(&self, offset: usize, bytes: usize) -> Result<*mut u8> {
        match offset.checked_add(bytes) {
            Some(end) if end <= self.len => Ok((self.ptr + offset) as *mut u8),
            _ => Err(Refusal::HipBufferRange {
                offset,
                bytes,
                len: self.len,
            }
            .into()),
        }
    }

    /// Copies `src` in at `offset` (synchronous `hipMemcpy`).
    pub fn write(&self, offset: usize, src: &[u8]) -> Result<()> {
        let dst = self.span(offset, src.len())?;
        let lib = self.device.make_current()?;
        // SAFETY: the range lies inside this live allocation (checked);
        // `src` is valid for its length.
        let status = unsafe {
            (lib.fns.hipMemcpy)(
                dst.cast(),
                src.as_ptr().cast(),
                src.len(),
                HIP_MEMCPY_DEFAULT,
            )
        };
        lib.check("hipMemcpy", status).map_err(Error::Hip)
    }

    /// Copies out from `offset` into `dst` (synchronous `hipMemcpy`).
    pub fn read(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        let src = self.span(offset, dst.len())?;
        let lib = self.device.make_current()?;
        // SAFETY: as `write`, the other way.
        let status = unsafe {
            (lib.fns.hipMemcpy)(
                dst.as_mut_ptr().cast(),
                src.cast(),
                dst.len(),
                HIP_MEMCPY_DEFAULT,
            )
        };
        lib.check("hipMemcpy", status).map_err(Error::Hip)
    }
}

impl Drop for HipBuffer {
    fn drop(&mut self) {
        let Ok(lib) = self.device.make_current() else {
            return;
        };
        // SAFETY: freed once; the caller keeps buffers alive while graphs
        // that use them run (as with every device allocation).
        let status = unsafe { (lib.fns.hipFree)(self.ptr as *mut c_void) };
        if let Err(e) = lib.check("hipFree", status) {
            tracing::warn!("{e}");
        }
    }
}
