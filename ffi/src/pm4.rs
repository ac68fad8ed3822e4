//! Direct retained PM4: `RlPm4Builder` records dispatches and boundaries,
//! `rl_pm4_finalize` installs it as an `RlPm4Ib`, which replays (sync or
//! async) and takes kernarg patches in place.

use std::collections::VecDeque;
use std::ffi::c_char;
use std::sync::Arc;

use facade::{Error, ErrorClass, Pm4Builder, Pm4Ib, Replay, REPLAY_TIMEOUT};
use parking_lot::Mutex;

use crate::gpu::{gpu_obj, GpuObj, RlGpu};
use crate::handles::{self, Handled};
use crate::module::{kernel_bytes, module_obj, ModuleObj, RlModule};
use crate::status::{guard, status};
use crate::util::{dims, lock_state, null, slice, text};
use crate::verbs::{
    self, RlPm4FinalizeOptions, FINALIZE_DEFAULT, RL_PROFILE_NONE, RL_REPLAY_ASYNC,
};

/// Largest kernarg block (or patch) accepted from C (bytes).
pub const RL_MAX_KERNARG_BYTES: usize = 64 * 1024;
/// Most `rl_pm4_replay_async` submissions one IB keeps before
/// `rl_pm4_wait` must be called.
pub const RL_MAX_REPLAYS_IN_FLIGHT: usize = 1024;

/// A recording of dispatches and boundaries. Opaque; consumed by
/// `rl_pm4_finalize` (or freed with `rl_pm4_builder_free`).
pub struct RlPm4Builder {
    _opaque: [u8; 0],
}

/// A retained IB installed on a queue. Opaque; free with `rl_pm4_ib_free`.
pub struct RlPm4Ib {
    _opaque: [u8; 0],
}

pub(crate) struct BuilderObj {
    /// Keeps the GPU's `rl_gpu_alloc` memory alive while recording.
    _gpu: Arc<GpuObj>,
    /// `None` once finalized.
    builder: Mutex<Option<Pm4Builder>>,
}

impl Handled for BuilderObj {
    type C = RlPm4Builder;
    const KIND: u8 = 3;
}

impl BuilderObj {
    fn with<T>(&self, f: impl FnOnce(&mut Pm4Builder) -> Result<T, Error>) -> Result<T, Error> {
        let mut guard = self.builder.lock();
        let builder = guard.as_mut().ok_or_else(consumed)?;
        f(builder)
    }

    /// Takes the recording out (finalize).
    pub(crate) fn take(&self) -> Result<Pm4Builder, Error> {
        self.builder.lock().take().ok_or_else(consumed)
    }
}

fn consumed() -> Error {
    Error::new(
        ErrorClass::Handle,
        "the builder was consumed by rl_pm4_finalize already",
    )
}

pub(crate) struct IbObj {
    /// Locked for patches (`&mut`) and submissions, not for waits (a
    /// profiled replay holds it throughout: its timestamps are its own).
    /// Always locked through `lock_state`, which refuses a kernel twin a
    /// busy lock instead of letting it wait for its own replay.
    pub(crate) ib: Mutex<Pm4Ib>,
    /// Keeps the GPU's `rl_gpu_alloc` memory alive while the IB exists.
    pub(crate) _gpu: Arc<GpuObj>,
    pub(crate) pending: Mutex<VecDeque<Replay>>,
}

impl Handled for IbObj {
    type C = RlPm4Ib;
    const KIND: u8 = 4;
}

/// A new, empty builder for `gpu` (NULL on failure).
#[no_mangle]
pub extern "C" fn rl_pm4_builder_new(gpu: *const RlGpu) -> *mut RlPm4Builder {
    guard("rl_pm4_builder_new", std::ptr::null_mut(), || {
        let gpu = gpu_obj(gpu)?;
        let builder = gpu.gpu.builder();
        handles::insert(BuilderObj {
            _gpu: gpu,
            builder: Mutex::new(Some(builder)),
        })
    })
}

/// Frees a builder that was not finalized. NULL is a no-op.
#[no_mangle]
pub extern "C" fn rl_pm4_builder_free(builder: *mut RlPm4Builder) {
    handles::free::<BuilderObj>("rl_pm4_builder_free", builder);
}

