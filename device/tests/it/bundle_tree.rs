//! Bundle trees: packing per-arch archives with manifests, verifying every
//! code object (sha256, target, args_signature), refusing tampered archives
//! and manifests by key, merging trees packed separately, and the
//! manifest parser's bounds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use relaunch_device::bundle::pack::{self, Input, Launch};
use relaunch_device::bundle::{ArchDir, BundleError, Compression, Kpack, Manifest};
use relaunch_testsupport::fixture;

pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("bundle_tree-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn arches(list: &[&str]) -> Vec<String> {
    list.iter().map(|a| a.to_string()).collect()
}

pub fn pack_into(root: &Path, group: &str, list: &[&str], names: &[&str], scheme: Compression) {
    let inputs: Vec<Input> = list
        .iter()
        .flat_map(|arch| {
            names.iter().map(move |n| Input {
                name: n.to_string(),
                bytes: fixture(arch, n),
            })
        })
        .collect();
    let mut launch = BTreeMap::new();
    launch.insert(
        "counter".to_string(),
        Launch {
            grid: [256, 1, 1],
            workgroup: [64, 1, 1],
        },
    );
    let launch = if names.contains(&"counter") {
        launch
    } else {
        BTreeMap::new()
    };
    let packed = pack::pack(group, &arches(list), &inputs, &launch, scheme).unwrap();
    pack::write_tree(root, &packed).unwrap();
}

#[test]
fn pack_writes_the_documented_layout_and_verifies() {
    let root = scratch("layout");
    pack_into(
        &root,
        "demo",
        &["gfx1030", "gfx1100", "gfx1201"],
        &["decode", "counter"],
        Compression::ZstdPerKernel,
    );
    for arch in ["gfx1030", "gfx1100", "gfx1201"] {
        let dir = root.join(arch);
        assert!(dir.join(format!("relaunch_demo_{arch}.kpack")).is_file());
        let json = std::fs::read(dir.join(format!("relaunch_demo_{arch}.json"))).unwrap();
        let m = Manifest::parse(&json).unwrap();
        assert_eq!(m.arch, arch);
        let counter = m.entry("demo/counter").unwrap();
        assert_eq!(
            counter.launch.as_ref().unwrap()["counter"]["workgroup"][0],
            64
        );
        assert_eq!(counter.args_signature["kernels"][0]["name"], "counter");
        assert_eq!(
            counter.args_signature["kernels"][0]["args"][0]["kind"],
            "global_buffer"
        );
        let d = ArchDir::open(&root, arch).unwrap();
        assert_eq!(
            d.keys().collect::<Vec<_>>(),
            ["demo/counter", "demo/decode"]
        );
        for key in ["demo/counter", "demo/decode"] {
            let v = d.verify(key).unwrap();
            assert_eq!(
                v.code.bytes(),
                fixture(arch, key.trim_start_matches("demo/"))
            );
        }
    }
    assert_eq!(
        ArchDir::arches(&root).unwrap(),
        ["gfx1030", "gfx1100", "gfx1201"]
    );
}

