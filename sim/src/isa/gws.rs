//! The global wave sync (GWS, gfx10/gfx11: DS instructions with GDS set):
//! 64 sync resources shared by every wave of a dispatch, each a barrier or
//! a counting semaphore. The semantics are AMD's (RDNA3.5 ISA guide,
//! 13.4.4 "Global Wave Sync", table 63; the same opcodes and encodings
//! on gfx10.3) and LLVM's (`llvm.amdgcn.ds.gws.*`, ROCm device-libs'
//! `__ockl_gws_init(nwm1, rid)` / `__ockl_gws_barrier(nwm1, rid)`):
//!
//! - resource id = (M0[21:16] + OFFSET0[5:0]) % 64, plus a per-VMID base
//!   the command processor sets; a dispatch here owns all 64 (base 0).
//!   The other offset bits are not read. M0 is undefined when a wave
//!   starts, so a GWS instruction of a wave that never wrote M0 faults.
//! - the value (init's count, the barrier's next count, sema_br's release
//!   count) is the VGPR in the ADDR field (LLVM's `has_gws_data0`; AMD's
//!   machine-readable spec lists ADDR as the input) in the first lane EXEC
//!   holds: with EXEC zero there is none, a fault.
//! - the counter holds 12 bits: a value past 4095 faults.
//! - ds_gws_init sets the counter (and clears the flag); it does not
//!   release queued waves, so an init while waves wait there faults.
//! - ds_gws_barrier: "the total wave count minus one" (the guide's prose,
//!   LLVM's intrinsic docs, ockl's `nwm1`), so a barrier initialised with
//!   N-1 releases on the N-th arrival: an arrival finding the counter at
//!   zero is the last; it releases every queued wave, flips the flag and
//!   loads its own value as the next barrier's count; any other arrival
//!   counts down and waits. (The guide's pseudo-code decrements before the
//!   test, which would release one wave early and break ockl's grid sync:
//!   the prose is followed.)
//! - semaphores: sema_v adds one, sema_br its value, sema_release_all the
//!   number of waves queued at sema_p; sema_p waits until the counter is
//!   above zero and takes one (queued waves are served first in order).
//! - "On entry: counter previously initialized": any use of a resource no
//!   ds_gws_init of this dispatch initialised faults. The kernel driver
//!   grants a queue no GWS here (kfd refuses hsaKmtAllocQueueGWS), so no
//!   state survives a dispatch: a runtime's separate init kernel (ROCclr's)
//!   would not reach a later dispatch.
//! - switching a resource between barrier and semaphore while waves are
//!   queued on it is not described: a fault.

use std::collections::VecDeque;

use super::fault::IsaFault;
use super::program::Inst;
use super::wave::Wave;

/// The GWS resources of the hardware (and of a dispatch here).
pub(super) const RESOURCES: usize = 64;
/// The largest value a resource's 12-bit counter holds.
const COUNTER_MAX: u32 = 0xFFF;

/// A GWS instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GOp {
    Init,
    Barrier,
    SemaV,
    SemaBr,
    SemaP,
    SemaReleaseAll,
}

/// The GWS operation `name` names (with GDS set; the decoder's mnemonic).
pub(crate) fn prepare(name: &str) -> Option<GOp> {
    GOp::ALL.into_iter().find(|op| op.mnemonic() == name)
}

impl GOp {
    const ALL: [GOp; 6] = [
        GOp::Init,
        GOp::Barrier,
        GOp::SemaV,
        GOp::SemaBr,
        GOp::SemaP,
        GOp::SemaReleaseAll,
    ];

    fn mnemonic(self) -> &'static str {
        match self {
            GOp::Init => "ds_gws_init",
            GOp::Barrier => "ds_gws_barrier",
            GOp::SemaV => "ds_gws_sema_v",
            GOp::SemaBr => "ds_gws_sema_br",
            GOp::SemaP => "ds_gws_sema_p",
            GOp::SemaReleaseAll => "ds_gws_sema_release_all",
        }
    }

    /// Whether it reads a value from the data VGPR.
    fn has_value(self) -> bool {
        match self {
            GOp::Init | GOp::Barrier | GOp::SemaBr => true,
            GOp::SemaV | GOp::SemaP | GOp::SemaReleaseAll => false,
        }
    }
}

/// Whether `insts` hold a GWS instruction (the dispatch then runs
/// cooperatively: every wave resident at once).
pub(super) fn used_by(insts: &[Inst]) -> bool {
    insts
        .iter()
        .any(|i| matches!(i.kind, super::program::Kind::Gws(_)))
}

/// One GWS instruction as a wave issued it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Issue {
    pub(super) op: GOp,
    pub(super) rid: usize,
    pub(super) value: u32,
}

fn undefined(op: GOp, why: String) -> IsaFault {
    IsaFault::Operand {
        mnemonic: format!("{} gds", op.mnemonic()),
        why,
    }
}

