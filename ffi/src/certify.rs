//! The reference system's certification calls: loading with a manifest
//! (`rl_gpu_load_module_radiowave`) and what a module knows about its
//! kernels' scalar-cache use, scheduler profile and wavefront size.
//!
//! relaunch certifies every kernel itself at load (its own proof over the
//! machine code); a manifest only binds to the bytes (sha256), the target
//! and the checkable facts, and is refused with `RL_ERR_CERTIFICATION`
//! naming the field otherwise. A manifest's `vmem_only` claim the proof
//! rejects is logged and overridden, never trusted.

use std::ffi::c_char;

use facade::{ReadCache, SchedulerProfile};

use crate::gpu::RlGpu;
use crate::module::{load, module_obj, RlModule};
use crate::status::guard;
use crate::util::text;

/// Scheduler profile a manifest declares (`rl_module_scheduler_profile`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)]
pub enum RlSchedulerProfile {
    /// No manifest, or it names no profile.
    RlSchedulerUnknown = 0,
    RlSchedulerDefault = 1,
    RlSchedulerMaxIlp = 2,
    RlSchedulerIterativeIlp = 3,
    RlSchedulerMemoryClause = 4,
    RlSchedulerPipelineIlp = 5,
}

/// What a kernel may read through the scalar cache
/// (`rl_module_kernel_read_cache`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)]
pub enum RlMutableReadCache {
    /// Not proven VMEM-only (or unknown kernel): the full RMW boundary.
    RlMutableScalarOrUnknown = 0,
    /// Proven: scalar loads read only the kernarg segment.
    RlMutableVmemOnly = 1,
}

/// Loads a code object with a certification manifest (JSON: relaunch's
/// from `relaunch certify`, or the reference system's shape). Refused with
/// `RL_ERR_CERTIFICATION`, naming the field, when the manifest is malformed,
/// its `output_sha256` is not these bytes' or its `arch` is not the device's.
///
/// # Safety
/// `code` and `manifest` are valid for `len` / `manifest_len` bytes of
/// reads; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_gpu_load_module_radiowave(
    gpu: *const RlGpu,
    code: *const u8,
    len: usize,
    manifest: *const u8,
    manifest_len: usize,
    out: *mut *mut RlModule,
) -> i32 {
    let manifest = Some((manifest, manifest_len));
    let call = "rl_gpu_load_module_radiowave";
    // SAFETY: forwarded caller contract.
    unsafe { load(call, gpu, code, len, out, manifest) }
}

/// True when the module was loaded with an accepted manifest.
#[no_mangle]
pub extern "C" fn rl_module_radiowave_certified(module: *const RlModule) -> bool {
    guard("rl_module_radiowave_certified", false, || {
        Ok(module_obj(module)?.module.radiowave_certified())
    })
}

/// The manifest's scheduler profile; `RlSchedulerUnknown` without one (or
/// for a bad handle).
#[no_mangle]
pub extern "C" fn rl_module_scheduler_profile(module: *const RlModule) -> RlSchedulerProfile {
    use RlSchedulerProfile as P;
    guard("rl_module_scheduler_profile", P::RlSchedulerUnknown, || {
        Ok(match module_obj(module)?.module.scheduler_profile() {
            SchedulerProfile::Unknown => P::RlSchedulerUnknown,
            SchedulerProfile::Default => P::RlSchedulerDefault,
            SchedulerProfile::MaxIlp => P::RlSchedulerMaxIlp,
            SchedulerProfile::IterativeIlp => P::RlSchedulerIterativeIlp,
            SchedulerProfile::MemoryClause => P::RlSchedulerMemoryClause,
            SchedulerProfile::PipelineIlp => P::RlSchedulerPipelineIlp,
        })
    })
}

/// The module's real wavefront size (32 or 64), certified or not; 0 for a
/// bad handle or a module without kernels.
#[no_mangle]
pub extern "C" fn rl_module_wavefront_size(module: *const RlModule) -> u32 {
    guard("rl_module_wavefront_size", 0, || {
        Ok(module_obj(module)?.module.wavefront_size())
    })
}

/// relaunch's verdict for `symbol` (with or without `.kd`);
/// `RlMutableScalarOrUnknown` for an unknown symbol, NULL, or a bad handle.
///
/// # Safety
/// `symbol` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn rl_module_kernel_read_cache(
    module: *const RlModule,
    symbol: *const c_char,
) -> RlMutableReadCache {
    use RlMutableReadCache as R;
    guard(
        "rl_module_kernel_read_cache",
        R::RlMutableScalarOrUnknown,
        || {
            let obj = module_obj(module)?;
            // SAFETY: forwarded caller contract.
            let symbol = unsafe { text(symbol, "symbol") }?;
            Ok(match obj.module.read_cache(symbol) {
                ReadCache::VmemOnly => R::RlMutableVmemOnly,
                ReadCache::ScalarOrUnknown => R::RlMutableScalarOrUnknown,
            })
        },
    )
}
