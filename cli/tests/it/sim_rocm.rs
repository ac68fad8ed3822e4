//! The real ROCm user space (Debian's ROCr 5.2.3, HIP 5.2.3, rocminfo) on
//! the simulated GPU through `relaunch sim-rocm`: the agent is listed,
//! relaunch's own demo, first-contact checks and unmodified HIP programs run
//! on the real runtime, with and without the interposer, with the same
//! results. Needs Debian's `libhsa-runtime64-1`, `rocminfo`,
//! `libamdhip64-dev`, `rocm-device-libs` and `clang-19` (.ci/run installs
//! them); elsewhere each test says what is missing and skips.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use crate::common::{relaunch, run};
use relaunch_testsupport::hip::DEVICE_LIBS;
use relaunch_testsupport::{missing, require_tool};

const HIP: &str = "/usr/lib/x86_64-linux-gnu/libamdhip64.so";

/// The thunk, the /dev/kfd shim and the interposer (returned), built once:
/// `sim-rocm` finds the first two next to the `relaunch` binary.
fn stack() -> Option<&'static PathBuf> {
    relaunch_testsupport::sim_rocm_stack().map(|(_, interposer)| interposer)
}

/// `relaunch sim-rocm --target <target> -- <cmd...>`.
fn sim_rocm(target: &str, cmd: &[&str]) -> Command {
    let mut c = relaunch("sim-rocm");
    c.args(["--target", target, "--"]).args(cmd);
    c.env_remove("RELAUNCH_LOG").env_remove("LD_PRELOAD");
    c
}

/// `tests/hip/<name>.hip` built for gfx1030 (code object v4: HIP 5.2.3
/// refuses v5), cached in the target folder until the source changes.
fn hip_program(name: &str) -> Option<PathBuf> {
    static LOCK: Mutex<()> = Mutex::new(());
    if !require_tool("clang++-19", "apt-get install clang-19") {
        return None;
    }
    for (path, package) in [(HIP, "libamdhip64-dev"), (DEVICE_LIBS, "rocm-device-libs")] {
        if !Path::new(path).exists() {
            missing(path, &format!("apt-get install {package}"));
            return None;
        }
    }
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hip");
    let _one = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let exe =
        relaunch_testsupport::hip::hip_program(name, &out_dir).unwrap_or_else(|e| panic!("{e}"));
    Some(exe)
}

#[test]
fn rocminfo_lists_the_simulated_agent_and_unknown_targets_are_refused() {
    if stack().is_none() {
        return;
    }
    // rocminfo has no --version (require_tool's probe): look for it on PATH.
    let on_path = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("rocminfo").is_file()));
    if !on_path {
        missing("`rocminfo`", "apt-get install rocminfo");
        return;
    }
    for target in ["gfx1030", "gfx1010"] {
        let (code, out, err) = run(&mut sim_rocm(target, &["rocminfo"]));
        assert_eq!(code, 0, "{target}: {out}{err}");
        let names: Vec<&str> = out
            .lines()
            .filter_map(|l| l.trim().strip_prefix("Name:"))
            .map(str::trim)
            .collect();
        assert!(names.contains(&target), "{target}: agents {names:?}\n{out}");
        assert!(err.contains(&format!("over simulated {target}")), "{err}");
    }
    // ROCr 5.2.3 does not know gfx11: refused up front, naming which ROCr does.
    let (code, _, err) = run(&mut sim_rocm("gfx1100", &["rocminfo"]));
    assert_ne!(code, 0);
    assert!(err.contains("does not know gfx1100"), "{err}");
    assert!(err.contains("needs ROCr 6.1"), "which ROCr knows it: {err}");
}

/// The demo's IB words, lane by lane, from a `--dump-ib` folder.
fn ibs(dir: &Path) -> Vec<(String, Vec<u32>)> {
    crate::common::dumped(dir)
        .iter()
        .map(|f| {
            let bytes = std::fs::read(f).unwrap();
            let words = bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect();
            (f.file_name().unwrap().to_string_lossy().into_owned(), words)
        })
        .collect()
}

/// The same IB but for where memory lies: equal lengths, and every dword
/// that differs is an address, displaced by one of at most two constants
/// (code, kernargs), the runtime's allocator having placed them elsewhere.
fn same_but_addresses(a: &[u32], b: &[u32]) -> Result<usize, String> {
    if a.len() != b.len() {
        return Err(format!("{} dwords against {}", a.len(), b.len()));
    }
    let mut displacements = std::collections::BTreeSet::new();
    let mut differing = 0;
    for (x, y) in a.iter().zip(b) {
        if x != y {
            differing += 1;
        }
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            // The low dword of an address; its high dword may follow.
            displacements.insert(b[i].wrapping_sub(a[i]));
            i += 2;
        } else {
            i += 1;
        }
    }
    if displacements.len() > 2 {
        return Err(format!(
            "{differing} dwords differ by {} displacements ({displacements:x?}), more than the \
             code and kernarg bases explain",
            displacements.len()
        ));
    }
    Ok(differing)
}

