//! The execution loop: one wave runs until it reaches a barrier or ends;
//! the waves of a workgroup take turns (in wave order) so each runs up to
//! the next barrier before any passes it. The loop stops a kernel whose
//! queue was inactivated (`CHECK_EVERY`).

use super::control::{self, COp};
use std::sync::Arc;

use super::fault::{Flow, IsaFault};
use super::growth::Growing;
use super::lds;
use super::program::{Kind, Program};
use super::scalar;
use super::smem;
use super::valu;
use super::vmem;
use super::wave::Wave;
use super::Ctx;

/// Wave-instructions run between checks of the queue's inactivation
/// (`Ctx::discarded`): an abandoned kernel stops within about a
/// millisecond, for one atomic load per this many instructions.
pub(crate) const CHECK_EVERY: u64 = 1024;

/// Why a wave stopped running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    Barrier,
    End,
    /// At a global wave sync instruction, not yet performed (`Flow::GlobalSync`).
    GlobalSync,
}

/// Run `wave` until a barrier, s_endpgm or a GWS instruction (left for
/// the cooperative runner to perform). On a fault, the index of the
/// instruction that raised it comes with it. `executed` counts the
/// instructions run (wave-instructions, for the benchmark).
pub(crate) fn run_wave(
    prog: &Program,
    wave: &mut Wave,
    ctx: &mut Ctx<'_>,
    executed: &mut u64,
) -> Result<Stop, (u32, IsaFault)> {
    let trace = tracing_on() && wave.wave_in_group == 0 && wave.workgroup_id[1..] == [0; 2];
    // The wave's clock (`Wave::cycles`) is this run's share of `executed`,
    // brought up to date before the executors that read it and when the
    // run stops, not counted per instruction (a store per instruction on
    // the hot path).
    let (entry, cycles0) = (*executed, wave.cycles);
    let sync = |wave: &mut Wave, executed: u64| wave.cycles = cycles0 + (executed - entry);
    loop {
        let pc = wave.pc;
        let inst = &prog.insts[pc as usize];
        *executed += 1;
        if *executed % CHECK_EVERY == 0 {
            if ctx.discarded() {
                return Err((pc, IsaFault::Discarded));
            }
            ctx.mem.yield_to_writers();
        }
        // Each executor's result is taken apart where it returns: moved
        // whole into one variable for a shared match, the large fault type
        // was copied per instruction, read back wider than it was written
        // (a stall on store forwarding).
        macro_rules! flow {
            ($r:expr) => {
                match $r {
                    Ok(flow) => flow,
                    Err(e) => {
                        if trace {
                            trace_inst(inst, wave);
                        }
                        // The clock as if the instruction had not run: an
                        // `Undecoded` jump runs again, and a wave's clock
                        // must not depend on whether another worker had
                        // already decoded its target.
                        sync(wave, *executed - 1);
                        return Err((pc, e));
                    }
                }
            };
        }
        // The frequent kinds first, as plain tests: one jump table over
        // every kind is an indirect branch that mispredicts whenever the
        // kind differs from the previous instruction's.
        let flow = if let Some(f) = inst.fast {
            // A vector ALU form resolved at program build; its operand
            // faults are named as the general path names them.
            flow!(f(wave, inst).map_err(|e| valu::name_fault(*e, inst)))
        } else if let Kind::Salu(op) = inst.kind {
            if scalar::quick(wave, inst, op) {
                Flow::Next
            } else {
                flow!(scalar::execute(wave, inst, op))
            }
        } else if let Kind::Valu(_) = inst.kind {
            flow!(valu::run(wave, inst));
            Flow::Next
        } else if let Kind::Ctrl(COp::Nothing) = inst.kind {
            // Waits, s_nop, s_delay_alu: frequent and nothing to do, so
            // not worth building the interrupt closure below.
            Flow::Next
        } else if let Some(flow) = branch(wave, inst) {
            flow
        } else if let Kind::Smem(op) = inst.kind {
            sync(wave, *executed);
            flow!(smem::execute(wave, inst, op, ctx))
        } else if let Kind::Vmem(op) = inst.kind {
            flow!(vmem::execute(wave, inst, op, ctx))
        } else {
            sync(wave, *executed);
            flow!(other(prog, wave, inst, ctx))
        };
        if trace {
            trace_inst(inst, wave);
        }
        match flow {
            Flow::Next => wave.pc = inst.next,
            Flow::Jump(t) => wave.pc = t,
            Flow::Barrier => {
                wave.pc = inst.next;
                sync(wave, *executed);
                return Ok(Stop::Barrier);
            }
            Flow::End => {
                wave.done = true;
                sync(wave, *executed);
                return Ok(Stop::End);
            }
            Flow::GlobalSync => {
                sync(wave, *executed);
                return Ok(Stop::GlobalSync);
            }
        }
    }
}

