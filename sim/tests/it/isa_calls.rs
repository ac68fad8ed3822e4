//! Function calls on the interpreter, with kernels assembled by llvm-mc-19:
//! LLVM's direct-call sequence (`s_getpc_b64`, `s_add_u32`/`s_addc_u32` of
//! a PC-relative constant, `s_swappc_b64`) reaches a callee after the
//! kernel's `s_endpgm`, which returns with `s_setpc_b64`; a jump to an
//! address the interpreter did not decode faults naming it; `s_sendmsg`
//! MSG_INTERRUPT off a queue goes nowhere and the wave goes on. Fails when
//! `CI` is set and the tools are missing.

use relaunch_sim::isa::KernelMode;
use relaunch_sim::SimConfig;
use relaunch_testsupport::asm;
use relaunch_testsupport::simkit::{linear, Rig};

const TARGETS: [&str; 3] = ["gfx1030", "gfx1100", "gfx1201"];

/// Runs `body` (output pointer in s[2:3], one lane, v0 = 0) followed by
/// `tail` (after `s_endpgm`); the first output dword, or the error.
fn run(cpu: &str, body: &str, tail: &str) -> Result<u32, String> {
    let sp = asm::spelling(cpu);
    let (load, wait, store) = (sp.s_load_b64, sp.wait_scalar, sp.global_store_b32);
    let text = format!(
        "  {load} s[2:3], s[0:1], 0x0\n  {wait}\n  s_mov_b32 exec_lo, 1\n  v_mov_b32 v0, 0\n  \
         v_mov_b32 v1, 7\n{body}\n  {store} v0, v1, s[2:3]\n  s_endpgm\n{tail}"
    );
    let bytes = asm::one_kernel(cpu, "calls", &text, "");
    let mut cfg = SimConfig::new(cpu);
    cfg.kernels = KernelMode::Isa;
    let rig = Rig::from_bytes(cfg, &bytes);
    let out = rig.alloc(4);
    let mut b = rig.builder();
    rig.dispatch(&mut b, "calls", &linear(32, 32), &out.to_le_bytes());
    let (ib, _) = rig.finish(b);
    let v = rig.run(&ib.segments[0].dwords).map_err(|e| e.to_string())?;
    assert_eq!(v, vec![], "{cpu}");
    Ok(rig.dev.memory.read_u32(out).unwrap())
}

const CALL: &str = "  s_getpc_b64 s[4:5]\n.Lpc:\n  s_add_u32 s4, s4, callee-.Lpc\n  \
                    s_addc_u32 s5, s5, 0\n  s_swappc_b64 s[30:31], s[4:5]\n  \
                    v_add_nc_u32 v1, 1, v1";
const CALLEE: &str = "callee:\n  v_mov_b32 v1, 41\n  s_setpc_b64 s[30:31]";

#[test]
fn a_direct_call_reaches_its_callee_and_returns() {
    if !asm::tools() {
        return;
    }
    for cpu in TARGETS {
        // The callee sets 41, the instruction after the call adds 1.
        assert_eq!(run(cpu, CALL, CALLEE), Ok(42), "{cpu}");
    }
}

#[test]
fn a_jump_to_code_never_decoded_faults_naming_the_address() {
    if !asm::tools() {
        return;
    }
    for cpu in TARGETS {
        let body = "  s_mov_b32 s4, 0x1234\n  s_mov_b32 s5, 0\n  s_swappc_b64 s[30:31], s[4:5]";
        let err = run(cpu, body, "").unwrap_err();
        assert!(err.contains("indirect jump to 0x1234"), "{cpu}: {err}");
    }
}

#[test]
fn an_interrupt_off_a_queue_is_lost_and_the_wave_goes_on() {
    if !asm::tools() {
        return;
    }
    for cpu in TARGETS {
        let body = "  s_mov_b32 m0, 5\n  s_sendmsg sendmsg(MSG_INTERRUPT)\n  v_mov_b32 v1, 9";
        assert_eq!(run(cpu, body, ""), Ok(9), "{cpu}");
    }
}
