//! The fast path: a dispatch whose transition from the previous dispatch is
//! cached (`template.rs`) is its kernarg copy and a few comparisons. With
//! fresh kernarg blocks its words are not written yet: the dispatch joins
//! the log (`log.rs`). A repeat with a shared kernarg block (immutable
//! image, or alignment above 16) is written at once through the one
//! emitter.
//!
//! Which transition comes next is guessed from the last two (a decode
//! step's rmsnorm is followed by one projection or the other depending on
//! where in the layer it is), and the guess is checked whole: the previous
//! dispatch's template, the pending boundary, and the caller's kernel,
//! launch and kernarg shape against the template's identity. A wrong guess
//! falls back to a look-up, and anything not cached to the general path.

use super::template::{Next, TemplateId, TransitionId};
use super::IbBuilder;
use crate::boundary::EPILOGUE_DWORDS;
use crate::dispatch::{KernelCode, Launch};
use crate::ib::{DispatchId, DispatchSite};

/// Most dwords a repeated dispatch writes: an RMW boundary (10), the low
/// pointer dword's SET_SH_REG (3) and DISPATCH_DIRECT (5).
pub(super) const MAX_REPEAT_DWORDS: usize = 10 + 3 + 5;
/// `Last::transition` of a dispatch that took no cached transition.
pub(super) const NO_TRANSITION: TransitionId = TransitionId::MAX;
/// Slots of the table of guesses (direct-mapped on the last two
/// transitions; a collision costs a look-up, never a wrong dispatch).
const GUESS_SLOTS: usize = 512;

/// The previous dispatch, while the registers it programmed are what the
/// shadow holds (or will once the log is written).
#[derive(Debug, Clone, Copy)]
pub(super) struct Last {
    pub template: TemplateId,
    /// The transition it took and the one before it (`NO_TRANSITION`).
    pub transition: TransitionId,
    pub before: TransitionId,
    /// Its kernarg block's offset.
    pub koff: u32,
    /// Repeats of `template` (the same kernel, by the same symbol string,
    /// launch and kernarg shape) that may follow before the general path
    /// looks again. Segments are cut only where it looks (another template,
    /// or the budget spent), so this is kept as it always was
    /// (`repeat_budget`): the IB's bytes do not depend on what is cached.
    /// `None` until the first repeat: nothing is written between a
    /// dispatch and the next, so the room the budget counts from is the
    /// room the builder has then.
    pub budget: Option<u32>,
}

/// Repeats a template may take after a dispatch that leaves `room_dwords`
/// in the segment, the image at `image_len` bytes and `dispatches`
/// recorded: each repeat counted at its largest in the segment, in the
/// kernarg image below 4 GiB and in dispatch ids.
pub(super) fn repeat_budget(
    room_dwords: usize,
    image_len: usize,
    dispatches: usize,
    kernarg: (usize, u32),
) -> u32 {
    let (len, align) = kernarg;
    // A block takes at most its length rounded up to 16 plus the
    // alignment padding before it.
    let block = (len.div_ceil(16) * 16 + align as usize).max(1);
    let by_room = room_dwords / MAX_REPEAT_DWORDS;
    let image_left = (u32::MAX as usize).saturating_sub(image_len);
    // min(by_room, image_left / block) without dividing in the usual case.
    let by_image = if by_room.saturating_mul(block) <= image_left {
        by_room
    } else {
        image_left / block
    };
    let by_ids = (u32::MAX as usize - 1).saturating_sub(dispatches);
    by_room.min(by_image).min(by_ids).min(u32::MAX as usize) as u32
}

/// Fibonacci hashing of the pair: every bit of both ids reaches the top
/// bits, which pick the slot.
#[inline(always)]
fn guess_slot(before: TransitionId, transition: TransitionId) -> usize {
    let pair = (before as u64) << 32 | transition as u64;
    let h = pair.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> (64 - GUESS_SLOTS.trailing_zeros())) as usize
}

/// The guesses, allocated with the first transition.
#[derive(Debug, Default)]
pub(super) struct Guesses {
    slots: Vec<Option<Next>>,
}

impl Guesses {
    #[inline(always)]
    fn get(&self, last: &Last) -> Option<Next> {
        *self.slots.get(guess_slot(last.before, last.transition))?
    }

    pub fn set(&mut self, last: &Last, next: Next) {
        if self.slots.is_empty() {
            self.slots = vec![None; GUESS_SLOTS];
        }
        self.slots[guess_slot(last.before, last.transition)] = Some(next);
    }
}

