//! Stream-ordered graph launches: a replayed `hipGraphLaunch(exec, stream)`
//! returns without waiting and is ordered with the application's other
//! work on that stream in both directions, through HIP's own stream memory
//! operations. Per build of the exec (`build.rs`; a geometry change makes a
//! new build with its own words), in `hipHostMalloc` memory (which the
//! stream's memory operations accept and the GPU reads): one gate word per
//! lane and one `passed` word. Every launch gets a sequence number (never
//! 0; 32-bit, wrapping past 0). Per launch, in the stream:
//! `hipStreamWriteValue32` gate = seq on every lane (the replay, already
//! waiting at its gates, starts when the stream reaches the launch), then
//! `hipStreamWaitValue32` until every gate is 0 again (each lane's IB closes
//! its gate after its epilogue, relaunch-encoders `stream_order`), then
//! passed = seq. Nothing enqueued after the launch starts before the replay
//! finished, so synchronising the stream, the device or an event recorded
//! after it sees the replay finished. The protocol, and why it has no ABA
//! and no lost wake-up: docs/pm4.md, "Stream order".
//!
//! A replay that fails never closes its gates: the watcher (`watch.rs`)
//! closes them from the host once the stream has opened them, with a
//! compare-exchange from this launch's sequence number, so it can neither
//! close a gate before the stream opened it nor close a later launch's.
//!
//! The replay is submitted first, so it is already waiting at its gates
//! when the stream ops are enqueued; if HIP refuses one of them, the launch
//! is completed from the host instead (and says so). One exec launched on
//! another stream while launches of it are in flight waits for them first:
//! its words are per build, not per stream.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};
use relaunch::stream_order::GATE_CLOSED;
use relaunch::StreamWords;
use relaunch::REPLAY_TIMEOUT;

use crate::hip::{Handle, HipError, HIP_SUCCESS};
use crate::model::build::Build;
use crate::model::exec::ShadowExec;
use crate::model::reason::Reason;
use crate::model::watch::{self, Watched};

/// `hipStreamWaitValueEq` (hip_runtime_api.h).
const WAIT_VALUE_EQ: u32 = 1;
/// Bytes per word (each in its own 8 bytes): the lanes' gates, then passed.
const WORD_BYTES: usize = 8;
/// Launches of one exec in flight at most; one more waits. Keeps every
/// live sequence number within 2^31 of `passed`, which the serial-number
/// comparison in [`reached`] needs (docs/pm4.md, "Stream order").
pub const MAX_IN_FLIGHT: usize = 1 << 16;

/// The sequence number after `seq`: 32-bit, skipping 0 (a closed gate).
pub fn next_seq(seq: u32) -> u32 {
    match seq.wrapping_add(1) {
        0 => 1,
        n => n,
    }
}

/// Whether `passed` (the last launch the stream got past, 0 for none) is
/// `seq` or later, in serial-number arithmetic (RFC 1982): right across the
/// 32-bit wrap while the two are within 2^31 launches of each other.
pub fn reached(passed: u32, seq: u32) -> bool {
    passed != 0 && (passed.wrapping_sub(seq) as i32) >= 0
}

/// The words of one build, in `hipHostMalloc` memory freed with it.
pub struct StreamOrder {
    base: usize,
    pub(crate) lanes: usize,
    /// The last sequence number given out, held while a launch submits
    /// its replay and enqueues its stream ops (launches of one build from
    /// several threads must not interleave their ops).
    seq: Mutex<u32>,
    /// Set once a replay of this build failed: a later replay may then
    /// have passed that launch's open gate instead of its own (a replay on
    /// a queue replaced after the fault), so the watcher closes the gates
    /// of later launches from the host too.
    pub(crate) tainted: AtomicBool,
}

impl Drop for StreamOrder {
    fn drop(&mut self) {
        if let Some(free) = crate::hip::real::hipHostFree() {
            // SAFETY: `base` came from the real hipHostMalloc and is freed
            // once, here; every launch of this build was resolved (the
            // stream got past it: each watched launch keeps its build
            // alive until then).
            unsafe { free(self.base as *mut c_void) };
        }
    }
}

impl StreamOrder {
    fn address(&self, word: usize) -> u64 {
        (self.base + word * WORD_BYTES) as u64
    }

