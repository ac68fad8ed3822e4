//! The reference guide's C counter smoke (#31.5), typed as the guide
//! writes it with only the names changed (`docs/migrating.md`):
//!
//! ```text
//! hipcc --genco --offload-arch="$GPU_ARCH" tests/kernels/hip/ctr_k.hip -o /tmp/relaunch-counter.co
//! hipcc -x hip ffi/examples/gpu_smoke.c -I ffi/include -L target/release \
//!   -Wl,-rpath,"$PWD/target/release" -lrelaunch -lpthread -ldl -lm -o /tmp/relaunch-capi-gpu-smoke
//! ROCR_VISIBLE_DEVICES=0 /tmp/relaunch-capi-gpu-smoke 256 /tmp/relaunch-counter.co
//! ```
//!
//! No device is chosen, so on a machine without ROCm's kernel driver the
//! example falls back to the simulated gfx1201 and must say so in one line
//! on stdout, with no error before it. hipcc is ROCm's wrapper around clang;
//! where it is missing (Debian ships none) clang++-19 runs with the options
//! hipcc would give it (`-O3`, its default; `--cuda-device-only` for
//! `--genco`; `-lamdhip64` when linking), plus `-nogpulib` (Debian's device
//! libraries know no gfx12, and neither program needs them).

use std::path::Path;
use std::process::Command;

use crate::support::{check, ffi_dir, have, lib_dir, scratch, stdout};

const GPU_ARCH: &str = "gfx1201";

/// `hipcc ARGS`, or clang++-19 standing in for it (see the module docs).
fn hipcc(args: &[&str], linking: bool) -> Option<Command> {
    if Command::new("hipcc").arg("--version").output().is_ok() {
        let mut cmd = Command::new("hipcc");
        cmd.args(args);
        return Some(cmd);
    }
    if !have(
        "clang++-19",
        "the guide's hipcc commands (clang++-19 stands in)",
    ) {
        return None;
    }
    let mut cmd = Command::new("clang++-19");
    cmd.args(["-x", "hip", "-nogpulib", "-O3"]);
    for arg in args {
        match *arg {
            "--genco" => cmd.arg("--cuda-device-only"),
            "-x" | "hip" => continue,
            other => cmd.arg(other),
        };
    }
    if linking {
        cmd.arg(format!("--offload-arch={GPU_ARCH}"))
            .arg("-lamdhip64");
    }
    Some(cmd)
}

#[test]
fn the_guides_counter_smoke_runs_as_written() {
    if Path::new("/dev/kfd").exists() {
        eprintln!(
            "note: /dev/kfd exists, so the smoke would run on this machine's GPU rather than on \
             the simulator this test checks; not run"
        );
        return;
    }
    let dir = scratch("guide-smoke");
    let root = ffi_dir().join("..");
    let counter = dir.join("relaunch-counter.co");
    let smoke = dir.join("relaunch-capi-gpu-smoke");
    let lib = lib_dir().display().to_string();
    let (counter_s, smoke_s) = (counter.display().to_string(), smoke.display().to_string());
    let arch = format!("--offload-arch={GPU_ARCH}");
    let rpath = format!("-Wl,-rpath,{lib}");
    let Some(mut build_kernel) = hipcc(
        &[
            "--genco",
            &arch,
            "tests/kernels/hip/ctr_k.hip",
            "-o",
            &counter_s,
        ],
        false,
    ) else {
        return;
    };
    let out = build_kernel.current_dir(&root).output().expect("run hipcc");
    check(&out, "hipcc --genco ctr_k.hip");
    let Some(mut build_smoke) = hipcc(
        &[
            "-x",
            "hip",
            "ffi/examples/gpu_smoke.c",
            "-I",
            "ffi/include",
            "-L",
            &lib,
            &rpath,
            "-lrelaunch",
            "-lpthread",
            "-ldl",
            "-lm",
            "-o",
            &smoke_s,
        ],
        true,
    ) else {
        return;
    };
    let out = build_smoke.current_dir(&root).output().expect("run hipcc");
    check(&out, "hipcc -x hip gpu_smoke.c");

    let out = Command::new(&smoke)
        .args(["256", &counter_s])
        .env("ROCR_VISIBLE_DEVICES", "0")
        .env_remove("RELAUNCH_DEVICE")
        .env_remove("RELAUNCH_HSA_LIB")
        .env_remove("RELAUNCH_COUNTER_SYMBOL")
        .output()
        .expect("run the smoke");
    check(&out, "relaunch-capi-gpu-smoke 256 relaunch-counter.co");
    let text = stdout(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines
            .first()
            .is_some_and(|l| l.starts_with("device: gfx1201 sim:gfx1201")
                && l.contains("running on the simulator")),
        "the fallback is said in the first line:\n{text}"
    );
    assert!(
        !stderr.contains("relaunch:"),
        "nothing is reported as an error before the fallback:\n{stderr}"
    );
    assert_eq!(
        lines.last(),
        Some(&"real-GPU C-ABI gate: counter = 256 / 256 certified=no [PASS]"),
        "{text}"
    );
}
