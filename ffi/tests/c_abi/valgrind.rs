//! smoke, gpu_smoke and the C-twin example under valgrind: no invalid
//! access and no definite leak (reachable process-wide state such as the
//! simulator is allowed).

use crate::support::{compile_example, fixture, have, scratch, stdout};
use std::process::Command;

fn under_valgrind(example: &str, args: &[&str]) -> String {
    let dir = scratch(&format!("valgrind-{example}"));
    let exe = compile_example(example, &dir);
    let out = Command::new("valgrind")
        .args([
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
            "--quiet",
        ])
        .arg(&exe)
        .args(args)
        .env("RELAUNCH_DEVICE", "sim:gfx1201")
        .output()
        .expect("run valgrind");
    assert!(
        out.status.success(),
        "{example} under valgrind failed ({}):\n{}\n{}",
        out.status,
        stdout(&out),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout(&out)
}

#[test]
fn smoke_is_clean_under_valgrind() {
    if !have("cc", "valgrind smoke") || !have("valgrind", "valgrind smoke") {
        return;
    }
    let text = under_valgrind("smoke", &[]);
    assert!(text.ends_with("C-ABI smoke OK\n"), "{text}");
}

#[test]
fn gpu_smoke_is_clean_under_valgrind() {
    if !have("cc", "valgrind gpu_smoke") || !have("valgrind", "valgrind gpu_smoke") {
        return;
    }
    let text = under_valgrind("gpu_smoke", &["8", &fixture("gfx1201", "counter")]);
    assert!(
        text.contains("counter = 8 / 8 certified=no [PASS]"),
        "{text}"
    );
}

#[test]
fn c_twin_callbacks_are_clean_under_valgrind() {
    if !have("cc", "valgrind sim_twin") || !have("valgrind", "valgrind sim_twin") {
        return;
    }
    let args = [
        fixture("gfx1201", "add_scalar"),
        fixture("gfx1201", "counter"),
    ];
    let text = under_valgrind("sim_twin", &[&args[0], &args[1]]);
    assert!(text.contains("C twin example: [PASS]"), "{text}");
}
