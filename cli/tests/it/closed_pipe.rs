//! A reader that goes away (`relaunch demo | head -1`) ends a subcommand
//! quietly: status 0, no panic on stderr.

use std::process::{Command, Stdio};

/// Runs `relaunch ARGS` with a stdout pipe whose reader is closed before the
/// command writes anything, so its first write meets a closed pipe.
fn with_stdout_closed(args: &[&str]) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_relaunch"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run relaunch");
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {:?}\n{stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
}

#[test]
fn demo_selftest_and_devices_end_quietly_when_stdout_closes() {
    with_stdout_closed(&[
        "demo",
        "--device",
        "sim:gfx1100",
        "--layers",
        "1",
        "--tokens",
        "2",
    ]);
    with_stdout_closed(&["selftest", "--device", "sim:gfx1201"]);
    with_stdout_closed(&["devices"]);
}
