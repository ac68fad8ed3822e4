//! The Rust examples the reference document names, built and run on the
//! simulated device: `hipgraph_migration` (the mock plan) and
//! `graph_launch_smoke` (a real retained graph replay printing
//! `OBSERVED=2 EXPECTED=2`).

use relaunch_testsupport::fixture_path;
use std::path::PathBuf;
use std::process::Command;

fn example(name: &str) -> PathBuf {
    let files = relaunch_testsupport::cargo_build(&["-p", "relaunch", "--example", name]);
    relaunch_testsupport::artifact(&files, name)
}

#[test]
fn hipgraph_migration_prints_the_compiled_plan() {
    let out = Command::new(example("hipgraph_migration"))
        .output()
        .expect("run hipgraph_migration");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for part in [
        "nodes: 4, lanes: 2",
        "fingerprint: ",
        "mock launch: 2 lanes",
        "hipgraph migration example OK",
    ] {
        assert!(text.contains(part), "no {part:?} in:\n{text}");
    }
}

#[test]
fn graph_launch_smoke_observes_two_on_both_sim_targets() {
    let exe = example("graph_launch_smoke");
    for target in ["gfx1100", "gfx1201"] {
        let out = Command::new(&exe)
            .env("RELAUNCH_DEVICE", format!("sim:{target}"))
            .env("RELAUNCH_GRAPH_HSACO", fixture_path(target, "counter"))
            .env("RELAUNCH_GRAPH_SYMBOL", "counter")
            .output()
            .expect("run graph_launch_smoke");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{target}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(text.trim(), "OBSERVED=2 EXPECTED=2", "{target}");
    }
}

/// The guide's command with only the names changed (#31.5): the guide's
/// counter kernel `ctr_k`, no device chosen. Without ROCm's kernel driver
/// the example falls back to the simulated gfx1201 and says so in one line.
#[test]
fn graph_launch_smoke_runs_as_the_guide_writes_it() {
    if std::path::Path::new("/dev/kfd").exists() {
        eprintln!("note: /dev/kfd exists: the example would use this machine's GPU; not run");
        return;
    }
    let out = Command::new(example("graph_launch_smoke"))
        .env("ROCR_VISIBLE_DEVICES", "0")
        .env("RELAUNCH_GRAPH_HSACO", fixture_path("gfx1201", "ctr_k"))
        .env("RELAUNCH_GRAPH_SYMBOL", "ctr_k")
        .env_remove("RELAUNCH_DEVICE")
        .env_remove("RELAUNCH_HSA_LIB")
        .output()
        .expect("run graph_launch_smoke");
    let text = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}{stderr}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.len() == 2
            && lines[0].starts_with("device: gfx1201 sim:gfx1201")
            && lines[0].contains("running on the simulator"),
        "{text}"
    );
    assert_eq!(lines[1], "OBSERVED=2 EXPECTED=2");
    assert!(stderr.trim().is_empty(), "nothing on stderr: {stderr}");
}

/// The guide's own variable names still work, each named once on stderr
/// with its relaunch name.
#[test]
fn graph_launch_smoke_reads_the_reference_names_with_a_warning() {
    let out = Command::new(example("graph_launch_smoke"))
        .env("RELAUNCH_DEVICE", "sim:gfx1100")
        .env("REDLINE_GRAPH_HSACO", fixture_path("gfx1100", "ctr_k"))
        .env("REDLINE_GRAPH_SYMBOL", "ctr_k")
        .env_remove("RELAUNCH_GRAPH_HSACO")
        .env_remove("RELAUNCH_GRAPH_SYMBOL")
        .env_remove("RELAUNCH_LOG")
        .output()
        .expect("run graph_launch_smoke");
    let text = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}{stderr}");
    assert_eq!(text.trim(), "OBSERVED=2 EXPECTED=2");
    for name in ["HSACO", "SYMBOL"] {
        let needle = format!("REDLINE_GRAPH_{name}=");
        let lines: Vec<&str> = stderr.lines().filter(|l| l.contains(&needle)).collect();
        assert!(
            lines.len() == 1
                && lines[0].starts_with("relaunch: warning: ")
                && lines[0].contains(&format!("is read as RELAUNCH_GRAPH_{name}=")),
            "{name}: {stderr}"
        );
    }
}

/// Without a HIP runtime the HIP multistream fallback fails at open with
/// the library named, not later or silently.
#[test]
fn hip_streams_without_hip_says_which_library_is_missing() {
    let exe = example("hip_streams");
    let out = Command::new(exe)
        .arg(fixture_path("gfx1030", "counter"))
        .env(relaunch::REAL_HIP_ENV, "/nonexistent/libamdhip64.so")
        .output()
        .expect("run hip_streams");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("RELAUNCH_REAL_HIP=/nonexistent/libamdhip64.so does not load"),
        "{err}"
    );
}
