//! Multi-queue retained PM4: independent builders finalized as lanes of
//! one `RlPm4MultiIb`, spread over the family's queue width
//! (`rl_gpu_pm4_queue_count` with `RlQueueAuto`).

use std::sync::Arc;

use parking_lot::Mutex;

use facade::{Error, Pm4MultiIb};

use crate::gpu::{GpuObj, RlGpu};
use crate::handles::{self, Handled};
use crate::pm4::{RlPm4Builder, RL_MAX_KERNARG_BYTES};
use crate::status::{guard, status};
use crate::util::{lock_state, record, slice};
use crate::verbs::{self, RlPm4FinalizeOptions, FINALIZE_DEFAULT, RL_PROFILE_NONE};

/// Most lanes `rl_pm4_finalize_multi` takes at once.
pub const RL_MAX_LANES: usize = 256;

/// Retained IBs, one per lane, over one or more queues. Opaque; free with
/// `rl_pm4_multi_ib_free`.
pub struct RlPm4MultiIb {
    _opaque: [u8; 0],
}

pub(crate) struct MultiObj {
    /// Locked for patches (`&mut`) and replays (through `lock_state`, as
    /// `IbObj::ib`).
    pub(crate) multi: Mutex<Pm4MultiIb>,
    _gpu: Arc<GpuObj>,
}

impl MultiObj {
    pub(crate) fn new(multi: Pm4MultiIb, gpu: Arc<GpuObj>) -> MultiObj {
        MultiObj {
            multi: Mutex::new(multi),
            _gpu: gpu,
        }
    }
}

impl Handled for MultiObj {
    type C = RlPm4MultiIb;
    const KIND: u8 = 5;
}

pub(crate) fn multi_obj(multi: *const RlPm4MultiIb) -> Result<Arc<MultiObj>, Error> {
    handles::get::<MultiObj>(multi)
}

/// Installs `lane_count` independent builders as lanes over
/// `rl_gpu_pm4_queue_count(gpu, RlQueueAuto, lane_count)` queues. Lanes
/// must not share memory they write. ALWAYS CONSUMES EVERY VALID BUILDER
/// in `builders`, whether it succeeded or not; do not free them.
///
/// # Safety
/// `builders` is valid for `lane_count` reads; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_pm4_finalize_multi(
    gpu: *const RlGpu,
    builders: *const *mut RlPm4Builder,
    lane_count: usize,
    out: *mut *mut RlPm4MultiIb,
) -> i32 {
    // SAFETY: forwarded caller contract.
    unsafe {
        finalize_lanes(
            "rl_pm4_finalize_multi",
            gpu,
            builders,
            lane_count,
            out,
            RL_PROFILE_NONE,
        )
    }
}

/// The finalize verb for lanes on the Auto width, profiled as asked.
///
/// # Safety
/// `builders` is valid for `lane_count` reads; `out` is NULL or writable.
pub(crate) unsafe fn finalize_lanes(
    call: &'static str,
    gpu: *const RlGpu,
    builders: *const *mut RlPm4Builder,
    lane_count: usize,
    out: *mut *mut RlPm4MultiIb,
    profiling: u32,
) -> i32 {
    let options = Ok(RlPm4FinalizeOptions {
        profiling,
        ..FINALIZE_DEFAULT
    });
    let one = std::ptr::null_mut();
    // SAFETY: forwarded caller contract.
    unsafe { verbs::finalize(call, gpu, builders, lane_count, options, one, out) }
}

/// Replays every lane (fanned out over the queues) and waits for all.
#[no_mangle]
pub extern "C" fn rl_pm4_replay_multi(multi: *mut RlPm4MultiIb) -> i32 {
    verbs::replay_multi("rl_pm4_replay_multi", multi, Ok(0), None)
}

/// Overwrites kernarg bytes of dispatch `dispatch` in lane `lane`, in
/// place, ordered after replays already submitted.
///
/// # Safety
/// `src` is valid for `len` bytes of reads.
#[no_mangle]
pub unsafe extern "C" fn rl_pm4_multi_ib_set_kernargs(
    multi: *mut RlPm4MultiIb,
    lane: usize,
    dispatch: usize,
    byte_offset: usize,
    src: *const u8,
    len: usize,
) -> i32 {
    status("rl_pm4_multi_ib_set_kernargs", || {
        let obj = multi_obj(multi)?;
        // SAFETY: forwarded caller contract.
        let bytes = unsafe { slice(src, len, "src", RL_MAX_KERNARG_BYTES) }?;
        let result = lock_state(&obj.multi, "rl_pm4_multi_ib_set_kernargs")?.set_kernargs(
            lane,
            dispatch,
            byte_offset,
            bytes,
        );
        result
    })
}

/// Lanes in the multi-IB (0 on a bad handle).
#[no_mangle]
pub extern "C" fn rl_pm4_multi_ib_lane_count(multi: *const RlPm4MultiIb) -> usize {
    guard("rl_pm4_multi_ib_lane_count", 0, || {
        Ok(lock_state(&multi_obj(multi)?.multi, "rl_pm4_multi_ib_lane_count")?.lane_count())
    })
}

/// Extension: hardware queues the lanes run on (0 on a bad handle).
#[no_mangle]
pub extern "C" fn rl_pm4_multi_ib_queue_count(multi: *const RlPm4MultiIb) -> usize {
    guard("rl_pm4_multi_ib_queue_count", 0, || {
        Ok(lock_state(&multi_obj(multi)?.multi, "rl_pm4_multi_ib_queue_count")?.queues_used())
    })
}

/// Dispatches in lane `lane` (0 on a bad handle or lane).
#[no_mangle]
pub extern "C" fn rl_pm4_multi_ib_dispatch_count(multi: *const RlPm4MultiIb, lane: usize) -> usize {
    guard("rl_pm4_multi_ib_dispatch_count", 0, || {
        let obj = multi_obj(multi)?;
        let multi = lock_state(&obj.multi, "rl_pm4_multi_ib_dispatch_count")?;
        multi.dispatch_count(lane).ok_or_else(|| {
            record(format!(
                "lane {lane} does not exist; this multi-IB has {} lanes",
                multi.lane_count()
            ))
        })
    })
}

/// Frees the multi-IB (after replays in flight complete). NULL is a no-op.
#[no_mangle]
pub extern "C" fn rl_pm4_multi_ib_free(multi: *mut RlPm4MultiIb) {
    handles::free::<MultiObj>("rl_pm4_multi_ib_free", multi);
}
