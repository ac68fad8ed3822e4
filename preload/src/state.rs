//! Process-wide shadow state and the lazily opened relaunch device.
//! One mutex guards the maps; a panic while updating them disables the
//! shadow for the rest of the process (every call then falls through).

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Once, OnceLock};

use parking_lot::Mutex;
use relaunch::Gpu;

use crate::capture::Capture;
use crate::shadow::{Function, ShadowExec, ShadowGraph, ShadowModule};

#[derive(Default)]
pub struct State {
    pub modules: HashMap<usize, Arc<ShadowModule>>,
    pub functions: HashMap<usize, Function>,
    pub graphs: HashMap<usize, ShadowGraph>,
    pub execs: HashMap<usize, Arc<ShadowExec>>,
    /// Stream -> the capture in progress on it.
    pub captures: HashMap<usize, Capture>,
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
    init_logging();
    if DISABLED.load(Ordering::Acquire) {
        return None;
    }
    let result = catch_unwind(AssertUnwindSafe(|| f(&mut STATE.lock())));
    match result {
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
                "the relaunch shadow panicked; falling through from now on"
            );
            None
        }
    }
}

/// The relaunch device, opened once per process with `Gpu::open_default`
/// (which honours `RELAUNCH_DEVICE`).
pub fn gpu() -> Result<Gpu, String> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    GPU.get_or_init(|| {
        Gpu::open_default().map_err(|e| {
            let msg = format!("opening the relaunch device: {e}");
            tracing::error!("{msg}; every hipGraph falls through to the real HIP");
            msg
        })
    })
    .clone()
}
