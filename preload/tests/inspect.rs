//! The inspection API (`rl_hipgraph_*`, `include/relaunch_hipgraph.h`)
//! from an application under the interposer (`app/inspect_graphs.c`): the
//! execs with their verdicts and reasons, launch counts each way, the
//! run-time switch, misuse answered with a status; and the same app
//! without the interposer finds no API and runs on HIP alone.

mod common;

use common::{build_c, built, counter_co, run_with};

#[test]
fn an_application_lists_its_execs_and_switches_replay() {
    let Some(b) = built() else { return };
    let app = build_c(&b.dir, "inspect_graphs", "app/inspect_graphs.c", &[], true);
    let (lines, stderr) = run_with(b, &app, &[&counter_co()], true, &[]);
    let host = "a host node (a host callback inside the graph) is not replayed";
    let want = [
        "api 1".to_string(),
        "execs 2".into(),
        // Sorted by handle: the fake hands out increasing handles.
        "chain rc=0 replayed=1 reason=0 launches=2/0/0 lanes=1 len_ok=1 \
         text=replayed as retained PM4"
            .into(),
        format!("hosted rc=0 replayed=0 reason=7 launches=0/2/0 lanes=0 len_ok=1 text={host}"),
        "counters rc=0 execs=1/1 launches=2/2/0 enabled=1".into(),
        // Too small a struct, an exec never seen, a null struct.
        "misuse 1 2 1".into(),
        "was 1".into(),
        "execs 2".into(),
        "chain rc=0 replayed=0 reason=1 launches=2/1/0 lanes=0 len_ok=1 \
         text=replay is switched off (rl_hipgraph_set_replay)"
            .into(),
        format!("hosted rc=0 replayed=0 reason=7 launches=0/2/0 lanes=0 len_ok=1 text={host}"),
        "was 0".into(),
        "counters rc=0 execs=1/1 launches=3/3/0 enabled=1".into(),
        // 16 per replayed launch (two nodes of 8), 3 replays; the fake
        // counted the host graph's 2 launches and the one switched off.
        "a=48 launches=3".into(),
    ];
    assert_eq!(lines, want, "{stderr}");
}

#[test]
fn without_the_interposer_the_api_is_absent() {
    let Some(b) = built() else { return };
    let app = build_c(&b.dir, "inspect_graphs", "app/inspect_graphs.c", &[], true);
    let (lines, stderr) = run_with(b, &app, &[&counter_co()], false, &[]);
    // The fake runs no kernels: the counter stays 0, four launches.
    assert_eq!(lines, ["api none a=0 launches=4"], "{stderr}");
}
