//! Stream-ordered graph launches: a replayed `hipGraphLaunch(exec, stream)`
//! returns without waiting and is ordered with the application's other
//! work on that stream in both directions, through HIP's own stream memory
//! operations. Per lane of the exec's build (`build.rs`; a geometry change
//! makes a new build with its own words), two words in `hipHostMalloc` memory
//! (which the stream's memory operations accept and the GPU reads): the
//! IB waits for its gate and consumes it before its prologue, and writes
//! done after its epilogue (relaunch-encoders `stream_order`). Per launch,
//! in the stream: `hipStreamWriteValue32` done = 0 and gate = 1 (the replay
//! starts when the stream reaches the launch), then `hipStreamWaitValue32`
//! until done == 1 (nothing enqueued after the launch starts before the
//! replay finished). Synchronising the stream, the device or an event
//! recorded after the launch therefore sees the replay finished.
//!
//! The replay is submitted first, so it is already waiting at its gates
//! when the stream ops are enqueued; if HIP refuses one of them, the gates
//! are opened from the host, the replay waited for and the stream
//! synchronised, so the launch still completes in order (and says so).
//! One exec launched on another stream while launches of it are in flight
//! waits for them first: its gates are per exec, not per stream. A watcher
//! thread follows every replay to its end; one that fails is logged, its
//! exec falls through from then on, and its done words are written from
//! the host so the application's stream does not wait forever.

use std::ffi::c_void;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use relaunch::stream_order::{DONE, GATE_OPEN, NOT_DONE};
use relaunch::StreamWords;
use relaunch::{LaunchInFlight, REPLAY_TIMEOUT};

use crate::build::Build;
use crate::exec::ShadowExec;
use crate::hip::{Handle, HipError, HIP_SUCCESS};
use crate::reason::Reason;

/// `hipStreamWaitValueEq` (hip_runtime_api.h).
const WAIT_VALUE_EQ: u32 = 1;
/// Bytes per lane: gate at 0, done at 8 (each in its own 8 bytes).
const LANE_BYTES: usize = 16;

/// The words of one exec, in `hipHostMalloc` memory freed with it.
pub struct StreamOrder {
    base: usize,
    lanes: usize,
}

impl Drop for StreamOrder {
    fn drop(&mut self) {
        if let Some(free) = crate::real::hipHostFree() {
            // SAFETY: `base` came from the real hipHostMalloc and is freed
            // once, here; the exec's replays are finished (the in-flight
            // list is waited for before the exec is dropped).
            unsafe { free(self.base as *mut c_void) };
        }
    }
}

impl StreamOrder {
    fn words(&self, lane: usize) -> StreamWords {
        let at = (self.base + lane * LANE_BYTES) as u64;
        StreamWords {
            gate: at,
            done: at + 8,
        }
    }

    /// Allocates the words and orders the exec's IBs by them (before its
    /// first launch).
    pub fn new(exec: &relaunch::GraphExec) -> Result<StreamOrder, Reason> {
        let missing = |function: &'static str| Reason::NoStreamOp { function };
        let malloc = crate::real::hipHostMalloc().ok_or_else(|| missing("hipHostMalloc"))?;
        crate::real::hipHostFree().ok_or_else(|| missing("hipHostFree"))?;
        crate::real::hipStreamWriteValue32().ok_or_else(|| missing("hipStreamWriteValue32"))?;
        crate::real::hipStreamWaitValue32().ok_or_else(|| missing("hipStreamWaitValue32"))?;
        let lanes = exec.lane_count();
        let bytes = lanes * LANE_BYTES;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out pointer; flags 0 (default: coherent, mapped).
        let rc = unsafe { malloc(&mut p, bytes, 0) };
        if rc != HIP_SUCCESS || p.is_null() {
            return Err(Reason::StreamWords { bytes, status: rc });
        }
        // SAFETY: `bytes` bytes were just allocated at `p`.
        unsafe { std::ptr::write_bytes(p as *mut u8, 0, bytes) };
        let order = StreamOrder {
            base: p as usize,
            lanes,
        };
        let words = (0..lanes).map(|l| order.words(l)).collect();
        exec.order_by_stream_words(words)?;
        Ok(order)
    }
}

/// Launches of one exec in flight, and the stream they were ordered on.
#[derive(Default)]
pub struct InFlight {
    state: Mutex<(usize, usize)>,
    idle: Condvar,
}

impl InFlight {
    /// Before a launch on `stream`: waits for the launches in flight when
    /// they were ordered on another stream, then counts this one.
    fn enter(&self, stream: usize) {
        let mut st = self.state.lock();
        while st.1 > 0 && st.0 != stream {
            self.idle.wait(&mut st);
        }
        *st = (stream, st.1 + 1);
    }

    fn leave(&self) {
        let mut st = self.state.lock();
        st.1 = st.1.saturating_sub(1);
        if st.1 == 0 {
            self.idle.notify_all();
        }
    }

    /// Waits until no launch is in flight.
    pub fn wait_all(&self) {
        let mut st = self.state.lock();
        while st.1 > 0 {
            self.idle.wait(&mut st);
        }
    }
}

