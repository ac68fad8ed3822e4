//! The demo's decode kernels as a bundle tree (`tests/kernels/bundles/`,
//! written by `tests/kernels/build.sh`): the committed tree is what
//! `relaunch bundle pack` makes of the committed code objects, it verifies,
//! and `relaunch demo` loads through the catalog (built-in tree or
//! `--bundle ROOT`); a tampered tree is refused naming the key.

use std::path::{Path, PathBuf};

use crate::common;

const TARGETS: &[&str] = &["gfx1010", "gfx1030", "gfx1100", "gfx1151", "gfx1201"];

fn repo() -> PathBuf {
    relaunch_testsupport::workspace()
}

fn committed() -> PathBuf {
    repo().join("tests/kernels/bundles")
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("demo_bundle-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `relaunch bundle pack` exactly as tests/kernels/build.sh runs it.
fn pack(root: &Path) {
    let mut cmd = common::relaunch("bundle");
    cmd.args(["pack", "--group", "demo"]);
    for t in TARGETS {
        cmd.args(["--arch", t]);
    }
    cmd.arg("-o").arg(root);
    for t in TARGETS {
        cmd.arg(repo().join("tests/kernels/build").join(t).join("decode.co"));
    }
    let (code, out, err) = common::run(&mut cmd);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn the_committed_tree_is_a_fresh_pack_and_verifies() {
    let fresh = scratch("fresh");
    pack(&fresh);
    for t in TARGETS {
        for ext in ["kpack", "json"] {
            let name = format!("{t}/relaunch_demo_{t}.{ext}");
            let a = std::fs::read(fresh.join(&name)).unwrap();
            let b = std::fs::read(committed().join(&name))
                .unwrap_or_else(|e| panic!("{name}: {e}; run tests/kernels/build.sh"));
            assert!(
                a == b,
                "{name} differs from a fresh pack: run tests/kernels/build.sh"
            );
        }
    }
    let (code, out, err) = common::run(common::relaunch("bundle").arg("verify").arg(committed()));
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("ok: 5 code objects in 5 arch directories"),
        "{out}"
    );
}

fn demo(args: &[&str]) -> (i32, String, String) {
    common::run(common::relaunch("demo").args(args))
}

#[test]
fn demo_loads_through_the_catalog_and_verifies_16_of_16() {
    let (code, out, err) = demo(&[
        "--device",
        "sim:gfx1100",
        "--layers",
        "2",
        "--sequences",
        "1",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(
            "kernels: catalog <built-in tests/kernels/bundles> (arch gfx1100), demo/decode, \
             sha256 and args_signature verified"
        ),
        "{out}"
    );
    assert!(out.contains("verified: 16/16"), "{out}");
}

#[test]
fn demo_takes_a_bundle_root_and_refuses_a_tampered_one() {
    let root = scratch("tampered");
    pack(&root);
    let root_s = root.to_str().unwrap();
    let (code, out, err) = demo(&[
        "--device",
        "sim:gfx1201",
        "--layers",
        "1",
        "--tokens",
        "2",
        "--bundle",
        root_s,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!("kernels: catalog {root_s} (arch gfx1201)")),
        "{out}"
    );
    assert!(out.contains("verified: 2/2"), "{out}");

    // One byte of the gfx1201 code object changes inside its zstd frame.
    let kpack = root.join("gfx1201/relaunch_demo_gfx1201.kpack");
    let mut bytes = std::fs::read(&kpack).unwrap();
    bytes[64 + 8 + 1500] ^= 0x08;
    std::fs::write(&kpack, bytes).unwrap();
    let (code, out, err) = demo(&[
        "--device",
        "sim:gfx1201",
        "--tokens",
        "1",
        "--bundle",
        root_s,
    ]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("demo/decode") && err.contains(root_s), "{err}");
    assert!(err.contains("nothing was loaded"), "{err}");

    // A tree without this arch is refused naming what it has.
    let (code, _, err) = demo(&["--device", "sim:gfx1030", "--bundle", "/nonexistent-tree"]);
    assert_ne!(code, 0);
    assert!(err.contains("no gfx1030 directory"), "{err}");

    let (code, _, err) = demo(&["--bundle", root_s, "--code-object", root_s]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot be used with"), "{err}");
}
