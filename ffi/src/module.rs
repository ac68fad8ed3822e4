//! `RlModule`: loading code objects (with or without a certification
//! manifest), kernarg sizes, and packing a full kernarg segment
//! (`rl_module_pack_kernargs`, an extension to the seed's API).

use std::ffi::c_char;
use std::sync::Arc;

use facade::{Error, Geometry, Module};

use crate::gpu::{gpu_obj, GpuObj, RlGpu};
use crate::handles::{self, Handled};
use crate::status::{guard, status};
use crate::util::{clear, dims, non_null, put, record, slice, slice_mut, text, MAX_SLICE_BYTES};

/// Largest code object or manifest accepted (bytes).
pub const RL_MAX_CODE_OBJECT_BYTES: usize = 256 << 20;

/// A code object loaded on a GPU. Opaque; free with `rl_module_free`.
pub struct RlModule {
    _opaque: [u8; 0],
}

/// The object behind an `RlModule`; it keeps its GPU (and that GPU's
/// `rl_gpu_alloc` memory) alive.
pub(crate) struct ModuleObj {
    pub(crate) module: Module,
    pub(crate) _gpu: Arc<GpuObj>,
}

impl Handled for ModuleObj {
    type C = RlModule;
    const KIND: u8 = 2;
}

pub(crate) fn module_obj(module: *const RlModule) -> Result<Arc<ModuleObj>, Error> {
    handles::get::<ModuleObj>(module)
}

/// A module, one of its kernels by name and a byte range for that kernel
/// (kernargs), read from C the same way by every call taking the three:
/// checks `module`, reads `symbol` and `len` bytes at `bytes` (`what`, at
/// most `max`), in that order, so errors name the first bad argument.
///
/// # Safety
/// `symbol` is NULL or NUL-terminated; `bytes` is valid for `len` reads.
pub(crate) unsafe fn kernel_bytes<'a>(
    module: *const RlModule,
    symbol: *const c_char,
    bytes: *const u8,
    len: usize,
    what: &str,
    max: usize,
) -> Result<(Arc<ModuleObj>, &'a str, &'a [u8]), Error> {
    let module = module_obj(module)?;
    // SAFETY: forwarded caller contract.
    let symbol = unsafe { text(symbol, "symbol") }?;
    // SAFETY: forwarded caller contract.
    let bytes = unsafe { slice(bytes, len, what, max) }?;
    Ok((module, symbol, bytes))
}

/// # Safety
/// `code` (and the manifest) are valid for their lengths; `out` is NULL or
/// writable.
pub(crate) unsafe fn load(
    func: &str,
    gpu: *const RlGpu,
    code: *const u8,
    len: usize,
    out: *mut *mut RlModule,
    manifest: Option<(*const u8, usize)>,
) -> i32 {
    // SAFETY: forwarded caller contract (out is NULL or writable).
    unsafe { clear(out) };
    status(func, || {
        let gpu = gpu_obj(gpu)?;
        non_null(out, "out")?;
        // SAFETY: forwarded caller contract.
        let code = unsafe { slice(code, len, "code", RL_MAX_CODE_OBJECT_BYTES) }?;
        if code.is_empty() {
            return Err(record("the code object is empty (len 0)"));
        }
        let module = match manifest {
            None => gpu.gpu.load_module(code)?,
            Some((p, n)) => {
                // SAFETY: forwarded caller contract.
                let manifest = unsafe { slice(p, n, "manifest", RL_MAX_CODE_OBJECT_BYTES) }?;
                gpu.gpu.load_module_certified(code, manifest)?
            }
        };
        // SAFETY: forwarded caller contract.
        unsafe { handles::insert_into(out, ModuleObj { module, _gpu: gpu }) }
    })
}

/// Loads a code object (an ELF for this GPU's target, or a clang offload
/// bundle holding one) and stores the module in `*out` (NULL on failure).
///
/// # Safety
/// `code` is valid for `len` bytes of reads; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_gpu_load_module(
    gpu: *const RlGpu,
    code: *const u8,
    len: usize,
    out: *mut *mut RlModule,
) -> i32 {
    // SAFETY: forwarded caller contract.
    unsafe { load("rl_gpu_load_module", gpu, code, len, out, None) }
}