/// A module, its kernel `symbol` and a full kernarg segment for it, read
/// from C (see `kernel_bytes`), as dispatches and graph nodes take them.
///
/// # Safety
/// `symbol` is NULL or NUL-terminated; `kernarg` is valid for
/// `kernarg_len` bytes of reads.
pub(crate) unsafe fn kernel_kernarg<'a>(
    module: *const RlModule,
    symbol: *const c_char,
    kernarg: *const u8,
    kernarg_len: usize,
) -> Result<(Arc<ModuleObj>, &'a str, &'a [u8]), Error> {
    // SAFETY: forwarded caller contract.
    unsafe {
        kernel_bytes(
            module,
            symbol,
            kernarg,
            kernarg_len,
            "kernarg",
            RL_MAX_KERNARG_BYTES,
        )
    }
}

/// Records a dispatch of `symbol` (with or without `.kd`) from `module`.
/// Grid and block are in work-items; `kernarg` is the full kernarg segment
/// (`rl_module_kernarg_size` bytes, hidden arguments included: see
/// `rl_module_pack_kernargs`).
///
/// # Safety
/// `symbol` is NULL or NUL-terminated; `kernarg` is valid for
/// `kernarg_len` bytes of reads.
#[no_mangle]
pub unsafe extern "C" fn rl_pm4_dispatch(
    builder: *mut RlPm4Builder,
    module: *const RlModule,
    symbol: *const c_char,
    grid_x: u32,
    grid_y: u32,
    grid_z: u32,
    block_x: u32,
    block_y: u32,
    block_z: u32,
    dynamic_group_bytes: u32,
    kernarg: *const u8,
    kernarg_len: usize,
) -> i32 {
    status("rl_pm4_dispatch", || {
        let b = handles::get::<BuilderObj>(builder)?;
        // SAFETY: forwarded caller contract.
        let (m, symbol, kernarg) = unsafe { kernel_kernarg(module, symbol, kernarg, kernarg_len) }?;
        let grid = dims(grid_x, grid_y, grid_z);
        let block = dims(block_x, block_y, block_z);
        b.with(|b| {
            b.dispatch(&m.module, symbol, grid, block, dynamic_group_bytes, kernarg)
                .map(drop)
        })
    })
}

/// Read-after-write boundary before the next dispatch: it waits for
/// everything recorded so far and invalidates the caches the consumer
/// reads through. `consumer_module`/`consumer_symbol` name the next
/// dispatch's kernel (both NULL: the generic boundary).
///
/// # Safety
/// `consumer_symbol` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn rl_pm4_wait_rmw(
    builder: *mut RlPm4Builder,
    consumer_module: *const RlModule,
    consumer_symbol: *const c_char,
) -> i32 {
    status("rl_pm4_wait_rmw", || {
        let b = handles::get::<BuilderObj>(builder)?;
        match (consumer_module.is_null(), consumer_symbol.is_null()) {
            (true, true) => b.with(|b| b.wait_rmw(None)),
            (false, false) => {
                let m = module_obj(consumer_module)?;
                // SAFETY: forwarded caller contract.
                let symbol = unsafe { text(consumer_symbol, "consumer_symbol") }?;
                b.with(|b| b.wait_rmw(Some((&m.module, symbol))))
            }
            _ => Err(null(
                "one of consumer_module and consumer_symbol (pass both, or neither)",
            )),
        }
    })
}

/// Wait for everything recorded so far, without cache invalidation (for
/// write-after-read and write-after-write ordering). Returns nothing, as
/// in the seed's header: a bad or consumed builder is ignored and
/// `rl_last_error()` says so (finalize then fails on it anyway).
#[no_mangle]
pub extern "C" fn rl_pm4_wait_idle(builder: *mut RlPm4Builder) {
    let _ = status("rl_pm4_wait_idle", || {
        let b = handles::get::<BuilderObj>(builder)?;
        b.with(|b| {
            b.wait_idle();
            Ok(())
        })
    });
}

/// Encodes the builder's recording and installs it as a retained IB on
/// `gpu` (the GPU the builder was made for), stored in `*out`.
/// ALWAYS CONSUMES THE BUILDER: after this call the builder handle is
/// invalid whether it succeeded or not; do not free it.
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_pm4_finalize(
    gpu: *const RlGpu,
    builder: *mut RlPm4Builder,
    out: *mut *mut RlPm4Ib,
) -> i32 {
    // SAFETY: forwarded caller contract; one builder read from a local.
    unsafe { finalize_one("rl_pm4_finalize", gpu, builder, out, RL_PROFILE_NONE) }
}

/// The finalize verb for one builder into one IB, profiled as asked.
///
/// # Safety
/// `out` is NULL or writable.
pub(crate) unsafe fn finalize_one(
    call: &'static str,
    gpu: *const RlGpu,
    builder: *mut RlPm4Builder,
    out: *mut *mut RlPm4Ib,
    profiling: u32,
) -> i32 {
    let options = Ok(RlPm4FinalizeOptions {
        profiling,
        ..FINALIZE_DEFAULT
    });
    // SAFETY: forwarded caller contract; `&builder` is one readable handle.
    unsafe { verbs::finalize(call, gpu, &builder, 1, options, out, std::ptr::null_mut()) }
}

