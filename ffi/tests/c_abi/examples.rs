//! Each example compiled with `cc -Wall -Wextra -Werror` and run on the
//! simulated gfx1201, with its output checked exactly where it is fixed.

use crate::support::{check, compile_example, fixture, have, run, scratch, stdout};

#[test]
fn smoke_prints_the_seed_contract() {
    if !have("cc", "smoke") {
        return;
    }
    let dir = scratch("smoke");
    let exe = compile_example("smoke", &dir);
    let out = run(&exe, &[]);
    check(&out, "smoke");
    let text = stdout(&out);
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
    if !have("cc", "gpu_smoke") {
        return;
    }
    let dir = scratch("gpu_smoke");
    let exe = compile_example("gpu_smoke", &dir);
    let out = run(&exe, &["64", &fixture("gfx1201", "counter")]);
    check(&out, "gpu_smoke 64");
    let text = stdout(&out);
    assert!(text.contains("ib: 64 dispatches"), "{text}");
    assert_eq!(
        text.lines().last(),
        Some("real-GPU C-ABI gate: counter = 64 / 64 certified=no [PASS]"),
        "{text}"
    );
}

#[test]
fn gpu_smoke_with_a_manifest_is_refused_as_certification() {
    if !have("cc", "gpu_smoke manifest") {
        return;
    }
    let dir = scratch("gpu_smoke_manifest");
    let exe = compile_example("gpu_smoke", &dir);
    let manifest = dir.join("manifest.json");
    std::fs::write(&manifest, b"{}").unwrap();
    let out = run(
        &exe,
        &[
            "4",
            &fixture("gfx1201", "counter"),
            manifest.to_str().unwrap(),
        ],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("failed (-7)"), "{err}");
    assert!(err.contains("certification is not supported yet"), "{err}");
}

#[test]
fn decode_kernargs_patching_equals_rebuilding() {
    if !have("cc", "decode_kernargs") {
        return;
    }
    let dir = scratch("decode_kernargs");
    let exe = compile_example("decode_kernargs", &dir);
    let out = run(&exe, &["20", &fixture("gfx1201", "add_scalar")]);
    check(&out, "decode_kernargs 20");
    let text = stdout(&out);
    assert!(text.contains("speedup"), "{text}");
    assert!(
        text.contains("decode kernargs: T=20 sum = 210 (patched and rebuilt) [PASS]"),
        "{text}"
    );
}

#[test]
fn multi_queue_spreads_lanes_and_patches_one() {
    if !have("cc", "multi_queue") {
        return;
    }
    let dir = scratch("multi_queue");
    let exe = compile_example("multi_queue", &dir);
    let out = run(&exe, &[&fixture("gfx1201", "counter"), "4"]);
    check(&out, "multi_queue");
    let text = stdout(&out);
    assert!(
        text.contains("lanes=4 auto queues=2 (one queue: 1)"),
        "{text}"
    );
    assert!(text.contains("multi-IB: 4 lanes on 2 queues"), "{text}");
    assert!(text.contains("lane 3: 4 dispatches, counter = 8"), "{text}");
    assert!(
        text.contains("after patch: spare = 1, lane 0 = 2"),
        "{text}"
    );
    assert!(text.contains("multi-queue C-ABI: [PASS]"), "{text}");
}

#[test]
fn a_c_twin_runs_and_its_fault_fails_the_replay() {
    if !have("cc", "sim_twin") {
        return;
    }
    let dir = scratch("sim_twin");
    let exe = compile_example("sim_twin", &dir);
    let out = run(
        &exe,
        &[
            &fixture("gfx1201", "add_scalar"),
            &fixture("gfx1201", "counter"),
        ],
    );
    check(&out, "sim_twin");
    let text = stdout(&out);
    assert!(
        text.contains("C twin add_scalar: 8 workgroup calls, acc[0] = 10"),
        "{text}"
    );
    assert!(text.contains("faulting C twin: status -5"), "{text}");
    assert!(text.contains("VM fault"), "{text}");
    assert!(text.contains("C twin example: [PASS]"), "{text}");
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
    let out = std::process::Command::new("cc")
        .args([
            "-std=c99",
            "-pedantic",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fsyntax-only",
            "-I",
        ])
        .arg(&include)
        .arg(&source)
        .output()
        .expect("run cc");
    check(&out, "cc -std=c99 -pedantic relaunch.h");
    if !have("c++", "header c++") {
        return;
    }
    let out = std::process::Command::new("c++")
        .args([
            "-x",
            "c++",
            "-std=c++11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fsyntax-only",
            "-I",
        ])
        .arg(&include)
        .arg(&source)
        .output()
        .expect("run c++");
    check(&out, "c++ relaunch.h");
}
