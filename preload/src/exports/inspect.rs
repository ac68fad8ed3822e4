//! The interposer's inspection API (`rl_hipgraph_*`, declared in
//! `preload/include/relaunch_hipgraph.h`): for a process running under
//! the interposer, which graph execs relaunch replays and why the others
//! go to the real HIP (a typed category and the logged text), how many
//! launches went each way, and a switch that turns replay off and on at
//! run time. The Python module `relaunch.hipgraph` reads it.
//!
//! Structs are versioned by their size (the caller's `struct_size` says
//! how much it has room for); statuses are small integers, never a panic.

use std::ffi::c_char;

use crate::hip::{key, Handle};
use crate::model::category::{category, Category};
use crate::model::exec::ShadowExec;
use crate::state::counters::{self, replay_enabled};
use crate::state::{guarded, with_state};

/// The API's version (`rl_hipgraph_api_version`).
pub const API_VERSION: u32 = 1;

/// Statuses of the inspection calls.
pub const OK: i32 = 0;
pub const INVALID_ARGUMENT: i32 = 1;
pub const UNKNOWN_EXEC: i32 = 2;
/// A panic disabled the interposer's shadow: everything goes to HIP.
pub const SHADOW_DISABLED: i32 = 3;

/// `rl_hipgraph_exec_info_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ExecInfo {
    /// In: `sizeof` the caller's struct.
    pub struct_size: usize,
    /// 1 when relaunch replays this exec's next launch.
    pub replayed: i32,
    /// A [`Category`].
    pub reason: i32,
    pub launches_replayed: u64,
    pub launches_on_hip: u64,
    pub launches_failed: u64,
    /// The reason's text length in bytes (without the NUL), whatever was
    /// copied.
    pub reason_len: usize,
    /// Queues (lanes) a replay uses; 0 when not replayed.
    pub lanes: u32,
}

/// `rl_hipgraph_counters_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Counters {
    pub struct_size: usize,
    pub execs_replayed: u64,
    pub execs_on_hip: u64,
    pub launches_replayed: u64,
    pub launches_on_hip: u64,
    pub launches_failed: u64,
    pub replay_enabled: i32,
}

/// Copy `value` over the caller's struct, no more than `struct_size`
/// bytes of it (an older, smaller struct gets its prefix).
///
/// # Safety
/// `out` points to at least `(*out).struct_size` writable bytes.
unsafe fn put<T: Copy>(out: *mut T, value: T, struct_size: usize) {
    let n = struct_size.min(std::mem::size_of::<T>());
    // SAFETY: the caller's struct holds struct_size bytes; value is a
    // plain repr(C) struct of at least n bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(&value as *const T as *const u8, out as *mut u8, n);
    }
}

/// The struct size the caller declared, if it is at least the first
/// field.
///
/// # Safety
/// `out` is null or points to a struct starting with `size_t struct_size`.
unsafe fn declared<T>(out: *const T) -> Option<usize> {
    if out.is_null() {
        return None;
    }
    // SAFETY: non-null; its first field is the size.
    let size = unsafe { (out as *const usize).read_unaligned() };
    (size >= std::mem::size_of::<usize>()).then_some(size)
}

#[no_mangle]
pub extern "C" fn rl_hipgraph_api_version() -> u32 {
    API_VERSION
}

/// Turn replay on (non-zero) or off; returns whether it was on. Off,
/// every launch goes to the real HIP; execs keep following the
/// application's updates, so turning it on again replays them current.
#[no_mangle]
pub extern "C" fn rl_hipgraph_set_replay(enabled: i32) -> i32 {
    let was = counters::set_replay(enabled != 0);
    tracing::info!(enabled = enabled != 0, "hipGraph replay switched");
    i32::from(was)
}

/// # Safety
/// `out` is null or points to a `rl_hipgraph_counters_t` whose
/// `struct_size` is set.
#[no_mangle]
pub unsafe extern "C" fn rl_hipgraph_counters(out: *mut Counters) -> i32 {
    // SAFETY: the caller's contract.
    let Some(size) = (unsafe { declared(out) }) else {
        return INVALID_ARGUMENT;
    };
    let execs = with_state("rl_hipgraph_counters", |s| {
        let replayed = s.execs.values().filter(|e| e.fallen().is_none()).count();
        (replayed, s.execs.len() - replayed + s.on_hip.len())
    });
    let Some((replayed, on_hip)) = execs else {
        return SHADOW_DISABLED;
    };
    let [launches_replayed, launches_on_hip, launches_failed] = counters::totals();
    let value = Counters {
        struct_size: size,
        execs_replayed: if replay_enabled() { replayed as u64 } else { 0 },
        execs_on_hip: if replay_enabled() {
            on_hip as u64
        } else {
            (replayed + on_hip) as u64
        },
        launches_replayed,
        launches_on_hip,
        launches_failed,
        replay_enabled: i32::from(replay_enabled()),
    };
    // SAFETY: checked above.
    unsafe { put(out, value, size) };
    OK
}

