//! Issue 30, finding 10: a C twin asking about the IB whose profiled replay
//! runs it. The replay holds the IB's lock while it waits for the twin's
//! queue thread, so the twin's question used to wait out the 60 s replay
//! timeout (reported as a hung kernel); now it is refused at once.

use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{cstr, last_error, load, open_sim, pack_kernargs};
use crate::*;

static IB: AtomicPtr<RlPm4Ib> = AtomicPtr::new(null_mut());
static CALLS: AtomicUsize = AtomicUsize::new(0);
static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The twin: asks for its own IB's dispatch count and patches it.
unsafe extern "C" fn asks_about_its_ib(_wg: *mut RlSimWorkgroup, _user: *mut c_void) -> i32 {
    CALLS.fetch_add(1, Ordering::SeqCst);
    let ib = IB.load(Ordering::SeqCst);
    let n = rl_pm4_ib_dispatch_count(ib);
    SEEN.lock()
        .unwrap()
        .push(format!("count {n}: {}", last_error()));
    let bytes = [0u8; 4];
    // SAFETY: bytes is 4 readable bytes.
    let rc = unsafe { rl_pm4_ib_set_kernargs(ib, 0, 0, bytes.as_ptr(), 4) };
    SEEN.lock()
        .unwrap()
        .push(format!("patch {rc}: {}", last_error()));
    0
}

#[test]
fn a_twin_asking_about_its_profiled_ib_is_refused_at_once() {
    let gpu = open_sim();
    // No other test of this binary runs `atomics` (twins are process-wide).
    let module = load(gpu, "atomics");
    // SAFETY: a live symbol string and a callable callback.
    let rc = unsafe {
        rl_sim_register_kernel(
            cstr("atomics").as_ptr(),
            Some(asks_about_its_ib),
            null_mut(),
        )
    };
    assert_eq!(rc, RL_OK, "{}", last_error());
    let kernarg = pack_kernargs(module, "atomics", &[0u8; 24], [1; 3], [1; 3]);
    let b = rl_pm4_builder_new(gpu);
    let sym = cstr("atomics");
    // SAFETY: live strings and buffers.
    let rc = unsafe {
        rl_pm4_dispatch(
            b,
            module,
            sym.as_ptr(),
            1,
            1,
            1,
            1,
            1,
            1,
            0,
            kernarg.as_ptr(),
            kernarg.len(),
        )
    };
    assert_eq!(rc, RL_OK, "{}", last_error());
    let mut ib = null_mut();
    // SAFETY: ib is writable.
    let rc = unsafe { rl_pm4_finalize_profiled(gpu, b, &mut ib) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    IB.store(ib, Ordering::SeqCst);
    let mut us = 0.0;
    let t = Instant::now();
    // SAFETY: us is writable.
    let rc = unsafe { rl_pm4_replay_profiled(ib, &mut us) };
    let took = t.elapsed();
    assert_eq!(rc, RL_OK, "{}", last_error());
    assert!(took < Duration::from_secs(10), "the replay took {took:?}");
    assert_eq!(CALLS.load(Ordering::SeqCst), 1);
    let seen = SEEN.lock().unwrap().clone();
    assert!(seen[0].starts_with("count 0: "), "{seen:?}");
    assert!(seen[0].contains("inside a kernel twin"), "{seen:?}");
    assert!(
        seen[1].starts_with(&format!("patch {RL_ERR_REPLAY}: ")),
        "{seen:?}"
    );
    assert!(seen[1].contains("inside a kernel twin"), "{seen:?}");
    // Outside the twin the IB answers as before.
    assert_eq!(rl_pm4_ib_dispatch_count(ib), 1);
    rl_pm4_ib_free(ib);
    rl_module_free(module);
    rl_gpu_free(gpu);
}
