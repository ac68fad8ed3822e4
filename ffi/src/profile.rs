//! Profiled replay (`rl_pm4_finalize_profiled`, `rl_pm4_replay_profiled`
//! and the multi forms, from the seed), plus our per-dispatch extension
//! (`rl_pm4_finalize_profiled_dispatches`, `rl_pm4_ib_dispatch_times` and
//! their multi forms).
//! The IB writes GPU timestamps itself (at its start and end on each
//! queue, and around every dispatch when asked); the span is what the GPU
//! measured, converted with the agent's timestamp frequency, never a host
//! estimate.

use std::sync::Arc;

use facade::{Error, ErrorClass};

use crate::gpu::RlGpu;
use crate::multi::{finalize_lanes, multi_obj, MultiObj, RlPm4MultiIb};
use crate::pm4::{finalize_one, ib_obj, IbObj, RlPm4Builder, RlPm4Ib};
use crate::status::status;
use crate::util::{lock_state, non_null};
use crate::verbs::{self, RL_PROFILE_DISPATCHES, RL_PROFILE_SPAN, RL_REPLAY_PROFILED};

/// `rl_pm4_finalize` for an IB whose `rl_pm4_replay_profiled` measures
/// its GPU execution span: the IB writes the GPU clock after its prologue
/// and after its epilogue (16 more dwords). ALWAYS CONSUMES THE BUILDER,
/// as `rl_pm4_finalize` does.
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
    unsafe {
        finalize_one(
            "rl_pm4_finalize_profiled",
            gpu,
            builder,
            out,
            RL_PROFILE_SPAN,
        )
    }
}

/// Extension: `rl_pm4_finalize_profiled` that also times every dispatch
/// (a timestamp right before and right after each DISPATCH_DIRECT, 16 more
/// dwords per dispatch); read them with `rl_pm4_ib_dispatch_times` after
/// `rl_pm4_replay_profiled`. ALWAYS CONSUMES THE BUILDER.
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_pm4_finalize_profiled_dispatches(
    gpu: *const RlGpu,
    builder: *mut RlPm4Builder,
    out: *mut *mut RlPm4Ib,
) -> i32 {
    // SAFETY: forwarded caller contract.
    unsafe {
        finalize_one(
            "rl_pm4_finalize_profiled_dispatches",
            gpu,
            builder,
            out,
            RL_PROFILE_DISPATCHES,
        )
    }
}

/// `rl_pm4_finalize_multi` for lanes that time themselves (each lane's IB
/// writes the GPU clock after its prologue and after its epilogue).
/// ALWAYS CONSUMES EVERY VALID BUILDER in `builders`.
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
    unsafe {
        finalize_lanes(
            "rl_pm4_finalize_multi_profiled",
            gpu,
            builders,
            lane_count,
            out,
            RL_PROFILE_SPAN,
        )
    }
}

/// Extension: `rl_pm4_finalize_multi_profiled` that also times every
/// dispatch of every lane; read them per lane with
/// `rl_pm4_multi_ib_dispatch_times` after `rl_pm4_replay_multi_profiled`.
/// ALWAYS CONSUMES EVERY VALID BUILDER in `builders`.
///
/// # Safety
/// `builders` is valid for `lane_count` reads; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_pm4_finalize_multi_profiled_dispatches(
    gpu: *const RlGpu,
    builders: *const *mut RlPm4Builder,
    lane_count: usize,
    out: *mut *mut RlPm4MultiIb,
) -> i32 {
    // SAFETY: forwarded caller contract.
    unsafe {
        finalize_lanes(
            "rl_pm4_finalize_multi_profiled_dispatches",
            gpu,
            builders,
            lane_count,
            out,
            RL_PROFILE_DISPATCHES,
        )
    }
}

/// Replays a profiled IB, waits, and writes its GPU execution span (from
/// the IB's start timestamp to its end timestamp) in microseconds to
/// `*out_gpu_us`. Waits first for replays of the IB still in flight (they
/// write the same timestamps). An IB not from `rl_pm4_finalize_profiled*`
/// is refused with `RL_ERR_REPLAY` and not replayed; `*out_gpu_us` is
/// written only on success.
///
/// # Safety
/// `out_gpu_us` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_pm4_replay_profiled(ib: *mut RlPm4Ib, out_gpu_us: *mut f64) -> i32 {
    // SAFETY: NULL or writable (caller contract).
    let out = unsafe { out_gpu_us.as_mut() };
    verbs::replay_ib("rl_pm4_replay_profiled", ib, Ok(RL_REPLAY_PROFILED), out)
}