/// What `wave` asks of the resources with `inst` (a GWS instruction).
pub(super) fn issue(wave: &Wave, inst: &Inst, op: GOp) -> Result<Issue, IsaFault> {
    if !wave.m0_written {
        return Err(undefined(
            op,
            "M0[21:16] supplies the GWS resource base, but this wave has not written M0 (its \
             value at wave start is undefined); set M0 first (LLVM writes 0 or rid << 16)"
                .into(),
        ));
    }
    if wave.exec == 0 {
        return Err(undefined(
            op,
            "EXEC is zero: a GWS instruction takes its value from the first active lane and \
             what the hardware does with no active lane is not documented"
                .into(),
        ));
    }
    let rid = (((wave.m0 >> 16) & 0x3F) + (inst.words[0] & 0x3F)) as usize % RESOURCES;
    let value = if op.has_value() {
        let reg = (inst.words[1] & 0xFF) as u16;
        wave.v(reg)?[wave.exec.trailing_zeros() as usize]
    } else {
        0
    };
    Ok(Issue { op, rid, value })
}

/// What a resource is being used as (the instruction sets it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Type {
    Barrier,
    Semaphore,
}

/// One sync resource. Waves are named by the runner's index.
#[derive(Debug, Clone, Default)]
struct Resource {
    /// `None` until a ds_gws_init of this dispatch.
    counter: Option<u32>,
    kind: Option<Type>,
    /// Waves queued at the barrier: those tagged with the hardware's
    /// current flag, which flips exactly when they are released, so the
    /// flag itself need not be kept.
    at_barrier: Vec<usize>,
    /// Waves queued at ds_gws_sema_p, first come first served.
    at_p: VecDeque<usize>,
}

/// Whether the issuing wave goes on or waits to be released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    Go,
    Wait,
}

/// The dispatch's GWS resources.
#[derive(Debug, Clone)]
pub(super) struct Resources {
    res: Vec<Resource>,
}

impl Default for Resources {
    fn default() -> Self {
        Resources {
            res: vec![Resource::default(); RESOURCES],
        }
    }
}

impl Resources {
    /// Perform `issue` for wave `who`; the waves it releases are pushed
    /// onto `released`.
    pub(super) fn perform(
        &mut self,
        who: usize,
        issue: Issue,
        released: &mut Vec<usize>,
    ) -> Result<Outcome, IsaFault> {
        let Issue { op, rid, value } = issue;
        let r = &mut self.res[rid];
        let fault = |why: String| undefined(op, format!("GWS resource {rid}: {why}"));
        let bounded = |v: u64, what: &str| {
            u32::try_from(v)
                .ok()
                .filter(|&v| v <= COUNTER_MAX)
                .ok_or_else(|| {
                    fault(format!(
                        "{what} {v} does not fit the resource's 12-bit counter (at most \
                         {COUNTER_MAX})"
                    ))
                })
        };
        let counter = match (op, r.counter) {
            (GOp::Init, _) => {
                let queued = r.at_barrier.len() + r.at_p.len();
                if queued > 0 {
                    return Err(fault(format!(
                        "initialised while {queued} waves are queued on it (an init does not \
                         release them; what becomes of them is not documented)"
                    )));
                }
                r.counter = Some(bounded(value.into(), "the count")?);
                return Ok(Outcome::Go);
            }
            (_, Some(counter)) => counter,
            (_, None) => {
                return Err(fault(
                    "no ds_gws_init of this dispatch initialised it, so its counter is \
                     undefined (\"on entry: counter previously initialized\"; the simulated \
                     driver grants a queue no GWS, so nothing carries over from an earlier \
                     dispatch)"
                        .into(),
                ))
            }
        };
        let kind = match op {
            GOp::Barrier => Type::Barrier,
            _ => Type::Semaphore,
        };
        let other_queued = match kind {
            Type::Barrier => r.at_p.len(),
            Type::Semaphore => r.at_barrier.len(),
        };
        if r.kind != Some(kind) && other_queued > 0 {
            return Err(fault(format!(
                "used as a {kind:?} while {other_queued} waves are queued on it as the other \
                 type (not documented)"
            )));
        }
        r.kind = Some(kind);
        let outcome = match op {
            GOp::Init => unreachable!("handled above"),
            GOp::Barrier if counter == 0 => {
                // The last arrival: release the queued waves (the flag
                // flips), and take this wave's value as the next count.
                released.append(&mut r.at_barrier);
                r.counter = Some(bounded(value.into(), "the next count")?);
                Outcome::Go
            }
            GOp::Barrier => {
                r.counter = Some(counter - 1);
                r.at_barrier.push(who);
                Outcome::Wait
            }
            GOp::SemaV | GOp::SemaBr | GOp::SemaReleaseAll => {
                let add = match op {
                    GOp::SemaV => 1,
                    GOp::SemaBr => u64::from(value),
                    _ => r.at_p.len() as u64,
                };
                r.counter = Some(bounded(u64::from(counter) + add, "the counter")?);
                Outcome::Go
            }
            GOp::SemaP => {
                r.at_p.push_back(who);
                Outcome::Wait
            }
        };
        // Queued acquirers take what the counter now allows, in order.
        while let (Some(c @ 1..), Some(&w)) = (r.counter, r.at_p.front()) {
            r.counter = Some(c - 1);
            r.at_p.pop_front();
            if w == who {
                return Ok(Outcome::Go);
            }
            released.push(w);
        }
        Ok(outcome)
    }

