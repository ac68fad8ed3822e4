//! Cooperative dispatches: a program with global wave sync instructions
//! (`gws`) waits at them for waves of other workgroups, so every wave of
//! the dispatch is resident at once, as a cooperative launch guarantees
//! on hardware. Each workgroup has its LDS, its waves their scratch slots;
//! the waves take turns on one worker (the dispatching thread), in id
//! order: a wave runs until its workgroup's s_barrier, a GWS instruction
//! that holds it, or its end. A workgroup's s_barrier opens when every
//! wave of it still running has reached it; a GWS barrier or semaphore
//! releases the waves it holds as `gws::Resources` says. One worker and a
//! fixed order make the run the same at any worker count. When no wave
//! can move the dispatch faults naming what each waits for. A grid larger
//! than the device holds resident is refused, as a cooperative launch of
//! that size would be.

use std::sync::atomic::AtomicBool;

use super::exec::{self, Stop};
use super::fault::IsaFault;
use super::growth::Growing;
use super::gws::{self, Outcome};
use super::program::{Kind, Program};
use super::tracebuf::TraceBuf;
use super::wave::{Wave, MAX_LANES};
use super::workgroups::{group_fault, GroupStart};
use super::Ctx;
use crate::memory::DeviceMemory;
use crate::twins::{DispatchContext, KernelFault};

/// Waves one compute unit holds: two SIMD32s of 16 waves each (LLVM's
/// `getMaxWavesPerEU`: 16 on gfx10.3 and later, 2 SIMDs per CU). A
/// cooperative dispatch may have this many per compute unit of the device
/// (`Launch::compute_units`), all resident at once.
pub(super) const WAVES_PER_CU: u64 = 32;

/// Where a wave of the dispatch is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ready,
    /// At its workgroup's s_barrier.
    AtBarrier,
    /// Held by the GWS instruction at index `at`.
    AtGws {
        at: u32,
    },
    Done,
}

/// One resident workgroup.
struct Group {
    id: [u32; 3],
    waves: Vec<Wave>,
    lds: Vec<u8>,
}

/// Why `groups` workgroups of `nwaves` waves cannot all be resident, if
/// they cannot.
fn too_large(groups: u64, nwaves: usize, start: &GroupStart<'_>) -> Option<String> {
    let total = groups.saturating_mul(nwaves as u64);
    let cus = u64::from(start.launch.compute_units);
    let resident = cus * WAVES_PER_CU;
    if total > resident {
        return Some(format!(
            "the kernel uses the global wave sync (ds_gws_*), so all {groups} workgroups x \
             {nwaves} waves must be resident at once, but the simulated device holds \
             {resident} ({cus} compute units x {WAVES_PER_CU} waves), as a cooperative launch \
             of this size would be refused"
        ));
    }
    match start.private {
        Some(s) if total > u64::from(s.slots) => Some(format!(
            "the kernel uses the global wave sync (ds_gws_*), so all {total} waves must be \
             resident at once, each with a scratch slot, but the scratch ring has {} \
             (TMPRING_SIZE.WAVES)",
            s.slots
        )),
        _ => None,
    }
}

