//! The C SDK archive (`make -C ffi sdk VERSION=x.y.z`): its layout, a
//! SHA256SUMS that `sha256sum -c` accepts, a SONAME on the shared library,
//! and a C program built from the unpacked archive alone with pkg-config,
//! once shared and once static (no librelaunch.so needed at run time).

use std::path::Path;
use std::process::Command;

use crate::support::{check, ffi_dir, lib_dir, scratch, stdout};

const VERSION: &str = "9.8.7";

fn needed(elf: &Path) -> String {
    let out = Command::new("readelf")
        .arg("-d")
        .arg(elf)
        .output()
        .expect("run readelf");
    check(&out, "readelf -d");
    stdout(&out)
}

#[test]
fn sdk_archive_unpacks_verifies_and_links_shared_and_static() {
    for tool in ["make", "cc", "pkg-config", "sha256sum", "tar", "readelf"] {
        if !relaunch_testsupport::require_tool(tool, "needed by the SDK test") {
            return;
        }
    }
    let dir = scratch("sdk");
    let out = Command::new("make")
        .arg("-C")
        .arg(ffi_dir())
        .arg("sdk")
        .arg(format!("VERSION={VERSION}"))
        .arg(format!("ARTIFACTS={}", lib_dir().display()))
        .arg(format!("OUT={}", dir.display()))
        .output()
        .expect("run make sdk");
    check(&out, "make -C ffi sdk");
    let name = format!("relaunch-c-sdk-{VERSION}-linux-x86_64");
    let archive = dir.join(format!("{name}.tar.gz"));
    assert!(archive.is_file(), "no {archive:?}");
    let out = Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(&*dir)
        .output()
        .expect("run tar");
    check(&out, "tar -xzf");
    let root = dir.join(&name);
    for file in [
        "include/relaunch.h",
        "lib/librelaunch.so",
        "lib/librelaunch.a",
        "lib/pkgconfig/relaunch.pc",
        "lib/pkgconfig/relaunch-static.pc",
        "lib/cmake/relaunch/relaunchConfig.cmake",
        "LICENSE",
        "NOTICE",
        "SHA256SUMS",
    ] {
        assert!(root.join(file).is_file(), "{file} is not in the SDK");
    }
    let out = Command::new("sha256sum")
        .args(["-c", "SHA256SUMS"])
        .current_dir(&root)
        .output()
        .expect("run sha256sum");
    check(&out, "sha256sum -c SHA256SUMS");
    assert!(
        stdout(&out).contains("lib/librelaunch.a: OK"),
        "{}",
        stdout(&out)
    );
    let dynamic = needed(&root.join("lib/librelaunch.so"));
    assert!(
        dynamic.contains("(SONAME)") && dynamic.contains("[librelaunch.so]"),
        "{dynamic}"
    );

    let pkg = |args: &[&str]| {
        let out = Command::new("pkg-config")
            .args(args)
            .env("PKG_CONFIG_PATH", root.join("lib/pkgconfig"))
            .output()
            .expect("run pkg-config");
        check(&out, &format!("pkg-config {args:?}"));
        stdout(&out)
    };
    assert_eq!(pkg(&["--modversion", "relaunch"]).trim(), VERSION);
    for (module, static_, exe_name) in [
        ("relaunch", false, "smoke_shared"),
        ("relaunch-static", true, "smoke_static"),
    ] {
        let mut args = vec!["--cflags", "--libs", module];
        if static_ {
            args.insert(0, "--static");
        }
        let flags = pkg(&args);
        let exe = dir.join(exe_name);
        let out = Command::new("cc")
            .arg(ffi_dir().join("examples/smoke.c"))
            .args(flags.split_whitespace())
            .arg("-o")
            .arg(&exe)
            .output()
            .expect("run cc");
        check(&out, &format!("cc smoke.c $(pkg-config {args:?})"));
        let deps = needed(&exe);
        assert_eq!(
            deps.contains("librelaunch.so"),
            !static_,
            "{exe_name}: {deps}"
        );
        let mut run = Command::new(&exe);
        if !static_ {
            run.env("LD_LIBRARY_PATH", root.join("lib"));
        }
        let out = run.output().expect("run the smoke");
        check(&out, exe_name);
        assert!(
            stdout(&out).ends_with("C-ABI smoke OK\n"),
            "{}",
            stdout(&out)
        );
    }
}
