//! `relaunch selftest` end to end on the simulated device: the exact PM4
//! and AQL bytes relaunch would submit, executed and checked.

use crate::common;

fn selftest(args: &[&str]) -> (i32, String, String) {
    common::run(
        common::relaunch("selftest")
            .args(args)
            .env_remove("RELAUNCH_DEVICE"),
    )
}

#[test]
fn counter_gate_passes_on_every_bundled_target() {
    for target in ["gfx1010", "gfx1030", "gfx1100", "gfx1151", "gfx1201"] {
        let device = format!("sim:{target}");
        let (code, out, err) = selftest(&["--device", &device, "--dispatches", "256"]);
        assert_eq!(code, 0, "{target}: {out}{err}");
        assert!(
            out.contains("counter = 256 / 256 [PASS]"),
            "{target}: {out}"
        );
        assert!(
            out.contains("counter = 512 / 512 [PASS]"),
            "{target}: {out}"
        );
    }
}

#[test]
fn four_lanes_run_on_the_auto_width_of_gfx1100() {
    let (code, out, err) = selftest(&[
        "--device",
        "sim:gfx1100",
        "--lanes",
        "4",
        "--dispatches",
        "1000",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("lanes=4 queues=2"), "{out}");
    for lane in 0..4 {
        assert!(
            out.contains(&format!("counter[{lane}] = 1000 / 1000 [PASS]")),
            "{out}"
        );
        assert!(
            out.contains(&format!("counter[{lane}] = 2000 / 2000 [PASS]")),
            "{out}"
        );
    }
}

#[test]
fn bad_selectors_are_device_errors() {
    let (code, _, err) = selftest(&["--device", "sim:gfx90a"]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("gfx90a") && err.contains("accepted forms"),
        "{err}"
    );
    let (code, _, err) = selftest(&["--device", "gfx1100"]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("no kind prefix"), "{err}");
}

#[test]
fn real_devices_fail_clearly_without_a_gpu() {
    if std::path::Path::new("/dev/kfd").exists() {
        eprintln!("skipped: this machine has /dev/kfd");
        return;
    }
    let started = std::time::Instant::now();
    let (code, _, err) = selftest(&["--device", "bdf:0000:03:00.0"]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("no ROCm GPU agent"), "{err}");
    assert!(started.elapsed().as_secs() < 10);
}

#[test]
fn selftest_on_the_simulator_runs_the_counters_machine_code() {
    // The interpreter's trace shows the bundled counter's instructions.
    let (code, out, err) = common::run(
        common::relaunch("selftest")
            .args(["--device", "sim:gfx1100", "--dispatches", "1"])
            .env_remove("RELAUNCH_DEVICE")
            .env_remove("RELAUNCH_SIM_KERNELS")
            .env("RELAUNCH_SIM_ISA_TRACE", "1"),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("isa wg") && err.contains("global_atomic_add"),
        "{err}"
    );
    // A kernel named counter that adds 7: the counter reads 7, not the
    // twin's 1, so the selftest fails naming it.
    if !relaunch_testsupport::asm::tools() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("relaunch-selftest-isa-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let co = dir.join("counter7.co");
    std::fs::write(
        &co,
        relaunch_testsupport::asm::counter_adding("gfx1100", 7, false),
    )
    .unwrap();
    let (code, out, err) = selftest(&[
        "--device",
        "sim:gfx1100",
        "--dispatches",
        "1",
        "--code-object",
        co.to_str().unwrap(),
    ]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("counter = 7 / 1 [FAIL]"), "{out}");
}

#[test]
fn profiled_selftest_times_every_dispatch_in_order() {
    let (code, out, err) = selftest(&["--device", "sim:gfx1100", "--profile", "--dispatches", "8"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        out.matches("8 dispatch times, ordered true, within the span true [PASS]")
            .count(),
        2,
        "{out}"
    );
    // One lane only: several are refused as input, naming the flag.
    let (code, _, err) = selftest(&["--device", "sim:gfx1100", "--profile", "--lanes", "2"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--profile"), "{err}");
}
