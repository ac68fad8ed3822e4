//! Running the `relaunch` binary from the CLI integration tests.

use std::process::Command;

/// `relaunch <subcommand>`, ready for more arguments and environment.
pub fn relaunch(subcommand: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_relaunch"));
    cmd.arg(subcommand);
    cmd
}

/// Runs `cmd` and returns (exit code, stdout, stderr); -1 when killed.
pub fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().expect("run relaunch");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The files of a `--dump-ib` folder, sorted (lane, then IB and segment).
pub fn dumped(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}
