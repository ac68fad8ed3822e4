//! The fast path: a dispatch whose transition from the previous dispatch is
//! cached (`template.rs`) is its kernarg copy, a few comparisons and a
//! count in the open run (`run.rs`), which writes the transition's words
//! later. A repeat with a shared kernarg block (immutable image, or
//! alignment above 16) goes through the one emitter.
//!
//! The dispatch comes as a template (`IbBuilder::intern`, or found from
//! the caller's values by `resolve`). Continuing a locked run is one
//! comparison with the step it expects; otherwise which transition it takes
//! is one comparison with the previous transition's memo of what followed
//! it (`Templates::next_step`); a miss falls back to a look-up, and
//! anything not cached to the general path. Before all of that, a locked
//! run whose checks are known ahead glides (`glide`): the key, length and
//! count comparisons and the kernarg copy, `last` rebuilt only when
//! something else looks (`settle`).

use super::run::{Beat, Run};
use super::template::{step_key, TemplateIx, TransitionId};
use super::IbBuilder;
use crate::boundary::EPILOGUE_DWORDS;
use crate::elide::TAG_KERNARG_LO;
use crate::emit;
use crate::ib::{DispatchId, DispatchSite};
use crate::kernarg::MIN_KERNARG_ALIGN;

/// Most dwords a repeated dispatch writes: an RMW boundary (10), the low
/// pointer dword's SET_SH_REG (3) and DISPATCH_DIRECT (5).
pub(super) const MAX_REPEAT_DWORDS: usize = 10 + 3 + 5;
/// `Last::transition` of a dispatch that took no cached transition.
pub(super) const NO_TRANSITION: TransitionId = TransitionId::MAX;

/// The previous dispatch, while the registers it programmed are what the
/// shadow holds (or will once `IbBuilder::sync_shadow` brings it up to
/// date).
#[derive(Debug, Clone, Copy)]
pub(super) struct Last {
    pub template: TemplateIx,
    /// The transition it took (`NO_TRANSITION`: none).
    pub transition: TransitionId,
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

impl IbBuilder {
    /// Record a dispatch of template `t` gliding (the open run locked and
    /// its next step known to pass every check up to `Run::until`): the
    /// kernarg copy, one key and one count comparison, nothing else stored
    /// but the count. `None` (nothing changed) when it does not apply;
    /// the caller then `settle`s.
    #[inline(always)]
    pub(super) fn glide(
        &mut self,
        t: TemplateIx,
        named_same: bool,
        kernarg: &[u8],
    ) -> Option<DispatchId> {
        let run = &self.run;
        // A repeat is one only if named by the same string (`Last::budget`).
        let admitted = named_same || run.glide_budget.is_none();
        if run.next.key != step_key(self.pending, t)
            || run.count >= run.until
            || kernarg.len() != run.next.klen as usize
            || !admitted
        {
            return None;
        }
        let id = self.sites.len() as u32 + run.count;
        self.kernargs.push_fresh(kernarg);
        self.pending = None;
        let next = self.run.next;
        self.run.accept(next);
        Some(id)
    }

    /// Start a glide after `continue_run` took a locked run's dispatch,
    /// where what it checks per dispatch is known ahead: a chain of one
    /// repeated template (its budget) or a period switching templates at
    /// every step (`Run::room_until`). A period mixing both does not
    /// glide.
    #[inline(always)]
    fn engage(&mut self, budget: Option<u32>) {
        let run = &mut self.run;
        let until = match budget {
            Some(left) if run.plen == 1 => run.count.saturating_add(left),
            None if run.switches => run.room_until,
            _ => return,
        };
        run.until = until;
        run.glide_from = run.count;
        run.glide_budget = budget;
    }

    /// End a glide: `last` rebuilt as `continue_run` would have kept it.
    #[inline(always)]
    pub(super) fn settle(&mut self) {
        if self.run.until != 0 {
            self.settle_glide();
        }
    }

