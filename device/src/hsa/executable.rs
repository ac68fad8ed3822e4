//! `Executable`: code-object bytes loaded for one GPU agent through a
//! reader from memory, frozen, with kernel lookup by name.

use std::ffi::{c_void, CString};
use std::sync::Arc;

use relaunch_hsa_sys as sys;

use super::agent::AgentInfo;
use super::runtime::{Runtime, RuntimeInner};
use super::HsaError;

/// A kernel found in an executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSymbol {
    /// Symbol name as looked up (`NAME.kd`).
    pub name: String,
    /// Address of the kernel descriptor: what AQL packets and COMPUTE_PGM
    /// derivations start from.
    pub kernel_object: u64,
    pub kernarg_size: u32,
    pub kernarg_alignment: u32,
    pub group_segment_size: u32,
    pub private_segment_size: u32,
}

/// A frozen executable; destroyed (then its reader) on drop.
#[derive(Debug)]
pub struct Executable {
    inner: Arc<RuntimeInner>,
    handle: sys::Executable,
    reader: sys::CodeObjectReader,
    agent: sys::Agent,
    // The reader reads from these bytes; they must not move or change
    // until it is destroyed.
    _bytes: Box<[u8]>,
}

// SAFETY: executables and readers are runtime objects usable from any
// thread; the owned bytes are immutable.
unsafe impl Send for Executable {}
// SAFETY: `&self` methods only query the frozen executable.
unsafe impl Sync for Executable {}

impl Runtime {
    /// Loads `code_object` (an AMDGPU ELF) for `gpu` and freezes it.
    pub fn load_executable(
        &self,
        gpu: &AgentInfo,
        code_object: &[u8],
    ) -> Result<Executable, HsaError> {
        if code_object.is_empty() {
            return Err(HsaError::Invalid {
                what: "code object",
                problem: "0 bytes; pass the contents of a .co/.hsaco file".to_string(),
            });
        }
        let inner = &self.inner;
        let bytes: Box<[u8]> = code_object.into();
        let mut reader = sys::CodeObjectReader::default();
        // SAFETY: `bytes` is heap memory owned by the Executable built below
        // (or freed only after the reader is destroyed on the error paths).
        let status = unsafe {
            (inner.api().code_object_reader_create_from_memory)(
                bytes.as_ptr().cast::<c_void>(),
                bytes.len(),
                &mut reader,
            )
        };
        inner.check("hsa_code_object_reader_create_from_memory", status)?;
        let mut handle = sys::Executable::default();
        // SAFETY: initialised runtime; null options; valid out-pointer.
        let status = unsafe {
            (inner.api().executable_create_alt)(
                sys::HSA_PROFILE_FULL,
                sys::HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
                std::ptr::null(),
                &mut handle,
            )
        };
        if let Err(err) = inner.check("hsa_executable_create_alt", status) {
            destroy_reader(inner, reader);
            return Err(err);
        }
        // From here the Executable's Drop cleans up on any error.
        let executable = Executable {
            inner: Arc::clone(inner),
            handle,
            reader,
            agent: gpu.handle,
            _bytes: bytes,
        };
        let mut loaded = sys::LoadedCodeObject::default();
        // SAFETY: live executable, reader and agent of this runtime; null options.
        let status = unsafe {
            (inner.api().executable_load_agent_code_object)(
                handle,
                gpu.handle,
                reader,
                std::ptr::null(),
                &mut loaded,
            )
        };
        inner.check("hsa_executable_load_agent_code_object", status)?;
        // SAFETY: live executable; null options.
        let status = unsafe { (inner.api().executable_freeze)(handle, std::ptr::null()) };
        inner.check("hsa_executable_freeze", status)?;
        Ok(executable)
    }
}

fn destroy_reader(inner: &RuntimeInner, reader: sys::CodeObjectReader) {
    // SAFETY: reader created by this runtime and not yet destroyed.
    let status = unsafe { (inner.api().code_object_reader_destroy)(reader) };
    if status != sys::HSA_STATUS_SUCCESS {
        tracing::warn!(
            "hsa_code_object_reader_destroy failed: {}",
            inner.describe(status)
        );
    }
}

/// The symbol name for kernel `name`: its descriptor symbol `NAME.kd`.
pub fn descriptor_symbol_name(name: &str) -> String {
    if name.ends_with(".kd") {
        name.to_string()
    } else {
        format!("{name}.kd")
    }
}

