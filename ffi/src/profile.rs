//! Profiled replay (`rl_pm4_finalize_profiled`, `rl_pm4_replay_profiled`
//! and the multi forms): the seed's four calls for measuring the GPU's
//! own execution span. The timestamp packets that measurement needs are
//! not built in relaunch yet, so each call refuses with its class and a
//! message saying so (never a made-up span); the finalize forms still
//! consume their builders, as their contract says.

use facade::{Error, ErrorClass};

use crate::gpu::RlGpu;
use crate::handles;
use crate::multi::{multi_obj, RlPm4MultiIb, RL_MAX_LANES};
use crate::pm4::{ib_obj, BuilderObj, RlPm4Builder, RlPm4Ib};
use crate::status::status;
use crate::util::{clear, non_null, slice};

fn not_built(what: &str) -> Error {
    Error::new(
        ErrorClass::Compile,
        format!(
            "{what}: profiled IBs (GPU timestamps written by the IB itself) are not built in \
             relaunch yet; finalize without profiling and time the replay on the host"
        ),
    )
}

fn not_profiled() -> Error {
    Error::new(
        ErrorClass::Replay,
        "this IB was not finalized with profiling (profiled finalize is not built in relaunch \
         yet), so it writes no timestamps to measure; nothing was replayed",
    )
}

/// `rl_pm4_finalize` for an IB whose `rl_pm4_replay_profiled` measures
/// the GPU execution span. NOT BUILT YET: refused with `RL_ERR_COMPILE`.
/// ALWAYS CONSUMES THE BUILDER, as `rl_pm4_finalize` does.
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_pm4_finalize_profiled(
    gpu: *const RlGpu,
    builder: *mut RlPm4Builder,
    out: *mut *mut RlPm4Ib,
) -> i32 {
    // SAFETY: forwarded caller contract.
    unsafe { clear(out) };
    status("rl_pm4_finalize_profiled", || {
        handles::remove::<BuilderObj>(builder)?.take()?;
        crate::gpu::gpu_obj(gpu)?;
        non_null(out, "out")?;
        Err(not_built("rl_pm4_finalize_profiled"))
    })
}

/// `rl_pm4_finalize_multi` with profiling (makespan from the earliest lane
/// start to the latest lane end). NOT BUILT YET: refused with
/// `RL_ERR_COMPILE`. ALWAYS CONSUMES EVERY VALID BUILDER in `builders`.
///
/// # Safety
/// `builders` is valid for `lane_count` reads; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_pm4_finalize_multi_profiled(
    gpu: *const RlGpu,
    builders: *const *mut RlPm4Builder,
    lane_count: usize,
    out: *mut *mut RlPm4MultiIb,
) -> i32 {
    // SAFETY: forwarded caller contract.
    unsafe { clear(out) };
    status("rl_pm4_finalize_multi_profiled", || {
        // SAFETY: forwarded caller contract.
        let handles_in = unsafe { slice(builders, lane_count, "builders", RL_MAX_LANES) }?;
        for &h in handles_in {
            if let Ok(b) = handles::remove::<BuilderObj>(h) {
                let _ = b.take();
            }
        }
        crate::gpu::gpu_obj(gpu)?;
        non_null(out, "out")?;
        Err(not_built("rl_pm4_finalize_multi_profiled"))
    })
}

/// Replays a profiled IB, waits, and writes its GPU execution span in
/// microseconds to `*out_gpu_us`. Only IBs from
/// `rl_pm4_finalize_profiled` (not built yet) can be measured; any other
/// IB is refused with `RL_ERR_REPLAY` and not replayed.
///
/// # Safety
/// `out_gpu_us` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_pm4_replay_profiled(ib: *mut RlPm4Ib, out_gpu_us: *mut f64) -> i32 {
    status("rl_pm4_replay_profiled", || {
        ib_obj(ib)?;
        non_null(out_gpu_us, "out_gpu_us")?;
        Err(not_profiled())
    })
}

/// `rl_pm4_replay_multi` of a profiled multi-IB, writing the makespan in
/// microseconds. Only multi-IBs from `rl_pm4_finalize_multi_profiled`
/// (not built yet) can be measured; others are refused, not replayed.
///
/// # Safety
/// `out_gpu_us` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_pm4_replay_multi_profiled(
    ib: *mut RlPm4MultiIb,
    out_gpu_us: *mut f64,
) -> i32 {
    status("rl_pm4_replay_multi_profiled", || {
        multi_obj(ib)?;
        non_null(out_gpu_us, "out_gpu_us")?;
        Err(not_profiled())
    })
}