    #[inline(never)]
    fn settle_glide(&mut self) {
        let run = &mut self.run;
        let glided = run.count - run.glide_from;
        run.until = 0;
        if glided == 0 {
            return;
        }
        let beat = run.latest();
        let x = &self.tables.transitions[beat.transition as usize];
        let last = Last {
            template: beat.template,
            transition: beat.transition,
            // The latest block is the image's last (a run's are fresh).
            koff: self.kernargs.len() as u32 - x.kernarg_stride,
            budget: run.glide_budget.map(|b| b - glided),
        };
        self.last = Some(last);
    }

    /// Record a dispatch of template `t` on the fast path, or return
    /// `None` (having changed nothing) when the general path must take it.
    /// `named_same`: the caller named the kernel by the string the
    /// template remembers (a repeat must, see `Last::budget`).
    #[inline(always)]
    pub(super) fn try_fast(
        &mut self,
        t: TemplateIx,
        named_same: bool,
        kernarg: &[u8],
    ) -> Option<DispatchId> {
        if let Some(id) = self.continue_run(t, named_same, kernarg) {
            return Some(id);
        }
        // Fields, not the whole `Last`: a wide load of what was just
        // stored field by field stalls on store forwarding.
        let (from, before) = match &self.last {
            Some(last) => (last.template, last.transition),
            None => return None,
        };
        let repeat = named_same && t == from;
        if !self.tables.templates[t as usize].fresh {
            // Shared blocks are only fast for repeats.
            return if repeat {
                self.repeat_shared(kernarg)
            } else {
                None
            };
        }
        let x = self.tables.next_step(from, before, self.pending, t)?;
        let beat = Beat::of(x, &self.tables.transitions[x as usize]);
        self.record_fast(t, beat, repeat, kernarg)
    }

    /// The next dispatch of a locked run (`run.rs`): the period's next
    /// step, admitted as `record_fast` would (a repeat by its counted
    /// budget, anything else by the room check), with nothing else to
    /// look up.
    #[inline(always)]
    fn continue_run(
        &mut self,
        t: TemplateIx,
        named_same: bool,
        kernarg: &[u8],
    ) -> Option<DispatchId> {
        let beat = self.run.expects(self.pending, t)?;
        let dispatches = self.sites.len() + self.run.count as usize;
        let last = self.last.as_mut()?;
        let budget = if named_same && t == last.template {
            // Not counted yet, or spent: `record_fast` decides.
            let left = last.budget.filter(|&left| left > 0)?;
            last.budget = Some(left - 1);
            last.transition = beat.transition;
            Some(left - 1)
        } else {
            // Room, ids and image as `record_fast` checks them, known to
            // last this far (`room_until`); past it, it looks.
            if self.run.count >= self.run.room_until {
                return None;
            }
            last.template = t;
            last.transition = beat.transition;
            last.budget = None;
            None
        };
        last.koff = self.kernargs.push_fresh(kernarg);
        self.pending = None;
        self.run.accept(beat);
        self.engage(budget);
        Some(dispatches as u32)
    }

    /// `Run::room_until` now: the run's count up to which the next
    /// dispatch of another template surely passes `record_fast`'s checks,
    /// each later dispatch counted at the longest transition, the largest
    /// fresh block and one id.
    fn room_until(&self) -> u32 {
        let open = self.open_dwords() + super::MAX_DISPATCH_DWORDS + EPILOGUE_DWORDS;
        let by_room = self.limit.saturating_sub(open) / self.tables.longest.max(1) as usize;
        let by_ids = (u32::MAX as usize - 1).saturating_sub(self.dispatch_count());
        let stride = self.tables.max_stride.max(MIN_KERNARG_ALIGN) as usize;
        let by_image = (u32::MAX as usize).saturating_sub(self.kernargs.len()) / stride;
        let more = by_room.min(by_ids).min(by_image);
        (self.run.count as usize)
            .saturating_add(more)
            .min(u32::MAX as usize) as u32
    }

