//! The interposer tests' harness, shared by the test binaries: builds the
//! simulator's HSA cdylib, the interposer, the fake HIP and the apps, and
//! runs an app with or without the interposer preloaded.
// Each test binary uses a different part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub struct Built {
    pub dir: PathBuf,
    pub sim_hsa: PathBuf,
    pub interposer: PathBuf,
    pub app: PathBuf,
}

/// Builds the simulator's HSA cdylib and the interposer with cargo (where
/// and how this test was built), and finds them in cargo's JSON messages.
pub fn cargo_artifacts() -> (PathBuf, PathBuf) {
    let files = relaunch_testsupport::cargo_build(&[
        "-p",
        "relaunch-sim",
        "--example",
        "hsa_runtime64",
        "-p",
        "relaunch-hipgraph",
        "--lib",
    ]);
    (
        relaunch_testsupport::artifact(&files, "libhsa_runtime64.so"),
        relaunch_testsupport::artifact(&files, "librelaunch_hipgraph.so"),
    )
}

pub fn cc(args: &[&str]) {
    let out = Command::new("cc").args(args).output().expect("run cc");
    assert!(
        out.status.success(),
        "cc {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The test sources (`preload/tests`).
pub fn here() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// Compiles `source` (under `tests/`) strictly with the HIP test header
/// into `dir/output`, with `extra` flags, linked against the fake
/// `libamdhip64.so` in `dir` when `link_hip`.
pub fn build_c(
    dir: &Path,
    output: &str,
    source: &str,
    extra: &[String],
    link_hip: bool,
) -> PathBuf {
    let out = dir.join(output);
    let mut args: Vec<String> = [
        "-std=c11",
        "-D_POSIX_C_SOURCE=200809L",
        "-Wall",
        "-Wextra",
        "-Werror",
    ]
    .map(String::from)
    .to_vec();
    args.push(format!("-I{}", here().join("include").display()));
    args.extend(extra.iter().cloned());
    args.extend([
        "-o".into(),
        out.display().to_string(),
        here().join(source).display().to_string(),
    ]);
    if link_hip {
        args.extend([
            format!("-L{}", dir.display()),
            "-lamdhip64".into(),
            format!("-Wl,-rpath,{}", dir.display()),
        ]);
    }
    args.push("-ldl".into());
    cc(&args.iter().map(String::as_str).collect::<Vec<_>>());
    out
}

/// Runs `program args` on the fake HIP over the simulator (with the
/// interposer preloaded when `preload`) and returns its stdout lines.
pub fn run(b: &Built, program: &Path, args: &[&Path], preload: bool) -> Vec<String> {
    run_with(b, program, args, preload, &[]).0
}

/// [`run`] with environment changes after the defaults (`Some`: set,
/// `None`: removed); also returns stderr.
pub fn run_with(
    b: &Built,
    program: &Path,
    args: &[&Path],
    preload: bool,
    env: &[(&str, Option<&str>)],
) -> (Vec<String>, String) {
    let mut cmd = Command::new(program);
    cmd.env_remove("RELAUNCH_LOG")
        .env_remove("FAKEHIP_PCI_BUS_ID");
    cmd.args(args)
        .current_dir(&b.dir)
        .env("RELAUNCH_HSA_LIB", &b.sim_hsa)
        .env("RELAUNCH_SIM_TARGETS", "gfx1201")
        // The sim cdylib's gfx1201 agent, reached through the runtime the
        // fake HIP also uses (a `sim:` selector would open a second,
        // in-process simulator with its own memory).
        .env("RELAUNCH_DEVICE", "name:gfx1201")
        .env_remove("LD_PRELOAD");
    if preload {
        cmd.env("LD_PRELOAD", &b.interposer);
    }
    for (name, value) in env {
        match value {
            Some(v) => cmd.env(name, v),
            None => cmd.env_remove(name),
        };
    }
    let out = cmd.output().expect("run the app");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{} failed ({}):\nstdout:\n{stdout}\nstderr:\n{}",
        program.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (stdout.lines().map(str::to_string).collect(), stderr)
}

/// The counter fixture the apps load.
pub fn counter_co() -> PathBuf {
    relaunch_testsupport::fixture_path("gfx1201", "counter")
}

/// Remove the scratch directories of test processes that have ended.
fn remove_finished(root: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let pid = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok());
        if pid.is_some_and(|p| !std::path::Path::new(&format!("/proc/{p}")).exists()) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

pub fn built() -> Option<&'static Built> {
    static BUILT: OnceLock<Option<Built>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let have_cc = Command::new("cc")
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success());
            if !have_cc {
                // CI has a C compiler: there, skipping would hide a failure.
                assert!(
                    std::env::var_os("CI").is_none(),
                    "`cc` is missing under CI; the interposer tests need it"
                );
                println!("note: skipping: `cc` is not installed (CI installs it)");
                return None;
            }
            let (sim_hsa, interposer) = cargo_artifacts();
            // One directory per test process (nextest runs each test in its
            // own), in the target folder; a static is never dropped, so
            // those of finished processes are removed here instead.
            let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hipgraph");
            remove_finished(&root);
            let dir = root.join(std::process::id().to_string());
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("scratch directory");
            let shared = ["-shared".to_string(), "-fPIC".to_string()];
            build_c(&dir, "libamdhip64.so", "fakehip/fakehip.c", &shared, false);
            let app = build_c(&dir, "graph_counter", "app/graph_counter.c", &[], true);
            Some(Built {
                dir,
                sim_hsa,
                interposer,
                app,
            })
        })
        .as_ref()
}
