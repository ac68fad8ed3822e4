//! The seed header's users: a program calling all 45 of its functions
//! with its own types (`seed_abi.c`) and the reference document's C
//! snippets (`integration_snippets.c`), each compiled as C99 and as C++17
//! with `-Wall -Wextra -Werror`, linked against the shared and the static
//! library, and run (the ABI program on sim:gfx1100 and sim:gfx1201).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{check, ffi_dir, fixture, lib_dir, scratch, stdout};

/// The certification calls (#17) are built: the program's
/// RL_TEST_CERTIFICATION block is on.
const CERTIFICATION_DEFINES: &[&str] = &["-DRL_TEST_CERTIFICATION"];

/// True when `tool` runs. Missing: a failure under CI, else a skip note.
fn require(tool: &str, test: &str) -> bool {
    relaunch_testsupport::require_tool(tool, &format!("needed by {test}"))
}

#[derive(Clone, Copy, Debug)]
enum Lang {
    C99,
    Cpp17,
}

#[derive(Clone, Copy, Debug)]
enum Link {
    Shared,
    Static,
}

/// `source` (in this test folder) compiled and linked one way.
fn build(source: &str, lang: Lang, link: Link, dir: &Path, defines: &[&str]) -> PathBuf {
    let lib = lib_dir();
    let exe = dir.join(format!("{source}-{lang:?}-{link:?}"));
    let src = ffi_dir().join("tests/c_abi").join(source);
    let mut cmd = match lang {
        Lang::C99 => {
            let mut c = Command::new("cc");
            c.args(["-std=c99", "-pedantic"]);
            c
        }
        Lang::Cpp17 => {
            let mut c = Command::new("c++");
            c.args(["-x", "c++", "-std=c++17"]);
            c
        }
    };
    cmd.args(["-Wall", "-Wextra", "-Werror", "-g"])
        .args(defines)
        .arg("-I")
        .arg(ffi_dir().join("include"))
        .arg(&src);
    if matches!(lang, Lang::Cpp17) {
        // Back to object-file detection for the library arguments.
        cmd.args(["-x", "none"]);
    }
    match link {
        Link::Shared => {
            cmd.arg("-L")
                .arg(lib)
                .arg(format!("-Wl,-rpath,{}", lib.display()))
                .arg("-lrelaunch");
        }
        Link::Static => {
            // The archive's own system dependencies (relaunch.pc's
            // Libs.private).
            cmd.arg(lib.join("librelaunch.a")).args([
                "-ldl",
                "-lgcc_s",
                "-lutil",
                "-lrt",
                "-lpthread",
                "-lm",
            ]);
        }
    }
    let out = cmd.arg("-o").arg(&exe).output().expect("run the compiler");
    check(&out, &format!("build {source} as {lang:?}, {link:?}"));
    exe
}

fn run(exe: &Path, args: &[&str]) -> Output {
    Command::new(exe)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run {exe:?}: {e}"))
}

/// Lines of stderr between the program's two markers.
fn between<'a>(stderr: &'a str, start: &str, end: Option<&str>) -> Vec<&'a str> {
    stderr
        .lines()
        .skip_while(|l| !l.starts_with(start))
        .skip(1)
        .take_while(|l| end.is_none_or(|e| !l.starts_with(e)))
        .collect()
}

#[test]
fn every_seed_function_with_the_seed_types_on_both_targets() {
    if !require("cc", "seed ABI C99") || !require("c++", "seed ABI C++17") {
        return;
    }
    let dir = scratch("seed-abi");
    for lang in [Lang::C99, Lang::Cpp17] {
        for link in [Link::Shared, Link::Static] {
            let exe = build("seed_abi.c", lang, link, &dir, CERTIFICATION_DEFINES);
            for target in ["gfx1100", "gfx1201"] {
                let device = format!("sim:{target}");
                let (counter, add) = (fixture(target, "counter"), fixture(target, "add_scalar"));
                let out = run(&exe, &[&device, &counter, &add]);
                let what = format!("seed_abi ({lang:?}, {link:?}) on {device}");
                check(&out, &what);
                let expected = if CERTIFICATION_DEFINES.is_empty() {
                    "seed ABI: 40 functions [PASS]"
                } else {
                    "seed ABI: 45 functions [PASS]"
                };
                assert_eq!(stdout(&out).trim(), expected, "{what}");
                let stderr = String::from_utf8_lossy(&out.stderr);
                let diag = between(&stderr, "--- expected", Some("--- end"));
                assert_eq!(diag.len(), 1, "{what}: one diagnostic line:\n{stderr}");
                assert!(
                    diag[0].starts_with("relaunch: rl_gpu_new: "),
                    "{what}: {stderr}"
                );
            }
        }
    }
}

#[test]
fn the_reference_documents_c_snippets_compile_link_and_fail_closed() {
    if !require("cc", "snippets C99") || !require("c++", "snippets C++17") {
        return;
    }
    let dir = scratch("snippets");
    for lang in [Lang::C99, Lang::Cpp17] {
        for link in [Link::Shared, Link::Static] {
            let exe = build("integration_snippets.c", lang, link, &dir, &[]);
            let out = Command::new(&exe)
                .env("ROCR_VISIBLE_DEVICES", "")
                .output()
                .expect("run the snippets");
            let what = format!("snippets ({lang:?}, {link:?})");
            check(&out, &what);
            let text = stdout(&out);
            assert!(text.contains("anchored open: 1"), "{what}: {text}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            let diag = between(&stderr, "--- anchored open", None);
            assert_eq!(diag.len(), 1, "{what}: one diagnostic line:\n{stderr}");
            assert!(
                diag[0].starts_with("relaunch: rl_gpu_open: "),
                "{what}: {stderr}"
            );
        }
    }
}
