//! smoke, gpu_smoke and the C-twin example under valgrind: no invalid
//! access and no definite leak (reachable process-wide state such as the
//! simulator is allowed).

use crate::support::{compile_example, compile_source, ffi_dir, fixture, have, scratch, stdout};
use std::path::Path;
use std::process::Command;

fn under_valgrind(example: &str, args: &[&str]) -> String {
    let dir = scratch(&format!("valgrind-{example}"));
    let exe = compile_example(example, &dir);
    run_under_valgrind(&exe, example, args)
}

fn run_under_valgrind(exe: &Path, example: &str, args: &[&str]) -> String {
    let out = Command::new("valgrind")
        .args([
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
            "--quiet",
        ])
        .arg(exe)
        .args(args)
        .env("RELAUNCH_DEVICE", "sim:gfx1201")
        .output()
        .expect("run valgrind");
    assert!(
        out.status.success(),
        "{example} under valgrind failed ({}):\n{}\n{}",
        out.status,
        stdout(&out),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout(&out)
}

#[test]
fn smoke_is_clean_under_valgrind() {
    if !have("cc", "valgrind smoke") || !have("valgrind", "valgrind smoke") {
        return;
    }
    let text = under_valgrind("smoke", &[]);
    assert!(text.ends_with("C-ABI smoke OK\n"), "{text}");
}

#[test]
fn gpu_smoke_is_clean_under_valgrind() {
    if !have("cc", "valgrind gpu_smoke") || !have("valgrind", "valgrind gpu_smoke") {
        return;
    }
    let text = under_valgrind("gpu_smoke", &["8", &fixture("gfx1201", "counter")]);
    assert!(
        text.contains("counter = 8 / 8 certified=no [PASS]"),
        "{text}"
    );
}

#[test]
fn c_twin_callbacks_are_clean_under_valgrind() {
    if !have("cc", "valgrind sim_twin") || !have("valgrind", "valgrind sim_twin") {
        return;
    }
    let args = [
        fixture("gfx1201", "add_scalar"),
        fixture("gfx1201", "counter"),
    ];
    let text = under_valgrind("sim_twin", &[&args[0], &args[1]]);
    assert!(text.contains("C twin example: [PASS]"), "{text}");
}

/// #14: `rl_pm4_replay_async`, then `rl_pm4_ib_free` and `rl_module_free`
/// with the replay in flight: the replay completes (the counter reaches N)
/// and valgrind sees no use of freed memory.
#[test]
fn freeing_the_ib_and_module_during_an_async_replay_is_clean_under_valgrind() {
    if !have("cc", "valgrind inflight_free") || !have("valgrind", "valgrind inflight_free") {
        return;
    }
    let dir = scratch("valgrind-inflight-free");
    let exe = compile_source(
        &ffi_dir().join("tests/c_abi/inflight_free.c"),
        "inflight_free",
        &dir,
    );
    let text = run_under_valgrind(
        &exe,
        "inflight_free",
        &["300", &fixture("gfx1201", "counter")],
    );
    assert!(text.contains("/ 300 after [PASS]"), "{text}");
    // Without valgrind, with more work, the free lands mid-replay.
    let out = crate::support::run(&exe, &["3000", &fixture("gfx1201", "counter")]);
    crate::support::check(&out, "inflight_free");
    let text = stdout(&out);
    assert!(text.contains("/ 3000 after [PASS]"), "{text}");
    assert!(
        !text.contains("counter 3000 at the free"),
        "the replay had finished before the free: {text}"
    );
}