/// The SCC branches and s_branch, inline (a loop's back edge is one of
/// them): what `control::execute` does for them, without its call and
/// table. `None` for any other instruction.
#[inline(always)]
fn branch(wave: &Wave, inst: &super::program::Inst) -> Option<Flow> {
    let Kind::Ctrl(op) = inst.kind else {
        return None;
    };
    let take = if matches!(op, COp::CbranchScc0) {
        !wave.scc
    } else if matches!(op, COp::CbranchScc1) {
        wave.scc
    } else if matches!(op, COp::Branch) {
        true
    } else {
        return None;
    };
    Some(if take {
        Flow::Jump(inst.target)
    } else {
        Flow::Next
    })
}

/// Execute an instruction of the less frequent kinds.
#[inline]
fn other(
    prog: &Program,
    wave: &mut Wave,
    inst: &super::program::Inst,
    ctx: &mut Ctx<'_>,
) -> Result<Flow, IsaFault> {
    let family = prog.isa.family;
    match inst.kind {
        Kind::Salu(op) => scalar::execute(wave, inst, op),
        Kind::Valu(_) => valu::execute(wave, inst, ctx),
        Kind::Ctrl(COp::Nothing) => Ok(Flow::Next),
        Kind::Ctrl(op) => {
            // The queue's handler runs with the allocation map unlocked
            // (it is host code, which may allocate).
            let mem = ctx.mem;
            let raise = ctx.interrupt.map(|f| move |m: u32| mem.unlocked(|| f(m)));
            control::execute(wave, inst, op, raise.as_ref().map(|r| r as &dyn Fn(u32)))
        }
        Kind::Smem(op) => smem::execute(wave, inst, op, ctx),
        Kind::Ds(op) => lds::execute(wave, inst, op, ctx),
        Kind::Vmem(op) => vmem::execute(wave, inst, op, ctx),
        Kind::GetPc => {
            let next = prog.address_of(inst).wrapping_add(inst.decoded.len as u64);
            wave.write_scalar64(inst.dst, next).map(|()| Flow::Next)
        }
        Kind::SetPc => wave
            .scalar64(inst.src[0], false)
            .and_then(|to| jump_to(prog, to)),
        Kind::SwapPc => wave.scalar64(inst.src[0], false).and_then(|to| {
            let flow = jump_to(prog, to)?;
            let next = prog.address_of(inst).wrapping_add(inst.decoded.len as u64);
            wave.write_scalar64(inst.dst, next)?;
            Ok(flow)
        }),
        Kind::Unimplemented => Err(IsaFault::Unimplemented {
            mnemonic: inst.decoded.mnemonic(),
            family,
        }),
        // Performed by the cooperative runner, which sees the stop.
        Kind::Gws(_) => Ok(Flow::GlobalSync),
        Kind::GlobalShare => Err(IsaFault::Unimplemented {
            mnemonic: inst.refused_name(),
            family,
        }),
        Kind::Undecodable(dword) => Err(IsaFault::Undecodable { dword, family }),
        // Also a call's return point the builder left undecoded because
        // the callee never returns (`program::may_return`), if it does.
        Kind::OutOfCode => Err(IsaFault::Control(format!(
            "control reached byte offset {} from the entry, outside the kernel's code the \
             simulator decoded (past the end of its code allocation, into bytes that are not \
             an instruction start, or back from a call whose callee has no return)",
            super::program::signed_hex(inst.from_entry())
        ))),
    }
}