/// A submitted launch the watcher follows to its end.
struct Watched {
    // Fields drop in order: the flight before the build it replays.
    flight: LaunchInFlight,
    shadow: Arc<ShadowExec>,
    /// The build replayed (kept alive until its replay finished, even
    /// when a geometry change replaced it meanwhile), and its words.
    _build: Arc<Build>,
    done: Vec<u64>,
}

/// The process's watcher: waits for each stream-ordered replay in turn.
/// A replay that fails would never write its done words, and the
/// application's stream would wait forever: the watcher logs the error,
/// makes the exec fall through from then on and writes the done words
/// itself, so the stream goes on (the replay's results are not there; the
/// error says so).
fn watcher() -> &'static crossbeam_channel::Sender<Watched> {
    static TX: OnceLock<crossbeam_channel::Sender<Watched>> = OnceLock::new();
    TX.get_or_init(|| {
        let (tx, rx) = crossbeam_channel::unbounded::<Watched>();
        let spawned = std::thread::Builder::new()
            .name("relaunch-hip-watch".into())
            .spawn(move || {
                for w in rx {
                    // A replay may wait at its gate for as long as the
                    // stream takes to reach it: only a failure ends it early.
                    let failed = loop {
                        if w.flight.wait(Duration::from_millis(200)).is_ok() {
                            break None;
                        }
                        match w.flight.is_complete() {
                            Ok(true) => break None,
                            Ok(false) => continue,
                            Err(e) => break Some(e),
                        }
                    };
                    if let Some(e) = failed {
                        tracing::error!(error = %e, "a stream-ordered replay failed; its stream is released");
                        w.shadow.fall_back(Reason::ReplayFailed(Arc::new(e)));
                        for &d in &w.done {
                            // SAFETY: a live done word of the exec, which
                            // the watcher keeps alive through `shadow`.
                            unsafe { (d as *mut u32).write_volatile(DONE) };
                        }
                    }
                    w.shadow.in_flight.leave();
                }
            });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the replay watcher thread");
        }
        tx
    })
}

/// A stream-ordered replay of `shadow` on `stream`; returns without
/// waiting for it.
///
/// # Safety
/// `stream` is a stream handle the application passed to hipGraphLaunch.
pub unsafe fn launch(
    shadow: &Arc<ShadowExec>,
    build: &Arc<Build>,
    order: &StreamOrder,
    stream: Handle,
) -> Result<HipError, Reason> {
    let (Some(write), Some(wait)) = (
        crate::real::hipStreamWriteValue32(),
        crate::real::hipStreamWaitValue32(),
    ) else {
        return Err(Reason::NoStreamOp {
            function: "hipStreamWriteValue32 or hipStreamWaitValue32",
        });
    };
    shadow.in_flight.enter(stream as usize);
    let flight = match build.exec.launch_async(&shadow.gpu) {
        Ok(f) => f,
        Err(e) => {
            shadow.in_flight.leave();
            return Err(e.into());
        }
    };
    let open_from_host = |why: String| -> Result<HipError, Reason> {
        for lane in 0..order.lanes {
            let w = order.words(lane);
            // SAFETY: the gate is a live word of this exec's allocation.
            unsafe { (w.gate as *mut u32).write_volatile(GATE_OPEN) };
        }
        tracing::warn!(reason = %why, "stream memory operation refused: the replay runs now and is waited for");
        let waited = flight.wait(REPLAY_TIMEOUT);
        shadow.in_flight.leave();
        crate::exports::sync_stream(stream);
        Ok(waited.map(|()| HIP_SUCCESS)?)
    };
    for lane in 0..order.lanes {
        let w = order.words(lane);
        // SAFETY: the application's stream and words of this exec.
        let rc = unsafe { write(stream, w.done as *mut c_void, NOT_DONE, 0) };
        let rc = if rc == HIP_SUCCESS {
            // SAFETY: as above.
            unsafe { write(stream, w.gate as *mut c_void, GATE_OPEN, 0) }
        } else {
            rc
        };
        if rc != HIP_SUCCESS {
            return open_from_host(format!("hipStreamWriteValue32 returned {rc}"));
        }
    }
    for lane in 0..order.lanes {
        let w = order.words(lane);
        // SAFETY: as above.
        let rc = unsafe { wait(stream, w.done as *mut c_void, DONE, WAIT_VALUE_EQ, u32::MAX) };
        if rc != HIP_SUCCESS {
            tracing::warn!(
                status = rc,
                "hipStreamWaitValue32 refused: the replay is waited for on the host"
            );
            let waited = flight.wait(REPLAY_TIMEOUT);
            shadow.in_flight.leave();
            return Ok(waited.map(|()| HIP_SUCCESS)?);
        }
    }
    let done = (0..order.lanes).map(|l| order.words(l).done).collect();
    let watched = Watched {
        shadow: Arc::clone(shadow),
        _build: Arc::clone(build),
        flight,
        done,
    };
    if let Err(crossbeam_channel::SendError(w)) = watcher().send(watched) {
        // No watcher: wait here instead (the stream is ordered already).
        let waited = w.flight.wait(REPLAY_TIMEOUT);
        w.shadow.in_flight.leave();
        waited?;
    }
    Ok(HIP_SUCCESS)
}
