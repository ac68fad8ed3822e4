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
