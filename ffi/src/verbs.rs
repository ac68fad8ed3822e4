//! One verb with options for finalizing and one for replaying
//! (`rl_pm4_finalize_ex`, `rl_pm4_replay_ex`). Every older `rl_pm4_finalize*`
//! and `rl_pm4_replay*` name (the seed's, kept unchanged for drop-in users)
//! is a thin call of these with its one differing value.
//!
//! The option structs are versioned by their size: a caller sets
//! `struct_size` to `sizeof` the struct it was compiled with. A smaller
//! size than the first version's is refused; a larger one (a newer header)
//! is accepted when the fields this library does not know are zero, so a
//! newer program asking for nothing new still runs.

use std::collections::VecDeque;
use std::sync::Arc;

use facade::{Error, ErrorClass, Profiling, QueuePolicy, REPLAY_TIMEOUT};
use parking_lot::Mutex;

use crate::gpu::{gpu_obj, queue_policy, RlGpu};
use crate::handles::{self};
use crate::multi::{multi_obj, MultiObj, RlPm4MultiIb, RL_MAX_LANES};
use crate::pm4::{ib_obj, BuilderObj, IbObj, RlPm4Builder, RlPm4Ib, RL_MAX_REPLAYS_IN_FLIGHT};
use crate::status::status;
use crate::util::{clear, lock_state, null, record, slice};

/// What a NULL output is called: for one builder, then for lanes.
const OUT_NAMES: [&str; 2] = ["out (out_ib)", "out (out_multi)"];

/// `RlPm4FinalizeOptions::profiling`: no timestamps.
pub const RL_PROFILE_NONE: u32 = 0;
/// The IB's GPU span (start and end timestamps; `rl_pm4_replay_profiled`).
pub const RL_PROFILE_SPAN: u32 = 1;
/// The span and every dispatch's (`rl_pm4_ib_dispatch_times`).
pub const RL_PROFILE_DISPATCHES: u32 = 2;

/// `RlPm4ReplayOptions::flags`: submit and return (`rl_pm4_wait` waits);
/// single IBs only.
pub const RL_REPLAY_ASYNC: u32 = 1;
/// Replay a profiled IB or multi-IB and write its GPU span to
/// `*out_gpu_us`; not with `RL_REPLAY_ASYNC`.
pub const RL_REPLAY_PROFILED: u32 = 2;

/// Options of `rl_pm4_finalize_ex` (NULL: every default).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RlPm4FinalizeOptions {
    /// `sizeof(RlPm4FinalizeOptions)` as the caller compiled it.
    pub struct_size: usize,
    /// `RL_PROFILE_NONE` (default), `RL_PROFILE_SPAN` or
    /// `RL_PROFILE_DISPATCHES`.
    pub profiling: u32,
    /// For lanes (`out_multi`): an `RlQueuePolicy` value, `RlQueueAuto`
    /// (0, default) or a fixed width; must be `RlQueueAuto` for `out_ib`.
    pub queue_policy: u32,
}

/// Options of `rl_pm4_replay_ex` (NULL: every default).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RlPm4ReplayOptions {
    /// `sizeof(RlPm4ReplayOptions)` as the caller compiled it.
    pub struct_size: usize,
    /// `RL_REPLAY_*` bits; 0 replays and waits.
    pub flags: u32,
}

