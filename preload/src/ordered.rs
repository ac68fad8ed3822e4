//! Stream-ordered graph launches: a replayed `hipGraphLaunch(exec, stream)`
//! returns without waiting and is ordered with the application's other
//! work on that stream in both directions, through HIP's own stream memory
//! operations. Per lane of the exec, two words in `hipHostMalloc` memory
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
//! waits for them first: its gates are per exec, not per stream.

use std::ffi::c_void;

use parking_lot::Mutex;
use relaunch::encoders::stream_order::{DONE, GATE_OPEN, NOT_DONE};
use relaunch::encoders::StreamWords;
use relaunch::{LaunchInFlight, REPLAY_TIMEOUT};

use crate::exec::ShadowExec;
use crate::hip::{Handle, HipError, HIP_SUCCESS};

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
    pub fn new(exec: &relaunch::GraphExec) -> Result<StreamOrder, String> {
        let missing =
            |f: &str| format!("the real HIP has no {f}, which stream-ordered replays need");
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
            return Err(format!(
                "hipHostMalloc of {bytes} bytes for the stream words failed ({rc})"
            ));
        }
        // SAFETY: `bytes` bytes were just allocated at `p`.
        unsafe { std::ptr::write_bytes(p as *mut u8, 0, bytes) };
        let order = StreamOrder {
            base: p as usize,
            lanes,
        };
        let words = (0..lanes).map(|l| order.words(l)).collect();
        exec.order_by_stream_words(words)
            .map_err(|e| e.to_string())?;
        Ok(order)
    }
}

/// Launches in flight, and the stream they were ordered on.
#[derive(Default)]
pub struct InFlight {
    launches: Mutex<(usize, Vec<LaunchInFlight>)>,
}

impl InFlight {
    /// Drops finished launches (logging a failed one); waits for all of
    /// them when `stream` differs from theirs.
    fn reap(&self, stream: usize) {
        let mut l = self.launches.lock();
        if l.0 != stream && !l.1.is_empty() {
            for f in l.1.drain(..) {
                if let Err(e) = f.wait(REPLAY_TIMEOUT) {
                    tracing::error!(error = %e, "a stream-ordered replay failed");
                }
            }
        }
        l.0 = stream;
        l.1.retain(|f| match f.is_complete() {
            Ok(done) => !done,
            Err(e) => {
                tracing::error!(error = %e, "a stream-ordered replay failed");
                false
            }
        });
    }

    fn push(&self, f: LaunchInFlight) {
        self.launches.lock().1.push(f);
    }

    /// Waits for every launch in flight (the exec is being destroyed).
    pub fn wait_all(&self) {
        for f in self.launches.lock().1.drain(..) {
            if let Err(e) = f.wait(REPLAY_TIMEOUT) {
                tracing::error!(error = %e, "a stream-ordered replay failed");
            }
        }
    }
}

/// A stream-ordered replay of `shadow` on `stream`; returns without
/// waiting for it.
///
/// # Safety
/// `stream` is a stream handle the application passed to hipGraphLaunch.
pub unsafe fn launch(
    shadow: &ShadowExec,
    order: &StreamOrder,
    stream: Handle,
) -> Result<HipError, String> {
    let (Some(write), Some(wait)) = (
        crate::real::hipStreamWriteValue32(),
        crate::real::hipStreamWaitValue32(),
    ) else {
        return Err("the real HIP lost its stream memory operations".into());
    };
    shadow.in_flight.reap(stream as usize);
    let flight = shadow
        .exec
        .launch_async(&shadow.gpu)
        .map_err(|e| e.to_string())?;
    let open_from_host = |why: String| {
        for lane in 0..order.lanes {
            let w = order.words(lane);
            // SAFETY: the gate is a live word of this exec's allocation.
            unsafe { (w.gate as *mut u32).write_volatile(GATE_OPEN) };
        }
        tracing::warn!(reason = %why, "stream memory operation refused: the replay runs now and is waited for");
        let _ = flight.wait(REPLAY_TIMEOUT);
        crate::exports::sync_stream(stream);
        Ok(HIP_SUCCESS)
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
            flight.wait(REPLAY_TIMEOUT).map_err(|e| e.to_string())?;
            return Ok(HIP_SUCCESS);
        }
    }
    shadow.in_flight.push(flight);
    Ok(HIP_SUCCESS)
}