#[test]
fn the_demo_runs_on_the_real_rocr_with_the_same_ibs() {
    if stack().is_none() {
        return;
    }
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sim-rocm-demo");
    let (on_sim, on_rocr) = (tmp.join("sim"), tmp.join("rocr"));
    for d in [&on_sim, &on_rocr] {
        let _ = std::fs::remove_dir_all(d);
    }
    let small = ["--layers", "2", "--tokens", "4"];
    let mut direct = relaunch("demo");
    direct
        .args(["--device", "sim:gfx1030", "--dump-ib"])
        .arg(&on_sim)
        .args(small);
    let (code, out, err) = run(&mut direct);
    assert_eq!(code, 0, "{out}{err}");
    let exe = env!("CARGO_BIN_EXE_relaunch");
    let dump = on_rocr.to_str().unwrap();
    let mut args = vec![exe, "demo", "--dump-ib", dump];
    args.extend(small);
    // The default device: the first GPU, here the real ROCr's agent.
    let (code, out, err) = run(&mut sim_rocm("gfx1030", &args));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("verified: 4/4"), "{out}");
    assert!(out.contains("rocr#0"), "the real runtime's agent: {out}");
    let (a, b) = (ibs(&on_sim), ibs(&on_rocr));
    assert_eq!(a.len(), b.len(), "IB files: {a:?} against {b:?}");
    assert!(!a.is_empty());
    for ((name, x), (other, y)) in a.iter().zip(&b) {
        assert_eq!(name, other);
        let differing = same_but_addresses(x, y).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            differing < x.len() / 5,
            "{name}: {differing} of {}",
            x.len()
        );
    }
}

/// relaunch's public-AQL path (standard kernel-dispatch packets, issue
/// 31.1) on the real ROCr: every lane of the demo as AQL, verified.
#[test]
fn the_demo_runs_as_public_aql_on_the_real_rocr() {
    if stack().is_none() {
        return;
    }
    let exe = env!("CARGO_BIN_EXE_relaunch");
    let args = [
        exe,
        "demo",
        "--layers",
        "2",
        "--tokens",
        "3",
        "--submission",
        "aql",
    ];
    let (code, out, err) = run(&mut sim_rocm("gfx1030", &args));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("rocr#0"), "the real runtime's agent: {out}");
    assert!(out.contains("lane 0 runs as aql"), "{out}");
    assert!(out.contains("AQL kernel-dispatch packets"), "{out}");
    assert!(out.contains("verified: 3/3"), "{out}");
}

#[test]
fn first_contact_passes_on_the_real_rocr() {
    if stack().is_none() || !require_tool("clang-19", "apt-get install clang-19") {
        return;
    }
    let script = relaunch_testsupport::workspace().join("scripts/first-contact");
    let exe = env!("CARGO_BIN_EXE_relaunch");
    let mut cmd = sim_rocm("gfx1030", &["bash", script.to_str().unwrap()]);
    cmd.env("RELAUNCH", exe);
    let ibs = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sim-rocm-first-contact-ibs");
    cmd.env("IB_DIR", &ibs);
    let (code, out, err) = run(&mut cmd);
    for line in [
        "executable IB memory",
        "TRAP_PRESENT (s_trap)",
        "fault survival",
    ] {
        let verdict = out
            .lines()
            .find_map(|l| l.strip_prefix(line))
            .map(str::trim)
            .unwrap_or("missing");
        assert_eq!(verdict, "PASS", "{line}: {out}{err}");
    }
    assert_eq!(code, 0, "{out}{err}");
}

/// Runs a HIP program under `sim-rocm`, plainly or with the interposer
/// (`RELAUNCH_LOG=info`); returns (exit code, stdout, stderr).
fn run_hip(exe: &Path, args: &[&str], interposer: Option<&Path>) -> (i32, String, String) {
    let mut cmd = vec![exe.to_str().unwrap()];
    cmd.extend(args);
    let mut c = sim_rocm("gfx1030", &cmd);
    if let Some(lib) = interposer {
        c.env("LD_PRELOAD", lib).env("RELAUNCH_LOG", "info");
    }
    run(&mut c)
}

