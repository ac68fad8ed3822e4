//! Process-wide shadow state and the lazily opened relaunch device.
//! One mutex guards the maps; a panic while updating them disables the
//! shadow for the rest of the process (every call then falls through).

use std::collections::HashMap;
use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Once};

use parking_lot::Mutex;
use relaunch::Bdf;
use relaunch::Gpu;

use crate::capture::Capture;
use crate::exec::ShadowExec;
use crate::hip::HIP_SUCCESS;
use crate::real;
use crate::reason::Reason;
use crate::shadow::{Function, ShadowGraph, ShadowModule};

#[derive(Default)]
pub struct State {
    pub modules: HashMap<usize, Arc<ShadowModule>>,
    pub functions: HashMap<usize, Function>,
    pub graphs: HashMap<usize, ShadowGraph>,
    pub execs: HashMap<usize, Arc<ShadowExec>>,
    /// Execs never shadowed: why, and their launches (`inspect`).
    pub on_hip: HashMap<usize, crate::inspect::OnHip>,
    /// Stream -> the capture in progress on it.
    pub captures: HashMap<usize, Capture>,
    /// Allocations HIP made (`hipMalloc`, `hipHostMalloc`): what a memset
    /// or memcpy node may reach (`transfers.rs`).
    pub memory: crate::transfers::MemoryMap,
}

static STATE: LazyLock<Mutex<State>> = LazyLock::new(|| Mutex::new(State::default()));
static DISABLED: AtomicBool = AtomicBool::new(false);

/// The interposer's reports (what is replayed, what falls through and
/// why) go to stderr when `RELAUNCH_LOG` is set (e.g. `info`), unless the
/// application installed its own global subscriber; unset, nothing is
/// printed. Once, before the first shadow update or registration.
pub fn init_logging() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let Ok(filter) = tracing_subscriber::EnvFilter::try_from_env("RELAUNCH_LOG") else {
            return;
        };
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .try_init();
    });
}

/// Runs `f` on the shadow state unless it was disabled. A panic inside is
/// caught (never crosses the C boundary) and disables the shadow.
pub fn with_state<T>(what: &str, f: impl FnOnce(&mut State) -> T) -> Option<T> {
    guarded(what, || f(&mut STATE.lock()))
}

/// Runs `f` (outside the state lock) with panics caught; a panic disables
/// the shadow and yields `None`.
pub fn guarded<T>(what: &str, f: impl FnOnce() -> T) -> Option<T> {
    init_logging();
    if DISABLED.load(Ordering::Acquire) {
        return None;
    }
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => Some(v),
        Err(_) => {
            DISABLED.store(true, Ordering::Release);
            tracing::error!(
                call = what,
                "the relaunch shadow panicked; every later HIP call falls through to the real HIP"
            );
            None
        }
    }
}

/// The relaunch device for the application's current HIP device: the GPU
/// at the PCI address HIP reports for it (`hipGetDevice`,
/// `hipDeviceGetPCIBusId`), so a replay runs where the application's
/// memory lives. `RELAUNCH_DEVICE`, when set, must name that same GPU: a
/// mismatch is refused (graphs fall through) rather than replayed on
/// another board. Without those two HIP calls, `Gpu::open_default` (which
/// honours `RELAUNCH_DEVICE`). Opened once per PCI address.
pub fn gpu() -> Result<Gpu, Reason> {
    static GPUS: LazyLock<Mutex<HashMap<String, Result<Gpu, Reason>>>> =
        LazyLock::new(Default::default);
    let hip = hip_current_bdf();
    let key = hip.map_or_else(|| "default".to_string(), |b| b.to_string());
    let mut gpus = GPUS.lock();
    if let Some(known) = gpus.get(&key) {
        return known.clone();
    }
    let opened = open_for(hip).inspect_err(|why| {
        tracing::error!("{why}; every hipGraph on it falls through to the real HIP");
    });
    gpus.insert(key, opened.clone());
    opened
}

fn open_for(hip: Option<Bdf>) -> Result<Gpu, Reason> {
    let Some(hip) = hip else {
        tracing::warn!(
            "the real HIP does not say which GPU is current (hipGetDevice / \
             hipDeviceGetPCIBusId); using RELAUNCH_DEVICE or the first GPU"
        );
        return Gpu::open_default().map_err(opening);
    };
    let named = std::env::var(relaunch::DEVICE_ENV)
        .ok()
        .filter(|s| !s.trim().is_empty());
    let Some(selector) = named else {
        return Gpu::open(&format!("bdf:{hip}")).map_err(opening);
    };
    let gpu = Gpu::open(selector.trim()).map_err(opening)?;
    match gpu.pci_address() {
        Some(at) if at == hip => Ok(gpu),
        at => Err(Reason::DeviceMismatch { selector, at, hip }),
    }
}

fn opening(e: relaunch::Error) -> Reason {
    Reason::OpenDevice(Arc::new(e))
}

/// The PCI address of HIP's current device, if the real HIP says.
fn hip_current_bdf() -> Option<Bdf> {
    let (get, bus_id) = (real::hipGetDevice()?, real::hipDeviceGetPCIBusId()?);
    let mut ordinal = 0i32;
    // SAFETY: a valid out-pointer.
    if unsafe { get(&mut ordinal) } != HIP_SUCCESS {
        return None;
    }
    let mut text = [0 as c_char; 64];
    // SAFETY: a writable buffer of the length passed.
    if unsafe { bus_id(text.as_mut_ptr(), text.len() as i32, ordinal) } != HIP_SUCCESS {
        return None;
    }
    // SAFETY: NUL-terminated within the buffer (HIP writes a C string
    // shorter than `len`; the last byte is forced to NUL anyway).
    text[text.len() - 1] = 0;
    let text = unsafe { CStr::from_ptr(text.as_ptr()) }.to_string_lossy();
    Bdf::parse(text.trim()).ok().map(|(b, _)| b)
}