    /// Repeats of `last`'s template left (counted now if not yet).
    #[inline(always)]
    pub(super) fn budget_left(&self, last: &Last) -> u32 {
        match last.budget {
            Some(left) => left,
            None => self.count_budget(last),
        }
    }

    /// `budget_left` at the first repeat: what the room allows now.
    #[inline(never)]
    fn count_budget(&self, last: &Last) -> u32 {
        let t = &self.tables.templates[last.template as usize];
        let room = (self.limit - EPILOGUE_DWORDS).saturating_sub(self.open_dwords());
        let shape = (t.kernarg_len as usize, t.kernarg_align);
        repeat_budget(room, self.kernargs.len(), self.dispatch_count(), shape)
    }

    /// Record a dispatch of template `t` taking `beat` after the previous
    /// dispatch (`repeat`: of the same template, named by the same
    /// string): its block appended, the run told.
    #[inline(always)]
    fn record_fast(
        &mut self,
        t: TemplateIx,
        beat: Beat,
        repeat: bool,
        kernarg: &[u8],
    ) -> Option<DispatchId> {
        let dispatches = self.dispatch_count();
        let left = match &self.last {
            Some(last) if repeat => self.budget_left(last),
            _ => 0,
        };
        let budget = if left > 0 {
            Some(left - 1)
        } else {
            // Where the general path would look (another template, or the
            // budget spent): it cuts the segment if it is full, and refuses
            // the dispatch past the id and kernarg image limits.
            if self.open_dwords() + super::MAX_DISPATCH_DWORDS + EPILOGUE_DWORDS > self.limit
                || dispatches >= u32::MAX as usize
                || self.kernargs.len() + kernarg.len() > u32::MAX as usize
            {
                return None;
            }
            None
        };
        let koff = self.kernargs.push_fresh(kernarg);
        self.pending = None;
        if !self.run.extend(beat) {
            self.flush_run(None);
            self.run = Run::start(beat, koff);
        }
        self.run.room_until = self.room_until();
        self.last = Some(Last {
            template: t,
            transition: beat.transition,
            koff,
            budget,
        });
        Some(dispatches as u32)
    }

    /// A repeat whose kernarg block may be shared (immutable image) or
    /// needs more than 16-byte alignment: placed and written at once.
    fn repeat_shared(&mut self, kernarg: &[u8]) -> Option<DispatchId> {
        let last = self.last?;
        let left = self.budget_left(&last);
        let align = self.tables.templates[last.template as usize].kernarg_align;
        // (A template the fast path follows has a kernarg pointer.)
        let lo = self.tables.templates[last.template as usize].lo_register()?;
        if left == 0 {
            return None;
        }
        // The budget keeps the block below 4 GiB, so `place` does not fail.
        let (koff, klen) = self.kernargs.place(kernarg, align).ok()?;
        // Shared blocks never join a run; one left open is written first.
        self.flush_run(None);
        let id = self.sites.len() as u32;
        if let Some(b) = self.pending.take() {
            b.emit(&mut self.w);
        }
        // Every register but the kernarg pointer's low dword holds the
        // previous dispatch's value (the same template; the high dword is
        // the base's): the shadow decides whether that one is written.
        let t = &self.tables.templates[last.template as usize];
        let lo_pointer = &mut self.lo_pointer;
        let value = [TAG_KERNARG_LO | koff as u64];
        self.shadow
            .write_tagged(&mut self.w, lo, &value, false, |pos, _| {
                lo_pointer.push(pos as u32)
            });
        let dispatch = self.w.len();
        emit::dispatch_direct(&mut self.w, t.st.groups, t.initiator);
        self.sites.push(DispatchSite {
            segment: self.segments.len() as u32,
            dispatch_dword: dispatch as u32,
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