    fn word(&self, word: usize) -> &AtomicU32 {
        // SAFETY: `word` <= lanes is inside the allocation (lanes + 1
        // words of WORD_BYTES), 8-byte aligned, live as long as `self`;
        // the stream and the GPU access it as a 32-bit word too.
        unsafe { &*((self.base + word * WORD_BYTES) as *const AtomicU32) }
    }

    /// Lane `lane`'s gate.
    pub(crate) fn gate(&self, lane: usize) -> &AtomicU32 {
        self.word(lane)
    }

    /// The last launch the stream got past (0: none yet).
    pub(crate) fn passed(&self) -> &AtomicU32 {
        self.word(self.lanes)
    }

    /// Closes lane `lane`'s gate if it holds `seq` (the launch `seq` is
    /// known not to close it itself).
    /// True when this call closed it.
    pub(crate) fn close_if(&self, lane: usize, seq: u32) -> bool {
        self.gate(lane)
            .compare_exchange(seq, GATE_CLOSED, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// [`Self::close_if`] on every lane.
    pub(crate) fn close_all_if(&self, seq: u32) {
        for lane in 0..self.lanes {
            self.close_if(lane, seq);
        }
    }

    /// Allocates the words and orders the exec's IBs by them (before its
    /// first launch).
    pub fn new(exec: &relaunch::GraphExec) -> Result<StreamOrder, Reason> {
        let missing = |function: &'static str| Reason::NoStreamOp { function };
        let malloc = crate::hip::real::hipHostMalloc().ok_or_else(|| missing("hipHostMalloc"))?;
        crate::hip::real::hipHostFree().ok_or_else(|| missing("hipHostFree"))?;
        crate::hip::real::hipStreamWriteValue32()
            .ok_or_else(|| missing("hipStreamWriteValue32"))?;
        crate::hip::real::hipStreamWaitValue32().ok_or_else(|| missing("hipStreamWaitValue32"))?;
        let lanes = exec.lane_count();
        let bytes = (lanes + 1) * WORD_BYTES;
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
            seq: Mutex::new(0),
            tainted: AtomicBool::new(false),
        };
        let words = (0..lanes)
            .map(|l| StreamWords {
                gate: order.address(l),
            })
            .collect();
        exec.order_by_stream_words(words)?;
        Ok(order)
    }
}

/// Launches of one exec not yet resolved, and the stream they were
/// ordered on.
#[derive(Default)]
pub struct InFlight {
    state: Mutex<(usize, usize)>,
    idle: Condvar,
}

impl InFlight {
    /// Before a launch on `stream`: waits for the launches in flight when
    /// they were ordered on another stream (or when there are
    /// [`MAX_IN_FLIGHT`]), then counts this one.
    fn enter(&self, stream: usize) {
        let mut st = self.state.lock();
        while (st.1 > 0 && st.0 != stream) || st.1 >= MAX_IN_FLIGHT {
            self.idle.wait(&mut st);
        }
        *st = (stream, st.1 + 1);
    }

    pub(crate) fn leave(&self) {
        let mut st = self.state.lock();
        st.1 = st.1.saturating_sub(1);
        self.idle.notify_all();
    }

    /// Waits until no launch is in flight.
    pub fn wait_all(&self) {
        let mut st = self.state.lock();
        while st.1 > 0 {
            self.idle.wait(&mut st);
        }
    }
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
        crate::hip::real::hipStreamWriteValue32(),
        crate::hip::real::hipStreamWaitValue32(),
    ) else {
        return Err(Reason::NoStreamOp {
            function: "hipStreamWriteValue32 or hipStreamWaitValue32",
        });
    };
    shadow.in_flight.enter(stream as usize);
    let mut last = order.seq.lock();
    let flight = match build.exec.launch_async(&shadow.gpu) {
        Ok(f) => f,
        Err(e) => {
            drop(last);
            shadow.in_flight.leave();
            // Nothing was enqueued on the stream: a lost GPU's launch
            // (Reason::DeviceLost) can still go to HIP whole.
            return Err(e.into());
        }
    };
    let seq = next_seq(*last);
    *last = seq;
    let watched = Watched::new(flight, shadow, build, seq);
    for lane in 0..order.lanes {
        // SAFETY: the application's stream and a word of this build.
        let rc = unsafe { write(stream, order.address(lane) as *mut c_void, seq, 0) };
        if rc != HIP_SUCCESS {
            let why = format!("hipStreamWriteValue32 returned {rc}");
            return Ok(open_from_host(watched, order, stream, lane, why));
        }
    }
    for lane in 0..order.lanes {
        // SAFETY: as above.
        let rc = unsafe {
            let gate = order.address(lane) as *mut c_void;
            wait(stream, gate, GATE_CLOSED, WAIT_VALUE_EQ, u32::MAX)
        };
        if rc != HIP_SUCCESS {
            return Ok(wait_on_host(watched, order, stream, write, rc));
        }
    }
    // SAFETY: as above.
    let rc = unsafe { write(stream, order.address(order.lanes) as *mut c_void, seq, 0) };
    if rc != HIP_SUCCESS {
        return Ok(wait_on_host(watched, order, stream, write, rc));
    }
    drop(last);
    watch::follow(watched);
    Ok(HIP_SUCCESS)
}

