//! MODE's float controls on the interpreter, with kernels assembled by
//! llvm-mc-19: the f32 rounding mode RSRC1 sets (`.amdhsa_float_round_mode_32`)
//! and what s_round_mode, s_setreg and s_denorm_mode change, read back with
//! s_getreg; directed rounding of add/sub/mul/fma and VOPD, denormal
//! flushing, and an operation without an exact model refused by name.
//! Fails when `CI` is set and the tools are missing.

use relaunch_testsupport::asm;
use relaunch_testsupport::simkit::Rig;

const TARGETS: [&str; 3] = ["gfx1030", "gfx1100", "gfx1201"];

/// The spellings that differ per target: (s_load, wait, store).
fn names(cpu: &str) -> (&'static str, &'static str, &'static str) {
    let sp = asm::spelling(cpu);
    (sp.s_load_b64, sp.wait_scalar, sp.global_store_b32)
}

/// Run `body` (after the output pointer is in s[2:3], v0 = 0, one lane
/// active) on the interpreter; the first `n` dwords of the output, or the
/// dispatch's error.
fn run(cpu: &str, body: &str, directives: &str, n: u64) -> Result<Vec<u32>, String> {
    let (load, wait, _) = names(cpu);
    let text = format!(
        "  {load} s[2:3], s[0:1], 0x0\n  {wait}\n  s_mov_b32 exec_lo, 1\n  v_mov_b32 v0, 0\n{body}\n  s_endpgm"
    );
    let bytes = asm::one_kernel(cpu, "modes", &text, directives);
    let (rig, out, result) = Rig::run_isa_once(cpu, &bytes, "modes", 4 * n as usize);
    let v = result.map_err(|e| e.to_string())?;
    assert_eq!(v, vec![], "{cpu}");
    Ok((0..n)
        .map(|i| rig.dev.memory.read_u32(out + 4 * i).unwrap())
        .collect())
}

const ONE: u32 = 0x3F80_0000;

#[test]
fn rounding_and_denormal_modes_follow_rsrc1_and_the_mode_instructions() {
    if !asm::tools() {
        return;
    }
    for cpu in TARGETS {
        let (_, _, store) = names(cpu);
        let mode = "HW_REG_MODE";
        let st = |slot: u32, v: &str| format!("  {store} v0, {v}, s[2:3] offset:{}\n", 4 * slot);
        // v1 = 1.0, s4 = the smallest denormal, v6 = 3 of them.
        let mut body = String::from("  v_mov_b32 v1, 1.0\n  s_mov_b32 s4, 1\n  v_mov_b32 v6, 3\n");
        // Round toward +inf (from RSRC1).
        body += "  v_add_f32 v2, s4, v1\n";
        body += &st(0, "v2");
        body += "  v_sub_f32 v2, v1, s4\n";
        body += &st(1, "v2");
        body += "  v_mul_f32 v2, 0.5, v6\n";
        body += &st(2, "v2");
        body += "  v_fma_f32 v2, v1, v1, s4\n";
        body += &st(3, "v2");
        body += &format!("  s_getreg_b32 s6, hwreg({mode}, 0, 8)\n  v_mov_b32 v2, s6\n");
        body += &st(4, "v2");
        // Toward zero, by s_round_mode (both fields).
        body += "  s_round_mode 0x3\n  v_add_f32 v2, s4, v1\n";
        body += &st(5, "v2");
        body += "  v_sub_f32 v2, v1, s4\n";
        body += &st(6, "v2");
        // Toward -inf in the f32 field only, by s_setreg: an exact zero
        // difference is -0.
        body += &format!("  s_setreg_imm32_b32 hwreg({mode}, 0, 2), 2\n");
        body += "  v_sub_f32 v2, 1.5, 1.5\n";
        body += &st(7, "v2");
        body += &format!("  s_getreg_b32 s6, hwreg({mode}, 0, 8)\n  v_mov_b32 v2, s6\n");
        body += &st(8, "v2");
        // Flush f32 denormals on input and output.
        body += "  s_denorm_mode 0x0\n  v_add_f32 v2, 0, v6\n";
        body += &st(9, "v2");
        body += &format!("  s_getreg_b32 s6, hwreg({mode}, 0, 8)\n  v_mov_b32 v2, s6\n");
        body += &st(10, "v2");
        let got = run(
            cpu,
            &body,
            "    .amdhsa_float_round_mode_32 1\n    .amdhsa_float_denorm_mode_32 3",
            11,
        )
        .unwrap();
        let want = [
            ONE + 1,     // 1 + tiny, up
            ONE,         // 1 - tiny, up
            2,           // 1.5 denormal quanta, up
            ONE + 1,     // fma rounds once, up
            0xF1,        // FP_ROUND 1, FP_DENORM 0xF
            ONE,         // 1 + tiny, toward zero
            ONE - 1,     // 1 - tiny, toward zero
            0x8000_0000, // 1.5 - 1.5 rounding down: -0
            0xF2,        // s_setreg wrote the f32 field, left the f16 one 0
            0,           // the denormal input is flushed
            0x02,        // FP_DENORM cleared
        ];
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert_eq!(*g, w, "{cpu} slot {i}: {g:#x} != {w:#x}");
        }
    }
}

#[test]
fn vopd_halves_obey_the_rounding_and_denormal_modes() {
    if !asm::tools() {
        return;
    }
    for cpu in ["gfx1100", "gfx1201"] {
        let (_, _, store) = names(cpu);
        let body = format!(
            "  v_mov_b32 v1, 1.0\n  s_mov_b32 s4, 1\n  v_mov_b32 v6, 3\n  \
             v_dual_add_f32 v2, s4, v1 :: v_dual_mul_f32 v3, 0.5, v6\n  \
             {store} v0, v2, s[2:3]\n  {store} v0, v3, s[2:3] offset:4\n  \
             s_denorm_mode 0x0\n  \
             v_dual_add_f32 v2, s4, v1 :: v_dual_mul_f32 v3, 0.5, v6\n  \
             {store} v0, v2, s[2:3] offset:8\n  {store} v0, v3, s[2:3] offset:12"
        );
        let got = run(
            cpu,
            &body,
            "    .amdhsa_float_round_mode_32 1\n    .amdhsa_float_denorm_mode_32 3",
            4,
        )
        .unwrap();
        assert_eq!(got, vec![ONE + 1, 2, ONE, 0], "{cpu}");
    }
}

#[test]
fn an_operation_without_an_exact_directed_model_is_refused_by_name() {
    if !asm::tools() {
        return;
    }
    for cpu in TARGETS {
        let body = "  v_mov_b32 v1, 2.0\n  v_sqrt_f32 v2, v1";
        let err = run(cpu, body, "    .amdhsa_float_round_mode_32 3", 1).unwrap_err();
        for want in [
            "modes",
            "v_sqrt_f32",
            "FP_ROUND = 0x3",
            "transcendental",
            "twin",
        ] {
            assert!(err.contains(want), "{cpu}: `{want}` missing from: {err}");
        }
        // The same kernel rounding to nearest even runs.
        run(cpu, body, "", 1).unwrap();
    }
}
