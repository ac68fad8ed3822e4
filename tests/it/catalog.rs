//! `Catalog`: a simulated GPU loads verified code objects from a bundle
//! tree by toc key, once; a missing arch, a missing key, a sha256 mismatch
//! and a disagreeing args_signature are refused naming root, arch and key;
//! trees packed separately for different arches merge by copying.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use relaunch::bundle::pack::{self, Input};
use relaunch::bundle::Compression;
use relaunch::Gpu;
use relaunch_testsupport::fixture;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("catalog-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn pack_into(root: &Path, arches: &[&str], names: &[&str], scheme: Compression) {
    let inputs: Vec<Input> = arches
        .iter()
        .flat_map(|a| {
            names.iter().map(move |n| Input {
                name: n.to_string(),
                bytes: fixture(a, n),
            })
        })
        .collect();
    let arches: Vec<String> = arches.iter().map(|a| a.to_string()).collect();
    let packed = pack::pack("demo", &arches, &inputs, &BTreeMap::new(), scheme).unwrap();
    pack::write_tree(root, &packed).unwrap();
}

#[test]
fn loads_by_key_once_from_the_exact_arch() {
    let root = scratch("once");
    pack_into(
        &root,
        &["gfx1100", "gfx1201"],
        &["decode", "counter"],
        Compression::ZstdPerKernel,
    );
    let gpu = Gpu::open("sim:gfx1100").unwrap();
    let cat = gpu.catalog(&root).unwrap();
    assert_eq!(cat.arch(), "gfx1100");
    assert_eq!(cat.keys(), ["demo/counter", "demo/decode"]);
    let a = cat.module("demo/decode").unwrap();
    let b = cat.module("demo/decode").unwrap();
    assert!(a.same_as(&b), "loaded twice");
    assert!(a.kernel("rmsnorm").is_ok());
    assert_eq!(
        cat.code_object("demo/counter").unwrap(),
        fixture("gfx1100", "counter")
    );
    let err = cat.module("demo/nope").unwrap_err().to_string();
    assert!(
        err.contains(&root.display().to_string()) && err.contains("gfx1100"),
        "{err}"
    );
    assert!(
        err.contains("demo/nope") && err.contains("demo/decode"),
        "{err}"
    );
}

#[test]
fn a_missing_arch_is_refused_with_what_the_tree_has() {
    let root = scratch("arch");
    pack_into(&root, &["gfx1100"], &["counter"], Compression::None);
    std::fs::create_dir_all(root.join("gfx11-generic")).unwrap();
    let gpu = Gpu::open("sim:gfx1151").unwrap();
    let err = gpu.catalog(&root).unwrap_err().to_string();
    assert!(err.contains("no gfx1151 directory"), "{err}");
    assert!(err.contains("[gfx11-generic, gfx1100]"), "{err}");
    assert!(
        err.contains("gfx11-generic is present but not used"),
        "{err}"
    );
    // Any directory may be given as the root: its listing is capped.
    for i in 0..40 {
        std::fs::create_dir_all(root.join(format!("d{i:02}"))).unwrap();
    }
    let err = gpu.catalog(&root).unwrap_err().to_string();
    assert!(
        err.contains("[d00, d01,") && err.contains(", and 26 more]") && !err.contains("d39"),
        "{err}"
    );
}

#[test]
fn a_flipped_byte_is_refused_and_nothing_is_loaded() {
    let root = scratch("flip");
    pack_into(&root, &["gfx1100"], &["decode"], Compression::None);
    let path = root.join("gfx1100/relaunch_demo_gfx1100.kpack");
    let mut bytes = std::fs::read(&path).unwrap();
    let elf = bytes.windows(4).position(|w| w == b"\x7fELF").unwrap();
    bytes[elf + 4000] ^= 1;
    std::fs::write(&path, bytes).unwrap();
    let gpu = Gpu::open("sim:gfx1100").unwrap();
    let cat = gpu.catalog(&root).unwrap();
    let err = cat.module("demo/decode").unwrap_err().to_string();
    assert!(
        err.contains("demo/decode") && err.contains("sha256 mismatch"),
        "{err}"
    );
    assert!(err.contains("nothing was loaded"), "{err}");
    // Asking again fails again (a failure is not cached as success).
    assert!(cat.module("demo/decode").is_err());
}

#[test]
fn a_signature_disagreeing_with_the_metadata_is_refused() {
    let root = scratch("sig");
    pack_into(&root, &["gfx1100"], &["axpy"], Compression::None);
    let path = root.join("gfx1100/relaunch_demo_gfx1100.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    v["kernels"][0]["args_signature"]["kernels"][0]["args"][1]["kind"] = "by_value".into();
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    let gpu = Gpu::open("sim:gfx1100").unwrap();
    let err = gpu
        .catalog(&root)
        .unwrap()
        .module("demo/axpy")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("demo/axpy") && err.contains("args_signature disagrees"),
        "{err}"
    );
    assert!(err.contains("explicit argument 1"), "{err}");
}

#[test]
fn trees_for_different_arches_merge_by_copying() {
    let a = scratch("merge-a");
    let b = scratch("merge-b");
    let merged = scratch("merge");
    pack_into(&a, &["gfx1100"], &["decode"], Compression::ZstdPerKernel);
    pack_into(&b, &["gfx1201"], &["decode"], Compression::ZstdPerKernel);
    for src in [&a, &b] {
        for dir in std::fs::read_dir(src).unwrap() {
            let dir = dir.unwrap();
            let to = merged.join(dir.file_name());
            std::fs::create_dir_all(&to).unwrap();
            for f in std::fs::read_dir(dir.path()).unwrap() {
                let f = f.unwrap();
                std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
            }
        }
    }
    for target in ["gfx1100", "gfx1201"] {
        let gpu = Gpu::open(&format!("sim:{target}")).unwrap();
        let cat = gpu.catalog(&merged).unwrap();
        assert_eq!(cat.arch(), target);
        cat.module("demo/decode").unwrap();
    }
}
