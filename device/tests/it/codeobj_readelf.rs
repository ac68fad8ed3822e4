//! Cross-check: the decoded kernels and arguments of every committed fixture
//! equal what `llvm-readelf-19 --notes` prints for it. Skipped (with a note)
//! when llvm-readelf-19 is not installed.

use std::path::{Path, PathBuf};
use std::process::Command;

use relaunch_device::codeobj::CodeObject;

/// (kernel name, [(offset, size, value_kind)]) in metadata order.
type Listing = Vec<(String, Vec<(u32, u32, String)>)>;

fn fixtures() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/kernels/build");
    let mut out = Vec::new();
    for dir in std::fs::read_dir(&root).expect("tests/kernels/build exists") {
        for file in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_some_and(|e| e == "co") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Pull kernels and argument triples out of readelf's YAML rendering of the
/// metadata note. Under `amdhsa.kernels:`, kernel entries start at indent 2 (`  - `), their keys sit
/// at indent 4, argument entries at indent 6 and argument keys at indent 8.
fn parse_readelf(text: &str) -> Listing {
    let mut kernels: Listing = Vec::new();
    let mut in_args = false;
    let mut in_kernels = false;
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        if indent == 0 {
            // Top-level keys: amdhsa.kernels, amdhsa.printf, amdhsa.target...
            in_kernels = line.starts_with("amdhsa.kernels:");
            continue;
        }
        if !in_kernels {
            continue;
        }
        let body = line.trim_start().trim_start_matches("- ");
        let is_item = line.trim_start().starts_with("- ");
        let (key, value) = match body.split_once(':') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => continue,
        };
        if indent == 2 && is_item {
            kernels.push((String::new(), Vec::new()));
            in_args = key == ".args";
            continue;
        }
        let Some((name, args)) = kernels.last_mut() else {
            continue;
        };
        if indent == 4 {
            in_args = key == ".args";
            if key == ".name" {
                *name = value.to_string();
            }
        } else if in_args && (indent == 6 || indent == 8) {
            if indent == 6 && is_item {
                args.push((0, 0, String::new()));
            }
            let Some(arg) = args.last_mut() else { continue };
            match key {
                ".offset" => arg.0 = value.parse().unwrap(),
                ".size" => arg.1 = value.parse().unwrap(),
                ".value_kind" => arg.2 = value.to_string(),
                _ => {}
            }
        }
    }
    kernels
}

fn decoded(path: &Path) -> Listing {
    let object = CodeObject::parse(&std::fs::read(path).unwrap()).unwrap();
    object
        .kernels()
        .iter()
        .map(|k| {
            let args = k
                .args
                .iter()
                .map(|a| (a.offset, a.size, a.value_kind.to_string()))
                .collect();
            (k.name.clone(), args)
        })
        .collect()
}

#[test]
fn arguments_match_llvm_readelf() {
    let tool = "llvm-readelf-19";
    if !relaunch_testsupport::require_tool(
        tool,
        "CI installs it; needed for the readelf cross-check",
    ) {
        return;
    }
    let files = fixtures();
    assert!(files.len() >= 30, "expected the committed fixtures");
    for path in files {
        let out = Command::new(tool)
            .arg("--notes")
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{tool} failed on {}", path.display());
        let theirs = parse_readelf(&String::from_utf8_lossy(&out.stdout));
        let ours = decoded(&path);
        assert!(
            !theirs.is_empty(),
            "{}: readelf listed no kernels",
            path.display()
        );
        assert!(theirs.iter().all(|(_, a)| !a.is_empty()));
        assert_eq!(ours, theirs, "{}", path.display());
    }
}
