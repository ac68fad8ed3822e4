//! `--dump-ib DIR` on `selftest` and `demo`: every installed IB segment of
//! each lane as raw little-endian dwords, which `relaunch pm4 dump
//! --strict` reads back; the epilogue shown is the gfx11 write-back 0x8030
//! (GL2_WB|GLM_WB|GLM_INV), not the unsupported 0x8010.

use crate::common::{self, dumped};

fn strict_dump(file: &std::path::Path) -> String {
    let (code, out, err) = common::run(
        common::relaunch("pm4")
            .args(["dump", "--family", "gfx11", "--strict"])
            .arg(file),
    );
    assert_eq!(code, 0, "{}: {err}", file.display());
    out
}

#[test]
fn selftest_dumps_its_ib_and_pm4_dump_reads_it_strictly() {
    let dir = std::env::temp_dir().join(format!("relaunch-dump-ib-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (code, out, err) = common::run(
        common::relaunch("selftest")
            .args(["--device", "sim:gfx1100", "--dispatches", "8", "--dump-ib"])
            .arg(&dir),
    );
    assert_eq!(code, 0, "{out}{err}");
    let files = dumped(&dir);
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["lane0-ib0-seg0.bin"], "{names:?}");
    let text = strict_dump(&files[0]);
    assert!(text.contains("GCR_CNTL=0x8030"), "{text}");
    assert!(!text.contains("0x8010"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn demo_dumps_every_lane() {
    let dir = std::env::temp_dir().join(format!("relaunch-dump-demo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (code, out, err) = common::run(
        common::relaunch("demo")
            .args(["--device", "sim:gfx1100", "--layers", "1", "--tokens", "1"])
            .arg("--dump-ib")
            .arg(&dir),
    );
    assert_eq!(code, 0, "{out}{err}");
    let files = dumped(&dir);
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().any(|n| n.starts_with("lane0-")), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("lane1-")), "{names:?}");
    for f in &files {
        strict_dump(f);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// TRAP_PRESENT follows the runtime's trap handler: the simulator answers
/// whether it installed one (`RELAUNCH_SIM_TRAP_HANDLER=0` models ROCr on
/// gfx11 without the driver's exception debugging), relaunch sets the bit
/// exactly then, and the simulator's dispatch check accepts both.
#[test]
fn trap_present_follows_the_runtime_trap_handler() {
    for (env, want) in [("1", true), ("0", false)] {
        let dir =
            std::env::temp_dir().join(format!("relaunch-dump-trap{env}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (code, out, err) = common::run(
            common::relaunch("selftest")
                .env("RELAUNCH_SIM_TRAP_HANDLER", env)
                .args(["--device", "sim:gfx1100", "--dispatches", "2", "--dump-ib"])
                .arg(&dir),
        );
        assert_eq!(code, 0, "trap handler {env}: {out}{err}");
        let text = strict_dump(&dumped(&dir)[0]);
        let rsrc2 = text
            .lines()
            .find(|l| l.contains("COMPUTE_PGM_RSRC2"))
            .unwrap_or_else(|| panic!("no RSRC2 write in {text}"));
        assert_eq!(rsrc2.contains("TRAP_PRESENT"), want, "{rsrc2}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
