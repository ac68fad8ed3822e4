//! The floors hold: no file imports a floor above its own (`hip` <-
//! `model` <- `state` <- `exports`), and only the exports floor exports
//! symbols (`#[no_mangle]`). Scans the sources, so a new arrow pointing up
//! fails here rather than in review.

use std::path::{Path, PathBuf};

const FLOORS: [&str; 4] = ["hip", "model", "state", "exports"];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|f| *f == module)
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules `text` names through `crate::` paths, grouped
/// ones (`use crate::{a::b, c}`) included; comments are not code.
fn crate_modules(text: &str) -> Vec<String> {
    let text: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name = item.trim().split("::").next().unwrap_or("");
                out.push(name.trim().to_string());
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push(name);
        }
    }
    out
}

#[test]
fn no_file_imports_a_floor_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut wrong = Vec::new();
    let mut exported_below = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let first = relative.components().next().unwrap().as_os_str();
        let Some(own) = floor_of(&first.to_string_lossy()) else {
            continue; // lib.rs and this check
        };
        let text = std::fs::read_to_string(file).unwrap();
        for module in crate_modules(&text) {
            if floor_of(&module).is_some_and(|f| f > own) {
                wrong.push(format!("{} imports crate::{module}", relative.display()));
            }
        }
        if own < floor_of("exports").unwrap() && text.contains("#[no_mangle]") {
            exported_below.push(relative.display().to_string());
        }
    }
    assert!(files.len() > 30, "found only {} sources", files.len());
    assert!(wrong.is_empty(), "arrows pointing up: {wrong:#?}");
    assert!(
        exported_below.is_empty(),
        "exported symbols outside src/exports: {exported_below:?}"
    );
}

#[test]
fn the_scan_sees_plain_and_grouped_paths() {
    let text = "use crate::state::with_state;\nuse crate::{exports::forward, hip};\n\
                $crate::hip::real::f() // not crate::model\n/// nor crate::exports";
    assert_eq!(crate_modules(text), ["state", "exports", "hip", "hip"]);
}
