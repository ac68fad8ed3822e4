//! `relaunch inspect` end to end: the real binary on the committed fixtures,
//! on a bundle, and on damaged files (exit 2 with one line naming the damage).

use std::path::PathBuf;
use std::process::Output;

use crate::common;

fn kernels() -> PathBuf {
    relaunch_testsupport::workspace().join("tests/kernels/build")
}

fn inspect(args: &[&std::ffi::OsStr]) -> Output {
    common::relaunch("inspect")
        .args(args)
        .output()
        .expect("run relaunch")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn scratch_file(name: &str, bytes: &[u8]) -> PathBuf {
    // In the target folder, not /tmp: nothing removes it after the test.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("inspect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn counter_is_listed_and_accepted() {
    let path = kernels().join("gfx1201/counter.co");
    let out = inspect(&[path.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for needle in [
        "code object V5, target gfx1201, 1 kernel",
        "kernel counter (counter.kd)",
        "kernarg:    8 bytes, align 8",
        "wave size:  32",
        "global_buffer",
        "pm4: accepted",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in:\n{stdout}");
    }
}

#[test]
fn scratch_kernels_are_accepted_up_to_the_cap_and_refused_past_it_naming_scratch() {
    let path = kernels().join("gfx1100/scratch_hog.co");
    let out = inspect(&[path.as_os_str()]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("pm4: accepted"), "{stdout}");
    assert!(stdout.contains("private:    1028 bytes"), "{stdout}");
    let path = kernels().join("gfx1100/scratch_huge.co");
    let out = inspect(&[path.as_os_str()]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(
            "pm4: refused: scratch of 68004 bytes per work-item (the PM4 path gives at most 65536)"
        ),
        "{stdout}"
    );
}

#[test]
fn argument_table_lists_hidden_arguments() {
    let path = kernels().join("gfx1030/lds_reverse.co");
    let out = inspect(&[path.as_os_str()]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("     8    4  dynamic_shared_pointer     tmp uint*"),
        "{stdout}"
    );
    assert!(
        stdout.contains("   136    4  hidden_dynamic_lds_size"),
        "{stdout}"
    );
}

#[test]
fn bundle_entry_is_picked_by_target() {
    let a = std::fs::read(kernels().join("gfx1030/counter.co")).unwrap();
    let b = std::fs::read(kernels().join("gfx1201/axpy.co")).unwrap();
    let ids = [
        "hipv4-amdgcn-amd-amdhsa--gfx1030",
        "hipv4-amdgcn-amd-amdhsa--gfx1201",
    ];
    let bundle = relaunch_testsupport::bundle::assemble_packed(&[(ids[0], &a), (ids[1], &b)]);
    let path = scratch_file("two.hipfb", &bundle);
    let out = inspect(&[path.as_os_str(), "--target".as_ref(), "gfx1201".as_ref()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("kernel axpy (axpy.kd)"));

    let out = inspect(&[path.as_os_str(), "--target".as_ref(), "gfx1100".as_ref()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("no entry for target gfx1100; available: hipv4-amdgcn-amd-amdhsa--gfx1030"),
        "{stderr}"
    );
}

#[test]
fn damaged_files_exit_2_with_one_line() {
    let good = std::fs::read(kernels().join("gfx1151/counter.co")).unwrap();
    // ABI version 5 is code object v7, which relaunch does not read (v6, 4,
    // is read since the sid corpus needed it).
    let mut v7 = good.clone();
    v7[8] = 5;
    let cases: [(&str, Vec<u8>, &str); 4] = [
        ("truncated.co", good[..30].to_vec(), "truncated ELF header"),
        ("v7.co", v7, "unknown code object version"),
        ("text.co", b"hello".to_vec(), "not an ELF file"),
        ("empty.co", Vec::new(), "file is empty"),
    ];
    for (name, bytes, needle) in cases {
        let path = scratch_file(name, &bytes);
        let out = inspect(&[path.as_os_str()]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let stderr = text(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
        assert!(stderr.contains(needle), "{name}: {stderr}");
        assert!(stderr.starts_with("relaunch: error: inspect: "), "{stderr}");
        assert!(out.stdout.is_empty());
    }
    let missing = kernels().join("gfx1151/no_such.co");
    let out = inspect(&[missing.as_os_str()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot read"));
}

/// Callees count too: the interpreter follows LLVM's direct calls
/// (s_getpc + s_add/s_addc of a literal + s_swappc), so ockl's hostcall
/// functions behind HIP's printf are decoded and covered.
#[test]
fn sim_coverage_follows_direct_calls_into_ockl() {
    let printf = kernels().join("gfx1100/hip_printf.co");
    let out = inspect(&["--sim-coverage".as_ref(), printf.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for needle in [
        "hip_printf.co: target gfx1100, 2 kernels, 2 run every instruction on the simulator",
        "  runs     hip_printf (1858 instructions)",
        "  runs     hostcall_unknown (800 instructions)",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in:\n{stdout}");
    }
}

#[test]
fn sim_coverage_counts_scratch_instructions_as_run() {
    let runs = kernels().join("gfx1030/counter.co");
    let scratch = kernels().join("gfx1100/scratch_hog.co");
    let out = inspect(&[
        "--sim-coverage".as_ref(),
        runs.as_os_str(),
        scratch.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for needle in [
        "counter.co: target gfx1030, 1 kernels, 1 run every instruction on the simulator",
        "  runs     counter (12 instructions)",
        "scratch_hog.co: target gfx1100, 1 kernels, 1 run every instruction on the simulator",
        "  runs     scratch_hog (120 instructions)",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in:\n{stdout}");
    }
}

#[test]
fn sim_coverage_names_what_the_interpreter_lacks() {
    if !relaunch_testsupport::asm::tools() {
        return;
    }
    // image_load is refused by name (images are not modelled).
    let body = "  image_load v[0:3], v1, s[4:11] dmask:0xf dim:SQ_RSRC_IMG_1D\n  s_endpgm";
    let co = relaunch_testsupport::asm::one_kernel("gfx1030", "lacks", body, "");
    let lacks = scratch_file("lacks.co", &co);
    let out = inspect(&["--sim-coverage".as_ref(), lacks.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for needle in [
        "lacks.co: target gfx1030, 1 kernels, 0 run every instruction on the simulator",
        "  missing  lacks (2 instructions): image_load x1",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in:\n{stdout}");
    }
}

/// The whole segment is decoded: a callee the linker placed before the
/// kernel is covered, and the padding after a call to it (it ends the
/// program, as a device-side assert) is not read.
#[test]
fn sim_coverage_reaches_a_callee_before_the_entry() {
    if !relaunch_testsupport::asm::tools() {
        return;
    }
    let source = r#"  .amdgcn_target "amdgcn-amd-amdhsa--gfx1030"
  .text
  .p2align 8
callee:
  v_mov_b32 v1, 41
  s_endpgm
  .globl reach
  .p2align 8
  .type reach,@function
reach:
  s_getpc_b64 s[4:5]
.Lpc:
  s_add_u32 s4, s4, callee-.Lpc
  s_addc_u32 s5, s5, -1
  s_swappc_b64 s[30:31], s[4:5]
  .long 0
.Lend:
  .size reach, .Lend-reach
  .rodata
  .p2align 6
  .amdhsa_kernel reach
    .amdhsa_next_free_vgpr 8
    .amdhsa_next_free_sgpr 40
    .amdhsa_wavefront_size32 1
  .end_amdhsa_kernel
  .amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: amdgcn-amd-amdhsa--gfx1030
amdhsa.kernels:
  - .name: reach
    .symbol: reach.kd
    .kernarg_segment_size: 0
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .sgpr_count: 40
    .vgpr_count: 8
    .max_flat_workgroup_size: 64
...
  .end_amdgpu_metadata
"#;
    let co = relaunch_testsupport::asm::code_object("gfx1030", source);
    let path = scratch_file("reach.co", &co);
    let out = inspect(&["--sim-coverage".as_ref(), path.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for needle in [
        "reach.co: target gfx1030, 1 kernels, 1 run every instruction on the simulator",
        "  runs     reach (6 instructions)",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in:\n{stdout}");
    }
}