#[test]
fn hip_programs_give_the_same_results_with_and_without_the_interposer() {
    let Some(interposer) = stack() else {
        return;
    };
    // (program, arguments, whether relaunch replays its graphs)
    let cases: [(&str, &[&str], Option<bool>); 6] = [
        ("vector_add", &[], None),
        ("copies", &[], None),
        // Kernels with private memory: ROCr's dynamic scratch protocol
        // plainly; under the interposer the PM4 path gives each IB its own
        // scratch backing.
        ("scratch", &[], Some(true)),
        ("capture_graph", &[], Some(true)),
        // Joined through events: the interposer does not follow the
        // second stream, so HIP runs the graph; the results stay the same.
        ("capture_graph", &["fork"], Some(false)),
        ("explicit_graph", &[], Some(true)),
    ];
    for (name, args, replayed) in cases {
        let Some(exe) = hip_program(name) else {
            return;
        };
        let (code, plain, err) = run_hip(&exe, args, None);
        assert_eq!(code, 0, "{name} {args:?}: {plain}{err}");
        assert!(plain.contains(&format!("{name}: ok")), "{plain}");
        let (code, preloaded, log) = run_hip(&exe, args, Some(interposer));
        assert_eq!(
            code, 0,
            "{name} {args:?} under the interposer: {preloaded}{log}"
        );
        assert_eq!(preloaded, plain, "{name} {args:?}: results differ\n{log}");
        match replayed {
            Some(true) => {
                assert!(log.contains("replays as retained PM4"), "{name}: {log}");
                assert!(!log.contains("falls through"), "{name}: {log}");
            }
            Some(false) => assert!(log.contains("falls through"), "{name}: {log}"),
            None => {}
        }
        assert!(!log.contains("ERROR"), "{name} {args:?}: {log}");
    }
}

/// Device printf through HIP 5.2.3's hostcall listener: the GPU's
/// requests wake the listener through the doorbell signal and wait for its
/// replies, so each line is whole and in lane order, with and without the
/// interposer. The kernel's metadata lists no device-enqueue arguments, as
/// older LLVM wrote it (`hip_v4_without_enqueue_args` says why clang-19's
/// crashes HIP 5.2.3 before the listener sees a request).
#[test]
fn hip_printf_runs_through_the_hostcall_listener() {
    let Some(interposer) = stack() else {
        return;
    };
    let Some(exe) = hip_program("printf") else {
        return;
    };
    let Some(kernels) = relaunch_testsupport::hip::hip_v4_without_enqueue_args("printf", "gfx1030")
    else {
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hip-printf");
    std::fs::create_dir_all(&dir).unwrap();
    let co = dir.join(format!("printf-{}.co", std::process::id()));
    std::fs::write(&co, kernels).unwrap();
    let args = [co.to_str().unwrap()];
    let want = "lane 0 of 4 says hello 40\n\
                lane 1 of 4 says hello 41\n\
                lane 2 of 4 says hello 42\n\
                lane 3 of 4 says hello 43\n\
                tag 40:  1.50 0xbeef z|ab  |\n\
                printf: ok\n";
    let (code, plain, err) = run_hip(&exe, &args, None);
    let (code_pre, preloaded, log) = run_hip(&exe, &args, Some(interposer));
    // Strict: the hostcall traffic (the GPU's stores to the buffer and the
    // signal, the listener's replies) raises no ordering violation.
    let mut strict = relaunch("sim-rocm");
    strict
        .args(["--strict", "--target", "gfx1030", "--"])
        .arg(&exe)
        .args(args);
    strict.env_remove("RELAUNCH_LOG").env_remove("LD_PRELOAD");
    let (code_strict, checked, strict_err) = run(&mut strict);
    let _ = std::fs::remove_file(&co);
    assert_eq!(code, 0, "{plain}{err}");
    assert_eq!(plain, want, "{err}");
    assert_eq!(code_pre, 0, "under the interposer: {preloaded}{log}");
    assert_eq!(preloaded, want, "under the interposer: {log}");
    assert!(!log.contains("ERROR"), "{log}");
    assert_eq!(code_strict, 0, "strict: {checked}{strict_err}");
    assert_eq!(checked, want, "strict: {strict_err}");
    assert!(!strict_err.contains("violation"), "{strict_err}");
}

#[test]
fn a_hip_program_asks_the_interposer_which_graphs_it_replays() {
    let Some(interposer) = stack() else {
        return;
    };
    let Some(exe) = hip_program("inspect_graphs") else {
        return;
    };
    let (code, out, err) = run_hip(&exe, &[], None);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out, "api none\ninspect_graphs: ok\n");
    let (code, out, err) = run_hip(&exe, &[], Some(interposer));
    assert_eq!(code, 0, "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "api 1", "{out}");
    assert_eq!(
        lines[1],
        "single rc=0 replayed=1 reason=0 launches=2/0/0 text=replayed as retained PM4"
    );
    // The forked capture: RL_HIPGRAPH_CAPTURE, both launches on HIP.
    assert!(
        lines[2].starts_with("forked rc=0 replayed=0 reason=8 launches=0/2/0 text=")
            && lines[2].contains("cross-stream capture is not followed"),
        "{out}"
    );
    assert_eq!(lines[3], "inspect_graphs: ok");
}

#[test]
fn hip_programs_pass_the_strict_checks() {
    if stack().is_none() {
        return;
    }
    // Strict: any ordering violation in ROCr's and HIP's own traffic (or
    // the programs') stops the queue, so a pass means none was seen.
    for name in [
        "vector_add",
        "copies",
        "capture_graph",
        "explicit_graph",
        "scratch",
    ] {
        let Some(exe) = hip_program(name) else {
            return;
        };
        let mut c = relaunch("sim-rocm");
        c.args(["--strict", "--target", "gfx1030", "--"]).arg(&exe);
        c.env_remove("RELAUNCH_LOG").env_remove("LD_PRELOAD");
        let (code, out, err) = run(&mut c);
        assert_eq!(code, 0, "{name}: {out}{err}");
        assert!(out.contains(&format!("{name}: ok")), "{name}: {out}{err}");
        assert!(!err.contains("violation"), "{name}: {err}");
    }
}

/// The GPU's counters the thunk wrote at exit: `name -> value` of gpu0.
fn counters(file: &Path) -> std::collections::HashMap<String, u64> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            (it.next() == Some("gpu0")).then_some(())?;
            Some((it.next()?.to_string(), it.next()?.parse().ok()?))
        })
        .collect()
}

