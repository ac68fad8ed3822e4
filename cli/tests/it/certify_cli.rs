//! `relaunch certify`: verdicts with reasons and a manifest the loader
//! accepts for the same bytes.

use std::process::Command;

#[test]
fn certify_prints_verdicts_and_writes_a_manifest_that_loads() {
    let co = relaunch_testsupport::workspace().join("tests/kernels/build/gfx1201/decode.co");
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

/// Issue 29: a code object v4 HIP kernel built against the ROCm device
/// libraries reads blockDim and gridDim from the dispatch packet (s[4:5])
/// and writes only through its kernarg pointer: vmem_only, the packet
/// loads named in the manifest's evidence. A `__constant__` variable sits
/// in a writable segment, so a kernel reading it stays unproven.
#[test]
fn certify_proves_a_v4_hip_kernel_reading_the_dispatch_packet() {
    let Some(bundle) = relaunch_testsupport::hip::hip_v4("packet_dims.hip", "gfx1030") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("relaunch-certify-hip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (co, manifest) = (dir.join("packet_dims.out"), dir.join("m.json"));
    std::fs::write(&co, &bundle).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_relaunch"))
        .arg("certify")
        .arg(&co)
        .arg("-o")
        .arg(&manifest)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("kernel block_dims: vmem_only"), "{text}");
    assert!(
        text.contains("the dispatch packet through s[4:5] (2 load(s))"),
        "{text}"
    );
    assert!(
        text.contains("kernel constant_table: scalar_or_unknown"),
        "{text}"
    );
    assert!(text.contains("not inside a read-only"), "{text}");
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    let k = m["inspection"]["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "block_dims")
        .unwrap();
    let evidence = &k["evidence"];
    assert_eq!(evidence["dispatch_sgpr"], 4);
    let offsets: Vec<i64> = evidence["packet_loads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["offset"].as_i64().unwrap())
        .collect();
    // workgroup_size_x (u16 at 4) and grid_size_x (u32 at 12).
    assert_eq!(offsets, [4, 12], "{evidence}");
    std::fs::remove_dir_all(&dir).ok();
}