/// The same call as `rl_gpu_load_module_radiowave` (kept for programs
/// written against relaunch's earlier name).
///
/// # Safety
/// `code` and `manifest` are valid for `len` / `manifest_len` bytes of
/// reads; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_gpu_load_module_certified(
    gpu: *const RlGpu,
    code: *const u8,
    len: usize,
    manifest: *const u8,
    manifest_len: usize,
    out: *mut *mut RlModule,
) -> i32 {
    let manifest = Some((manifest, manifest_len));
    let call = "rl_gpu_load_module_certified";
    // SAFETY: forwarded caller contract.
    unsafe { load(call, gpu, code, len, out, manifest) }
}

/// The kernarg segment size of `symbol` (with or without `.kd`), or -1
/// when the module has no such kernel or an argument is bad.
///
/// # Safety
/// `symbol` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn rl_module_kernarg_size(
    module: *const RlModule,
    symbol: *const c_char,
) -> i64 {
    guard("rl_module_kernarg_size", -1, || {
        let obj = module_obj(module)?;
        // SAFETY: forwarded caller contract.
        let symbol = unsafe { text(symbol, "symbol") }?;
        obj.module
            .kernarg_size(symbol)
            .map(i64::from)
            .ok_or_else(|| obj.module.unknown_kernel(symbol).into())
    })
}

/// Extension: packs the full kernarg segment of `symbol` for one launch.
/// `explicit_args` holds the explicit arguments at their metadata offsets
/// (it may stop after the last one); the hidden arguments (block counts,
/// group sizes, remainders, grid dims, dynamic LDS size) are filled from
/// the geometry (grid and block in work-items). Writes
/// `rl_module_kernarg_size` bytes to `out` (`out_len` must be at least
/// that) and stores the count in `*written` (may be NULL). A size query
/// (`out` NULL, `out_len` 0, `written` set) stores the size and succeeds.
///
/// # Safety
/// `symbol` is NULL or NUL-terminated; `explicit_args` is valid for
/// `explicit_len` bytes; `out` for `out_len` bytes of writes; `written`
/// is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_module_pack_kernargs(
    module: *const RlModule,
    symbol: *const c_char,
    explicit_args: *const u8,
    explicit_len: usize,
    grid_x: u32,
    grid_y: u32,
    grid_z: u32,
    block_x: u32,
    block_y: u32,
    block_z: u32,
    dynamic_group_bytes: u32,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> i32 {
    status("rl_module_pack_kernargs", || {
        let limit = RL_MAX_CODE_OBJECT_BYTES;
        // SAFETY: forwarded caller contract.
        let (obj, symbol, explicit) = unsafe {
            kernel_bytes(
                module,
                symbol,
                explicit_args,
                explicit_len,
                "explicit_args",
                limit,
            )
        }?;
        let geometry = Geometry {
            grid: dims(grid_x, grid_y, grid_z),
            block: dims(block_x, block_y, block_z),
            dynamic_group_bytes,
        };
        let packed = obj.module.pack_kernargs(symbol, explicit, &geometry)?;
        if out.is_null() && out_len == 0 && !written.is_null() {
            // SAFETY: checked non-NULL; caller contract for validity.
            return unsafe { put(written, packed.len(), "written") };
        }
        non_null(out, "out")?;
        if out_len < packed.len() {
            return Err(record(format!(
                "out has {out_len} bytes; the {symbol} kernarg segment needs {}",
                packed.len()
            )));
        }
        // SAFETY: forwarded caller contract; packed.len() <= out_len.
        let dst = unsafe { slice_mut(out, packed.len(), "out", MAX_SLICE_BYTES) }?;
        dst.copy_from_slice(&packed);
        if !written.is_null() {
            // SAFETY: checked non-NULL; caller contract for validity.
            unsafe { put(written, packed.len(), "written") }?;
        }
        Ok(())
    })
}

/// Drops this handle. IBs and graphs that use the module keep it loaded
/// until they are freed. NULL is a no-op.
#[no_mangle]
pub extern "C" fn rl_module_free(module: *mut RlModule) {
    handles::free::<ModuleObj>("rl_module_free", module);
}