/// `rl_pm4_replay_multi` of a profiled multi-IB, writing the makespan (from
/// the earliest lane start to the latest lane end) in microseconds. A
/// multi-IB not from `rl_pm4_finalize_multi_profiled` is refused with
/// `RL_ERR_REPLAY`, not replayed; `*out_gpu_us` is written only on success.
///
/// # Safety
/// `out_gpu_us` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_pm4_replay_multi_profiled(
    ib: *mut RlPm4MultiIb,
    out_gpu_us: *mut f64,
) -> i32 {
    // SAFETY: NULL or writable (caller contract).
    let out = unsafe { out_gpu_us.as_mut() };
    verbs::replay_multi(
        "rl_pm4_replay_multi_profiled",
        ib,
        Ok(RL_REPLAY_PROFILED),
        out,
    )
}

/// Extension: per-dispatch times of the last `rl_pm4_replay_profiled` of
/// an IB from `rl_pm4_finalize_profiled_dispatches`, in microseconds from
/// the IB's start: `start_us[i]` is when everything before dispatch `i`
/// had finished, `end_us[i]` when dispatch `i` had (ordered, inside the
/// span). `count` is the arrays' length, at least
/// `rl_pm4_ib_dispatch_count(ib)`; that many entries are written.
/// `RL_ERR_REPLAY` when the IB does not time its dispatches or no profiled
/// replay completed yet; `RL_ERR_RECORD` when `count` is too small
/// (nothing is written on failure).
///
/// # Safety
/// `start_us` and `end_us` are NULL or writable for `count` doubles.
#[no_mangle]
pub unsafe extern "C" fn rl_pm4_ib_dispatch_times(
    ib: *const RlPm4Ib,
    start_us: *mut f64,
    end_us: *mut f64,
    count: usize,
) -> i32 {
    let call = "rl_pm4_ib_dispatch_times";
    let times = |obj: Arc<IbObj>| lock_state(&obj.ib, "rl_pm4_ib_dispatch_times")?.dispatch_times();
    // SAFETY: forwarded caller contract.
    unsafe { dispatch_times_into(call, || ib_obj(ib), times, start_us, end_us, count) }
}

/// Extension: `rl_pm4_ib_dispatch_times` for lane `lane` of a multi-IB
/// from `rl_pm4_finalize_multi_profiled_dispatches`, in microseconds from
/// the earliest lane's start. `count` is at least
/// `rl_pm4_multi_ib_dispatch_count(ib, lane)`. `RL_ERR_HANDLE` for a lane
/// past the count; otherwise the errors of `rl_pm4_ib_dispatch_times`.
///
/// # Safety
/// `start_us` and `end_us` are NULL or writable for `count` doubles.
#[no_mangle]
pub unsafe extern "C" fn rl_pm4_multi_ib_dispatch_times(
    ib: *const RlPm4MultiIb,
    lane: usize,
    start_us: *mut f64,
    end_us: *mut f64,
    count: usize,
) -> i32 {
    let call = "rl_pm4_multi_ib_dispatch_times";
    let times = |obj: Arc<MultiObj>| {
        lock_state(&obj.multi, "rl_pm4_multi_ib_dispatch_times")?.dispatch_times(lane)
    };
    // SAFETY: forwarded caller contract.
    unsafe { dispatch_times_into(call, || multi_obj(ib), times, start_us, end_us, count) }
}

/// What the single and multi `dispatch_times` calls share: the handle
/// looked up (`get`), both arrays checked, then `times` read from the
/// handle and written out.
///
/// # Safety
/// `start_us` and `end_us` are NULL or writable for `count` doubles.
unsafe fn dispatch_times_into<H>(
    call: &'static str,
    get: impl FnOnce() -> Result<H, Error>,
    times: impl FnOnce(H) -> Result<Vec<facade::DispatchTime>, Error>,
    start_us: *mut f64,
    end_us: *mut f64,
    count: usize,
) -> i32 {
    status(call, || {
        let obj = get()?;
        non_null(start_us, "start_us")?;
        non_null(end_us, "end_us")?;
        let times = times(obj)?;
        // SAFETY: both non-null, writable for `count` (caller contract).
        unsafe { write_times(&times, start_us, end_us, count) }
    })
}

/// Writes `times` to the two arrays, refusing arrays shorter than it.
///
/// # Safety
/// `start_us` and `end_us` are non-null and writable for `count` doubles.
unsafe fn write_times(
    times: &[facade::DispatchTime],
    start_us: *mut f64,
    end_us: *mut f64,
    count: usize,
) -> Result<(), Error> {
    if count < times.len() {
        return Err(Error::new(
            ErrorClass::Record,
            format!(
                "count {count} is too small: there are {} dispatches; pass arrays of at \
                 least the dispatch count's doubles",
                times.len()
            ),
        ));
    }
    for (i, t) in times.iter().enumerate() {
        // SAFETY: both arrays are non-null and writable for `count`
        // doubles (caller contract), and `i < times.len() <= count`.
        unsafe {
            start_us.add(i).write(t.start_us);
            end_us.add(i).write(t.end_us);
        }
    }
    Ok(())
}
