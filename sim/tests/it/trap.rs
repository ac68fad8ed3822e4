//! s_trap on the interpreter, per family: with the runtime's trap handler
//! present (gfx10/gfx11: RSRC2.TRAP_PRESENT, which the PM4 must then carry;
//! gfx12: the driver's TBA_HI.TRAP_EN) the trap stops the dispatch as
//! ROCr's handler stops the queue; without one, traps are never taken and
//! the kernel goes on. Kernels assembled by llvm-mc-19.

use relaunch_sim::isa::KernelMode;
use relaunch_sim::SimConfig;
use relaunch_testsupport::asm;
use relaunch_testsupport::simkit::{linear, Rig};

/// `counter` that traps first, then adds 7, on a device whose runtime has
/// (or has no) trap handler: the counter afterwards, or the error.
fn trap_then_add(cpu: &str, trap_handler: bool) -> Result<u32, String> {
    let mut cfg = SimConfig::new(cpu);
    cfg.kernels = KernelMode::Isa;
    cfg.trap_handler = trap_handler;
    let rig = Rig::from_bytes(cfg, &asm::counter_adding(cpu, 7, true));
    let c = rig.alloc(4);
    let mut b = rig.runtime_builder();
    rig.dispatch(&mut b, "counter", &linear(1, 1), &c.to_le_bytes());
    let (ib, _) = rig.finish(b);
    let v = rig.run(&ib.segments[0].dwords).map_err(|e| e.to_string())?;
    assert_eq!(v, vec![], "{cpu}");
    Ok(rig.dev.memory.read_u32(c).unwrap())
}

#[test]
fn s_trap_is_taken_exactly_when_a_trap_handler_is_present() {
    if !asm::tools() {
        return;
    }
    for cpu in ["gfx1030", "gfx1100", "gfx1201"] {
        let err = trap_then_add(cpu, true).unwrap_err();
        assert!(
            err.contains("s_trap 0x2") && err.contains("trap handler"),
            "{cpu}: {err}"
        );
        assert_eq!(
            trap_then_add(cpu, false),
            Ok(7),
            "{cpu}: the trap must be ignored"
        );
    }
}