/// A gate write was refused at `lane`: the stream gets no more of this
/// launch; once it finished what it has (the earlier lanes' gate writes),
/// the host opens the other gates and waits for the replay.
fn open_from_host(
    w: Watched,
    order: &StreamOrder,
    stream: Handle,
    lane: usize,
    why: String,
) -> HipError {
    tracing::warn!(reason = %why, "stream memory operation refused: the replay runs now and is waited for");
    crate::hip::sync_stream(stream);
    for l in lane..order.lanes {
        order.gate(l).store(w.seq, Ordering::SeqCst);
    }
    let waited = w.flight.wait(REPLAY_TIMEOUT);
    let rc = settle_on_host(&w, order, waited);
    // Everything before it on the stream is done (synchronised above).
    order.passed().store(w.seq, Ordering::SeqCst);
    w.shadow.in_flight.leave();
    rc
}

/// A gate wait or the passed write was refused: the host waits for the
/// replay, so nothing the application enqueues after the launch runs
/// before it; the watcher then resolves the launch as any other (when the
/// passed write went in), or the exec falls through.
fn wait_on_host(
    w: Watched,
    order: &StreamOrder,
    stream: Handle,
    write: WriteValue32,
    status: HipError,
) -> HipError {
    tracing::warn!(
        status,
        "a stream wait or write was refused: the replay is waited for on the host"
    );
    // SAFETY: the application's stream and the passed word of this build
    // (the gate waits that went in are before it).
    let rc = unsafe { write(stream, order.address(order.lanes) as *mut c_void, w.seq, 0) };
    let waited = w.flight.wait(REPLAY_TIMEOUT);
    if rc == HIP_SUCCESS {
        let failed = waited.is_err();
        watch::follow(w);
        return if failed {
            crate::hip::HIP_ERROR_LAUNCH_FAILURE
        } else {
            HIP_SUCCESS
        };
    }
    // The stream cannot say when it got past the launch: the exec falls
    // through from now on, and its words stay allocated (never reused).
    let rc = match waited {
        Ok(()) => HIP_SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "a stream-ordered replay failed");
            // The gates the stream opens for it are closed from the host
            // (bounded: a lane whose own IB closed its gate is not told
            // apart from one the stream has not reached yet).
            let until = std::time::Instant::now() + REPLAY_TIMEOUT;
            let mut open: Vec<usize> = (0..order.lanes).collect();
            while !open.is_empty() && std::time::Instant::now() < until {
                open.retain(|&l| !order.close_if(l, w.seq));
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            w.shadow.fall_back(Reason::ReplayFailed(Arc::new(e)));
            crate::hip::HIP_ERROR_LAUNCH_FAILURE
        }
    };
    if rc == HIP_SUCCESS {
        w.shadow.fall_back(Reason::NoStreamOp {
            function: "hipStreamWriteValue32 (the launch's passed word)",
        });
    }
    std::mem::forget(w);
    rc
}

/// The launch was waited for on the host after the stream finished its
/// part (`open_from_host`): a failed replay's gates are closed, a
/// timed-out one's stay open (it may still run; the exec falls through).
fn settle_on_host(
    w: &Watched,
    order: &StreamOrder,
    waited: Result<(), relaunch::Error>,
) -> HipError {
    let Err(e) = waited else {
        return HIP_SUCCESS;
    };
    let timed_out = w.flight.is_complete().is_ok();
    tracing::error!(error = %e, "a stream-ordered replay failed");
    w.shadow.fall_back(Reason::ReplayFailed(Arc::new(e)));
    if !timed_out {
        order.tainted.store(true, Ordering::SeqCst);
        order.close_all_if(w.seq);
    }
    crate::hip::HIP_ERROR_LAUNCH_FAILURE
}