#[test]
fn a_flipped_byte_inside_the_archive_is_refused_naming_the_key() {
    for scheme in [Compression::None, Compression::ZstdPerKernel] {
        let root = scratch(&format!("flip-{}", scheme.name()));
        pack_into(&root, "demo", &["gfx1100"], &["counter", "decode"], scheme);
        let path = root.join("gfx1100/relaunch_demo_gfx1100.kpack");
        let mut bytes = std::fs::read(&path).unwrap();
        let k = Kpack::parse(&bytes).unwrap();
        let e = k.entry("demo/decode", "gfx1100").unwrap().clone();
        match scheme {
            Compression::None => {
                // The blob of demo/decode: flip a byte in its middle.
                let whole = k.extract(&e).unwrap();
                let at = bytes
                    .windows(whole.len())
                    .position(|w| w == whole.as_slice())
                    .unwrap();
                bytes[at + whole.len() / 2] ^= 0x40;
            }
            Compression::ZstdPerKernel => {
                // Re-pack with one byte of the code object changed, keeping
                // the manifest: what a corrupted copy looks like to a reader.
                let mut w = relaunch_device::bundle::KpackWriter::new(
                    "demo",
                    "gfx1100",
                    &["gfx1100"],
                    scheme,
                );
                for entry in k.entries() {
                    let mut data = k.extract(entry).unwrap();
                    if entry.key == "demo/decode" {
                        data[100] ^= 1;
                    }
                    w.add(&entry.key, "gfx1100", data).unwrap();
                }
                bytes = w.finish().unwrap();
            }
        }
        std::fs::write(&path, &bytes).unwrap();
        let d = ArchDir::open(&root, "gfx1100").unwrap();
        d.verify("demo/counter").unwrap();
        let err = d.verify("demo/decode").unwrap_err();
        assert!(matches!(err, BundleError::Sha256 { .. }), "{err}");
        assert!(err.to_string().contains("demo/decode"), "{err}");
    }
}

fn edit_manifest(root: &Path, arch: &str, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = root.join(arch).join(format!("relaunch_demo_{arch}.json"));
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
}

#[test]
fn a_signature_that_disagrees_with_the_metadata_is_refused() {
    let root = scratch("signature");
    pack_into(&root, "demo", &["gfx1100"], &["axpy"], Compression::None);
    edit_manifest(&root, "gfx1100", |v| {
        v["kernels"][0]["args_signature"]["kernels"][0]["args"][2]["size"] = 8.into();
    });
    let err = ArchDir::open(&root, "gfx1100")
        .unwrap()
        .verify("demo/axpy")
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, BundleError::Signature { .. }), "{text}");
    assert!(
        text.contains("demo/axpy") && text.contains("kernel axpy explicit argument 2"),
        "{text}"
    );
    assert!(
        text.contains("size 8 by_value") && text.contains("size 4 by_value"),
        "{text}"
    );

    // A foreign signature form is refused, not ignored.
    edit_manifest(&root, "gfx1100", |v| {
        v["kernels"][0]["args_signature"] = "ptr,ptr,f32,u32".into();
    });
    let err = ArchDir::open(&root, "gfx1100")
        .unwrap()
        .verify("demo/axpy")
        .unwrap_err();
    assert!(err.to_string().contains("relaunch.kernargs/v1"), "{err}");
}

#[test]
fn missing_keys_arches_and_wrong_hashes_are_named() {
    let root = scratch("missing");
    pack_into(&root, "demo", &["gfx1100"], &["counter"], Compression::None);
    let d = ArchDir::open(&root, "gfx1100").unwrap();
    let err = d.verify("demo/nope").unwrap_err().to_string();
    assert!(
        err.contains("demo/nope") && err.contains("demo/counter"),
        "{err}"
    );
    let err = ArchDir::open(&root, "gfx1151").unwrap_err().to_string();
    assert!(err.contains("gfx1151"), "{err}");

    edit_manifest(&root, "gfx1100", |v| {
        v["kernels"][0]["hsaco_sha256"] = "00".repeat(32).into();
    });
    let err = ArchDir::open(&root, "gfx1100")
        .unwrap()
        .verify("demo/counter")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("sha256 mismatch") && err.contains(&"00".repeat(32)),
        "{err}"
    );

    // A manifest naming a key its archive lacks is refused at open.
    edit_manifest(&root, "gfx1100", |v| {
        v["kernels"][0]["toc_key"] = "demo/ghost".into();
    });
    let err = ArchDir::open(&root, "gfx1100").unwrap_err().to_string();
    assert!(
        err.contains("demo/ghost") && err.contains("not in the table of contents"),
        "{err}"
    );
}

