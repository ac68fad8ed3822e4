//! Issue 30, finding 5: `rl_pm4_replay_async` of a hung kernel, nobody
//! waits, every handle is freed. The process used to burn a core for ever
//! and keep a thread and the IB's memory per dropped IB: the IB's keep-alive
//! helper waited 120 s for the replay, then leaked the modules it held, and
//! with them the device, its queue and the kernel running on it. Freeing
//! the device's last handle now abandons such replays at once, and what
//! they kept goes: the CPU goes quiet and the thread count returns to what
//! it was before the device was opened.
//!
//! The measurement is of the whole process, so it runs in a child process
//! of its own (this binary's other tests run in parallel).

use std::ptr::null_mut;
use std::time::{Duration, Instant};

use relaunch_testsupport::{asm, process};

use super::{cstr, last_error, load, open_sim, pack_kernargs};
use crate::*;

/// Set in the child's environment: only then does the child test run.
const CHILD: &str = "RELAUNCH_CAPI_UNWAITED_CHILD";
const CHILD_TEST: &str = "tests::unwaited::unwaited_hung_replay_in_its_own_process";
/// How long the kernel gets to start (a loaded 2-core host can be slow).
const START_LIMIT: Duration = Duration::from_secs(30);
/// How long the threads get to go after the frees: the helpers notice an
/// abandonment within 20 ms and the queue's processor within a
/// millisecond; the rest is joining on a loaded host. Far below the 60 s
/// replay timeout, which must not be what ends the replay.
const THREADS_LIMIT: Duration = Duration::from_secs(20);
/// The window CPU time is measured over.
const WINDOW: Duration = Duration::from_secs(2);
/// Most CPU time over `WINDOW` once everything is freed: the hung kernel
/// takes the whole window (one core); an idle process almost nothing. A
/// tenth of the window separates them with a wide margin either way.
const IDLE_CPU: Duration = Duration::from_millis(200);

#[test]
fn freeing_the_device_abandons_its_unwaited_hung_replay() {
    if !asm::tools() {
        return;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = std::process::Command::new(exe)
        .args([CHILD_TEST, "--exact", "--ignored", "--nocapture"])
        .args(["--test-threads", "1"])
        .env(CHILD, "1")
        .output()
        .expect("run the child test");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    assert!(out.status.success(), "the child test failed:\n{text}");
    assert!(
        text.contains("1 passed"),
        "the child test did not run:\n{text}"
    );
}

#[test]
#[ignore = "run in a process of its own by freeing_the_device_abandons_its_unwaited_hung_replay"]
fn unwaited_hung_replay_in_its_own_process() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    // The simulated system's process-wide threads start with the first
    // device: start them before the baseline is taken.
    let gpu = open_sim();
    let module = load(gpu, "counter");
    rl_module_free(module);
    rl_gpu_free(gpu);
    let baseline = process::steady_threads(THREADS_LIMIT);

    let gpu = open_sim();
    let code = asm::spinning("gfx1201");
    let mut module = null_mut();
    // SAFETY: code is a live buffer; module is a valid out pointer.
    let rc = unsafe { rl_gpu_load_module(gpu, code.as_ptr(), code.len(), &mut module) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    let mut out = 0u64;
    // SAFETY: out is writable.
    let rc = unsafe { rl_gpu_alloc(gpu, 4, 1, &mut out) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    let block = [32, 1, 1];
    let kernarg = pack_kernargs(module, "spin", &out.to_le_bytes(), block, block);
    let b = rl_pm4_builder_new(gpu);
    assert!(!b.is_null(), "{}", last_error());
    let sym = cstr("spin");
    // SAFETY: live strings and buffers.
    let rc = unsafe {
        rl_pm4_dispatch(
            b,
            module,
            sym.as_ptr(),
            32,
            1,
            1,
            32,
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
    let rc = unsafe { rl_pm4_finalize(gpu, b, &mut ib) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    assert_eq!(rl_pm4_replay_async(ib), RL_OK, "{}", last_error());
    let start = Instant::now();
    loop {
        let mut v = 0u32;
        // SAFETY: v is 4 writable bytes.
        let rc = unsafe { rl_gpu_read(gpu, out, (&mut v as *mut u32).cast(), 4) };
        assert_eq!(rc, RL_OK, "{}", last_error());
        if v == 1 {
            break;
        }
        assert!(start.elapsed() < START_LIMIT, "the kernel did not start");
        std::thread::sleep(Duration::from_millis(5));
    }
    let spinning = process::cpu_over(WINDOW);
    let running = process::threads();

    // Nobody waits: every handle goes.
    rl_pm4_ib_free(ib);
    rl_module_free(module);
    assert_eq!(rl_gpu_free_mem(gpu, out), RL_OK, "{}", last_error());
    let freed = Instant::now();
    rl_gpu_free(gpu);

    let left = process::wait_threads_at_most(baseline, THREADS_LIMIT);
    let gone_after = freed.elapsed();
    let quiet = process::cpu_over(WINDOW);
    println!(
        "CPU over {WINDOW:?}: {spinning:?} while the replay ran, {quiet:?} after the frees; \
         threads: {baseline} before, {running} while it ran, {left} {gone_after:?} after the \
         frees"
    );
    assert!(
        left <= baseline,
        "{left} threads left, {baseline} before the device was opened: {:?}",
        process::thread_names()
    );
    assert!(
        quiet < IDLE_CPU,
        "the abandoned kernel still runs: {quiet:?} of CPU over {WINDOW:?}"
    );
}
