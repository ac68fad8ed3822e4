//! The C examples on the real ROCr 5.2.3 over the simulated gfx1030
//! (`relaunch sim-rocm`): the C ABI's HSA path, single- and multi-lane,
//! against the runtime a user with a GPU has, not the simulator's own HSA
//! table. Needs Debian's `libhsa-runtime64-1` (.ci/run installs it).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{check, compile_example, fixture, have, scratch, stdout};

/// `relaunch` with the thunk and shim beside it, built once.
fn launcher() -> Option<&'static PathBuf> {
    relaunch_testsupport::sim_rocm_stack().map(|(relaunch, _)| relaunch)
}

/// `exe args` under `relaunch sim-rocm --target gfx1030` on the default
/// device (the first GPU: the real runtime's agent).
fn on_rocr(launcher: &Path, exe: &Path, args: &[&str], what: &str) -> String {
    let out = Command::new(launcher)
        .args(["sim-rocm", "--target", "gfx1030", "--"])
        .arg(exe)
        .args(args)
        .env_remove("RELAUNCH_DEVICE")
        .env_remove("LD_PRELOAD")
        .output()
        .unwrap_or_else(|e| panic!("run {what}: {e}"));
    check(&out, what);
    let text = stdout(&out);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("over simulated gfx1030"),
        "{what} did not run under sim-rocm"
    );
    text
}

#[test]
fn the_c_examples_run_on_the_real_rocr() {
    let Some(launcher) = launcher() else {
        return;
    };
    if !have("cc", "real_rocr") {
        return;
    }
    let dir = scratch("real_rocr");
    let counter = fixture("gfx1030", "counter");
    let smoke = compile_example("gpu_smoke", &dir);
    let text = on_rocr(launcher, &smoke, &["64", &counter], "gpu_smoke 64");
    assert!(text.contains("rocr#0"), "the real runtime's agent: {text}");
    assert_eq!(
        text.lines().last(),
        Some("real-GPU C-ABI gate: counter = 64 / 64 certified=no [PASS]"),
        "{text}"
    );
    let multi = compile_example("multi_queue", &dir);
    let text = on_rocr(launcher, &multi, &[&counter, "4"], "multi_queue");
    for part in [
        "lane 3: 4 dispatches, counter = 8",
        "after patch: spare = 1, lane 0 = 2",
        "multi-queue C-ABI: [PASS]",
    ] {
        assert!(text.contains(part), "no {part:?} in:\n{text}");
    }
}
