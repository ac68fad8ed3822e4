//! #15.10: the CLI reads bounded input, streams `pm4 dump`, and exits
//! quietly when its reader goes away (`relaunch pm4 dump x | head`).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn relaunch() -> &'static str {
    env!("CARGO_BIN_EXE_relaunch")
}

fn scratch_file(name: &str, bytes: &[u8]) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("relaunch-cli-limits-{}-{name}", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Runs `relaunch ARGS` under a virtual-memory limit (`ulimit -v`, KiB), so
/// an unbounded read fails fast instead of filling the machine.
fn run_limited(kib: u64, args: &str) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kib}; exec \"$0\" {args} >/dev/null"))
        .arg(relaunch())
        .output()
        .unwrap()
}

#[test]
fn inspect_caps_its_input_with_a_clear_error() {
    let out = run_limited(2 << 20, "inspect /dev/zero");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("/dev/zero") && stderr.contains("larger than"),
        "{stderr}"
    );
}

/// A dump's text is several times its input; streamed, it needs no memory
/// for the text at all (the input alone is 8 MiB here).
#[test]
fn pm4_dump_streams_its_output() {
    // One-dword type-2 filler packets: one line of text per 4 bytes.
    let bytes: Vec<u8> = std::iter::repeat_n(0x8000_0000u32.to_le_bytes(), 2 << 20)
        .flatten()
        .collect();
    let path = scratch_file("filler.bin", &bytes);
    let out = run_limited(160 << 10, &format!("pm4 dump {}", path.display()));
    let _ = std::fs::remove_file(&path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
}

#[test]
fn pm4_dump_into_a_closed_pipe_exits_quietly() {
    let bytes: Vec<u8> = std::iter::repeat_n(0x8000_0000u32.to_le_bytes(), 1 << 16)
        .flatten()
        .collect();
    let path = scratch_file("pipe.bin", &bytes);
    let mut child = Command::new(relaunch())
        .args(["pm4", "dump"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // The reader is dropped here: like `| head -n1`.
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_file(&path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!first.is_empty());
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(stderr.is_empty(), "{stderr}");
}
