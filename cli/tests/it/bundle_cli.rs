//! `relaunch bundle pack|list|verify` end to end: the decode kernels packed
//! for gfx1030, gfx1100 and gfx1201 verify; one flipped byte of one code
//! object inside an archive makes `verify` exit 2 naming the key.

use std::path::{Path, PathBuf};

use crate::common;

fn kernels() -> PathBuf {
    relaunch_testsupport::workspace().join("tests/kernels/build")
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("bundle_cli-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn pack(root: &Path, compression: &str) {
    let mut cmd = common::relaunch("bundle");
    cmd.args(["pack", "--group", "demo", "--compression", compression]);
    for arch in ["gfx1030", "gfx1100", "gfx1201"] {
        cmd.args(["--arch", arch]);
    }
    cmd.arg("-o").arg(root);
    cmd.args(["--launch", "rmsnorm=256/256"]);
    for arch in ["gfx1030", "gfx1100", "gfx1201"] {
        cmd.arg(kernels().join(arch).join("decode.co"));
    }
    let (code, out, err) = common::run(&mut cmd);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("relaunch_demo_gfx1201.kpack: 1 code object"),
        "{out}"
    );
}

fn verify(root: &Path) -> (i32, String, String) {
    common::run(common::relaunch("bundle").arg("verify").arg(root))
}

#[test]
fn decode_kernels_pack_list_and_verify() {
    let root = scratch("ok");
    pack(&root, "zstd-per-kernel");
    for arch in ["gfx1030", "gfx1100", "gfx1201"] {
        let dir = root.join(arch);
        assert!(dir.join(format!("relaunch_demo_{arch}.kpack")).is_file());
        assert!(dir.join(format!("relaunch_demo_{arch}.json")).is_file());
    }
    let (code, out, err) = verify(&root);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("ok: 3 code objects in 3 arch directories"),
        "{out}"
    );
    let (code, out, err) = common::run(common::relaunch("bundle").arg("list").arg(&root));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("demo/decode  15800 bytes"), "{out}");
    assert!(out.contains("kernels: rmsnorm, matvec, rope"), "{out}");
    assert!(
        out.contains(r#"launch {"rmsnorm":{"grid":[256,1,1],"workgroup":[256,1,1]}}"#),
        "{out}"
    );
}

/// Flip one byte in the middle of `arch`'s decode code object as stored.
fn flip(root: &Path, arch: &str, plain: bool) {
    let path = root.join(arch).join(format!("relaunch_demo_{arch}.kpack"));
    let mut bytes = std::fs::read(&path).unwrap();
    let at = if plain {
        // The blob is the code object itself; find it by its ELF magic.
        let elf = bytes.windows(4).position(|w| w == b"\x7fELF").unwrap();
        elf + 5000
    } else {
        // The zstd blob starts at 64: count, frame size, frame.
        64 + 8 + 2000
    };
    bytes[at] ^= 0x10;
    std::fs::write(&path, bytes).unwrap();
}

#[test]
fn a_flipped_byte_fails_verify_naming_the_key() {
    for (compression, plain) in [("none", true), ("zstd-per-kernel", false)] {
        let root = scratch(compression);
        pack(&root, compression);
        flip(&root, "gfx1100", plain);
        let (code, out, err) = verify(&root);
        assert_eq!(code, 2, "{compression}: {out}{err}");
        assert!(err.contains("demo/decode"), "{compression}: {err}");
        assert!(err.contains("gfx1100"), "{compression}: {err}");
        if plain {
            assert!(err.contains("sha256 mismatch"), "{err}");
        }
    }
}

#[test]
fn pack_and_verify_refuse_bad_input() {
    let root = scratch("bad");
    let (code, _, err) = common::run(
        common::relaunch("bundle")
            .args(["pack", "--group", "demo", "--arch", "gfx1100", "-o"])
            .arg(&root)
            .arg(kernels().join("gfx1030/decode.co")),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not among --arch gfx1100"), "{err}");
    let (code, _, err) = verify(&root.join("nowhere"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nowhere"), "{err}");
    let (code, _, err) = common::run(
        common::relaunch("bundle")
            .args([
                "pack", "--group", "demo", "--arch", "gfx1100", "--launch", "x=1/0", "-o",
            ])
            .arg(&root)
            .arg(kernels().join("gfx1100/decode.co")),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a positive integer"), "{err}");
}