    /// The resources waves wait on, for a deadlock's fault: what each
    /// waits for and how far it got.
    pub(super) fn waits(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (rid, r) in self.res.iter().enumerate() {
            let counter = r.counter.unwrap_or(0);
            if !r.at_barrier.is_empty() {
                let arrived = r.at_barrier.len();
                out.push(format!(
                    "ds_gws_barrier on GWS resource {rid}: {arrived} waves arrived of {} \
                     expected (a count of {}, the total minus one)",
                    arrived + counter as usize + 1,
                    arrived + counter as usize
                ));
            }
            if !r.at_p.is_empty() {
                out.push(format!(
                    "ds_gws_sema_p on GWS resource {rid}: {} waves wait for a release (counter \
                     {counter})",
                    r.at_p.len()
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn go(r: &mut Resources, who: usize, op: GOp, value: u32) -> (Outcome, Vec<usize>) {
        let mut released = Vec::new();
        let o = r
            .perform(who, Issue { op, rid: 3, value }, &mut released)
            .unwrap();
        (o, released)
    }

    #[test]
    fn a_barrier_of_count_minus_one_releases_on_the_last_arrival_and_rearms() {
        let mut r = Resources::default();
        assert_eq!(go(&mut r, 9, GOp::Init, 2), (Outcome::Go, vec![]));
        for next in [2, 1] {
            assert_eq!(go(&mut r, 0, GOp::Barrier, 7).0, Outcome::Wait, "{next}");
            assert_eq!(go(&mut r, 1, GOp::Barrier, 7).0, Outcome::Wait, "{next}");
            assert_eq!(go(&mut r, 2, GOp::Barrier, next), (Outcome::Go, vec![0, 1]));
        }
        // The last arrival's value (1) sized the next barrier: two waves.
        assert_eq!(go(&mut r, 2, GOp::Barrier, 1), (Outcome::Wait, vec![]));
        assert!(
            r.waits()[0].contains("1 waves arrived of 2"),
            "{:?}",
            r.waits()
        );
        assert_eq!(go(&mut r, 0, GOp::Barrier, 1), (Outcome::Go, vec![2]));
    }

    #[test]
    fn semaphores_release_queued_acquirers_in_order() {
        let mut r = Resources::default();
        go(&mut r, 9, GOp::Init, 1);
        assert_eq!(go(&mut r, 0, GOp::SemaP, 0), (Outcome::Go, vec![]));
        assert_eq!(go(&mut r, 1, GOp::SemaP, 0).0, Outcome::Wait);
        assert_eq!(go(&mut r, 2, GOp::SemaP, 0).0, Outcome::Wait);
        assert_eq!(go(&mut r, 3, GOp::SemaP, 0).0, Outcome::Wait);
        assert_eq!(go(&mut r, 0, GOp::SemaV, 0), (Outcome::Go, vec![1]));
        assert_eq!(go(&mut r, 0, GOp::SemaBr, 1), (Outcome::Go, vec![2]));
        assert_eq!(
            go(&mut r, 0, GOp::SemaReleaseAll, 0),
            (Outcome::Go, vec![3])
        );
        assert!(r.waits().is_empty());
    }

    #[test]
    fn undefined_uses_fault_naming_the_problem() {
        let mut r = Resources::default();
        let mut rel = Vec::new();
        let issue = |op, value| Issue { op, rid: 5, value };
        let e = r.perform(0, issue(GOp::Barrier, 0), &mut rel).unwrap_err();
        assert!(e.to_string().contains("no ds_gws_init"), "{e}");
        let e = r.perform(0, issue(GOp::Init, 4096), &mut rel).unwrap_err();
        assert!(e.to_string().contains("12-bit counter"), "{e}");
        r.perform(0, issue(GOp::Init, 1), &mut rel).unwrap();
        r.perform(0, issue(GOp::Barrier, 1), &mut rel).unwrap();
        let e = r.perform(1, issue(GOp::SemaP, 0), &mut rel).unwrap_err();
        assert!(e.to_string().contains("other type"), "{e}");
        let e = r.perform(1, issue(GOp::Init, 1), &mut rel).unwrap_err();
        assert!(e.to_string().contains("1 waves are queued"), "{e}");
    }
}