/// Reads a versioned options struct: the defaults for NULL, refused when
/// smaller than this version or when a newer caller's extra bytes are set.
///
/// # Safety
/// `options` is NULL or valid for `(*options).struct_size` bytes of reads.
unsafe fn read_options<T: Copy>(options: *const T, default: T, name: &str) -> Result<T, Error> {
    if options.is_null() {
        return Ok(default);
    }
    let ours = std::mem::size_of::<T>();
    // SAFETY: non-null; every options struct starts with its size (a
    // usize), which the caller's struct holds whatever its version.
    let given = unsafe { options.cast::<usize>().read_unaligned() };
    if given < ours {
        return Err(record(format!(
            "{name}.struct_size is {given}; this library's {name} is {ours} bytes (set \
             struct_size = sizeof({name}))"
        )));
    }
    if given > ours {
        // SAFETY: the caller's struct is `given` bytes (contract above).
        let tail =
            unsafe { std::slice::from_raw_parts(options.cast::<u8>().add(ours), given - ours) };
        if tail.iter().any(|&b| b != 0) {
            return Err(record(format!(
                "{name} sets fields this library does not know (struct_size {given}, this \
                 library's is {ours}); use a library as new as the header"
            )));
        }
    }
    // SAFETY: at least `ours` bytes are readable and any bit pattern is a
    // valid value of these plain integer structs.
    Ok(unsafe { options.read_unaligned() })
}

fn profiling(value: u32) -> Result<Option<Profiling>, Error> {
    match value {
        RL_PROFILE_NONE => Ok(None),
        RL_PROFILE_SPAN => Ok(Some(Profiling::Span)),
        RL_PROFILE_DISPATCHES => Ok(Some(Profiling::Dispatches)),
        other => Err(record(format!(
            "profiling {other} is not RL_PROFILE_NONE (0), RL_PROFILE_SPAN (1) or \
             RL_PROFILE_DISPATCHES (2)"
        ))),
    }
}

/// Finalizes `builder_count` builders: one builder as a single IB into
/// `*out_ib`, or any number as lanes of a multi-IB into `*out_multi` (pass
/// exactly one of the two; the other NULL). ALWAYS CONSUMES EVERY VALID
/// BUILDER, whether it succeeded or not; do not free them.
///
/// # Safety
/// `builders` is valid for `builder_count` reads; `options` is NULL or
/// valid for its `struct_size` bytes; `out_ib` and `out_multi` are NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn rl_pm4_finalize_ex(
    gpu: *const RlGpu,
    builders: *const *mut RlPm4Builder,
    builder_count: usize,
    options: *const RlPm4FinalizeOptions,
    out_ib: *mut *mut RlPm4Ib,
    out_multi: *mut *mut RlPm4MultiIb,
) -> i32 {
    // SAFETY: forwarded caller contract.
    let options = unsafe { read_options(options, FINALIZE_DEFAULT, "RlPm4FinalizeOptions") };
    // SAFETY: forwarded caller contract.
    unsafe {
        finalize(
            "rl_pm4_finalize_ex",
            gpu,
            builders,
            builder_count,
            options,
            out_ib,
            out_multi,
        )
    }
}

pub(crate) const FINALIZE_DEFAULT: RlPm4FinalizeOptions = RlPm4FinalizeOptions {
    struct_size: std::mem::size_of::<RlPm4FinalizeOptions>(),
    profiling: RL_PROFILE_NONE,
    queue_policy: 0,
};