#[test]
fn trees_packed_separately_merge_by_copying() {
    let a = scratch("merge-a");
    let b = scratch("merge-b");
    let merged = scratch("merge");
    pack_into(
        &a,
        "demo",
        &["gfx1100"],
        &["decode"],
        Compression::ZstdPerKernel,
    );
    pack_into(&b, "demo", &["gfx1201"], &["decode"], Compression::None);
    // A second group for gfx1100 from yet another root lands beside the first.
    let c = scratch("merge-c");
    pack_into(&c, "extra", &["gfx1100"], &["counter"], Compression::None);
    for src in [&a, &b, &c] {
        for arch in ArchDir::arches(src).unwrap() {
            std::fs::create_dir_all(merged.join(&arch)).unwrap();
            for f in std::fs::read_dir(src.join(&arch)).unwrap() {
                let f = f.unwrap();
                std::fs::copy(f.path(), merged.join(&arch).join(f.file_name())).unwrap();
            }
        }
    }
    let d = ArchDir::open(&merged, "gfx1100").unwrap();
    assert_eq!(
        d.keys().collect::<Vec<_>>(),
        ["demo/decode", "extra/counter"]
    );
    d.verify("demo/decode").unwrap();
    d.verify("extra/counter").unwrap();
    ArchDir::open(&merged, "gfx1201")
        .unwrap()
        .verify("demo/decode")
        .unwrap();
}

#[test]
fn pack_refuses_mismatched_inputs() {
    let input = |arch: &str, name: &str| Input {
        name: name.to_string(),
        bytes: fixture(arch, name),
    };
    let none = BTreeMap::new();
    let err = pack::pack(
        "demo",
        &arches(&["gfx1100"]),
        &[input("gfx1030", "counter")],
        &none,
        Compression::None,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("gfx1030") && err.contains("not among --arch"),
        "{err}"
    );
    let err = pack::pack(
        "demo",
        &arches(&["gfx1100", "gfx1201"]),
        &[input("gfx1100", "counter")],
        &none,
        Compression::None,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("--arch gfx1201: no code object"), "{err}");
    let err = pack::pack(
        "../x",
        &arches(&["gfx1100"]),
        &[input("gfx1100", "counter")],
        &none,
        Compression::None,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("group"), "{err}");
    let mut launch = BTreeMap::new();
    launch.insert(
        "nosuch".to_string(),
        Launch {
            grid: [1, 1, 1],
            workgroup: [1, 1, 1],
        },
    );
    let err = pack::pack(
        "demo",
        &arches(&["gfx1100"]),
        &[input("gfx1100", "counter")],
        &launch,
        Compression::None,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("--launch nosuch"), "{err}");
}

#[test]
fn manifests_are_checked_field_by_field() {
    let good = r#"{"schema":"relaunch.bundle/v1","arch":"gfx1100","group":"g","kpack":"a.kpack","kernels":[]}"#;
    Manifest::parse(good.as_bytes()).unwrap();
    for (bad, want) in [
        (good.replace("relaunch.bundle/v1", "other/v1"), "schema"),
        (good.replace("a.kpack", "../a.kpack"), "plain file name"),
        (good.replace("\"g\"", "\"\""), "group"),
        (
            good.replace(
                "[]",
                r#"[{"toc_key":"g/k","hsaco_sha256":"ABC","args_signature":null}]"#,
            ),
            "64 lower-case hex",
        ),
        ("[".repeat(10_000), "not a bundle manifest"),
        ("".to_string(), "not a bundle manifest"),
    ] {
        let err = Manifest::parse(bad.as_bytes()).unwrap_err().to_string();
        assert!(err.contains(want), "{want}: {err}");
    }
}

proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: 200, ..Default::default() })]

    #[test]
    fn mutated_manifests_never_panic(
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..8),
    ) {
        let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bundle_tree-proptest-src");
        if !root.join("gfx1100").is_dir() {
            std::fs::create_dir_all(&root).unwrap();
            pack_into(&root, "demo", &["gfx1100"], &["counter"], Compression::None);
        }
        let mut bytes = std::fs::read(root.join("gfx1100/relaunch_demo_gfx1100.json")).unwrap();
        for (at, x) in flips {
            let i = at % bytes.len();
            bytes[i] ^= x.max(1);
        }
        let _ = Manifest::parse(&bytes);
    }
}
