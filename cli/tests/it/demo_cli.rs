//! `relaunch demo` end to end on the simulated device: the reference
//! decode step with real decode kernels (their machine code run by the
//! simulator's instruction interpreter; `--twins`: as host twins), replayed
//! token by token with the position patched, checked against the CPU oracle.

use crate::common;

fn demo(args: &[&str]) -> (i32, String, String) {
    common::run(
        common::relaunch("demo")
            .args(args)
            .env_remove("RELAUNCH_DEVICE"),
    )
}

fn field<'a>(out: &'a str, label: &str) -> &'a str {
    out.lines()
        .find_map(|l| l.trim_start().strip_prefix(label))
        .unwrap_or_else(|| panic!("no {label:?} line in:\n{out}"))
        .trim()
}

#[test]
fn two_layers_verify_on_gfx12_and_gfx10() {
    for (device, queues) in [("sim:gfx1201", "queues: 2"), ("sim:gfx1030", "queues: 1")] {
        let (code, out, err) = demo(&["--device", device, "--layers", "2", "--tokens", "4"]);
        assert_eq!(code, 0, "{device}: {out}{err}");
        assert!(out.contains("verified: 4/4"), "{device}: {out}");
        assert!(
            out.contains("graph: 50 dispatches in 2 lanes"),
            "{device}: {out}"
        );
        assert!(out.contains(queues), "{device}: {out}");
        assert_eq!(field(&out, "tokens "), "4", "{device}");
        assert_eq!(field(&out, "replays "), "4", "{device}");
        assert_eq!(
            field(&out, "dispatches "),
            "200 (50 per replay)",
            "{device}"
        );
        // The interpreter evaluates exp/sin/cos/rsqrt to the hardware's
        // precision: checked within the hardware tolerance.
        assert!(
            field(&out, "max hidden error").ends_with("(relative tolerance 0.002)"),
            "{out}"
        );
        // Each lane: 25 dispatches, boundaries by kind; dwords per dispatch.
        assert_eq!(out.matches("25 dispatches, ").count(), 2, "{out}");
        assert!(out.contains("per dispatch)"), "{out}");
        // Not a terminal: no progress line.
        assert!(!out.contains("decoding:"), "{out}");
        // Four sampled tokens per sequence.
        let tokens = field(&out, "sequence 0 tokens:");
        assert_eq!(tokens.split(' ').count(), 4, "{out}");
    }
}

#[test]
fn the_host_twins_match_the_oracle_bit_for_bit() {
    let (code, out, err) = demo(&[
        "--device",
        "sim:gfx1100",
        "--layers",
        "2",
        "--tokens",
        "3",
        "--twins",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("verified: 3/3"), "{out}");
    // The twins follow the oracle's operation order exactly.
    assert!(
        field(&out, "max hidden error").ends_with("(bit-exact)"),
        "{out}"
    );
}

#[test]
fn the_interpreter_agrees_with_the_twins_on_every_decode_kernel_and_target() {
    // RELAUNCH_SIM_KERNELS=both: every dispatch runs twin and interpreter
    // from the same memory and fails on the first byte that differs
    // (beyond the hardware tolerance for kernels with approximate ops).
    for device in ["sim:gfx1030", "sim:gfx1100", "sim:gfx1151", "sim:gfx1201"] {
        let (code, out, err) = common::run(
            common::relaunch("demo")
                .args([
                    "--device", device, "--layers", "1", "--tokens", "2", "--twins",
                ])
                .env_remove("RELAUNCH_DEVICE")
                .env("RELAUNCH_SIM_KERNELS", "both"),
        );
        assert_eq!(code, 0, "{device}: {out}{err}");
        assert!(out.contains("verified: 2/2"), "{device}: {out}");
        assert!(
            field(&out, "max hidden error").ends_with("(bit-exact)"),
            "{device}: {out}"
        );
    }
}

#[test]
fn one_sequence_is_one_lane_and_longer_runs_are_refused() {
    let (code, out, err) = demo(&[
        "--device",
        "sim:gfx1100",
        "--layers",
        "1",
        "--sequences",
        "1",
        "--tokens",
        "3",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("graph: 13 dispatches in 1 lane\n"), "{out}");
    assert!(out.contains("verified: 3/3"), "{out}");

    let (code, _, err) = demo(&["--device", "sim:gfx1201", "--tokens", "65"]);
    assert_eq!(code, 2);
    assert!(err.contains("kv-cache capacity"), "{err}");
}

#[test]
fn a_code_object_without_the_decode_kernels_is_refused() {
    let counter = relaunch_testsupport::fixture_path("gfx1201", "counter");
    let counter = counter.to_str().unwrap();
    let (code, _, err) = demo(&["--device", "sim:gfx1201", "--code-object", counter]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no kernel \"rmsnorm\""), "{err}");
}

/// `relaunch demo` on sim:gfx1100 with `extra` arguments and
/// RELAUNCH_SIM_KERNELS=`kernels`.
fn demo_with_kernels(extra: &[&str], kernels: &str) -> (i32, String, String) {
    let mut args = vec!["--device", "sim:gfx1100", "--layers", "1", "--tokens", "2"];
    args.extend_from_slice(extra);
    common::run(
        common::relaunch("demo")
            .args(&args)
            .env_remove("RELAUNCH_DEVICE")
            .env("RELAUNCH_SIM_KERNELS", kernels),
    )
}

#[test]
fn the_label_and_the_check_follow_what_runs() {
    // RELAUNCH_SIM_KERNELS=isa runs the interpreter: labelled so and
    // checked within the hardware tolerance.
    let (code, out, err) = demo_with_kernels(&[], "isa");
    assert_eq!(code, 0, "{out}{err}");
    let execution = field(&out, "execution:");
    assert!(
        execution.contains("interpreter") && !execution.contains("twin"),
        "{out}"
    );
    assert!(
        field(&out, "max hidden error").ends_with("(relative tolerance 0.002)"),
        "{out}"
    );
    // =both needs the twins: registered without --twins, the twins' bytes
    // are the results, checked bit for bit.
    let (code, out, err) = demo_with_kernels(&[], "both");
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("verified: 2/2"), "{out}");
    assert!(field(&out, "execution:").contains("cross-checked"), "{out}");
    assert!(
        field(&out, "max hidden error").ends_with("(bit-exact)"),
        "{out}"
    );
    // =twin without --twins: the twins.
    let (code, out, err) = demo_with_kernels(&[], "twin");
    assert_eq!(code, 0, "{out}{err}");
    assert!(field(&out, "execution:").contains("host twins"), "{out}");
    // --twins with =isa contradicts itself: refused, naming both.
    let (code, out, err) = demo_with_kernels(&["--twins"], "isa");
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("--twins") && err.contains("RELAUNCH_SIM_KERNELS=isa"),
        "{err}"
    );
    assert!(!out.contains("verified: "), "{out}");
}
