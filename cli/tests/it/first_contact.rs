//! `scripts/first-contact` against the simulator (FIRST_CONTACT_SIM=1):
//! each line passes only on its expected outcome. The s_trap and wild-store
//! kernels run as machine code on the interpreter (no twin is registered).

use std::process::Command;

use relaunch_testsupport::{require_tool, workspace};

/// Runs the script on `device` with `env`; (exit code, stdout).
fn first_contact(device: &str, env: &[(&str, &str)]) -> (i32, String) {
    let ibs = std::env::temp_dir().join(format!(
        "relaunch-first-contact-{}-{}",
        std::process::id(),
        device.replace(':', "-")
    ));
    let mut cmd = Command::new("bash");
    cmd.arg(workspace().join("scripts/first-contact"))
        .args(["--device", device])
        .env("RELAUNCH", env!("CARGO_BIN_EXE_relaunch"))
        .env("FIRST_CONTACT_SIM", "1")
        .env("IB_DIR", &ibs)
        .env_remove("RELAUNCH_DEVICE")
        .env_remove("RELAUNCH_SIM_KERNELS")
        .env_remove("RELAUNCH_SIM_TRAP_HANDLER");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run scripts/first-contact");
    std::fs::remove_dir_all(&ibs).ok();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code().unwrap_or(-1), stdout)
}

fn verdict<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find_map(|l| l.strip_prefix(name))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no {name:?} line in\n{out}"))
}

#[test]
fn every_line_passes_on_the_simulator() {
    if !require_tool("clang-19", "apt-get install clang-19") {
        return;
    }
    for device in ["sim:gfx1030", "sim:gfx1100", "sim:gfx1201"] {
        let (code, out) = first_contact(device, &[]);
        assert_eq!(code, 0, "{device}: {out}");
        for name in [
            "executable IB memory",
            "TRAP_PRESENT (s_trap)",
            "fault survival",
        ] {
            assert_eq!(verdict(&out, name), "PASS", "{device}: {out}");
        }
    }
}

#[test]
fn the_trap_line_passes_only_on_the_trap_handlers_error() {
    if !require_tool("clang-19", "apt-get install clang-19") {
        return;
    }
    // No trap handler: the trap is ignored and the counter completes.
    let (code, out) = first_contact("sim:gfx1100", &[("RELAUNCH_SIM_TRAP_HANDLER", "0")]);
    assert_eq!(code, 1, "{out}");
    assert!(
        verdict(&out, "TRAP_PRESENT (s_trap)").starts_with("FAIL (the trap was ignored"),
        "{out}"
    );
    // A code object relaunch refuses to load is no trap either (the old
    // check passed on any failure but an abort or a timeout).
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("relaunch-fake-clang-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fake = dir.join("clang");
    std::fs::write(
        &fake,
        "#!/bin/sh\nwhile [ \"$1\" != -o ]; do shift; done\necho garbage > \"$2\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (code, out) = first_contact("sim:gfx1100", &[("CLANG", fake.to_str().unwrap())]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, 1, "{out}");
    assert!(
        verdict(&out, "TRAP_PRESENT (s_trap)").starts_with("FAIL (exit "),
        "{out}"
    );
    assert!(verdict(&out, "fault survival").starts_with("FAIL"), "{out}");
}
