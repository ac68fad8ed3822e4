//! #15.5 for C: every `RlGpu *rl_*(...)` opener of `relaunch.h` refuses a
//! device the host manifest denies, also when the simulator is loaded as
//! the system HSA library (#15.3).

use std::collections::BTreeSet;
use std::process::Command;

use crate::support::{check, compile_source, ffi_dir, have, scratch, stdout};

/// The openers tried below; the header must declare exactly these.
const TRIED: &[&str] = &["rl_gpu_new", "rl_gpu_open", "rl_gpu_open_default"];

#[test]
fn header_openers_are_all_tried() {
    let header = std::fs::read_to_string(ffi_dir().join("include/relaunch.h")).unwrap();
    let found: BTreeSet<&str> = header
        .lines()
        .map(|line| line.strip_prefix("struct ").unwrap_or(line))
        .filter_map(|line| line.strip_prefix("RlGpu *"))
        .filter_map(|rest| rest.split('(').next())
        .collect();
    assert_eq!(found, TRIED.iter().copied().collect::<BTreeSet<_>>());
}

#[test]
fn every_c_opener_refuses_a_denied_device() {
    if !have("cc", "every_c_opener_refuses_a_denied_device") {
        return;
    }
    let dir = scratch("deny");
    let exe = compile_source(
        &ffi_dir().join("tests/c_abi/deny_open.c"),
        "deny_open",
        &dir,
    );
    std::fs::create_dir_all(dir.join("config/relaunch")).unwrap();
    std::fs::write(
        dir.join("config/relaunch/devices.toml"),
        "[host.denytest]\ndeny = [\"sim:gfx1100\"]\n",
    )
    .unwrap();
    let files =
        relaunch_testsupport::cargo_build(&["-p", "relaunch-sim", "--example", "hsa_runtime64"]);
    let library = relaunch_testsupport::artifact(&files, "libhsa_runtime64.so");
    let run = |args: &[&str], device: Option<&str>, with_library: bool| {
        let mut cmd = Command::new(&exe);
        cmd.args(args)
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env("RELAUNCH_HOST", "denytest")
            .env_remove("RELAUNCH_DEVICE")
            .env_remove("RELAUNCH_HSA_LIB");
        if let Some(device) = device {
            cmd.env("RELAUNCH_DEVICE", device);
        }
        if with_library {
            cmd.env("RELAUNCH_HSA_LIB", &library)
                .env("RELAUNCH_SIM_TARGETS", "gfx1100");
        }
        let out = cmd.output().expect("run deny_open");
        check(&out, &format!("deny_open {args:?}"));
        stdout(&out)
    };
    let allowed = run(&["open", "sim:gfx1201"], None, false);
    assert!(allowed.starts_with("opened: gfx1201"), "{allowed}");
    let cases: [(&[&str], Option<&str>, bool); 7] = [
        (&["open", "sim:gfx1100"], None, false),
        (&["default"], Some("sim:gfx1100"), false),
        (&["open", "index:0"], None, true),
        (&["open", "name:gfx1100"], None, true),
        (&["open", "bdf:1100:e0:00.0"], None, true),
        (&["new", "0"], None, true),
        (&["default"], None, true),
    ];
    for (args, device, with_library) in cases {
        let out = run(args, device, with_library);
        assert!(
            out.starts_with("refused: ") && out.contains("is denied"),
            "{args:?} (RELAUNCH_DEVICE={device:?}, library={with_library}): {out}"
        );
    }
}

/// #31.4 for C: a deny entry in the reference system's user manifest
/// (`$XDG_CONFIG_HOME/redline/devices.toml`, host section from
/// `REDLINE_HOST`) refuses the board; with no tracing subscriber in a C
/// process, each reference setting is named once on stderr.
#[test]
fn a_reference_manifest_denies_through_c_and_warns_once() {
    if !have("cc", "a_reference_manifest_denies_through_c_and_warns_once") {
        return;
    }
    let dir = scratch("deny-reference");
    let exe = compile_source(
        &ffi_dir().join("tests/c_abi/deny_open.c"),
        "deny_open",
        &dir,
    );
    std::fs::create_dir_all(dir.join("config/redline")).unwrap();
    std::fs::write(
        dir.join("config/redline/devices.toml"),
        "[host.denytest]\ndeny = [\"sim:gfx1100 # reference deny\"]\n",
    )
    .unwrap();
    let run = |selector: &str| {
        let out = Command::new(&exe)
            .args(["open", selector])
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env("HOME", &*dir)
            .env("REDLINE_HOST", "denytest")
            .env_remove("RELAUNCH_HOST")
            .env_remove("RELAUNCH_DEVICE")
            .env_remove("RELAUNCH_HSA_LIB")
            .env_remove("RELAUNCH_LOG")
            .current_dir(&*dir)
            .output()
            .expect("run deny_open");
        check(&out, &format!("deny_open open {selector}"));
        (
            stdout(&out),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (allowed, _) = run("sim:gfx1201");
    assert!(allowed.starts_with("opened: gfx1201"), "{allowed}");
    let (refused, stderr) = run("sim:gfx1100");
    assert!(
        refused.starts_with("refused: ")
            && refused.contains("reference deny")
            && refused.contains("config/redline/devices.toml"),
        "{refused}"
    );
    let count = |needle: &str| stderr.lines().filter(|l| l.contains(needle)).count();
    assert_eq!(
        count("relaunch: warning: REDLINE_HOST=denytest is read as RELAUNCH_HOST=denytest"),
        1,
        "{stderr}"
    );
    assert_eq!(
        count("redline/devices.toml is the reference system's host manifest"),
        1,
        "{stderr}"
    );
}
