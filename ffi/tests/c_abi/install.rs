//! The installed SDK: `make -C ffi install` (or `install.sh`) puts
//! the header, both libraries, both pkg-config files (`relaunch`,
//! `relaunch-static`) and the CMake package under a prefix; a C program
//! then builds against that prefix alone, with pkg-config (shared, and
//! static through `relaunch-static` as `ffi/README.md` recommends) and with
//! CMake (shared and static), and runs.

use std::path::Path;
use std::process::Command;

use crate::support::{check, ffi_dir, have, lib_dir, scratch, stdout};

/// Installs with `make -C ffi install` when make exists, else the script.
fn install(prefix: &Path) {
    let out = if have("make", "make install (using install.sh instead)") {
        Command::new("make")
            .arg("-C")
            .arg(ffi_dir())
            .arg("install")
            .arg(format!("PREFIX={}", prefix.display()))
            .arg(format!("ARTIFACTS={}", lib_dir().display()))
            .output()
            .expect("run make install")
    } else {
        Command::new("sh")
            .arg(ffi_dir().join("install.sh"))
            .arg(prefix)
            .arg(lib_dir())
            .output()
            .expect("run install.sh")
    };
    check(&out, "make -C ffi install");
    for file in [
        "include/relaunch.h",
        "lib/librelaunch.so",
        "lib/librelaunch.a",
        "lib/pkgconfig/relaunch.pc",
        "lib/pkgconfig/relaunch-static.pc",
        "lib/cmake/relaunch/relaunchConfig.cmake",
        "lib/cmake/relaunch/relaunchConfigVersion.cmake",
    ] {
        assert!(prefix.join(file).is_file(), "{file} was not installed");
    }
}

fn run_smoke(exe: &Path, prefix: &Path) {
    let out = Command::new(exe)
        .env("LD_LIBRARY_PATH", prefix.join("lib"))
        .output()
        .unwrap_or_else(|e| panic!("run {exe:?}: {e}"));
    check(&out, &format!("{exe:?}"));
    assert!(
        stdout(&out).ends_with("C-ABI smoke OK\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn installed_sdk_builds_with_pkg_config() {
    if !have("cc", "pkg-config install") || !have("pkg-config", "pkg-config install") {
        return;
    }
    let dir = scratch("install-pkgconfig");
    let prefix = dir.join("prefix");
    install(&prefix);
    let flags = Command::new("pkg-config")
        .args(["--cflags", "--libs", "relaunch"])
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .output()
        .expect("run pkg-config");
    check(&flags, "pkg-config --cflags --libs relaunch");
    let flags = stdout(&flags);
    assert!(flags.contains("-lrelaunch"), "{flags}");
    let version = Command::new("pkg-config")
        .args(["--modversion", "relaunch"])
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .output()
        .expect("run pkg-config");
    assert_eq!(stdout(&version).trim(), env!("CARGO_PKG_VERSION"));
    let exe = dir.join("smoke");
    let out = Command::new("cc")
        .arg(ffi_dir().join("examples/smoke.c"))
        .args(flags.split_whitespace())
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("run cc");
    check(&out, "cc smoke.c $(pkg-config --cflags --libs relaunch)");
    run_smoke(&exe, &prefix);
}

/// `ffi/README.md`'s static recipe against the installed prefix:
/// `pkg-config --static --libs relaunch-static` names the archive, so the
/// program needs no librelaunch.so at run time.
#[test]
fn installed_sdk_links_statically_with_pkg_config() {
    if !have("cc", "pkg-config static install") || !have("pkg-config", "pkg-config static install")
    {
        return;
    }
    let dir = scratch("install-pkgconfig-static");
    let prefix = dir.join("prefix");
    install(&prefix);
    let pc = std::fs::read_to_string(prefix.join("lib/pkgconfig/relaunch-static.pc")).unwrap();
    assert!(
        pc.contains(&format!("prefix={}", prefix.display())),
        "the installed relaunch-static.pc does not name the prefix:\n{pc}"
    );
    let flags = Command::new("pkg-config")
        .args(["--static", "--cflags", "--libs", "relaunch-static"])
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .output()
        .expect("run pkg-config");
    check(
        &flags,
        "pkg-config --static --cflags --libs relaunch-static",
    );
    let flags = stdout(&flags);
    assert!(flags.contains("librelaunch.a"), "{flags}");
    let exe = dir.join("smoke_static");
    let out = Command::new("cc")
        .arg(ffi_dir().join("examples/smoke.c"))
        .args(flags.split_whitespace())
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("run cc");
    check(
        &out,
        "cc smoke.c $(pkg-config --static --cflags --libs relaunch-static)",
    );
    // No library path: a shared librelaunch would not be found.
    run_smoke(&exe, Path::new("/nonexistent"));
}

#[test]
fn installed_sdk_builds_with_cmake_shared_and_static() {
    if !have("cc", "cmake install") || !have("cmake", "cmake install") {
        return;
    }
    let dir = scratch("install-cmake");
    let prefix = dir.join("prefix");
    install(&prefix);
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::copy(ffi_dir().join("examples/smoke.c"), src.join("smoke.c")).unwrap();
    std::fs::write(
        src.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.16)\n\
         project(relaunch_consumer C)\n\
         find_package(relaunch 0.1 REQUIRED)\n\
         add_executable(smoke_shared smoke.c)\n\
         target_link_libraries(smoke_shared PRIVATE relaunch::relaunch)\n\
         add_executable(smoke_static smoke.c)\n\
         target_link_libraries(smoke_static PRIVATE relaunch::relaunch_static)\n",
    )
    .unwrap();
    let build = dir.join("build");
    let out = Command::new("cmake")
        .arg("-S")
        .arg(&src)
        .arg("-B")
        .arg(&build)
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
        .output()
        .expect("run cmake");
    check(&out, "cmake configure");
    let out = Command::new("cmake")
        .arg("--build")
        .arg(&build)
        .output()
        .expect("run cmake --build");
    check(&out, "cmake --build");
    run_smoke(&build.join("smoke_shared"), &prefix);
    run_smoke(&build.join("smoke_static"), Path::new("/nonexistent"));
}
