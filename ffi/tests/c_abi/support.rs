//! Finding the built library, compiling C against it, running programs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The directory holding a fresh `librelaunch.so` and `librelaunch.a`.
///
/// `RELAUNCH_CAPI_LIB_DIR` names one explicitly (e.g. a release build);
/// otherwise cargo builds the library (a no-op when `cargo test` already
/// did) and reports where it put it. Cargo does not build a cdylib for
/// integration tests, hence the nested build.
pub fn lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(dir) = std::env::var_os("RELAUNCH_CAPI_LIB_DIR") {
            return PathBuf::from(dir);
        }
        build_library()
    })
}

fn build_library() -> PathBuf {
    // `--tests` keeps dev-dependency features as `cargo test` resolved
    // them, so nothing already built is rebuilt.
    let files = relaunch_testsupport::cargo_build(&["-p", "relaunch-capi", "--lib", "--tests"]);
    let so = relaunch_testsupport::artifact(&files, "librelaunch.so");
    let dir = so.parent().expect("artifact has a directory").to_path_buf();
    assert!(
        dir.join("librelaunch.a").is_file(),
        "no librelaunch.a in {dir:?}"
    );
    dir
}

pub fn ffi_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture(target: &str, name: &str) -> String {
    let path = relaunch_testsupport::fixture_path(target, name);
    assert!(path.is_file(), "missing fixture {path:?}");
    path.to_string_lossy().into_owned()
}

/// True when `tool` runs; otherwise false with a skip note, or a failure
/// under CI (which installs every tool these tests use).
pub fn have(tool: &str, test: &str) -> bool {
    relaunch_testsupport::require_tool(tool, &format!("needed by {test}"))
}

/// A fresh scratch directory for one test, removed when the test passes
/// (kept for inspection when it fails).
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("note: test files kept in {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

pub fn scratch(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("relaunch-capi-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a scratch directory");
    Scratch(dir)
}

/// Compiles `ffi/examples/<example>.c` against the built library.
pub fn compile_example(example: &str, out_dir: &Path) -> PathBuf {
    compile_source(
        &ffi_dir().join(format!("examples/{example}.c")),
        example,
        out_dir,
    )
}

/// Compiles one C file against the built library into `out_dir/exe_name`.
pub fn compile_source(source: &Path, exe_name: &str, out_dir: &Path) -> PathBuf {
    let lib = lib_dir();
    let exe = out_dir.join(exe_name);
    let include = ffi_dir().join("include");
    let rpath = format!("-Wl,-rpath,{}", lib.display());
    let out = Command::new("cc")
        .args([
            "-std=c11",
            "-D_POSIX_C_SOURCE=200809L",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-g",
        ])
        .arg("-I")
        .arg(&include)
        .arg(source)
        .arg("-L")
        .arg(lib)
        .arg(&rpath)
        .args(["-lrelaunch", "-o"])
        .arg(&exe)
        .output()
        .expect("run cc");
    check(&out, &format!("cc {}", source.display()));
    exe
}

/// Runs `exe` on the simulated device and returns its output.
pub fn run(exe: &Path, args: &[&str]) -> Output {
    Command::new(exe)
        .args(args)
        .env("RELAUNCH_DEVICE", "sim:gfx1201")
        .output()
        .unwrap_or_else(|e| panic!("run {exe:?}: {e}"))
}

/// Panics with both streams unless `out` succeeded.
pub fn check(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}