/// Write up to `capacity` live exec handles (those instantiated while
/// the interposer was loaded, in handle order) to `out`; returns how many
/// there are (call with 0 to size the array). `SIZE_MAX` when the shadow
/// is disabled.
///
/// # Safety
/// `out` is null with `capacity` 0, or holds `capacity` handles.
#[no_mangle]
pub unsafe extern "C" fn rl_hipgraph_execs(out: *mut Handle, capacity: usize) -> usize {
    let all = with_state("rl_hipgraph_execs", |s| {
        let mut keys: Vec<usize> = s.execs.keys().chain(s.on_hip.keys()).copied().collect();
        keys.sort_unstable();
        keys
    });
    let Some(all) = all else {
        return usize::MAX;
    };
    if !out.is_null() {
        for (i, k) in all.iter().take(capacity).enumerate() {
            // SAFETY: the caller's array holds `capacity` handles.
            unsafe { out.add(i).write(*k as Handle) };
        }
    }
    all.len()
}

/// What one exec does now: replayed or on HIP with the category and text
/// of the reason (`reason` gets up to `reason_capacity - 1` bytes and a
/// NUL; `info.reason_len` is the whole text's length).
///
/// # Safety
/// `info` points to a `rl_hipgraph_exec_info_t` whose `struct_size` is
/// set; `reason` is null or holds `reason_capacity` bytes.
#[no_mangle]
pub unsafe extern "C" fn rl_hipgraph_exec_info(
    exec: Handle,
    info: *mut ExecInfo,
    reason: *mut c_char,
    reason_capacity: usize,
) -> i32 {
    // SAFETY: the caller's contract.
    let Some(size) = (unsafe { declared(info) }) else {
        return INVALID_ARGUMENT;
    };
    let found = with_state("rl_hipgraph_exec_info", |s| {
        let k = key(exec);
        if let Some(shadow) = s.execs.get(&k) {
            Some(describe_shadowed(shadow))
        } else {
            s.on_hip.get(&k).map(|o| {
                (
                    o.reason.to_string(),
                    category(&o.reason),
                    [0, 0, o.launches],
                    0,
                )
            })
        }
    });
    let Some(found) = found else {
        return SHADOW_DISABLED;
    };
    let Some((text, cat, [replayed, failed, on_hip], lanes)) = found else {
        return UNKNOWN_EXEC;
    };
    let value = ExecInfo {
        struct_size: size,
        replayed: i32::from(cat == Category::Replayed),
        reason: cat as i32,
        launches_replayed: replayed,
        launches_on_hip: on_hip,
        launches_failed: failed,
        reason_len: text.len(),
        lanes,
    };
    // SAFETY: checked above.
    unsafe { put(info, value, size) };
    if !reason.is_null() && reason_capacity > 0 {
        let n = text.len().min(reason_capacity - 1);
        // SAFETY: the caller's buffer holds reason_capacity bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), reason as *mut u8, n);
            reason.add(n).write(0);
        }
    }
    OK
}

/// Text, category, launch counts (replayed, failed, on HIP) and lanes of
/// a shadowed exec.
fn describe_shadowed(e: &ShadowExec) -> (String, Category, [u64; 3], u32) {
    let counts = e.launches.get();
    match e.fallen() {
        Some(why) => (why.to_string(), category(&why), counts, 0),
        None if !replay_enabled() => (
            "replay is switched off (rl_hipgraph_set_replay)".to_string(),
            Category::Disabled,
            counts,
            0,
        ),
        None => {
            let lanes = guarded("rl_hipgraph_exec_info", || e.current().exec.lane_count());
            (
                "replayed as retained PM4".to_string(),
                Category::Replayed,
                counts,
                lanes.unwrap_or(0) as u32,
            )
        }
    }
}
