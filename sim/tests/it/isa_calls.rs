//! Function calls on the interpreter, with kernels assembled by llvm-mc-19:
//! LLVM's direct-call sequence (`s_getpc_b64`, `s_add_u32`/`s_addc_u32` of
//! a PC-relative constant, `s_swappc_b64`) reaches a callee after the
//! kernel's `s_endpgm` or before the kernel's entry, which returns with
//! `s_setpc_b64`; a callee before the entry that ends the program; a call
//! at a join whose pair each path sets in its own getpc block (Tensile's
//! activation call) reaches the callee of the path taken; a long branch
//! (`s_getpc_b64`, add, `s_setpc_b64`) lands on code decoded for it; code
//! reached only through a pointer (or a return through `s_swappc_b64`,
//! which the builder does not count as a return) is decoded when a wave
//! jumps there; a jump outside the kernel's code faults naming the
//! address; `s_sendmsg` MSG_INTERRUPT off a queue goes nowhere and the
//! wave goes on. Fails when `CI` is set and the tools are missing.

use relaunch_testsupport::asm;
use relaunch_testsupport::simkit::{linear, Rig};

const TARGETS: [&str; 3] = ["gfx1030", "gfx1100", "gfx1201"];

/// Runs `body` (output pointer in s[2:3], one lane, v0 = 0) followed by
/// `tail` (after `s_endpgm`); the first output dword, or the error.
fn run(cpu: &str, body: &str, tail: &str) -> Result<u32, String> {
    run_object(
        cpu,
        &asm::one_kernel(cpu, "calls", &kernel_text(cpu, body, tail), ""),
    )
}

/// The kernel's code: `body` between the set-up and the store of v1.
fn kernel_text(cpu: &str, body: &str, tail: &str) -> String {
    let sp = asm::spelling(cpu);
    let (load, wait, store) = (sp.s_load_b64, sp.wait_scalar, sp.global_store_b32);
    format!(
        "  {load} s[2:3], s[0:1], 0x0\n  {wait}\n  s_mov_b32 exec_lo, 1\n  v_mov_b32 v0, 0\n  \
         v_mov_b32 v1, 7\n{body}\n  {store} v0, v1, s[2:3]\n  s_endpgm\n{tail}"
    )
}

/// [`run`] with `before` (a function, label `callee`) placed before the
/// kernel's entry in the text section.
fn run_after(cpu: &str, before: &str, body: &str) -> Result<u32, String> {
    let kernel = asm::kernel_source(cpu, "calls", &kernel_text(cpu, body, ""), "", 1);
    // The callee goes first in the text section, before the kernel's symbol.
    let source = kernel.replacen(
        "  .text\n",
        &format!("  .text\n  .p2align 8\ncallee:\n{before}\n"),
        1,
    );
    run_object(cpu, &asm::code_object(cpu, &source))
}