/// An indirect jump (s_setpc_b64, s_swappc_b64) to device address `to`:
/// the instruction decoded there (direct callees are, and return points
/// of calls whose callee can return), or `Undecoded` for the runner to
/// decode it (`growth`).
fn jump_to(prog: &Program, to: u64) -> Result<Flow, IsaFault> {
    prog.index_at(to)
        .map(Flow::Jump)
        .ok_or(IsaFault::Undecoded(to))
}

/// [`run_wave`], swapping `prog` for the program `code` grows to hold the
/// target of a jump to code not decoded yet (the same indices, more code)
/// and running the jump again, counted once.
pub(crate) fn run_wave_growing(
    prog: &mut Arc<Program>,
    code: &Growing,
    wave: &mut Wave,
    ctx: &mut Ctx<'_>,
    executed: &mut u64,
) -> Result<Stop, (u32, IsaFault)> {
    loop {
        match run_wave(prog, wave, ctx, executed) {
            Err((pc, IsaFault::Undecoded(to))) => {
                *prog = code.reach(ctx.mem, to).map_err(|e| (pc, e))?;
                *executed -= 1;
            }
            other => return other,
        }
    }
}

/// Run every wave of one workgroup to its end. Waves take turns up to each
/// barrier: when every wave still running has reached it, all go on. The
/// program grows as [`run_wave_growing`] says.
pub(crate) fn run_workgroup(
    prog: &mut Arc<Program>,
    code: &Growing,
    waves: &mut [Wave],
    ctx: &mut Ctx<'_>,
    executed: &mut u64,
) -> Result<(), (usize, u32, IsaFault)> {
    loop {
        // Per workgroup and per barrier round too, so a dispatch of many
        // short workgroups stops as promptly as one long loop.
        if ctx.discarded() {
            let at = waves.iter().position(|w| !w.done).unwrap_or(0);
            let pc = waves.get(at).map_or(0, |w| w.pc);
            return Err((at, pc, IsaFault::Discarded));
        }
        let mut waiting = 0;
        for (i, w) in waves.iter_mut().enumerate() {
            if w.done {
                continue;
            }
            match run_wave_growing(prog, code, w, ctx, executed) {
                Ok(Stop::Barrier) => waiting += 1,
                Ok(Stop::End) => {}
                // A program with GWS instructions runs cooperatively
                // (`cooperative`); here only if one was decoded after the
                // dispatch began (reached through a pointer).
                Ok(Stop::GlobalSync) => {
                    let e = IsaFault::Control(
                        "a global wave sync instruction in code first reached through a pointer \
                         during this dispatch: it did not start cooperatively (every wave \
                         resident), so the simulator cannot sync it"
                            .into(),
                    );
                    return Err((i, w.pc, e));
                }
                Err((pc, e)) => return Err((i, pc, e)),
            }
        }
        if waiting == 0 {
            return Ok(());
        }
    }
}

/// `RELAUNCH_SIM_ISA_TRACE=1`: print every instruction wave 0 of workgroup
/// 0 executes, with its destination's lane 0..3 values after it ran.
fn tracing_on() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("RELAUNCH_SIM_ISA_TRACE").is_some_and(|v| v == "1"))
}

#[cold]
fn trace_inst(inst: &super::program::Inst, wave: &Wave) {
    use super::operand::Dst;
    let val = match inst.dst {
        Dst::Vgpr(r) => wave
            .vgpr
            .get(r as usize)
            .map(|v| format!("v{r}={:x?}", &v[..4]))
            .unwrap_or_default(),
        Dst::Sgpr(n) => format!("s{n}={:#x}", wave.sgpr[n as usize]),
        _ => String::new(),
    };
    eprintln!(
        "isa wg{:?} {:>6} {:<28} {val} exec={:#x} scc={} vcc={:#x}",
        wave.workgroup_id[0],
        super::program::signed_hex(inst.from_entry()),
        inst.decoded.mnemonic(),
        wave.exec,
        u8::from(wave.scc),
        wave.vcc()
    );
}