#[test]
fn hip_copies_run_on_the_copy_engine_and_on_blit_kernels_without_it() {
    if stack().is_none() {
        return;
    }
    let Some(exe) = hip_program("copies") else {
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sdma-counters");
    std::fs::create_dir_all(&dir).unwrap();
    // HIP's defaults (ROCr copies host memory with SDMA), then SDMA off.
    for (sdma, name) in [(None, "default"), (Some("0"), "no-sdma")] {
        let file = dir.join(name);
        let _ = std::fs::remove_file(&file);
        let mut c = sim_rocm("gfx1030", &[exe.to_str().unwrap()]);
        c.env("RELAUNCH_KFD_COUNTERS", &file);
        match sdma {
            Some(v) => c.env("HSA_ENABLE_SDMA", v),
            None => c.env_remove("HSA_ENABLE_SDMA"),
        };
        let (code, out, err) = run(&mut c);
        assert_eq!(code, 0, "{name}: {out}{err}");
        assert!(out.contains("copies: ok"), "{name}: {out}{err}");
        let n = counters(&file);
        let (packets, bytes) = (n["sdma_packets"], n["sdma_bytes"]);
        match sdma {
            // Both ways of the 9 MiB and 3 MiB copies at least.
            None => assert!(
                packets > 0 && bytes >= 2 * (9 << 20) + 2 * (3 << 20),
                "{packets} packets, {bytes} bytes"
            ),
            Some(_) => assert_eq!((packets, bytes), (0, 0)),
        }
    }
}

#[test]
fn a_vm_fault_under_hip_ends_as_rocr_ends_it_on_hardware() {
    if stack().is_none() {
        return;
    }
    let Some(exe) = hip_program("vm_fault") else {
        return;
    };
    let (code, out, err) = run_hip(&exe, &[], None);
    // ROCr's VM fault handler prints the fault and aborts the process
    // (sim-rocm reports the signal and exits non-zero).
    assert_ne!(code, 0, "{out}{err}");
    assert!(out.contains("vm_fault: launching"), "{out}");
    assert!(!out.contains("the process lived"), "{out}");
    assert!(
        err.contains("Memory access fault by GPU node-1")
            && err.contains("on address 0x7eadbeef0000"),
        "{err}"
    );
    assert!(err.contains("killed by signal 6"), "{err}");
}

#[test]
fn selftest_profiled_and_multi_lane_on_the_real_rocr() {
    if stack().is_none() {
        return;
    }
    let exe = env!("CARGO_BIN_EXE_relaunch");
    let (code, out, err) = run(&mut sim_rocm(
        "gfx1030",
        &[exe, "selftest", "--profile", "--dispatches", "32"],
    ));
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.matches("profile: ").count(), 2, "{out}");
    assert!(!out.contains("[FAIL]"), "{out}");
    assert!(out.contains("counter = 64 / 64 [PASS]"), "{out}");
    let (code, out, err) = run(&mut sim_rocm(
        "gfx1030",
        &[exe, "selftest", "--lanes", "4", "--dispatches", "16"],
    ));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("counter[3] = 32 / 32 [PASS]"), "{out}");
}