impl IbBuilder {
    /// Record the dispatch on the fast path, or return `None` (having
    /// changed nothing) when the general path must take it.
    #[inline(always)]
    pub(super) fn try_fast(
        &mut self,
        code: &KernelCode<'_>,
        launch: &Launch,
        kernarg: &[u8],
        kernarg_align: u32,
    ) -> Option<DispatchId> {
        let last = self.last?;
        let shape = (kernarg.len(), kernarg_align);
        if let Some(n) = self.guesses.get(&last) {
            if n.from == last.template
                && n.boundary == self.pending
                && self.tables.templates[n.template as usize].matches(code, launch, shape)
            {
                return self.record_fast(last, n, n.template == last.template, kernarg);
            }
        }
        let t = &self.tables.templates[last.template as usize];
        if !t.fresh && t.matches(code, launch, shape) {
            return self.repeat_shared(last, kernarg, kernarg_align);
        }
        self.look_up(last, code, launch, kernarg, kernarg_align)
    }

    /// Repeats of `last`'s template left (counted now if not yet).
    pub(super) fn budget_left(&self, last: &Last) -> u32 {
        last.budget.unwrap_or_else(|| {
            let t = &self.tables.templates[last.template as usize];
            let dwords = self.w.len() + self.log.dwords;
            let room = (self.limit - EPILOGUE_DWORDS).saturating_sub(dwords);
            let shape = (t.kernarg_len as usize, t.kernarg_align);
            repeat_budget(room, self.kernargs.len(), self.dispatch_count(), shape)
        })
    }

    /// The fast path when the guess was wrong: find the template and the
    /// transition, or the repeat with a shared block.
    #[inline(never)]
    fn look_up(
        &mut self,
        last: Last,
        code: &KernelCode<'_>,
        launch: &Launch,
        kernarg: &[u8],
        kernarg_align: u32,
    ) -> Option<DispatchId> {
        let shape = (kernarg.len(), kernarg_align);
        let k = self.find_kernel(code)?;
        let t = self.tables.find(k as u32, launch, shape)?;
        let tpl = &self.tables.templates[t as usize];
        // Shared blocks are only fast for repeats, caught above.
        if !tpl.fresh {
            return None;
        }
        let same = tpl.matches(code, launch, shape);
        let transition = self.tables.step(last.template, self.pending, t)?;
        if !same {
            self.tables.remember_symbol(t, code);
        }
        let next = Next {
            from: last.template,
            boundary: self.pending,
            template: t,
            transition,
        };
        self.guesses.set(&last, next);
        // A repeat names the kernel by the same string (see `Last::budget`).
        self.record_fast(last, next, same && t == last.template, kernarg)
    }

    /// Log a dispatch taking transition `next` after `last` (`repeat`: of
    /// the same template, with the same symbol string).
    #[inline(always)]
    fn record_fast(
        &mut self,
        last: Last,
        next: Next,
        repeat: bool,
        kernarg: &[u8],
    ) -> Option<DispatchId> {
        let x = &self.tables.transitions[next.transition as usize];
        let len = x.len as usize;
        let dispatches = self.sites.len() + self.log.dispatches;
        let left = if repeat { self.budget_left(&last) } else { 0 };
        let budget = if left > 0 {
            Some(left - 1)
        } else {
            // Where the general path would look (another template, or the
            // budget spent): it cuts the segment if it is full, and refuses
            // the dispatch past the id and kernarg image limits.
            let dwords = self.w.len() + self.log.dwords;
            let image = self.kernargs.len();
            if dwords + super::MAX_DISPATCH_DWORDS + EPILOGUE_DWORDS > self.limit
                || dispatches >= u32::MAX as usize
                || image + kernarg.len() > u32::MAX as usize
            {
                return None;
            }
            None
        };
        let koff = self.kernargs.push_fresh(kernarg);
        self.pending = None;
        self.log.push(next.transition, koff, len);
        self.last = Some(Last {
            template: next.template,
            transition: next.transition,
            before: last.transition,
            koff,
            budget,
        });
        Some(dispatches as u32)
    }

    /// A repeat whose kernarg block may be shared (immutable image) or
    /// needs more than 16-byte alignment: placed and written at once.
    fn repeat_shared(&mut self, last: Last, kernarg: &[u8], align: u32) -> Option<DispatchId> {
        let left = self.budget_left(&last);
        if left == 0 {
            return None;
        }
        debug_assert_eq!(self.log.dispatches, 0, "shared blocks are never logged");
        // The budget keeps the block below 4 GiB, so `place` does not fail.
        let (koff, klen) = self.kernargs.place(kernarg, align).ok()?;
        let id = self.sites.len() as u32;
        if let Some(b) = self.pending.take() {
            b.emit(&mut self.w);
        }
        // The state registers are the previous dispatch's: only USER_DATA
        // can change (the kernarg pointer).
        let written = self.emit_dispatch(last.template, koff, None, false);
        let t = &self.tables.templates[last.template as usize];
        self.sites.push(DispatchSite {
            segment: self.segments.len() as u32,
            dispatch_dword: written.dispatch as u32,
            kernarg_offset: koff,
            kernarg_len: klen,
            kernel: t.kernel,
        });
        self.last = Some(Last {
            koff,
            budget: Some(left - 1),
            ..last
        });
        Some(id)
    }
}