impl Executable {
    /// Looks up kernel `name` (with or without the `.kd` suffix).
    pub fn kernel(&self, name: &str) -> Result<KernelSymbol, HsaError> {
        let full = descriptor_symbol_name(name);
        let c_name = CString::new(full.clone()).map_err(|_| HsaError::Invalid {
            what: "kernel name",
            problem: format!("{name:?} contains a NUL byte"),
        })?;
        let mut symbol = sys::ExecutableSymbol::default();
        // SAFETY: live frozen executable; NUL-terminated name; agent pointer
        // to a local that outlives the call.
        let status = unsafe {
            (self.inner.api().executable_get_symbol_by_name)(
                self.handle,
                c_name.as_ptr(),
                &self.agent,
                &mut symbol,
            )
        };
        self.inner
            .check("hsa_executable_get_symbol_by_name", status)
            .map_err(|err| match err {
                HsaError::Call {
                    status, message, ..
                } => HsaError::Call {
                    call: "hsa_executable_get_symbol_by_name",
                    status,
                    message: format!("{message} (looking up {full})"),
                },
                other => other,
            })?;
        // SAFETY (all below): live symbol; types as documented in hsa.h.
        let kind: u32 = unsafe {
            self.symbol_info(symbol, sys::HSA_EXECUTABLE_SYMBOL_INFO_TYPE, "TYPE", 0u32)
        }?;
        if kind != sys::HSA_SYMBOL_KIND_KERNEL {
            return Err(HsaError::Invalid {
                what: "kernel name",
                problem: format!("{full} is a symbol of kind {kind}, not a kernel"),
            });
        }
        Ok(KernelSymbol {
            kernel_object: unsafe {
                self.symbol_info(
                    symbol,
                    sys::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
                    "KERNEL_OBJECT",
                    0u64,
                )
            }?,
            kernarg_size: unsafe {
                self.symbol_info(
                    symbol,
                    sys::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                    "KERNARG_SEGMENT_SIZE",
                    0u32,
                )
            }?,
            kernarg_alignment: unsafe {
                self.symbol_info(
                    symbol,
                    sys::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT,
                    "KERNARG_SEGMENT_ALIGNMENT",
                    0u32,
                )
            }?,
            group_segment_size: unsafe {
                self.symbol_info(
                    symbol,
                    sys::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
                    "GROUP_SEGMENT_SIZE",
                    0u32,
                )
            }?,
            private_segment_size: unsafe {
                self.symbol_info(
                    symbol,
                    sys::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
                    "PRIVATE_SEGMENT_SIZE",
                    0u32,
                )
            }?,
            name: full,
        })
    }

    /// Raw `hsa_executable_symbol_get_info` into `T`.
    ///
    /// # Safety
    /// `T` must be the type the runtime writes for `attribute`.
    unsafe fn symbol_info<T: Copy>(
        &self,
        symbol: sys::ExecutableSymbol,
        attribute: sys::ExecutableSymbolInfo,
        label: &'static str,
        init: T,
    ) -> Result<T, HsaError> {
        let mut value = init;
        // SAFETY: live symbol; `T` matches per the caller.
        let status = unsafe {
            (self.inner.api().executable_symbol_get_info)(
                symbol,
                attribute,
                (&mut value as *mut T).cast::<c_void>(),
            )
        };
        self.inner
            .check("hsa_executable_symbol_get_info", status)
            .map_err(|err| match err {
                HsaError::Call {
                    call,
                    status,
                    message,
                } => HsaError::Call {
                    call,
                    status,
                    message: format!("{message} (attribute {label})"),
                },
                other => other,
            })?;
        Ok(value)
    }
}

impl Drop for Executable {
    fn drop(&mut self) {
        // SAFETY: we own the executable; the runtime is alive (Arc held).
        let status = unsafe { (self.inner.api().executable_destroy)(self.handle) };
        if status != sys::HSA_STATUS_SUCCESS {
            tracing::warn!(
                "hsa_executable_destroy failed: {}",
                self.inner.describe(status)
            );
        }
        // The reader goes after the executable that loaded from it; the
        // bytes are dropped after this (field drop).
        destroy_reader(&self.inner, self.reader);
    }
}
