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
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::exec::ShadowExec;
use crate::hip::{key, Handle, HipError};
use crate::reason::Reason;
use crate::state::{guarded, with_state};

/// The API's version (`rl_hipgraph_api_version`).
pub const API_VERSION: u32 = 1;

/// Statuses of the inspection calls.
pub const OK: i32 = 0;
pub const INVALID_ARGUMENT: i32 = 1;
pub const UNKNOWN_EXEC: i32 = 2;
/// A panic disabled the interposer's shadow: everything goes to HIP.
pub const SHADOW_DISABLED: i32 = 3;

static REPLAY: AtomicBool = AtomicBool::new(true);
static REPLAYED: AtomicU64 = AtomicU64::new(0);
static ON_HIP: AtomicU64 = AtomicU64::new(0);
static FAILED: AtomicU64 = AtomicU64::new(0);

/// Where one `hipGraphLaunch` went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launched {
    /// relaunch replayed it (the status returned).
    Replayed(HipError),
    /// A replay was attempted and failed (the status returned).
    Failed(HipError),
    /// The real `hipGraphLaunch` ran it.
    OnHip,
}

/// Whether replay is on (`rl_hipgraph_set_replay`; on by default).
pub fn replay_enabled() -> bool {
    REPLAY.load(Ordering::Relaxed)
}

/// Count a launch in the process totals.
pub fn count(l: Launched) {
    let c = match l {
        Launched::Replayed(_) => &REPLAYED,
        Launched::Failed(_) => &FAILED,
        Launched::OnHip => &ON_HIP,
    };
    c.fetch_add(1, Ordering::Relaxed);
}

/// One shadowed exec's launches, each way.
#[derive(Debug, Default)]
pub struct LaunchCounts {
    replayed: AtomicU64,
    failed: AtomicU64,
    on_hip: AtomicU64,
}

impl LaunchCounts {
    pub fn count(&self, l: Launched) {
        let c = match l {
            Launched::Replayed(_) => &self.replayed,
            Launched::Failed(_) => &self.failed,
            Launched::OnHip => &self.on_hip,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }
}

/// An exec the interposer never shadowed: why, and its launches (all on
/// the real HIP).
#[derive(Debug, Clone)]
pub struct OnHip {
    pub reason: Reason,
    pub launches: u64,
}

/// The C enum `rl_hipgraph_reason`: what kind of thing keeps an exec on
/// the real HIP (the text says which one exactly).
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    Replayed = 0,
    /// `rl_hipgraph_set_replay(0)`.
    Disabled = 1,
    /// Opening the relaunch device, or the device is not the application's.
    Device = 2,
    /// A memory fault lost the GPU for relaunch.
    DeviceLost = 3,
    /// The module or code object (format, globals the application reaches).
    Module = 4,
    /// A kernel node's launch (arguments, geometry, unknown function).
    Kernel = 5,
    /// A memset or memcpy node.
    Transfer = 6,
    /// The graph's structure (host nodes, events, unseen nodes, cycles).
    Graph = 7,
    /// Stream capture.
    Capture = 8,
    /// A change made through a call the interposer does not follow.
    Changed = 9,
    /// A patch or update of the exec that is not replayed.
    Update = 10,
    /// Stream ordering of replays.
    StreamOrder = 11,
    /// relaunch failed, a replay failed, or the shadow panicked.
    Internal = 12,
}

/// The category of `r` (by what it is about; wrappers by where they arise).
pub fn category(r: &Reason) -> Category {
    use Category as C;
    use Reason as R;
    match r {
        R::OpenDevice(_) | R::DeviceMismatch { .. } => C::Device,
        R::DeviceLost(_) => C::DeviceLost,
        R::Relaunch(_) | R::ReplayFailed(_) | R::Panicked(_) | R::Internal(_) => C::Internal,
        R::Image(_)
        | R::Extent(_)
        | R::ReadFile { .. }
        | R::FileTooLarge { .. }
        | R::NullWrapper
        | R::WrapperMagic { .. }
        | R::ModuleGlobal { .. }
        | R::FatBinaryGlobal { .. } => C::Module,
        R::NullParams
        | R::UnknownFunction { .. }
        | R::NoKernel { .. }
        | R::BothArgForms
        | R::NullKernelParams
        | R::NullKernelParam { .. }
        | R::Extra(_)
        | R::ShortExtraBuffer { .. }
        | R::GridOverflow { .. }
        | R::LaunchLds { .. } => C::Kernel,
        R::PageableHost { .. }
        | R::UnknownMemory { .. }
        | R::ManagedMemory { .. }
        | R::RegisteredElsewhere { .. }
        | R::MemsetElement { .. }
        | R::Overflow { .. }
        | R::EmptyMemset
        | R::EmptyCopy
        | R::ShortMemsetPitch { .. }
        | R::UnalignedFill { .. }
        | R::NoWholeDword { .. }
        | R::MisalignedElement { .. }
        | R::UnknownCopyKind { .. }
        | R::ArrayCopy
        | R::CopyPitch { .. }
        | R::TooManyPackets { .. } => C::Transfer,
        R::ForeignEdge { .. }
        | R::Cycle
        | R::NoWork
        | R::HostNode
        | R::UnseenChild
        | R::UnseenGraph
        | R::Child(_)
        | R::WaitUnrecorded { .. }
        | R::RecordedTwice { .. }
        | R::WaitBeforeRecord { .. }
        | R::CountMismatch { .. }
        | R::RealMissing { .. }
        | R::RealFailed { .. } => C::Graph,
        R::CaptureToGraph | R::CaptureStatus { .. } | R::CrossStream { .. } => C::Capture,
        R::NodeChanged { .. }
        | R::KindChanged { .. }
        | R::ExecNodeChanged { .. }
        | R::Attribute { .. }
        | R::NodeEnabled { .. }
        | R::PossiblyCaptured { .. } => C::Changed,
        R::NotExecNode { .. }
        | R::PatchChangesKernel { .. }
        | R::Rebuild(_)
        | R::Context { .. }
        | R::UpdateFromUnseen
        | R::UpdateGraph(_)
        | R::UpdateTopology { .. }
        | R::UpdateChangesTransfer { .. }
        | R::UpdateKernelToTransfer { .. }
        | R::UpdateChangesKernel { .. }
        | R::UnknownExecNode { .. }
        | R::UpdateNode { .. } => C::Update,
        R::NoStreamOp { .. } | R::StreamWords { .. } => C::StreamOrder,
    }
}

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
    let was = REPLAY.swap(enabled != 0, Ordering::Relaxed);
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
    let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
    let value = Counters {
        struct_size: size,
        execs_replayed: if replay_enabled() { replayed as u64 } else { 0 },
        execs_on_hip: if replay_enabled() {
            on_hip as u64
        } else {
            (replayed + on_hip) as u64
        },
        launches_replayed: g(&REPLAYED),
        launches_on_hip: g(&ON_HIP),
        launches_failed: g(&FAILED),
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
    let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
    let counts = [
        g(&e.launches.replayed),
        g(&e.launches.failed),
        g(&e.launches.on_hip),
    ];
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
