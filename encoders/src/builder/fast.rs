//! The fast path: a dispatch whose transition from the previous dispatch is
//! cached (`template.rs`) is its kernarg copy and a few comparisons. With
//! fresh kernarg blocks its words are not written yet: the dispatch joins
//! the log (runs of one transition, blocks back to back), which is written
//! out in one pass when something else must write (the general path, a
//! segment's end, another emitter) or at `finish`, then with the final
//! kernarg addresses, so a steady stream's IB is written once and never
//! patched. A repeat with a shared kernarg block (immutable image, or
//! alignment above 16) is written at once through the one emitter.
//!
//! Which transition comes next is guessed from the last two (a decode
//! step's rmsnorm is followed by one projection or the other depending on
//! where in the layer it is), and the guess is checked whole: the previous
//! dispatch's template, the pending boundary, and the caller's kernel,
//! launch and kernarg shape against the template's identity. A wrong guess
//! falls back to a look-up, and anything not cached to the general path.

use super::template::{Next, TemplateId, TransitionId, SHORT, STATE_RUNS, USER_AT};
use super::IbBuilder;
use crate::boundary::EPILOGUE_DWORDS;
use crate::dispatch::{KernelCode, Launch};
use crate::ib::{DispatchId, DispatchSite};
use crate::regs::off;

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
    pub budget: u32,
}

/// Equally spaced low kernarg-pointer dwords in one segment, each holding
/// its block's offset until `finish` adds the base's low dword.
#[derive(Debug, Clone, Copy)]
pub(super) struct PatchRun {
    pub segment: u32,
    /// Dword index of the first.
    pub first: u32,
    pub stride: u32,
    pub count: u32,
}

/// Consecutive dispatches taking one transition (so all but maybe the
/// first are repeats of its template), blocks `kernarg_stride` apart.
#[derive(Debug, Clone, Copy)]
struct Run {
    transition: TransitionId,
    first_kernarg: u32,
    count: u32,
}

/// Dispatches recorded on the fast path whose words are not written yet.
#[derive(Debug, Default)]
pub(super) struct Log {
    runs: Vec<Run>,
    pub dispatches: usize,
    pub dwords: usize,
}

impl Log {
    pub fn reserve(&mut self, runs: usize) {
        self.runs.reserve(runs);
    }
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
        let t = &self.tables.templates[next.template as usize];
        let dispatches = self.sites.len() + self.log.dispatches;
        let budget = if repeat && last.budget > 0 {
            last.budget - 1
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
            let room = (self.limit - EPILOGUE_DWORDS).saturating_sub(dwords + len);
            let shape = (t.kernarg_len as usize, t.kernarg_align);
            repeat_budget(
                room,
                image + t.kernarg_stride as usize,
                dispatches + 1,
                shape,
            )
        };
        let koff = self.kernargs.push_fresh(kernarg);
        self.pending = None;
        let log = &mut self.log;
        match log.runs.last_mut() {
            Some(r) if r.transition == next.transition => r.count += 1,
            _ => log.runs.push(Run {
                transition: next.transition,
                first_kernarg: koff,
                count: 1,
            }),
        }
        log.dispatches += 1;
        log.dwords += len;
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
        if last.budget == 0 {
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
        let written = self.emit_dispatch(last.template, koff, false);
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
            budget: last.budget - 1,
            ..last
        });
        Some(id)
    }

    /// Write out the log: its dwords (with final kernarg pointers when
    /// `base`, the kernarg base, is known, else with offsets to patch at
    /// `finish`) and sites, and bring the shadow up to date.
    pub(super) fn end_run(&mut self, base: Option<u64>) {
        if self.log.runs.is_empty() {
            return;
        }
        let segment = self.segments.len() as u32;
        let (w, tables) = (&mut self.w, &self.tables);
        w.reserve_total(w.len() + self.log.dwords + EPILOGUE_DWORDS);
        self.sites.reserve(self.log.dispatches);
        for run in self.log.runs.drain(..) {
            let x = &tables.transitions[run.transition as usize];
            let (len, stride, lo_at) = (x.len, x.kernarg_stride, x.lo_at as usize);
            let at = w.len();
            let first = base.map_or(run.first_kernarg, |b| {
                (b as u32).wrapping_add(run.first_kernarg)
            });
            if run.count == 1 && len as usize <= SHORT {
                // One dispatch (a kernel switch, most often): one copy.
                w.put_prefix(tables.short_words_of(x), len as usize);
                w.as_mut_slice()[at + lo_at] = first;
            } else {
                w.put_run(tables.words_of(x), lo_at, first, stride, run.count as usize);
            }
            if let Some(hi) = x.hi_at {
                for i in 0..run.count as usize {
                    let pos = at + hi as usize + i * len as usize;
                    match base {
                        Some(b) => w.as_mut_slice()[pos] = (b >> 32) as u32,
                        None => self.hi_pointer.push((segment, pos as u32)),
                    }
                }
            }
            if base.is_none() {
                self.lo_runs.push(PatchRun {
                    segment,
                    first: (at + lo_at) as u32,
                    stride: len,
                    count: run.count,
                });
            }
            let (kernel, klen) = (x.kernel, x.kernarg_len);
            let mut dword = at as u32 + x.dispatch_at;
            let mut offset = run.first_kernarg;
            if run.count == 1 {
                self.sites.push(DispatchSite {
                    segment,
                    dispatch_dword: dword,
                    kernarg_offset: offset,
                    kernarg_len: klen,
                    kernel,
                });
                continue;
            }
            self.sites.extend((0..run.count).map(|_| {
                let site = DispatchSite {
                    segment,
                    dispatch_dword: dword,
                    kernarg_offset: offset,
                    kernarg_len: klen,
                    kernel,
                };
                dword = dword.wrapping_add(len);
                offset = offset.wrapping_add(stride);
                site
            }));
        }
        self.log.dispatches = 0;
        self.log.dwords = 0;
        // Every logged dispatch programmed the same registers (transitions
        // keep the USER_DATA count), so the last one's values are the
        // shadow's.
        if let Some(last) = self.last {
            let t = &self.tables.templates[last.template as usize];
            let image = t.image(last.koff);
            for (first, from, to) in STATE_RUNS {
                self.shadow.assign(first, &image[from..to]);
            }
            let user = &image[USER_AT..USER_AT + t.user];
            self.shadow.assign(off::COMPUTE_USER_DATA_0, user);
        }
    }
}
