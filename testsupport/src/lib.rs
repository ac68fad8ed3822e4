//! Helpers for relaunch's integration tests: the workspace root, and nested
//! `cargo build`s of artifacts a test needs but cargo does not build for it
//! (cdylibs, examples), found through cargo's JSON messages; and a counting
//! allocator for tests that bound allocations ([`alloc`]).
//!
//! Test code: failures panic with cargo's output. Must not depend on any
//! relaunch crate.

pub mod alloc;

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

/// The workspace root (this crate's parent folder).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("testsupport/ is inside the workspace")
        .to_path_buf()
}

/// Runs `cargo build <args> --message-format=json-render-diagnostics` in
/// the workspace, in the profile and target directory the calling test was
/// built with (read from the test executable's path:
/// `<target>/<profile>/deps/<exe>`), and returns every file cargo reports
/// as an artifact.
pub fn cargo_build(args: &[&str]) -> Vec<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace())
        .arg("build")
        .args(args)
        .arg("--message-format=json-render-diagnostics");
    let exe = std::env::current_exe().expect("the test knows its path");
    let profile_dir = exe.parent().and_then(Path::parent);
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

/// The artifact of `files` named `name` (a file name, not a path).
pub fn artifact(files: &[PathBuf], name: &str) -> PathBuf {
    files
        .iter()
        .find(|p| p.file_name().is_some_and(|n| n == name))
        .cloned()
        .unwrap_or_else(|| panic!("cargo reported no {name} (artifacts: {files:?})"))
}
