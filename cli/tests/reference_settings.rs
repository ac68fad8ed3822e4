//! #31.4 through the public Rust API: a deny entry in the reference
//! system's manifests (`$XDG_CONFIG_HOME/redline/devices.toml`, a project's
//! `.redline/devices.toml`) holds for every opener, `REDLINE_HOST` is read
//! as `RELAUNCH_HOST` unless that is set, and the CLI warns once per
//! reference variable.
//!
//! Its own binary: one test function changes the environment and the
//! working directory (the manifests are found through them).

use std::path::Path;
use std::process::Command;

use relaunch::{GfxTarget, Gpu, Result};

fn expect_denied(what: &str, opened: Result<Gpu>, target: &str, file: &str) {
    match opened {
        Err(e) => assert!(
            e.message().contains("is denied")
                && e.message().contains(target)
                && e.message().contains(file),
            "{what}: refused for another reason: {e}"
        ),
        Ok(gpu) => panic!("{what}: opened denied device {}", gpu.describe()),
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn reference_manifests_and_host_apply_to_every_opener() {
    let scratch = std::env::temp_dir().join(format!("relaunch-reference-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let user = scratch.join("config/redline/devices.toml");
    write(
        &user,
        "[host.denytest]\nrdna3 = \"sim:gfx1100\"\n\
         deny = [\"@rdna3\"]  # resets take the host down\n\
         [host.other]\nfast = \"sim:gfx1151\"\n",
    );
    let project = scratch.join("home/proj");
    write(
        &project.join(".redline/devices.toml"),
        "[host.denytest]\nfast = \"sim:gfx1201\"\ndeny = [\"sim:gfx1030 # loaned out\"]\n",
    );
    std::env::set_var("XDG_CONFIG_HOME", scratch.join("config"));
    std::env::set_var("HOME", scratch.join("home"));
    std::env::set_current_dir(&project).unwrap();
    // The host section comes from the reference name alone.
    std::env::remove_var("RELAUNCH_HOST");
    std::env::set_var("REDLINE_HOST", "denytest");
    std::env::remove_var("RELAUNCH_DEVICE");
    std::env::remove_var("RELAUNCH_HSA_LIB");

    let user_file = "config/redline/devices.toml";
    let project_file = "proj/.redline/devices.toml";
    assert!(Gpu::open("sim:gfx1201").is_ok(), "an allowed board opens");
    expect_denied(
        "Gpu::open(sim:gfx1100)",
        Gpu::open("sim:gfx1100"),
        "sim:gfx1100",
        user_file,
    );
    expect_denied(
        "Gpu::open(@rdna3)",
        Gpu::open("@rdna3"),
        "sim:gfx1100",
        user_file,
    );
    let gfx1100 = GfxTarget::parse("gfx1100").unwrap();
    expect_denied(
        "Gpu::open_sim(gfx1100)",
        Gpu::open_sim(&gfx1100),
        "sim:gfx1100",
        user_file,
    );
    std::env::set_var("RELAUNCH_DEVICE", "sim:gfx1030");
    expect_denied(
        "Gpu::open_default (RELAUNCH_DEVICE)",
        Gpu::open_default(),
        "sim:gfx1030",
        project_file,
    );
    std::env::remove_var("RELAUNCH_DEVICE");
    // A project alias from the reference project file.
    assert_eq!(Gpu::open("@fast").unwrap().target().processor(), "gfx1201");

    // Both names set: RELAUNCH_HOST wins for aliases, and the deny entries
    // written for this machine's section still hold (here the section is
    // not the machine's, so @fast comes from [host.other]).
    std::env::set_var("RELAUNCH_HOST", "other");
    assert_eq!(Gpu::open("@fast").unwrap().target().processor(), "gfx1151");
    std::env::remove_var("RELAUNCH_HOST");
    std::env::remove_var("REDLINE_HOST");
    std::env::set_current_dir(std::env::temp_dir()).unwrap();
    let _ = std::fs::remove_dir_all(&scratch);
}

/// The CLI (a tracing subscriber at WARN on stderr): each reference
/// variable and each reference manifest is named once, however many IBs
/// and device contexts the run makes.
#[test]
fn the_cli_warns_once_per_reference_setting() {
    let scratch =
        std::env::temp_dir().join(format!("relaunch-reference-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    write(
        &scratch.join("config/redline/devices.toml"),
        "[host.clitest]\ndeny = [\"sim:gfx1100\"]\n",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_relaunch"))
        .args(["selftest", "--device", "sim:gfx1201", "--dispatches", "8"])
        .args(["--lanes", "2"])
        .env("XDG_CONFIG_HOME", scratch.join("config"))
        .env("HOME", &scratch)
        .env_remove("RELAUNCH_DEVICE")
        .env("REDLINE_PM4_FULL_STATE", "1")
        .env("REDLINE_GRAPH_LANES", "4")
        .env("REDLINE_HOST", "clitest")
        .env_remove("RELAUNCH_HOST")
        .env_remove("RELAUNCH_PM4_FULL_STATE")
        .env_remove("RELAUNCH_LOG")
        .current_dir(&scratch)
        .output()
        .expect("run relaunch selftest");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "selftest failed:\n{stderr}");
    let lines = |needle: &str| stderr.lines().filter(|l| l.contains(needle)).count();
    for (needle, meaning) in [
        (
            "REDLINE_PM4_FULL_STATE=1 is read as RELAUNCH_PM4_FULL_STATE=1",
            "honoured",
        ),
        (
            "REDLINE_HOST=clitest is read as RELAUNCH_HOST=clitest",
            "honoured",
        ),
        ("REDLINE_GRAPH_LANES has no effect", "no equivalent"),
        ("redline/devices.toml is the reference system's", "manifest"),
    ] {
        assert_eq!(lines(needle), 1, "{meaning}: `{needle}` once in:\n{stderr}");
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