/// The finalize verb under the name `call` (every `rl_pm4_finalize*`).
///
/// # Safety
/// As `rl_pm4_finalize_ex`, with the options already read.
pub(crate) unsafe fn finalize(
    call: &'static str,
    gpu: *const RlGpu,
    builders: *const *mut RlPm4Builder,
    builder_count: usize,
    options: Result<RlPm4FinalizeOptions, Error>,
    out_ib: *mut *mut RlPm4Ib,
    out_multi: *mut *mut RlPm4MultiIb,
) -> i32 {
    // SAFETY: forwarded caller contract (NULL or writable).
    unsafe {
        clear(out_ib);
        clear(out_multi);
    }
    status(call, || {
        // SAFETY: forwarded caller contract.
        let handles_in = unsafe { slice(builders, builder_count, "builders", RL_MAX_LANES) }?;
        if handles_in.is_empty() {
            return Err(Error::new(
                ErrorClass::Compile,
                "no builders (lane_count 0); pass at least one",
            ));
        }
        // Consume every valid builder first, so any failure frees them too.
        let mut recordings = Vec::with_capacity(handles_in.len());
        let mut first_error = None;
        for (lane, &h) in handles_in.iter().enumerate() {
            match handles::remove::<BuilderObj>(h).and_then(|b| b.take()) {
                Ok(r) => recordings.push(r),
                Err(e) => {
                    let e = if handles_in.len() == 1 {
                        e
                    } else {
                        e.context(format!("builders[{lane}]"))
                    };
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        let options = options?;
        let profiling = profiling(options.profiling)?;
        let policy = queue_policy(options.queue_policy)?;
        let gpu = gpu_obj(gpu)?;
        match (out_ib.is_null(), out_multi.is_null()) {
            (true, true) => Err(null(OUT_NAMES[usize::from(handles_in.len() > 1)])),
            (false, false) => Err(record(
                "both out_ib and out_multi are given; pass out_ib for one IB or out_multi for lanes",
            )),
            (false, true) => {
                let [recording]: [_; 1] = recordings.try_into().map_err(|r: Vec<_>| {
                    Error::new(
                        ErrorClass::Compile,
                        format!(
                            "{} builders for one IB (out_ib takes exactly one; lanes go to out_multi)",
                            r.len()
                        ),
                    )
                })?;
                if policy != QueuePolicy::Auto {
                    return Err(record("queue_policy applies to lanes (out_multi); leave it RlQueueAuto for out_ib"));
                }
                let ib = match profiling {
                    None => gpu.gpu.finalize(recording)?,
                    Some(p) => gpu.gpu.finalize_profiled(recording, p)?,
                };
                // SAFETY: checked non-null; writable (caller contract).
                unsafe { handles::insert_into(out_ib, IbObj::new(ib, gpu)) }
            }
            (true, false) => {
                let multi = match profiling {
                    None => gpu.gpu.finalize_multi(recordings, policy)?,
                    Some(p) => gpu.gpu.finalize_multi_profiled(recordings, policy, p)?,
                };
                // SAFETY: checked non-null; writable (caller contract).
                unsafe { handles::insert_into(out_multi, MultiObj::new(multi, gpu)) }
            }
        }
    })
}

/// Replays one IB (`ib`) or every lane of a multi-IB (`multi`; pass
/// exactly one, the other NULL). Flags: 0 replays and waits (a replay
/// still running after 60 s is abandoned, as `rl_pm4_replay`);
/// `RL_REPLAY_ASYNC` submits and returns (IBs only; `rl_pm4_wait` waits);
/// `RL_REPLAY_PROFILED` waits and writes the GPU span in microseconds to
/// `*out_gpu_us` (only then read; written only on success).
///
/// # Safety
/// `options` is NULL or valid for its `struct_size` bytes; `out_gpu_us` is
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_pm4_replay_ex(
    ib: *mut RlPm4Ib,
    multi: *mut RlPm4MultiIb,
    options: *const RlPm4ReplayOptions,
    out_gpu_us: *mut f64,
) -> i32 {
    // SAFETY: forwarded caller contract.
    let options = unsafe { read_options(options, REPLAY_DEFAULT, "RlPm4ReplayOptions") };
    // SAFETY: NULL or writable (caller contract).
    let out = unsafe { out_gpu_us.as_mut() };
    replay("rl_pm4_replay_ex", ib, multi, options, out)
}

const REPLAY_DEFAULT: RlPm4ReplayOptions = RlPm4ReplayOptions {
    struct_size: std::mem::size_of::<RlPm4ReplayOptions>(),
    flags: 0,
};

/// The replay verb: exactly one of `ib` and `multi`.
fn replay(
    call: &'static str,
    ib: *mut RlPm4Ib,
    multi: *mut RlPm4MultiIb,
    options: Result<RlPm4ReplayOptions, Error>,
    out_gpu_us: Option<&mut f64>,
) -> i32 {
    match (ib.is_null(), multi.is_null()) {
        (false, false) => status(call, || {
            Err(record(
                "both ib and multi are given; pass one, the other NULL",
            ))
        }),
        (true, true) => status(call, || {
            Err(Error::new(
                ErrorClass::Null,
                "the RlPm4Ib (or RlPm4MultiIb) handle is NULL",
            ))
        }),
        (false, true) => replay_ib(call, ib, options.map(|o| o.flags), out_gpu_us),
        (true, false) => replay_multi(call, multi, options.map(|o| o.flags), out_gpu_us),
    }
}

/// `flags` checked: the known bits, not async and profiled together.
fn replay_mode(flags: Result<u32, Error>) -> Result<(bool, bool), Error> {
    let flags = flags?;
    let unknown = flags & !(RL_REPLAY_ASYNC | RL_REPLAY_PROFILED);
    if unknown != 0 {
        return Err(record(format!(
            "replay flags {unknown:#x} are not RL_REPLAY_* bits this library knows"
        )));
    }
    let mode = (
        flags & RL_REPLAY_ASYNC != 0,
        flags & RL_REPLAY_PROFILED != 0,
    );
    if mode == (true, true) {
        return Err(record(
            "RL_REPLAY_ASYNC with RL_REPLAY_PROFILED: a profiled replay waits for its timestamps",
        ));
    }
    Ok(mode)
}

/// The replay verb on one IB under the name `call` (`rl_pm4_replay`,
/// `_async`, `_profiled`); the handle is looked up, never dereferenced.
pub(crate) fn replay_ib(
    call: &'static str,
    ib: *mut RlPm4Ib,
    flags: Result<u32, Error>,
    out_gpu_us: Option<&mut f64>,
) -> i32 {
    status(call, || {
        let obj = ib_obj(ib)?;
        match replay_mode(flags)? {
            (true, _) => obj.replay_async(call),
            (false, false) => lock_state(&obj.ib, call)?
                .replay_async()?
                .wait_or_abandon(REPLAY_TIMEOUT),
            (false, true) => {
                let out = out_gpu_us.ok_or_else(|| null("out_gpu_us"))?;
                let times = lock_state(&obj.ib, call)?.replay_profiled()?;
                *out = times.gpu_us;
                Ok(())
            }
        }
    })
}

/// The replay verb on a multi-IB under the name `call`
/// (`rl_pm4_replay_multi`, `_multi_profiled`).
pub(crate) fn replay_multi(
    call: &'static str,
    multi: *mut RlPm4MultiIb,
    flags: Result<u32, Error>,
    out_gpu_us: Option<&mut f64>,
) -> i32 {
    status(call, || {
        let obj = multi_obj(multi)?;
        match replay_mode(flags)? {
            (true, _) => Err(record(
                "RL_REPLAY_ASYNC is for single IBs; a multi-IB replay waits for every lane",
            )),
            (false, false) => lock_state(&obj.multi, call)?.replay(),
            (false, true) => {
                let out = out_gpu_us.ok_or_else(|| null("out_gpu_us"))?;
                let times = lock_state(&obj.multi, call)?.replay_profiled()?;
                *out = times.gpu_us;
                Ok(())
            }
        }
    })
}

impl IbObj {
    pub(crate) fn new(ib: facade::Pm4Ib, gpu: Arc<crate::gpu::GpuObj>) -> IbObj {
        IbObj {
            ib: Mutex::new(ib),
            _gpu: gpu,
            pending: Mutex::new(VecDeque::new()),
        }
    }

    /// Submits without waiting, keeping the replay for `rl_pm4_wait`.
    fn replay_async(&self, call: &'static str) -> Result<(), Error> {
        let mut pending = self.pending.lock();
        if pending.len() >= RL_MAX_REPLAYS_IN_FLIGHT {
            return Err(record(format!(
                "{RL_MAX_REPLAYS_IN_FLIGHT} replays of this IB are unwaited; call rl_pm4_wait"
            )));
        }
        let replay = lock_state(&self.ib, call)?.replay_async()?;
        pending.push_back(replay);
        Ok(())
    }
}
