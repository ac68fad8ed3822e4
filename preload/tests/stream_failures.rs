//! Stream-ordered launches whose replays fail, several in flight
//! (`app/stream_failures.c`): the watcher closes a failed launch's gates
//! from the host, and however it interleaves with the stream (which may
//! be far behind, held) and the GPU (which fails the launches queued behind
//! the first failure at once), the stream gets past every launch. Before
//! the sequence-numbered gates this hung the stream (a done word written
//! from the host before the stream cleared it).

mod common;

use common::{build_c, built, run_with};

/// Rounds per run: every count of launches in flight from 1 to 6, held
/// and not, several times.
const ROUNDS: &str = "24";
/// Runs of the app (each a fresh process, queue and watcher).
const RUNS: usize = 3;

#[test]
fn failed_replays_in_flight_never_leave_the_stream_waiting() {
    let Some(b) = built() else { return };
    let app = build_c(
        &b.dir,
        "stream_failures",
        "app/stream_failures.c",
        &[],
        true,
    );
    let decode = relaunch_testsupport::fixture_path("gfx1201", "decode");
    // No twin for rmsnorm and twins only: every replay fails.
    let env = [
        ("RELAUNCH_LOG", Some("error")),
        ("RELAUNCH_SIM_KERNELS", Some("twin")),
    ];
    let want: Vec<String> = (0..24)
        .map(|r| {
            let n = 1 + r % 6;
            let held = u8::from(r % 4 != 3);
            format!("round {r} launches={n} held={held} synced last={n} fell_through=1")
        })
        .collect();
    for run in 0..RUNS {
        let args = [decode.as_path(), std::path::Path::new(ROUNDS)];
        let (lines, stderr) = run_with(b, &app, &args, true, &env);
        assert_eq!(lines, want, "run {run}: {stderr}");
        assert!(
            stderr.contains("a stream-ordered replay failed; its stream is released")
                && stderr.contains("no host twin is registered for kernel rmsnorm"),
            "run {run}: {stderr}"
        );
        assert!(!stderr.contains("timed out"), "run {run}: {stderr}");
    }
}
