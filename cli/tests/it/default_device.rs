//! The default device falls back to the simulator only when there is no
//! ROCm runtime. With a ROCr library whose only GPU is CDNA (the simulated
//! runtime built as `libhsa_runtime64.so`, listing `gfx90a`), `relaunch
//! demo` fails naming the reason instead of running on the simulator; the
//! chosen device is named once on stderr.

use crate::common;

use std::path::PathBuf;

/// `target/<profile>/examples/libhsa_runtime64.so` (built with the
/// workspace's tests: `cargo build -p relaunch-sim --example hsa_runtime64`).
fn fake_rocr() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let path = exe.parent()?.parent()?.join("examples/libhsa_runtime64.so");
    if path.exists() {
        return Some(path);
    }
    relaunch_testsupport::missing(
        &path.display().to_string(),
        "build it with `cargo build -p relaunch-sim --example hsa_runtime64`",
    );
    None
}

#[test]
fn a_cdna_only_rocr_fails_the_default_with_the_reason() {
    let Some(lib) = fake_rocr() else { return };
    let (code, out, err) = common::run(
        common::relaunch("demo")
            .env_remove("RELAUNCH_DEVICE")
            .env("RELAUNCH_HSA_LIB", &lib)
            .env("RELAUNCH_SIM_TARGETS", "gfx90a"),
    );
    assert_ne!(code, 0, "{out}{err}");
    assert!(
        err.contains("the first GPU (gfx90a) cannot be used"),
        "{err}"
    );
    assert!(err.contains("not an RDNA GPU"), "{err}");
    assert!(
        !out.contains("verified"),
        "it must not run on the simulator: {out}"
    );
}

#[test]
fn an_rdna_rocr_is_used_and_named_once_on_stderr() {
    let Some(lib) = fake_rocr() else { return };
    let (code, out, err) = common::run(
        common::relaunch("selftest")
            .env_remove("RELAUNCH_DEVICE")
            .env("RELAUNCH_HSA_LIB", &lib)
            .env("RELAUNCH_SIM_TARGETS", "gfx1100"),
    );
    assert_eq!(code, 0, "{out}{err}");
    let named: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("relaunch: device: "))
        .collect();
    assert_eq!(named.len(), 1, "{err}");
    assert!(named[0].contains("gfx1100"), "{err}");
}