pub(crate) fn ib_obj(ib: *const RlPm4Ib) -> Result<Arc<IbObj>, Error> {
    handles::get::<IbObj>(ib)
}

/// Submits the IB and waits for it to complete (results are then visible
/// to the host; patching kernargs next is race-free). A replay still
/// running after 60 s is abandoned: the call fails, the replay's queue is
/// stopped (it changes no memory after the call returns; what it was
/// writing may be partial) and the next replay runs on a new queue.
#[no_mangle]
pub extern "C" fn rl_pm4_replay(ib: *mut RlPm4Ib) -> i32 {
    verbs::replay_ib("rl_pm4_replay", ib, Ok(0), None)
}

/// Go beyond the seed: submits the IB and returns at once. Call
/// `rl_pm4_wait` before reading results. A kernarg patch made after this
/// call applies to later replays only (after this one completes).
#[no_mangle]
pub extern "C" fn rl_pm4_replay_async(ib: *mut RlPm4Ib) -> i32 {
    verbs::replay_ib("rl_pm4_replay_async", ib, Ok(RL_REPLAY_ASYNC), None)
}

/// Waits for every replay submitted with `rl_pm4_replay_async` on this IB
/// (each up to 60 s; one still running then is abandoned: its queue is
/// stopped and the IB's next replay runs on a new one). Returns the first
/// failure after waiting for all.
#[no_mangle]
pub extern "C" fn rl_pm4_wait(ib: *mut RlPm4Ib) -> i32 {
    status("rl_pm4_wait", || {
        let obj = ib_obj(ib)?;
        let pending: Vec<Replay> = obj.pending.lock().drain(..).collect();
        let mut first = None;
        for (i, replay) in pending.iter().enumerate() {
            if let Err(e) = replay.wait_or_abandon(REPLAY_TIMEOUT) {
                first.get_or_insert(e.context(format!("async replay {i}")));
            }
        }
        first.map_or(Ok(()), Err)
    })
}

/// Overwrites `len` kernarg bytes of dispatch `dispatch_index` at
/// `byte_offset`, in place (the IB is not rebuilt). Applied after replays
/// already submitted have finished and before later ones.
///
/// # Safety
/// `src` is valid for `len` bytes of reads.
#[no_mangle]
pub unsafe extern "C" fn rl_pm4_ib_set_kernargs(
    ib: *mut RlPm4Ib,
    dispatch_index: usize,
    byte_offset: usize,
    src: *const u8,
    len: usize,
) -> i32 {
    status("rl_pm4_ib_set_kernargs", || {
        let obj = ib_obj(ib)?;
        // SAFETY: forwarded caller contract.
        let bytes = unsafe { slice(src, len, "src", RL_MAX_KERNARG_BYTES) }?;
        let result = lock_state(&obj.ib, "rl_pm4_ib_set_kernargs")?.set_kernargs(
            dispatch_index,
            byte_offset,
            bytes,
        );
        result
    })
}

/// Dispatches in the IB (0 on a bad handle).
#[no_mangle]
pub extern "C" fn rl_pm4_ib_dispatch_count(ib: *const RlPm4Ib) -> usize {
    guard("rl_pm4_ib_dispatch_count", 0, || {
        Ok(lock_state(&ib_obj(ib)?.ib, "rl_pm4_ib_dispatch_count")?.dispatch_count())
    })
}

/// Size of the IB in dwords (0 on a bad handle).
#[no_mangle]
pub extern "C" fn rl_pm4_ib_dwords(ib: *const RlPm4Ib) -> usize {
    guard("rl_pm4_ib_dwords", 0, || {
        Ok(lock_state(&ib_obj(ib)?.ib, "rl_pm4_ib_dwords")?.dwords())
    })
}

/// Frees the IB (after replays in flight complete). Its modules and GPU
/// are released when nothing else uses them. NULL is a no-op. Replays of
/// it not waited for (`rl_pm4_replay_async`) run on; one still running
/// 60 s later, or when the GPU's last handle is freed, is abandoned as
/// `rl_pm4_wait` would abandon it.
#[no_mangle]
pub extern "C" fn rl_pm4_ib_free(ib: *mut RlPm4Ib) {
    handles::free::<IbObj>("rl_pm4_ib_free", ib);
}
