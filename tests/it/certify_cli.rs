//! `relaunch certify`: verdicts with reasons and a manifest the loader
//! accepts for the same bytes.

use std::path::Path;
use std::process::Command;

#[test]
fn certify_prints_verdicts_and_writes_a_manifest_that_loads() {
    let co = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/build/gfx1201/decode.co");
    let dir = std::env::temp_dir().join(format!("relaunch-certify-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = dir.join("m.json");
    let out = Command::new(env!("CARGO_BIN_EXE_relaunch"))
        .arg("certify")
        .arg(&co)
        .arg("-o")
        .arg(&manifest)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("kernel rope: vmem_only"), "{text}");
    assert!(text.contains("kernel matvec: scalar_or_unknown"), "{text}");
    assert!(text.contains("reason:   0x"), "{text}");
    assert!(
        text.contains("memory:") && text.contains("regs:") && text.contains("wave:     32"),
        "{text}"
    );
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    assert_eq!(m["schema_version"], 1);
    assert_eq!(m["arch"], "gfx1201");
    let kernels = m["inspection"]["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), 8);
    for k in kernels {
        for f in [
            "name",
            "wavefront_size",
            "vgpr_count",
            "sgpr_count",
            "vgpr_spill_count",
            "sgpr_spill_count",
            "private_segment_fixed_size",
            "mutable_read_cache",
            "evidence",
        ] {
            assert!(!k[f].is_null(), "{f} missing in {k}");
        }
    }
    let bytes = std::fs::read(&co).unwrap();
    let gpu = relaunch::Gpu::open("sim:gfx1201").unwrap();
    let module = gpu
        .load_module_certified(&bytes, &std::fs::read(&manifest).unwrap())
        .unwrap();
    assert!(module.radiowave_certified());
    std::fs::remove_dir_all(&dir).ok();

    let bad = Command::new(env!("CARGO_BIN_EXE_relaunch"))
        .args(["certify", "/nonexistent.co"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}
