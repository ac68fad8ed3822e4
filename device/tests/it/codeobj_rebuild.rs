//! When clang-19 is installed, rebuild the test kernels into a temporary
//! directory with `tests/kernels/build.sh` and require byte-identical output
//! to the committed fixtures (so the fixtures are what the sources say).

use std::path::{Path, PathBuf};
use std::process::Command;

fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir(root).unwrap() {
        for file in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            out.push(
                file.unwrap()
                    .path()
                    .strip_prefix(root)
                    .unwrap()
                    .to_path_buf(),
            );
        }
    }
    out.sort();
    out
}

#[test]
fn committed_fixtures_equal_a_fresh_build() {
    // clang links AMDGPU code objects with lld, packaged apart (lld-19);
    // the printf fixture links the ROCm device libraries, with one file
    // assembled by llvm-as-19 (tests/kernels/README.md).
    for tool in ["clang-19", "ld.lld-19", "llvm-as-19"] {
        if !relaunch_testsupport::require_tool(
            tool,
            "CI installs it; needed for the fixture rebuild check",
        ) {
            return;
        }
    }
    let device_libs = Path::new("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode/ockl.bc");
    if std::env::var_os("ROCM_DEVICE_LIBS").is_none() && !device_libs.is_file() {
        relaunch_testsupport::missing(
            &format!("{}", device_libs.display()),
            "apt-get install rocm-device-libs, or set ROCM_DEVICE_LIBS",
        );
        return;
    }
    let kernels = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/kernels");
    let out = std::env::temp_dir().join(format!("relaunch-kernels-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let status = Command::new("bash")
        .arg(kernels.join("build.sh"))
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "build.sh failed: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    let committed = kernels.join("build");
    let fresh = files_under(&out);
    assert_eq!(fresh, files_under(&committed), "same set of fixtures");
    for rel in &fresh {
        let a = std::fs::read(out.join(rel)).unwrap();
        let b = std::fs::read(committed.join(rel)).unwrap();
        assert!(
            a == b,
            "{} differs from a fresh build: run tests/kernels/build.sh",
            rel.display()
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}
