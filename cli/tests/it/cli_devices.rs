//! `relaunch devices` on the fixture sysfs trees (RELAUNCH_SYSFS_ROOT), with
//! a host manifest found by walking up from the working directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

fn fixture(name: &str) -> PathBuf {
    relaunch_testsupport::workspace()
        .join("tests/fixtures/sysfs")
        .join(name)
}

/// Run `relaunch devices` in `cwd` with home and XDG config pointed there.
fn devices(root: &Path, cwd: &Path) -> (i32, String, String) {
    common::run(
        common::relaunch("devices")
            .current_dir(cwd)
            .env("RELAUNCH_SYSFS_ROOT", root)
            .env("RELAUNCH_HOST", "hipx")
            .env("HOME", cwd)
            .env("XDG_CONFIG_HOME", cwd.join("xdg")),
    )
}

fn scratch(tag: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("relaunch-cli-devices-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join(".relaunch")).unwrap();
    dir
}

#[test]
fn lists_the_four_gpu_host_and_marks_the_denied_apu() {
    let dir = scratch("hipx");
    std::fs::write(
        dir.join(".relaunch/devices.toml"),
        "[host.hipx]\ndev0 = \"uuid:GPU-43390a851e296ee5\"\n\
         deny = [\"bdf:0000:bf:00.0\"]  # Strix Halo APU: device reset takes the host down\n",
    )
    .unwrap();
    let (code, stdout, stderr) = devices(&fixture("hipx"), &dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("host hipx: 4 GPU agent(s)"),
        "{stdout}"
    );
    assert_eq!(
        lines[1],
        "  [0] gfx1100 0000:66:00.0 [uuid:GPU-43390a851e296ee5] card0 kfd_node=1 rocr#0(volatile)"
    );
    assert!(lines[2].starts_with(
        "  [1] gfx1151 0000:bf:00.0 [bdf:0000:bf:00.0] card1 kfd_node=2 rocr#1(volatile)  DENIED by `bdf:0000:bf:00.0` ("
    ), "{stdout}");
    assert!(lines[2].ends_with("devices.toml:3): Strix Halo APU: device reset takes the host down"));
    assert_eq!(
        lines[4],
        "  [3] gfx1030 0000:99:00.0 [uuid:GPU-c7ff6b154d0128bc] slot=3 card3 kfd_node=4 rocr#3(volatile)"
    );
    assert!(
        stdout.contains("@dev0 = uuid:GPU-43390a851e296ee5"),
        "{stdout}"
    );
}

#[test]
fn a_host_without_gpus_explains_the_simulated_device() {
    let dir = scratch("nogpu");
    let (code, stdout, stderr) = devices(&fixture("nogpu"), &dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.starts_with("host hipx: no AMD GPU agents"),
        "{stdout}"
    );
    assert!(stdout.contains("--device sim:gfx1201"), "{stdout}");
}

#[test]
fn a_malformed_manifest_fails_naming_file_and_line() {
    let dir = scratch("bad");
    std::fs::write(
        dir.join(".relaunch/devices.toml"),
        "[host.hipx]\n\ndev0 = \"0\"\n",
    )
    .unwrap();
    let (code, _, stderr) = devices(&fixture("hipx"), &dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, 2);
    assert!(
        stderr.contains(".relaunch/devices.toml:3: alias `dev0`"),
        "{stderr}"
    );
    assert!(stderr.contains("no kind prefix"), "{stderr}");
}

/// A user namespace renames the kernel's host name (`unshare -Ur --uts`)
/// but not `/etc/hostname`: the deny list written for that name still
/// applies. Skipped where either is unavailable.
#[test]
fn a_renamed_host_in_a_user_namespace_keeps_its_deny_list() {
    let Some(name) = std::fs::read_to_string("/etc/hostname").ok().and_then(|t| {
        t.lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
    }) else {
        eprintln!("skipped: no /etc/hostname");
        return;
    };
    let probe = Command::new("unshare")
        .args(["-Ur", "--uts", "hostname", "renamed"])
        .stderr(std::process::Stdio::null())
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        eprintln!("skipped: unshare -Ur --uts is not permitted here");
        return;
    }
    let dir = scratch("userns");
    std::fs::create_dir_all(dir.join("xdg/relaunch")).unwrap();
    std::fs::write(
        dir.join("xdg/relaunch/devices.toml"),
        format!("[host.{name}]\ndeny = [\"bdf:0000:bf:00.0\"]  # the APU\n"),
    )
    .unwrap();
    let (code, stdout, stderr) = common::run(
        Command::new("unshare")
            .args(["-Ur", "--uts", "sh", "-c"])
            .arg("hostname not-this-machine && exec \"$0\" devices")
            .arg(env!("CARGO_BIN_EXE_relaunch"))
            .current_dir(&dir)
            .env("RELAUNCH_SYSFS_ROOT", fixture("hipx"))
            .env_remove("RELAUNCH_HOST")
            .env("HOME", &dir)
            .env("XDG_CONFIG_HOME", dir.join("xdg")),
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("host not-this-machine:"), "{stdout}");
    let apu = stdout.lines().find(|l| l.contains("0000:bf:00.0")).unwrap();
    assert!(apu.contains("DENIED by `bdf:0000:bf:00.0`"), "{stdout}");
}
