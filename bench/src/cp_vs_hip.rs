//! `cp_vs_hip`: the GPU-side work relaunch saves, counted by the simulated
//! command processor on the same run. `tests/hip/decode_graph.hip` (a
//! decode-shaped step: 28 layers x 12 kernels, captured once as a HIP
//! graph, launched per token) runs under `relaunch sim-rocm` on the real
//! ROCr 5.2.3 and HIP 5.2.3, plainly and with relaunch's interposer; the
//! thunk writes the CP's counters at exit (`RELAUNCH_KFD_COUNTERS`). Per
//! launch = (counts at 6 tokens - counts at 2) / 4, so start-up work
//! (code loading, HIP's init blits) cancels out. Both runs must print the
//! same digests, and the interposer must say it replays the graph.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::report::Report;

const FEW: u32 = 2;
const MANY: u32 = 6;

type Counts = BTreeMap<String, f64>;

/// The program's own measure of the host time its hipGraphLaunch calls
/// took (stderr), in microseconds.
fn launch_us(stderr: &str) -> Option<f64> {
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("decode_graph: host us per hipGraphLaunch: "))?;
    line.split_whitespace().next()?.parse().ok()
}

pub fn run(report: &mut Report) -> Result<(), String> {
    let (relaunch, interposer) = relaunch_testsupport::sim_rocm_stack().ok_or_else(|| {
        format!(
            "no ROCr at {} (apt-get install libhsa-runtime64-1)",
            relaunch_testsupport::ROCR
        )
    })?;
    let exe = relaunch_testsupport::hip::hip_program(
        "decode_graph",
        relaunch.parent().unwrap_or(Path::new(".")),
    )?;
    let plain = per_launch(relaunch, &exe, None)?;
    let replayed = per_launch(relaunch, &exe, Some(interposer))?;

    println!("per launch of the graph (336 kernels), HIP alone vs through relaunch's interposer:");
    for (name, hip) in &plain.0 {
        let ours = replayed.0.get(name).copied().unwrap_or(0.0);
        println!("  {name:<24} {hip:>10.1} {ours:>10.1}");
    }
    let get = |c: &Counts, k: &str| c.get(k).copied().unwrap_or(0.0);
    let aql = |c: &Counts| get(c, "aql_dispatch") + get(c, "aql_barrier") + get(c, "aql_pm4_ib");
    let (hip_aql, our_aql) = (aql(&plain.0), aql(&replayed.0));
    let (hip_cache, our_cache) = (
        get(&plain.0, "cache_actions"),
        get(&replayed.0, "cache_actions"),
    );
    report.metric("cp_aql_packets_hip", hip_aql, "packets", None);
    report.metric("cp_aql_packets_relaunch", our_aql, "packets", None);
    // TARGETS.md's ratios are relaunch's work over HIP's (below 1: less).
    report.metric("cp_packets_vs_hip", our_aql / hip_aql.max(1.0), "x", None);
    report.metric(
        "cp_pm4_dwords_relaunch",
        get(&replayed.0, "pm4_dwords"),
        "dwords",
        None,
    );
    report.metric("cp_waits_hip", get(&plain.0, "waits"), "waits", None);
    report.metric(
        "cp_waits_relaunch",
        get(&replayed.0, "waits"),
        "waits",
        None,
    );
    report.metric("cp_cache_actions_hip", hip_cache, "actions", None);
    report.metric("cp_cache_actions_relaunch", our_cache, "actions", None);
    report.metric(
        "cp_cache_actions_vs_hip",
        our_cache / hip_cache.max(1.0),
        "x",
        Some((0.5, true)),
    );
    // How much of the IB's invalidation work its data required: the
    // simulator's fewest K$/V$/GL1 invalidations that read nothing stale
    // (sim `ordering::floor`), and the ratio were the IB to carry only
    // those. A relaunch replaying a HIP graph knows no data flow (a HIP
    // edge carries none), so the floor is a bound, not a target it can
    // meet from what it knows.
    let kinds = |c: &Counts, pre: &str| {
        ["k_invalidate", "l0_invalidate", "gl1_invalidate"]
            .iter()
            .map(|k| get(c, &format!("{pre}{k}")))
            .sum::<f64>()
    };
    let (ib, floor) = (kinds(&replayed.0, "ib_"), kinds(&replayed.0, "ib_floor_"));
    report.metric("cp_ib_invalidations_relaunch", ib, "actions", None);
    report.metric("cp_ib_invalidation_floor_relaunch", floor, "actions", None);
    report.metric(
        "cp_cache_actions_vs_hip_at_floor",
        (our_cache - ib + floor) / hip_cache.max(1.0),
        "x",
        None,
    );
    // Host time per hipGraphLaunch, measured by the program (debug or
    // release as the program was built; the simulator runs the GPU side).
    report.metric(
        "hip_graph_launch_host_us_hip",
        get(&plain.0, "host_us_per_launch"),
        "us",
        None,
    );
    report.metric(
        "hip_graph_launch_host_us_relaunch",
        get(&replayed.0, "host_us_per_launch"),
        "us",
        None,
    );
    if plain.1 != replayed.1 {
        return Err(format!(
            "the interposer changed the results:\nHIP:\n{}\nrelaunch:\n{}",
            plain.1, replayed.1
        ));
    }
    Ok(())
}

