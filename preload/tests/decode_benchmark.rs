//! The hipGraph decode benchmark (`bench/hip/decode_hipgraph.cpp`) under
//! the interposer, against the fake HIP.

mod common;

use std::path::Path;
use std::process::Command;

use common::{built, run, run_with};

/// `bench/hip/decode_hipgraph.cpp` builds against Debian's HIP headers
/// (`libamdhip64-dev`) and runs against the fake HIP: it records the
/// decode step (12 nodes per layer and a sampler per sequence), patches
/// the 3 position arguments per layer each token and prints the median.
/// (The fake never runs kernels, so this checks the program, not timing.)
#[test]
fn the_hipgraph_decode_benchmark_builds_and_runs_against_the_fake() {
    let Some(b) = built() else { return };
    let header = Path::new("/usr/include/hip/hip_runtime_api.h");
    if !relaunch_testsupport::require_tool("c++", "the HIP benchmark build needs it") {
        return;
    }
    if !header.exists() {
        relaunch_testsupport::missing(
            &header.display().to_string(),
            "Debian libamdhip64-dev; .ci/run installs it",
        );
        return;
    }
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/hip/decode_hipgraph.cpp");
    let program = b.dir.join("decode_hipgraph");
    let out = Command::new("c++")
        .args([
            "-std=c++17",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-D__HIP_PLATFORM_AMD__",
        ])
        .arg(&source)
        .arg("-o")
        .arg(&program)
        .arg(format!("-L{}", b.dir.display()))
        .arg("-lamdhip64")
        .arg(format!("-Wl,-rpath,{}", b.dir.display()))
        .output()
        .expect("run c++");
    assert!(
        out.status.success(),
        "c++ failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decode = relaunch_testsupport::fixture_path("gfx1201", "decode");
    let (code, layers, seqs, tokens) = (
        decode.as_path(),
        Path::new("3"),
        Path::new("2"),
        Path::new("5"),
    );
    let lines = run(b, &program, &[code, layers, seqs, tokens], false);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with(
            "decode_hipgraph layers=3 sequences=2 nodes=74 position_patches=18 tokens=5 median_us="
        ),
        "{lines:?}"
    );
    // Under the interposer the graph replays, but the simulator has no
    // twins for the decode kernels in this process and is told to run only
    // twins: the replay fails. The stream must not wait forever for its
    // gates: the failure is logged, the stream released, and the exec
    // falls through from then on.
    let log = [
        ("RELAUNCH_LOG", Some("error")),
        ("RELAUNCH_SIM_KERNELS", Some("twin")),
    ];
    let (lines, stderr) = run_with(b, &program, &[code, layers, seqs, tokens], true, &log);
    assert_eq!(lines.len(), 1, "{lines:?} {stderr}");
    assert!(
        stderr.contains("a stream-ordered replay failed; its stream is released")
            && stderr.contains("no host twin is registered for kernel rmsnorm"),
        "{stderr}"
    );
    // With the interpreter running the decode kernels the replays succeed:
    // the exec replays as PM4 and no token's launch fails or falls through
    // (about 1.5 s in a debug build).
    let log = [
        ("RELAUNCH_LOG", Some("info")),
        ("RELAUNCH_SIM_KERNELS", Some("isa")),
    ];
    let (lines, stderr) = run_with(b, &program, &[code, layers, seqs, tokens], true, &log);
    assert_eq!(lines.len(), 1, "{lines:?} {stderr}");
    assert!(
        stderr.contains("hipGraphExec replays as retained PM4"),
        "{stderr}"
    );
    for bad in ["replay failed", "falls through", "ERROR", "WARN"] {
        assert!(!stderr.contains(bad), "{bad}: {stderr}");
    }
}
