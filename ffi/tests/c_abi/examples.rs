//! Each example compiled with `cc -Wall -Wextra -Werror` and run on the
//! simulated gfx1201, with its output checked exactly where it is fixed.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{check, compile_example, fixture, have, run, scratch, stdout, Scratch};

/// Example `name` compiled in the scratch directory `dir`; None (with a
/// printed note) where `cc` is missing.
fn compiled(name: &str, dir: &str) -> Option<(Scratch, PathBuf)> {
    if !have("cc", dir) {
        return None;
    }
    let dir = scratch(dir);
    let exe = compile_example(name, &dir);
    Some((dir, exe))
}

/// Runs `exe` with `args`, requires success (`what` names the run) and
/// returns its stdout.
fn run_ok(exe: &Path, args: &[&str], what: &str) -> String {
    let out = run(exe, args);
    check(&out, what);
    stdout(&out)
}

/// Asserts that `text` holds every one of `parts`.
fn assert_has(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "no {part:?} in:\n{text}");
    }
}

#[test]
fn smoke_prints_the_seed_contract() {
    let Some((_dir, exe)) = compiled("smoke", "smoke") else {
        return;
    };
    let text = run_ok(&exe, &[], "smoke");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.first(), Some(&"abi=1 lanes=1"), "{text}");
    let fp = lines
        .get(1)
        .and_then(|l| l.strip_prefix("fingerprint="))
        .expect("fingerprint line");
    assert_eq!(fp.len(), 64, "{fp}");
    assert!(fp.chars().all(|c| c.is_ascii_hexdigit()), "{fp}");
    assert_eq!(lines.last(), Some(&"C-ABI smoke OK"), "{text}");
}

#[test]
fn gpu_smoke_counts_every_dispatch() {
    let Some((_dir, exe)) = compiled("gpu_smoke", "gpu_smoke") else {
        return;
    };
    let text = run_ok(
        &exe,
        &["64", &fixture("gfx1201", "counter")],
        "gpu_smoke 64",
    );
    assert_has(&text, &["ib: 64 dispatches"]);
    assert_eq!(
        text.lines().last(),
        Some("real-GPU C-ABI gate: counter = 64 / 64 certified=no [PASS]"),
        "{text}"
    );
}

#[test]
fn gpu_smoke_refuses_a_malformed_manifest_and_takes_a_bound_one() {
    let Some((dir, exe)) = compiled("gpu_smoke", "gpu_smoke_manifest") else {
        return;
    };
    let manifest = dir.join("manifest.json");
    std::fs::write(&manifest, b"{}").unwrap();
    let counter = fixture("gfx1201", "counter");
    let out = run(&exe, &["4", &counter, manifest.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_has(&err, &["failed (-7)", "`schema_version` is missing"]);

    // relaunch's own manifest for these bytes is accepted.
    let bytes = std::fs::read(&counter).unwrap();
    let co = facade::CodeObject::parse(&bytes).unwrap();
    let certs = facade::certify(&co);
    let good = facade::manifest::write(&bytes, &co, &certs);
    std::fs::write(&manifest, good.to_string()).unwrap();
    let text = run_ok(
        &exe,
        &["4", &counter, manifest.to_str().unwrap()],
        "gpu_smoke manifest",
    );
    assert_has(&text, &["certified=yes", "[PASS]"]);
}

#[test]
fn decode_kernargs_patching_equals_rebuilding() {
    let Some((_dir, exe)) = compiled("decode_kernargs", "decode_kernargs") else {
        return;
    };
    let add_scalar = fixture("gfx1201", "add_scalar");
    let text = run_ok(&exe, &["20", &add_scalar], "decode_kernargs 20");
    assert_has(
        &text,
        &[
            "speedup",
            "decode kernargs: T=20 sum = 210 (patched and rebuilt) [PASS]",
        ],
    );
}

#[test]
fn multi_queue_spreads_lanes_and_patches_one() {
    let Some((_dir, exe)) = compiled("multi_queue", "multi_queue") else {
        return;
    };
    let text = run_ok(&exe, &[&fixture("gfx1201", "counter"), "4"], "multi_queue");
    assert_has(
        &text,
        &[
            "lanes=4 auto queues=2 (one queue: 1)",
            "multi-IB: 4 lanes on 2 queues",
            "lane 3: 4 dispatches, counter = 8",
            "after patch: spare = 1, lane 0 = 2",
            "multi-queue C-ABI: [PASS]",
        ],
    );
}

#[test]
fn a_c_twin_runs_and_its_fault_fails_the_replay() {
    let Some((_dir, exe)) = compiled("sim_twin", "sim_twin") else {
        return;
    };
    let (add_scalar, counter) = (
        fixture("gfx1201", "add_scalar"),
        fixture("gfx1201", "counter"),
    );
    let text = run_ok(&exe, &[&add_scalar, &counter], "sim_twin");
    assert_has(
        &text,
        &[
            "C twin add_scalar: 8 workgroup calls, acc[0] = 10",
            "faulting C twin: status -8",
            "is lost to this process: memory (VM) fault at address 0x10",
            "C twin example: [PASS]",
        ],
    );
}

#[test]
fn the_header_compiles_as_pedantic_c99_and_as_cpp() {
    if !have("cc", "header c99") {
        return;
    }
    let dir = scratch("header");
    let source = dir.join("use.c");
    std::fs::write(
        &source,
        "#include <relaunch.h>\nint main(void) { return (int)rl_abi_version() - RL_ABI_VERSION; }\n",
    )
    .unwrap();
    let include = crate::support::ffi_dir().join("include");
    let out = syntax_only("cc", &["-std=c99", "-pedantic"], &include, &source);
    check(&out, "cc -std=c99 -pedantic relaunch.h");
    if !have("c++", "header c++") {
        return;
    }
    let out = syntax_only("c++", &["-x", "c++", "-std=c++11"], &include, &source);
    check(&out, "c++ relaunch.h");
}

/// `tool` checking `source` against the header, warnings as errors.
fn syntax_only(tool: &str, lang: &[&str], include: &Path, source: &Path) -> Output {
    std::process::Command::new(tool)
        .args(lang)
        .args(["-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I"])
        .arg(include)
        .arg(source)
        .output()
        .unwrap_or_else(|e| panic!("run {tool}: {e}"))
}
