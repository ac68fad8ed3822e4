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