/// Dispatches kernel `calls` of code object `bytes` on one lane.
fn run_object(cpu: &str, bytes: &[u8]) -> Result<u32, String> {
    let (rig, out, result) = Rig::run_isa_once(cpu, bytes, "calls", 4);
    let v = result.map_err(|e| e.to_string())?;
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

/// The direct-call sequence to `callee` placed before the kernel (a
/// negative distance: the high half is all ones).
const CALL_BACK: &str = "  s_getpc_b64 s[4:5]\n.Lpc:\n  s_add_u32 s4, s4, callee-.Lpc\n  \
                         s_addc_u32 s5, s5, -1\n  s_swappc_b64 s[30:31], s[4:5]";

#[test]
fn a_callee_before_the_entry_is_reached_and_returns() {
    if !asm::tools() {
        return;
    }
    for cpu in TARGETS {
        let body = format!("{CALL_BACK}\n  v_add_nc_u32 v1, 1, v1");
        let callee = "  v_mov_b32 v1, 41\n  s_setpc_b64 s[30:31]";
        assert_eq!(run_after(cpu, callee, &body), Ok(42), "{cpu}");
    }
}

#[test]
fn a_callee_before_the_entry_that_ends_the_program_skips_the_padding() {
    if !asm::tools() {
        return;
    }
    for cpu in TARGETS {
        // As ggml's `no_device_code`: the callee ends the wave, and the
        // compiler leaves zero words after the call.
        let store = asm::spelling(cpu).global_store_b32;
        let callee = format!("  v_mov_b32 v1, 5\n  {store} v0, v1, s[2:3]\n  s_endpgm");
        let body = format!("{CALL_BACK}\n  .long 0\n  .long 0");
        assert_eq!(run_after(cpu, &callee, &body), Ok(5), "{cpu}");
    }
}

#[test]
fn a_return_the_builder_did_not_see_is_decoded_when_reached() {
    if !asm::tools() {
        return;
    }
    for cpu in TARGETS {
        // The callee returns through s_swappc_b64, not s_setpc_b64: the
        // builder takes it for a function that never returns and leaves
        // the return point undecoded; the run decodes it when it gets
        // there (`growth`) and goes on.
        let callee = "callee:\n  v_mov_b32 v1, 41\n  s_swappc_b64 s[32:33], s[30:31]";
        assert_eq!(run(cpu, CALL, callee), Ok(42), "{cpu}");
    }
}

/// A call through a pointer the builder cannot follow: the callee's
/// address, PC-relative, goes through a VGPR and back
/// (`v_readfirstlane_b32`), as a pointer loaded per lane would.
const POINTER_CALL: &str = "  s_getpc_b64 s[4:5]\n.Lpc:\n  s_add_u32 s4, s4, callee-.Lpc\n  \
                            s_addc_u32 s5, s5, 0\n  v_mov_b32 v2, s4\n  v_mov_b32 v3, s5\n  \
                            v_readfirstlane_b32 s6, v2\n  v_readfirstlane_b32 s7, v3\n  \
                            s_swappc_b64 s[30:31], s[6:7]\n  v_add_nc_u32 v1, 1, v1";

#[test]
fn a_call_through_a_pointer_reaches_code_decoded_at_run_time() {
    if !asm::tools() {
        return;
    }
    for cpu in TARGETS {
        // The callee is reached from nowhere else: decoded when the wave
        // jumps there, and it calls a second function the same way
        // (decoded on demand too), which returns through both.
        let callee = format!(
            "callee:\n  s_mov_b64 s[40:41], s[30:31]\n{}\n  s_setpc_b64 s[40:41]\n\
             inner:\n  v_mov_b32 v1, 40\n  s_setpc_b64 s[30:31]",
            POINTER_CALL
                .replace("callee", "inner")
                .replace(".Lpc", ".Lpc2")
        );
        // inner sets 40, callee's return point adds 1, the kernel's too.
        assert_eq!(run(cpu, POINTER_CALL, &callee), Ok(42), "{cpu}");
    }
}

#[test]
fn a_pointer_call_from_many_workgroups_on_several_workers_gives_the_exact_sum() {
    if !asm::tools() {
        return;
    }
    // Each of 64 workgroups makes the call and adds its 42 to the output:
    // with several workers, whichever reaches the callee first has it
    // decoded and the others find it decoded.
    for cpu in TARGETS {
        let sp = asm::spelling(cpu);
        let text = kernel_text(
            cpu,
            POINTER_CALL,
            "callee:\n  v_mov_b32 v1, 41\n  s_setpc_b64 s[30:31]",
        )
        .replace(sp.global_store_b32, sp.global_atomic_add_u32);
        let bytes = asm::one_kernel(cpu, "calls", &text, "");
        let cfg = relaunch_sim::SimConfig::new(cpu);
        let (rig, out, result) = Rig::run_isa(cfg, &bytes, "calls", 4, &linear(32 * 64, 32));
        assert_eq!(result.map_err(|e| e.to_string()), Ok(vec![]));
        assert_eq!(rig.dev.memory.read_u32(out).unwrap(), 42 * 64, "{cpu}");
    }
}

#[test]
fn a_jump_outside_the_kernels_code_faults_naming_the_address() {
    if !asm::tools() {
        return;
    }
    for cpu in TARGETS {
        let body = "  s_mov_b32 s4, 0x1234\n  s_mov_b32 s5, 0\n  s_swappc_b64 s[30:31], s[4:5]";
        let err = run(cpu, body, "").unwrap_err();
        assert!(err.contains("indirect jump to 0x1234"), "{cpu}: {err}");
        assert!(
            err.contains("outside the kernel's code allocation"),
            "{cpu}: {err}"
        );
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

/// Tensile's shape: `s_add_i32 s8, k, 4` then the 64-bit add of s8, one
/// block per path, the call where the paths join. `s6` picks the path.
fn join(select: u32) -> String {
    format!(
        "  s_mov_b32 s6, {select}\n  s_cmp_eq_u32 s6, 0\n  s_cbranch_scc1 .Lsecond\n  \
         s_getpc_b64 s[12:13]\n.Lpc1:\n  s_add_i32 s8, first-.Lpc1-4, 4\n  \
         s_add_u32 s12, s12, s8\n  s_addc_u32 s13, s13, 0\n  s_branch .Ljoin\n\
         .Lsecond:\n  s_getpc_b64 s[12:13]\n.Lpc2:\n  s_add_i32 s8, second-.Lpc2-4, 4\n  \
         s_add_u32 s12, s12, s8\n  s_addc_u32 s13, s13, 0\n.Ljoin:\n  \
         s_swappc_b64 s[30:31], s[12:13]\n  v_add_nc_u32 v1, 1, v1"
    )
}
const TWO_CALLEES: &str = "first:\n  v_mov_b32 v1, 41\n  s_setpc_b64 s[30:31]\n\
                           second:\n  v_mov_b32 v1, 9\n  s_setpc_b64 s[30:31]";

#[test]
fn a_call_at_a_join_reaches_the_callee_of_the_path_taken() {
    if !asm::tools() {
        return;
    }
    for cpu in TARGETS {
        assert_eq!(run(cpu, &join(1), TWO_CALLEES), Ok(42), "{cpu}");
        assert_eq!(run(cpu, &join(0), TWO_CALLEES), Ok(10), "{cpu}");
    }
}

#[test]
fn a_long_branch_lands_on_its_target() {
    if !asm::tools() {
        return;
    }
    // The instruction after s_setpc_b64 is skipped: only the long branch
    // reaches .Lfar.
    let body = "  s_getpc_b64 s[20:21]\n.Llb:\n  s_add_i32 s22, .Lfar-.Llb-4, 4\n  \
                s_add_u32 s20, s20, s22\n  s_addc_u32 s21, s21, 0\n  s_setpc_b64 s[20:21]\n  \
                v_mov_b32 v1, 99\n.Lfar:\n  v_add_nc_u32 v1, 5, v1";
    for cpu in TARGETS {
        assert_eq!(run(cpu, body, ""), Ok(12), "{cpu}");
    }
}
