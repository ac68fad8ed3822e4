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
