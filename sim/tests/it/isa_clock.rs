//! The clocks kernels read (HIP's `clock64()` and `wall_clock64()`
//! compile to these; llvm-mc-19 assembles them): s_memtime and
//! s_memrealtime on gfx10, s_sendmsg_rtn_b64 MSG_RTN_GET_REALTIME and the
//! SHADER_CYCLES hardware registers on gfx11 and gfx12. The model counts
//! the reading wave's instructions, so two readings four instructions
//! apart differ by exactly four; a message the simulator does not answer
//! is refused naming its id. Fails when `CI` is set and the tools are
//! missing.

use relaunch_testsupport::asm;
use relaunch_testsupport::simkit::Rig;

/// Runs `reads` (which leaves its readings in s[4:11]) in one lane; the
/// eight dwords s[4:11], or the error.
fn run(cpu: &str, reads: &str) -> Result<Vec<u32>, String> {
    let sp = asm::spelling(cpu);
    let (load, wait, store) = (sp.s_load_b64, sp.wait_scalar, sp.global_store_b32);
    let mut text = format!(
        "  {load} s[2:3], s[0:1], 0x0\n  {wait}\n  s_mov_b32 exec_lo, 1\n  \
         v_mov_b32 v0, 0\n{reads}\n"
    );
    for i in 0..8 {
        text.push_str(&format!(
            "  v_mov_b32 v1, s{}\n  {store} v0, v1, s[2:3] offset:{}\n",
            4 + i,
            4 * i
        ));
    }
    text.push_str("  s_endpgm\n");
    let bytes = asm::one_kernel(cpu, "clock", &text, "");
    let (rig, out, result) = Rig::run_isa_once(cpu, &bytes, "clock", 32);
    let v = result.map_err(|e| e.to_string())?;
    assert_eq!(v, vec![], "{cpu}");
    Ok((0..8)
        .map(|i| rig.dev.memory.read_u32(out + 4 * i).unwrap())
        .collect())
}

fn pair(v: &[u32], at: usize) -> u64 {
    u64::from(v[at]) | u64::from(v[at + 1]) << 32
}

const GAP: &str = "  s_nop 0\n  s_nop 0\n  s_nop 0\n";

#[test]
fn gfx10_memtime_and_memrealtime_count_the_waves_instructions() {
    if !asm::tools() {
        return;
    }
    let reads = format!(
        "  s_memtime s[4:5]\n{GAP}  s_memtime s[6:7]\n  s_memrealtime s[8:9]\n{GAP}  \
         s_getreg_b32 s10, hwreg(HW_REG_SHADER_CYCLES, 0, 20)\n  s_mov_b32 s11, 0"
    );
    let v = run("gfx1030", &reads).unwrap();
    let (t0, t1, real) = (pair(&v, 0), pair(&v, 2), pair(&v, 4));
    assert_eq!(t1 - t0, 4, "{v:?}");
    // One clock: the real-time read is the next instruction's cycle.
    assert_eq!(real, t1 + 1, "{v:?}");
    // SHADER_CYCLES: the low 20 bits, four instructions later.
    assert_eq!(u64::from(v[6]), (real + 4) & 0xF_FFFF, "{v:?}");
}

#[test]
fn gfx11_and_gfx12_realtime_messages_and_cycle_registers() {
    if !asm::tools() {
        return;
    }
    let rtn = "s_sendmsg_rtn_b64";
    let gfx11 = format!(
        "  {rtn} s[4:5], sendmsg(MSG_RTN_GET_REALTIME)\n{GAP}  \
         {rtn} s[6:7], sendmsg(MSG_RTN_GET_REALTIME)\n  \
         s_getreg_b32 s8, hwreg(HW_REG_SHADER_CYCLES, 0, 20)\n  s_mov_b32 s9, 0\n  \
         s_sendmsg_rtn_b32 s10, sendmsg(MSG_RTN_GET_REALTIME)\n  s_mov_b32 s11, 0"
    );
    let v = run("gfx1100", &gfx11).unwrap();
    let (t0, t1) = (pair(&v, 0), pair(&v, 2));
    assert_eq!(t1 - t0, 4, "{v:?}");
    assert_eq!(u64::from(v[4]), (t1 + 1) & 0xF_FFFF, "{v:?}");
    assert_eq!(u64::from(v[6]), (t1 + 3) & 0xFFFF_FFFF, "{v:?}");
    // gfx12: the 64-bit counter in two registers, read high, low, high.
    let gfx12 = format!(
        "  {rtn} s[4:5], sendmsg(MSG_RTN_GET_REALTIME)\n{GAP}  \
         s_getreg_b32 s7, hwreg(HW_REG_SHADER_CYCLES_HI)\n  \
         s_getreg_b32 s6, hwreg(HW_REG_SHADER_CYCLES_LO)\n  \
         s_getreg_b32 s8, hwreg(HW_REG_SHADER_CYCLES_HI)\n  \
         s_mov_b32 s9, 0\n  s_mov_b32 s10, 0\n  s_mov_b32 s11, 0"
    );
    let v = run("gfx1201", &gfx12).unwrap();
    assert_eq!(pair(&v, 2), pair(&v, 0) + 5, "{v:?}");
    assert_eq!(v[3], v[4], "{v:?}");
}

#[test]
fn a_message_the_simulator_does_not_answer_is_refused_by_id() {
    if !asm::tools() {
        return;
    }
    let reads = "  s_sendmsg_rtn_b64 s[4:5], sendmsg(MSG_RTN_GET_DOORBELL)";
    let err = run("gfx1100", reads).unwrap_err();
    assert!(
        err.contains("s_sendmsg_rtn_b64 with message id 0x80"),
        "{err}"
    );
}