/// Per-launch counters and the digests printed, with or without the
/// interposer.
fn per_launch(
    relaunch: &Path,
    exe: &Path,
    interposer: Option<&Path>,
) -> Result<(Counts, String), String> {
    let (few, _) = counted(relaunch, exe, FEW, interposer)?;
    let (many, digests) = counted(relaunch, exe, MANY, interposer)?;
    let launches = f64::from(MANY - FEW);
    let per = many
        .iter()
        .map(|(k, v)| {
            // A median of the run's launches already, not a running count.
            if k == "host_us_per_launch" {
                return (k.clone(), *v);
            }
            (
                k.clone(),
                (v - few.get(k).copied().unwrap_or(0.0)) / launches,
            )
        })
        .collect();
    Ok((per, digests))
}

/// One run at `tokens` launches: the counters at exit (and the host time
/// per launch) and stdout.
fn counted(
    relaunch: &Path,
    exe: &Path,
    tokens: u32,
    interposer: Option<&Path>,
) -> Result<(Counts, String), String> {
    let file = std::env::temp_dir().join(format!(
        "relaunch-cp-{}-{}-{tokens}.txt",
        std::process::id(),
        interposer.is_some()
    ));
    let mut cmd = Command::new(relaunch);
    cmd.args(["sim-rocm", "--target", "gfx1030", "--"])
        .arg(exe)
        .arg(tokens.to_string())
        .env("RELAUNCH_KFD_COUNTERS", &file)
        .env_remove("LD_PRELOAD");
    if let Some(lib) = interposer {
        cmd.env("LD_PRELOAD", lib).env("RELAUNCH_LOG", "info");
    }
    let out = cmd
        .output()
        .map_err(|e| format!("running {}: {e}", exe.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() || !stdout.contains("decode_graph: ok") {
        return Err(format!(
            "decode_graph {tokens} under sim-rocm: {stdout}{stderr}"
        ));
    }
    if interposer.is_some() && !stderr.contains("replays as retained PM4") {
        return Err(format!("the interposer did not replay the graph: {stderr}"));
    }
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("the thunk wrote no counters to {}: {e}", file.display()))?;
    let _ = std::fs::remove_file(&file);
    let mut counts = Counts::new();
    if let Some(us) = launch_us(&stderr) {
        counts.insert("host_us_per_launch".into(), us);
    }
    for line in text.lines() {
        let mut f = line.split_whitespace();
        if let (Some("gpu0"), Some(name), Some(value)) = (f.next(), f.next(), f.next()) {
            let v: f64 = value
                .parse()
                .map_err(|_| format!("counter line {line:?}"))?;
            counts.insert(name.to_string(), v);
        }
    }
    Ok((counts, stdout))
}