/// A kernel that never ends meets relaunch's timeout contract on the real
/// runtime: the replay is abandoned after the 60 s timeout (its queue
/// destroyed through ROCr, which stops the simulated kernel), the error
/// says so, and the process exits on its own.
#[test]
fn a_hung_kernel_meets_the_timeout_on_the_real_rocr() {
    if stack().is_none() || !relaunch_testsupport::asm::tools() {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sim-rocm-hang");
    std::fs::create_dir_all(&dir).unwrap();
    let co = dir.join("spin.co");
    std::fs::write(
        &co,
        relaunch_testsupport::asm::spinning_named("gfx1030", "counter"),
    )
    .unwrap();
    let exe = env!("CARGO_BIN_EXE_relaunch");
    let started = std::time::Instant::now();
    let (code, out, err) = run(&mut sim_rocm(
        "gfx1030",
        &[
            exe,
            "selftest",
            "--dispatches",
            "1",
            "--code-object",
            co.to_str().unwrap(),
        ],
    ));
    let took = started.elapsed();
    assert_eq!(code, 1, "a replay error: {out}{err}");
    assert!(
        err.contains("timed out") || err.contains("abandoned"),
        "{err}"
    );
    assert!(!out.contains("[PASS]"), "{out}");
    // The 60 s timeout, then a prompt exit (generous: a loaded CI machine).
    assert!(took >= relaunch::REPLAY_TIMEOUT, "{took:?}");
    assert!(took < relaunch::REPLAY_TIMEOUT * 2, "{took:?}: {err}");
}

/// `timeout` or `kill` name the launcher alone: it passes SIGTERM on to
/// the command, waits for it and removes its private directory.
#[test]
fn a_terminated_launcher_ends_its_command_and_leaves_nothing() {
    if stack().is_none() {
        return;
    }
    let launcher = sim_rocm("gfx1030", &["sleep", "60"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let private = std::env::temp_dir().join(format!("relaunch-sim-rocm-{}", launcher.id()));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !private.exists() {
        assert!(std::time::Instant::now() < deadline, "no private directory");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let started = std::time::Instant::now();
    // SAFETY: signals the launcher this test spawned and has not reaped.
    let killed = unsafe { libc::kill(launcher.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(killed, 0);
    let out = launcher.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // The signal may come before the command started (the directory is
    // made first): then it never starts.
    assert!(
        err.contains("killed by signal 15") || err.contains("signal 15 before sleep started"),
        "{err}"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "the command outlived the signal"
    );
    assert!(!private.exists(), "{} was left behind", private.display());
}

/// HIP multistream fallback (#31.2): a Rust program that reaches the GPU
/// only through HIP (`HipDevice`) replays a two-lane graph on HIP streams,
/// patching kernargs between replays, on the real HIP over the simulated
/// GPU, with the simulator's strict checks on.
#[test]
fn a_graph_of_hip_modules_replays_on_hip_streams() {
    if stack().is_none() || hip_program("vector_add").is_none() {
        return;
    }
    let Some(kernels) = relaunch_testsupport::hip::hip_v4("streams.hip", "gfx1030") else {
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hip-streams");
    std::fs::create_dir_all(&dir).unwrap();
    let co = dir.join(format!("streams-{}.co", std::process::id()));
    std::fs::write(&co, kernels).unwrap();
    let files = relaunch_testsupport::cargo_build(&["-p", "relaunch", "--example", "hip_streams"]);
    let exe = relaunch_testsupport::artifact(&files, "hip_streams");
    let mut c = relaunch("sim-rocm");
    c.args(["--target", "gfx1030", "--strict", "--"])
        .arg(&exe)
        .arg(&co)
        .env_remove("RELAUNCH_LOG")
        .env_remove("LD_PRELOAD");
    let (code, out, err) = run(&mut c);
    let _ = std::fs::remove_file(&co);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("lanes: 2 (hip, hip)"), "{out}");
    assert!(
        out.contains("counter = 384 / 384, acc right = 64 / 64"),
        "{out}"
    );
    assert!(out.contains("hip streams example OK"), "{out}");
}
