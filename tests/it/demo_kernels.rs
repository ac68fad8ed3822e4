//! The decode-step kernels (`tests/kernels/decode/`): the committed code
//! objects are what the sources say (rebuilt and compared byte for byte
//! when clang-19 is installed), and on every bundled target each kernel is
//! accepted by the PM4 verdict, uses no scratch, and takes only explicit
//! arguments (no hidden ones: its workgroup size is declared).

use std::path::PathBuf;
use std::process::Command;

use relaunch::CodeObject;
use relaunch::Pm4Verdict;

const TARGETS: [&str; 5] = ["gfx1010", "gfx1030", "gfx1100", "gfx1151", "gfx1201"];
const KERNELS: [&str; 8] = [
    "rmsnorm",
    "matvec",
    "rope",
    "kv_append",
    "attention",
    "residual_add",
    "silu_mul",
    "sampler",
];

fn kernels_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/kernels")
}

#[test]
fn every_decode_kernel_is_accepted_on_every_target() {
    for target in TARGETS {
        let path = kernels_dir().join(format!("build/{target}/decode.co"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let object = CodeObject::from_bundle_or_elf(&bytes, None).unwrap();
        assert_eq!(object.target().processor(), target);
        let names: Vec<&str> = object.kernels().iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names.len(), KERNELS.len(), "{target}: {names:?}");
        for name in KERNELS {
            let k = object
                .kernel(name)
                .unwrap_or_else(|| panic!("{target}: no kernel {name}"));
            let verdict = k.pm4_verdict();
            assert!(verdict.accepted(), "{target} {name}: {verdict}");
            assert_eq!(k.private_segment_size, 0, "{target} {name}: scratch");
            assert!(
                k.args.iter().all(|a| !a.value_kind.is_hidden()),
                "{target} {name}: hidden arguments {:?}",
                k.args
            );
            let end = k.args.iter().map(|a| a.offset + a.size).max().unwrap();
            assert_eq!(k.kernarg_size, end, "{target} {name}");
        }
        // The per-token position sits where the demo patches it.
        let pos = |kernel: &str| {
            object
                .kernel(kernel)
                .unwrap()
                .args
                .iter()
                .find(|a| a.name.as_deref() == Some("pos"))
                .map(|a| (a.offset, a.size))
        };
        assert_eq!(pos("rope"), Some((16, 4)), "{target}");
        assert_eq!(pos("kv_append"), Some((24, 4)), "{target}");
        assert_eq!(pos("attention"), Some((36, 4)), "{target}");
    }
}

#[test]
fn committed_decode_objects_equal_a_fresh_build() {
    for tool in ["clang-19", "ld.lld-19"] {
        if !relaunch_testsupport::require_tool(
            tool,
            "CI installs it; needed for the decode rebuild check",
        ) {
            return;
        }
    }
    let out = std::env::temp_dir().join(format!("relaunch-decode-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new("bash")
        .arg(kernels_dir().join("decode/build.sh"))
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "decode/build.sh failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    for target in TARGETS {
        let fresh = std::fs::read(out.join(target).join("decode.co")).unwrap();
        let committed =
            std::fs::read(kernels_dir().join(format!("build/{target}/decode.co"))).unwrap();
        assert!(
            fresh == committed,
            "{target}/decode.co differs from a fresh build: run tests/kernels/decode/build.sh"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}
