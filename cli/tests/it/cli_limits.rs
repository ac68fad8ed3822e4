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
        .arg(format!(
            "ulimit -v {kib}; exec timeout 20 \"$0\" {args} >/dev/null"
        ))
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
        stderr.contains("/dev/zero") && stderr.contains("not a regular file"),
        "{stderr}"
    );
}

/// Every file the CLI is given by path is read as a regular file through
/// a limit: a FIFO does not block it, a device does not fill memory.
#[test]
fn files_given_by_path_are_regular_files_only() {
    let dir = std::env::temp_dir().join(format!("relaunch-cli-fifo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("code.fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    // A packed tree whose archive is then replaced by a link to /dev/zero.
    let code = dir.join("counter.co");
    std::fs::write(&code, relaunch_testsupport::fixture("gfx1100", "counter")).unwrap();
    let root = dir.join("root");
    let packed = run_limited(
        2 << 20,
        &format!(
            "bundle pack --group g --arch gfx1100 -o {} {}",
            root.display(),
            code.display()
        ),
    );
    assert!(packed.status.success(), "{packed:?}");
    let kpack = root.join("gfx1100/relaunch_g_gfx1100.kpack");
    std::fs::remove_file(&kpack).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &kpack).unwrap();
    let fifo = fifo.display();
    for (args, expect) in [
        (format!("certify {fifo}"), "a FIFO"),
        (format!("inspect {fifo}"), "a FIFO"),
        (
            format!(
                "bundle pack --group g --arch gfx1100 -o {}/p {fifo}",
                dir.display()
            ),
            "a FIFO",
        ),
        (
            format!("bundle verify {}", root.display()),
            "outside the bundle root",
        ),
    ] {
        // `timeout` turns a blocked read into exit status 124.
        let out = run_limited(2 << 20, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args}: {stderr}");
        assert!(stderr.contains(expect), "{args}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
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
