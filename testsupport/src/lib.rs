//! Helpers for relaunch's tests and benchmarks, kept out of the shipped
//! crates: the workspace root and its committed kernel fixtures
//! ([`fixture`]), the check for external tools ([`require_tool`],
//! [`missing`]), assembling with LLVM 19 ([`asm`]), clang offload bundles
//! ([`bundle`]), nested `cargo build`s of artifacts a test needs but cargo
//! does not build for it (cdylibs, examples), a counting allocator
//! ([`alloc`]), the process's CPU time and threads ([`process`]); behind features, a hand-built kernel descriptor
//! (`device`: [`counter_descriptor`]), simulator rigs (`sim`: `rig`,
//! `simkit`) and an in-memory queue backend (`sched`: `counter`).
//!
//! Test code: most helpers panic with what went wrong (`rig` returns
//! errors, since the benchmarks report them). Without features it depends
//! on no relaunch crate. A dev-dependency only (the benchmarks, which are
//! not shipped, are the one normal user).

#[cfg(feature = "lanes")]
pub mod adversarial;
pub mod alloc;
pub mod asm;
pub mod bundle;
#[cfg(feature = "sched")]
pub mod counter;
pub mod hip;
pub mod process;
#[cfg(feature = "sim")]
pub mod rig;
#[cfg(feature = "sim")]
pub mod simkit;
#[cfg(feature = "sim")]
pub mod twins;

use std::path::{Path, PathBuf};
use std::process::Command;

/// A test's external tool, library or file is missing. Under CI (`CI` set)
/// that fails the test, since CI installs everything and a silent pass
/// would hide a regression; elsewhere it prints why the test is skipped and
/// returns, and the caller returns too. `what` names the missing piece,
/// `hint` how to get it.
pub fn missing(what: &str, hint: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "{what} is missing under CI ({hint}); a test must not pass without it"
    );
    println!("note: skipping: {what} is missing ({hint})");
}

/// True when `tool --version` runs and succeeds. Otherwise [`missing`]
/// reports it (a failure under CI, a skip note elsewhere) and this returns
/// false, so the caller returns: `if !require_tool("llvm-mc-19", "apt-get
/// install llvm-19") { return; }`. `hint` says how to get the tool.
pub fn require_tool(tool: &str, hint: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        missing(&format!("`{tool}`"), hint);
    }
    ok
}

/// `tests/kernels/build/<target>/<name>.co`: a committed kernel fixture
/// (rebuilt by tests/kernels/build.sh).
pub fn fixture_path(target: &str, name: &str) -> PathBuf {
    workspace()
        .join("tests/kernels/build")
        .join(target)
        .join(format!("{name}.co"))
}

/// The bytes of fixture `name` built for `target`; panics naming the file
/// when it cannot be read.
pub fn fixture(target: &str, name: &str) -> Vec<u8> {
    let path = fixture_path(target, name);
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read the fixture {}: {e} (tests/kernels/build.sh rebuilds them)",
            path.display()
        )
    })
}

/// A kernarg-pointer-only wave32 kernel descriptor shaped like the
/// `counter` fixture's: 8 kernarg bytes, 2 user SGPRs (the kernarg
/// pointer), no LDS or scratch, code 0x40 bytes before the descriptor.
/// Tests vary fields with struct update syntax.
#[cfg(feature = "device")]
pub fn counter_descriptor() -> relaunch_device::codeobj::KernelDescriptor {
    use relaunch_facts::descriptor::{properties, rsrc2};
    relaunch_device::codeobj::KernelDescriptor {
        group_segment_fixed_size: 0,
        private_segment_fixed_size: 0,
        kernarg_size: 8,
        kernel_code_entry_byte_offset: -0x40,
        compute_pgm_rsrc3: 0,
        compute_pgm_rsrc1: 0x60AF_0000,
        // 0x80: TGID_X_EN; the user SGPR count in its field.
        compute_pgm_rsrc2: 0x80 | (2 << rsrc2::USER_SGPR_SHIFT),
        kernel_code_properties: properties::KERNARG_SEGMENT_PTR | properties::WAVEFRONT_SIZE32,
        kernarg_preload: 0,
    }
}

/// The workspace root (this crate's parent folder).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("testsupport/ is inside the workspace")
        .to_path_buf()
}

/// Runs `cargo build <args> --message-format=json-render-diagnostics` in
/// the workspace, in the profile and target directory the calling test or
/// binary was built with (read from its path: `<target>/<profile>/deps/<exe>`
/// or `<target>/<profile>/<exe>`), and returns every file cargo reports as
/// an artifact. `--bin` selects binaries in every package named: build
/// libraries of other packages in a second call.
pub fn cargo_build(args: &[&str]) -> Vec<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace())
        .arg("build")
        .args(args)
        .arg("--message-format=json-render-diagnostics");
    let exe = std::env::current_exe().expect("the test knows its path");
    // A test is in <profile>/deps, a binary (bench) in <profile> itself.
    let mut profile_dir = exe.parent();
    if profile_dir
        .and_then(Path::file_name)
        .is_some_and(|n| n == "deps" || n == "examples")
    {
        profile_dir = profile_dir.and_then(Path::parent);
    }
    if let Some(profile) = profile_dir
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
    {
        if profile == "release" {
            cmd.arg("--release");
        }
        let target = profile_dir.and_then(Path::parent);
        if let (Some(target), true) = (target, matches!(profile, "debug" | "release")) {
            if std::env::var_os("CARGO_TARGET_DIR").is_none() {
                cmd.arg("--target-dir").arg(target);
            }
        }
    }
    let out = cmd.output().expect("run cargo build");
    assert!(
        out.status.success(),
        "cargo build {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut files = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        let names = msg["filenames"].as_array().cloned().unwrap_or_default();
        files.extend(names.iter().filter_map(|f| f.as_str()).map(PathBuf::from));
    }
    files
}

/// Debian's ROCr 5.2.3, which `relaunch sim-rocm` runs over the simulated
/// GPU (`libhsa-runtime64-1`).
pub const ROCR: &str = "/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1";

/// What running on the real ROCr over the simulated GPU needs, built once
/// per process: `(relaunch binary, interposer library)`, with the thunk
/// and the /dev/kfd shim beside the binary, where `relaunch sim-rocm`
/// finds them. None, through [`missing`], when ROCr is not installed.
pub fn sim_rocm_stack() -> Option<&'static (PathBuf, PathBuf)> {
    static BUILT: std::sync::OnceLock<(PathBuf, PathBuf)> = std::sync::OnceLock::new();
    if !Path::new(ROCR).exists() {
        missing(ROCR, "apt-get install libhsa-runtime64-1");
        return None;
    }
    Some(BUILT.get_or_init(|| {
        // Two builds: `--bin` would select binaries in every package.
        let libs = cargo_build(&[
            "-p",
            "relaunch-kfd",
            "-p",
            "relaunch-kfd-shim",
            "-p",
            "relaunch-hipgraph",
        ]);
        let bins = cargo_build(&["-p", "relaunch-cli", "--bin", "relaunch"]);
        (
            artifact(&bins, "relaunch"),
            artifact(&libs, "librelaunch_hipgraph.so"),
        )
    }))
}

/// The artifact of `files` named `name` (a file name, not a path).
pub fn artifact(files: &[PathBuf], name: &str) -> PathBuf {
    files
        .iter()
        .find(|p| p.file_name().is_some_and(|n| n == name))
        .cloned()
        .unwrap_or_else(|| panic!("cargo reported no {name} (artifacts: {files:?})"))
}
