//! #14: the interposer falls through to HIP for graphs on a lost device. A
//! HIP program (`app/lost_device.c`) faults the simulated GPU with a wild
//! address in a graph relaunch replays; from then on every hipGraphLaunch
//! of that GPU goes to the real HIP (here the fake, built to run counter
//! nodes on the host and without stream memory operations, so the
//! interposer's synchronous launch path runs), and the app still gets its
//! results. The process lives: relaunch's system event handler took the
//! fault the simulator reports as ROCr does.

mod common;

use std::path::PathBuf;

use common::{build_c, built, counter_co, run_with, Built};

/// `app/lost_device.c` linked against a fake HIP that runs graphs' counter
/// nodes on the host, built with `defines` in its own directory `dir` (the
/// app links this libamdhip64.so, not the default fake's).
fn lost_device_app(b: &Built, dir: &str, defines: &[&str]) -> PathBuf {
    let dir = b.dir.join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut flags = vec![
        "-shared".to_string(),
        "-fPIC".into(),
        "-DFAKEHIP_HOST_GRAPHS".into(),
    ];
    flags.extend(defines.iter().map(|d| d.to_string()));
    build_c(&dir, "libamdhip64.so", "fakehip/fakehip.c", &flags, false);
    build_c(&dir, "lost_device", "app/lost_device.c", &[], true)
}

#[test]
fn graphs_on_a_lost_gpu_fall_through_to_hip_and_still_run() {
    let Some(b) = built() else { return };
    let app = lost_device_app(b, "host-graphs", &[]);

    // Without the interposer every launch is the fake's (the wild one
    // refused as HIP reports a fault): the baseline the preloaded run
    // must match after the fault.
    let (lines, _) = run_with(b, &app, &[&counter_co()], false, &[]);
    assert_eq!(
        lines,
        [
            "before a=8 launches=1",
            "fault rc=700 launches=2",
            "after a=24 launches=4",
            "late b=8 launches=5",
            "done"
        ]
    );

    let (lines, stderr) = run_with(
        b,
        &app,
        &[&counter_co()],
        true,
        &[("RELAUNCH_LOG", Some("relaunch_hipgraph=info"))],
    );
    // Replayed by relaunch: the fake counted no launch.
    assert_eq!(lines[0], "before a=8 launches=0", "{lines:?}\n{stderr}");
    // The fault lost the GPU; the launch went to HIP, whose status the
    // app gets.
    assert_eq!(lines[1], "fault rc=700 launches=1", "{lines:?}\n{stderr}");
    // The graph that replayed before is HIP's now and still counts.
    assert_eq!(lines[2], "after a=24 launches=3", "{lines:?}\n{stderr}");
    assert_eq!(lines[3], "late b=8 launches=4", "{lines:?}\n{stderr}");
    assert_eq!(lines[4], "done");
    // The reason logged: the GPU is lost (not some other refusal), through
    // the synchronous path (this HIP has no stream memory operations).
    assert!(stderr.contains("the GPU is lost"), "{stderr}");
    assert!(stderr.contains("synchronise the stream"), "{stderr}");
    assert!(
        stderr.contains("0x7eadbeef0000"),
        "the fault's address: {stderr}"
    );
}

/// The same on the stream-ordered path (a HIP with stream memory
/// operations): the faulting launch returns at once, as HIP's do, and its
/// replay fails behind the stream's gate; once the application has waited
/// for it, every later launch of the lost GPU goes to HIP whole (nothing of
/// it was put on the stream) and the app gets its counts.
#[test]
fn stream_ordered_graphs_on_a_lost_gpu_fall_through_to_hip_and_still_run() {
    let Some(b) = built() else { return };
    let app = lost_device_app(b, "host-graphs-ordered", &["-DFAKEHIP_STREAM_OPS"]);
    let sync = std::path::Path::new("sync");
    let (lines, stderr) = run_with(
        b,
        &app,
        &[&counter_co(), sync],
        true,
        &[("RELAUNCH_LOG", Some("relaunch_hipgraph=info"))],
    );
    assert_eq!(lines[0], "before a=8 launches=0", "{lines:?}\n{stderr}");
    // Returned before the replay ran (and failed): no HIP launch.
    assert_eq!(lines[1], "fault rc=0 launches=0", "{lines:?}\n{stderr}");
    assert_eq!(lines[2], "after a=24 launches=2", "{lines:?}\n{stderr}");
    assert_eq!(lines[3], "late b=8 launches=3", "{lines:?}\n{stderr}");
    assert_eq!(lines[4], "done");
    assert!(stderr.contains("the GPU is lost"), "{stderr}");
    assert!(
        !stderr.contains("synchronise the stream"),
        "the stream-ordered path, not the synchronous one: {stderr}"
    );
    assert!(
        stderr.contains("0x7eadbeef0000"),
        "the fault's address: {stderr}"
    );
}