/// Run every workgroup of the dispatch cooperatively (see the module
/// doc). Returns the wave-instructions executed.
#[allow(clippy::too_many_arguments)]
pub(super) fn run(
    ctx: &mut DispatchContext,
    mem: &DeviceMemory,
    kernel: &str,
    code: &Growing,
    start: &GroupStart<'_>,
    groups: u64,
    inactive: Option<&AtomicBool>,
    interrupt: Option<&(dyn Fn(u32) + Send + Sync)>,
) -> Result<u64, KernelFault> {
    let nwaves = start.nwaves;
    if let Some(why) = too_large(groups, nwaves, start) {
        return Err(KernelFault::Interpreter(format!(
            "kernel {kernel} on {}: {why}",
            start.launch.processor
        )));
    }
    let mut all: Vec<Group> = (0..groups)
        .map(|g| {
            let id = start.id(g);
            let mut waves: Vec<Wave> = (0..nwaves)
                .map(|_| Wave::new(start.isa, start.vgprs))
                .collect();
            // Workgroup g takes the slots a worker g would: distinct for
            // every resident wave (checked above).
            start.init(&mut waves, id, g as u32);
            Group {
                id,
                waves,
                lds: vec![0u8; ctx.lds_bytes],
            }
        })
        .collect();
    let mut tbuf = TraceBuf::default();
    let mut staging = vec![0u8; MAX_LANES * 16];
    let mut executed = 0u64;
    // Swapped for a grown one when a wave jumps to code not decoded yet.
    let mut prog = code.latest();
    let result = {
        let pin = mem.pin();
        let mut turns = Turns {
            state: vec![State::Ready; all.len() * nwaves],
            gws: gws::Resources::default(),
            released: Vec::new(),
            nwaves,
        };
        // Ids for faults without borrowing the groups (they are in use).
        let ids: Vec<[u32; 3]> = all.iter().map(|g| g.id).collect();
        let fail = |prog: &Program, g: usize, w: usize, pc: u32, fault: IsaFault| {
            Err(group_fault(
                kernel,
                prog,
                start.launch,
                ids[g],
                w,
                pc,
                fault,
            ))
        };
        loop {
            let mut moved = false;
            pin.yield_to_writers();
            for (g, group) in all.iter_mut().enumerate() {
                let mut c = Ctx {
                    mem: &pin,
                    trace: &mut tbuf,
                    scratch: &mut staging,
                    lds: &mut group.lds,
                    inactive,
                    interrupt,
                };
                if c.discarded() {
                    let w = (0..nwaves).find(|&w| !group.waves[w].done).unwrap_or(0);
                    let pc = group.waves[w].pc;
                    return finish(ctx, tbuf, fail(&prog, g, w, pc, IsaFault::Discarded));
                }
                for w in 0..nwaves {
                    let i = g * nwaves + w;
                    while turns.state[i] == State::Ready {
                        moved = true;
                        let wave = &mut group.waves[w];
                        match exec::run_wave_growing(&mut prog, code, wave, &mut c, &mut executed) {
                            Ok(Stop::Barrier) => turns.state[i] = State::AtBarrier,
                            Ok(Stop::End) => turns.state[i] = State::Done,
                            Ok(Stop::GlobalSync) => {
                                let at = wave.pc;
                                if let Err(e) = turns.perform(&prog, wave, i) {
                                    return finish(ctx, tbuf, fail(&prog, g, w, at, e));
                                }
                            }
                            Err((pc, e)) => return finish(ctx, tbuf, fail(&prog, g, w, pc, e)),
                        }
                    }
                }
                moved |= turns.open_barrier(g);
            }
            if turns.state.iter().all(|s| *s == State::Done) {
                break Ok(executed);
            }
            if !moved {
                let (i, at) = turns.first_held();
                let why = turns.deadlock();
                break fail(&prog, i / nwaves, i % nwaves, at, IsaFault::Deadlock(why));
            }
        }
    };
    finish(ctx, tbuf, result)
}

/// The dispatch's trace gets what the waves touched, whatever the result.
fn finish(
    ctx: &mut DispatchContext,
    mut tbuf: TraceBuf,
    result: Result<u64, KernelFault>,
) -> Result<u64, KernelFault> {
    tbuf.flush_into(&mut ctx.trace);
    result
}

/// Every wave's state and the GWS resources.
struct Turns {
    state: Vec<State>,
    gws: gws::Resources,
    released: Vec<usize>,
    nwaves: usize,
}

impl Turns {
    /// Perform the GWS instruction wave `i` stopped at: it goes on past it
    /// or is held there; waves it releases become ready.
    fn perform(&mut self, prog: &Program, wave: &mut Wave, i: usize) -> Result<(), IsaFault> {
        let at = wave.pc;
        let inst = &prog.insts[at as usize];
        let Kind::Gws(op) = inst.kind else {
            return Err(IsaFault::Control(
                "stopped for a GWS instruction at one that is not".into(),
            ));
        };
        let issue = gws::issue(wave, inst, op)?;
        let outcome = self.gws.perform(i, issue, &mut self.released)?;
        wave.pc = inst.next;
        self.state[i] = match outcome {
            Outcome::Go => State::Ready,
            Outcome::Wait => State::AtGws { at },
        };
        for r in self.released.drain(..) {
            self.state[r] = State::Ready;
        }
        Ok(())
    }

    /// Open workgroup `g`'s s_barrier if every wave of it still running
    /// has reached it; whether it opened.
    fn open_barrier(&mut self, g: usize) -> bool {
        let waves = &mut self.state[g * self.nwaves..(g + 1) * self.nwaves];
        let mut at_barrier = 0;
        for s in waves.iter() {
            match s {
                State::AtBarrier => at_barrier += 1,
                State::Done => {}
                State::Ready | State::AtGws { .. } => return false,
            }
        }
        for s in waves.iter_mut().filter(|s| **s == State::AtBarrier) {
            *s = State::Ready;
        }
        at_barrier > 0
    }

    /// The first wave a GWS instruction holds, and that instruction (a
    /// deadlock always has one: an s_barrier alone always opens).
    fn first_held(&self) -> (usize, u32) {
        self.state
            .iter()
            .enumerate()
            .find_map(|(i, s)| match s {
                State::AtGws { at } => Some((i, *at)),
                _ => None,
            })
            .unwrap_or((0, 0))
    }

    /// What the waves wait for, and how many ended.
    fn deadlock(&self) -> String {
        let mut parts = self.gws.waits();
        let count = |want: fn(&State) -> bool| self.state.iter().filter(|s| want(s)).count();
        let barrier = count(|s| *s == State::AtBarrier);
        if barrier > 0 {
            parts.push(format!(
                "{barrier} waves wait at their workgroup's s_barrier for waves held above"
            ));
        }
        let done = count(|s| *s == State::Done);
        format!(
            "{}; {done} of the dispatch's {} waves ended",
            parts.join("; "),
            self.state.len()
        )
    }
}