type WriteValue32 = unsafe extern "C" fn(Handle, *mut c_void, u32, u32) -> HipError;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_skip_zero_at_the_wrap() {
        assert_eq!(next_seq(0), 1);
        assert_eq!(next_seq(41), 42);
        assert_eq!(next_seq(u32::MAX), 1);
    }

    #[test]
    fn passed_is_compared_across_the_wrap() {
        assert!(!reached(0, 1), "nothing passed yet");
        assert!(reached(5, 5) && reached(6, 5) && !reached(4, 5));
        // 0xFFFF_FFFF, then 1: passed 1 is past 0xFFFF_FFFF, not before it.
        assert!(reached(1, u32::MAX));
        assert!(!reached(u32::MAX, 1));
        let far = MAX_IN_FLIGHT as u32;
        assert!(reached(
            next_seq(u32::MAX - far / 2).wrapping_add(far),
            u32::MAX
        ));
    }

    /// One build's lane with a thread per party: the stream (open = seq,
    /// wait for 0, passed = seq), the GPU queue, whose replays from
    /// `fail_at` on fail (a failed one never closes its gate), and the
    /// host, told of each failure at some point before or after the stream
    /// reached it, closing by compare-exchange until passed reached it.
    /// With `rerun`, the replays after the failure run anyway (a replaced
    /// queue) and may pass the failed launch's gate: the host then closes
    /// their gates too (a tainted build). The sequence wraps in the middle.
    fn model(fail_at: usize, rerun: bool) {
        use std::sync::atomic::AtomicU32;
        use std::time::{Duration, Instant};
        let (gate, passed) = (AtomicU32::new(0), AtomicU32::new(0));
        let seqs: Vec<u32> = std::iter::successors(Some(u32::MAX - 40), |&s| Some(next_seq(s)))
            .take(100)
            .collect();
        let (tx, rx) = crossbeam_channel::unbounded::<u32>();
        let (gate, passed, all) = (&gate, &passed, &seqs);
        std::thread::scope(|s| {
            s.spawn(move || {
                for &seq in all {
                    gate.store(seq, Ordering::SeqCst);
                    let start = Instant::now();
                    while gate.load(Ordering::SeqCst) != GATE_CLOSED {
                        let stuck = start.elapsed() > Duration::from_secs(10);
                        assert!(!stuck, "stream stuck at {seq:#x} ({fail_at}, {rerun})");
                        std::thread::yield_now();
                    }
                    passed.store(seq, Ordering::SeqCst);
                }
            });
            s.spawn(move || {
                for (i, &seq) in all.iter().enumerate() {
                    if i < fail_at || (rerun && i > fail_at) {
                        let start = Instant::now();
                        let open = loop {
                            match gate.load(Ordering::SeqCst) {
                                GATE_CLOSED => {
                                    let stuck = start.elapsed() > Duration::from_secs(10);
                                    assert!(!stuck, "replay {i} never let through");
                                    std::thread::yield_now()
                                }
                                v => break v,
                            }
                        };
                        assert!(i >= fail_at || open == seq, "passed another gate");
                        gate.store(GATE_CLOSED, Ordering::SeqCst);
                    }
                    if i >= fail_at {
                        tx.send(seq).unwrap();
                    }
                }
            });
            s.spawn(move || {
                for seq in rx {
                    while !reached(passed.load(Ordering::SeqCst), seq) {
                        let _ = gate.compare_exchange(seq, 0, Ordering::SeqCst, Ordering::SeqCst);
                        std::thread::yield_now();
                    }
                }
            });
        });
        assert_eq!(passed.load(Ordering::SeqCst), *seqs.last().unwrap());
    }

    #[test]
    fn model_stream_gpu_and_host_never_lose_a_launch() {
        for fail_at in [0, 1, 39, 40, 41, 99, 100] {
            for rerun in [false, true] {
                model(fail_at, rerun);
            }
        }
    }
}
