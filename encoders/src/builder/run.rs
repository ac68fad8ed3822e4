//! The open run: consecutive fast-path dispatches, kept as a count until
//! something else must write into the segment. A run is a period of up to
//! `MAX_PERIOD` cached transitions taken over and over: one transition for
//! a chain of the same dispatch, two for two kernels alternating, a
//! layer's dozen for a decode step. While the period has not repeated yet
//! each new transition joins it; once it has, the next dispatch must take
//! the period's next step (one comparison), or the run is written out and
//! a new one starts.
//!
//! Their kernarg blocks are back to back (fresh blocks, nothing placed
//! between them), so the run's words and sites are written in one pass,
//! one period copied over and over with its pointer values advanced: with
//! offsets `finish` patches when the run ends early, with the final
//! kernarg pointers when it ends at `finish`, so a steady stream's IB is
//! written once and never patched.

use super::template::{step_key, TemplateIx, Transition, TransitionId, SHORT};
use super::IbBuilder;
use crate::boundary::BoundaryKind;
use crate::ib::DispatchSite;

/// Longest period a run learns (the reference decode step's layer has 12
/// kernels).
pub(super) const MAX_PERIOD: usize = 16;

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

/// One step of a run's period: a transition, with what recording compares
/// and counts.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Beat {
    /// The transition's `step_key` (boundary and template it goes to).
    pub key: u64,
    pub transition: TransitionId,
    pub len: u32,
    /// The template it goes to, and that template's kernarg length (what
    /// a glide checks the caller's block against).
    pub template: TemplateIx,
    pub klen: u32,
}

impl Beat {
    /// The step taking transition `id`, whose entry is `x`.
    pub fn of(id: TransitionId, x: &Transition) -> Beat {
        Beat {
            key: x.key,
            transition: id,
            len: x.len,
            template: x.template,
            klen: x.kernarg_len,
        }
    }
}

/// Dispatches recorded on the fast path whose words are not written yet:
/// `count` of them, dispatch `j` taking `period[j % plen]`, the first
/// block at `first_kernarg`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Run {
    pub period: [Beat; MAX_PERIOD],
    pub plen: u32,
    /// Index of `next` in the period once locked (`count % plen`).
    pos: u32,
    pub count: u32,
    /// Words of the period's steps before step `i` (`prefix[plen]`: the
    /// period's): what `dwords()` counts from.
    prefix: [u32; MAX_PERIOD + 1],
    pub first_kernarg: u32,
    /// Dispatches the run may reach before a step that switches templates
    /// must look at the room again: up to here the segment, the dispatch
    /// ids and the kernarg image surely take one more (`IbBuilder::
    /// room_until`). Saves counting the run's words per dispatch.
    pub room_until: u32,
    /// The step the next dispatch must take once the period has repeated,
    /// else a beat whose key is `NO_KEY`: the one comparison a locked run's
    /// next dispatch costs.
    pub next: Beat,
    /// A glide (`fast.rs`): while `count < until`, the next dispatch taking
    /// `next` is checked for nothing else and `IbBuilder::last` is not
    /// kept (`IbBuilder::settle` rebuilds it). 0: no glide.
    pub until: u32,
    /// `count` when the glide began, and the repeat budget then (`None`:
    /// the period switches templates at every step, and leaves none).
    pub glide_from: u32,
    pub glide_budget: Option<u32>,
    /// Once locked: the period switches templates at every step (each
    /// step's template differs from the one before it, the last step's
    /// before the first). Known when the run locks; the period is fixed
    /// from then on.
    pub switches: bool,
}

/// `Run::next`'s key while a run is not locked (no step key is this large).
const NO_KEY: u64 = u64::MAX;

impl Default for Run {
    /// No run open.
    fn default() -> Self {
        Run {
            period: [Beat::default(); MAX_PERIOD],
            plen: 0,
            pos: 0,
            count: 0,
            prefix: [0; MAX_PERIOD + 1],
            first_kernarg: 0,
            room_until: 0,
            next: Beat {
                key: NO_KEY,
                ..Beat::default()
            },
            until: 0,
            glide_from: 0,
            glide_budget: None,
            switches: false,
        }
    }
}

impl Run {
    /// A run of one dispatch taking `beat`, its block at `koff`.
    pub fn start(beat: Beat, koff: u32) -> Run {
        let mut run = Run {
            plen: 1,
            count: 1,
            first_kernarg: koff,
            ..Run::default()
        };
        run.period[0] = beat;
        run.prefix[1] = beat.len;
        run
    }

    /// True once the period has repeated: the next dispatch must take
    /// `next`.
    #[inline(always)]
    pub fn locked(&self) -> bool {
        self.count > self.plen
    }

    /// The step the next dispatch takes if it continues the locked run
    /// after `boundary` to template `to`.
    #[inline(always)]
    pub fn expects(&self, boundary: Option<BoundaryKind>, to: TemplateIx) -> Option<Beat> {
        (self.next.key == step_key(boundary, to)).then_some(self.next)
    }

    /// Count one more dispatch taking `step`, the period's step after the
    /// previous dispatch's; the run is locked from then on.
    #[inline(always)]
    pub fn accept(&mut self, step: Beat) {
        self.count += 1;
        if self.plen > 1 {
            // From the index, not from `next` (a chain through memory).
            let pos = if self.pos + 1 == self.plen {
                0
            } else {
                self.pos + 1
            };
            self.pos = pos;
            self.next = self.period[pos as usize % MAX_PERIOD];
        } else if self.next.key != step.key {
            // A chain of one dispatch locks expecting its one step for good:
            // nothing more is stored per dispatch (the fast path is bound
            // by stores).
            self.next = step;
        }
    }

    /// The step the run's latest dispatch took, once locked.
    pub fn latest(&self) -> Beat {
        let before = if self.pos == 0 { self.plen } else { self.pos };
        self.period[(before as usize - 1) % MAX_PERIOD]
    }

    /// `switches`, from the period.
    fn switches_at_every_step(&self) -> bool {
        let period = &self.period[..self.plen as usize];
        let last = period.last().map(|b| b.template);
        let befores = last.into_iter().chain(period.iter().map(|b| b.template));
        period.len() > 1
            && period
                .iter()
                .zip(befores)
                .all(|(b, before)| b.template != before)
    }

    /// Take a dispatch taking `beat` (its block right after the run's) if
    /// it continues the run: the period's next step, or, while the period
    /// has not repeated, a new step of it. False when a new run must start.
    pub fn extend(&mut self, beat: Beat) -> bool {
        if self.count == 0 {
            return false;
        }
        let expected = if self.locked() {
            self.next
        } else {
            self.period[0]
        };
        if expected.transition == beat.transition {
            let locks = !self.locked();
            self.accept(expected);
            if locks {
                self.switches = self.switches_at_every_step();
            }
            return true;
        }
        if self.locked() || self.plen as usize == MAX_PERIOD {
            return false;
        }
        let plen = self.plen as usize;
        self.period[plen] = beat;
        self.prefix[plen + 1] = self.prefix[plen] + beat.len;
        self.plen += 1;
        self.count += 1;
        true
    }

    /// Words of the run's dispatches: whole periods, then the steps of
    /// the last one begun (not counted per dispatch: a division, off the
    /// fast path).
    pub fn dwords(&self) -> u32 {
        match self.plen {
            0 => 0,
            plen => {
                let (periods, steps) = (self.count / plen, self.count % plen);
                periods * self.prefix[plen as usize] + self.prefix[steps as usize]
            }
        }
    }
}

impl IbBuilder {
    /// Write the open run out: kernarg pointers for a block at `base`, or
    /// offsets for `finish` to patch (`None`).
    #[inline(always)]
    pub(super) fn flush_run(&mut self, base: Option<u64>) {
        if self.run.count != 0 {
            self.write_run(base);
        }
    }

    #[inline(never)]
    fn write_run(&mut self, base: Option<u64>) {
        let run = std::mem::take(&mut self.run);
        let plen = run.plen as usize;
        let period = &run.period[..plen];
        let segment = self.segments.len() as u32;
        let at = self.w.len() as u32;
        let (lo, hi) = base.map_or((0, 0), |b| (b as u32, (b >> 32) as u32));
        // Copy 0 of the period, each step's low pointer dword (and, with a
        // base, high one) in place; where each step starts in it, and its
        // site.
        let mut patches = [(0u32, 0u32); MAX_PERIOD];
        let mut starts = [0u32; MAX_PERIOD];
        let mut steps = [DispatchSite {
            segment,
            dispatch_dword: 0,
            kernarg_offset: 0,
            kernarg_len: 0,
            kernel: 0,
        }; MAX_PERIOD];
        let (mut words, mut kernarg) = (0u32, run.first_kernarg);
        for (i, beat) in period.iter().enumerate() {
            let x = &self.tables.transitions[beat.transition as usize];
            if x.len as usize <= SHORT {
                self.w
                    .put_prefix(self.tables.short_words_of(x), x.len as usize);
            } else {
                self.w.put_slice(self.tables.words_of(x));
            }
            if let (Some(h), Some(_)) = (x.hi_at, base) {
                self.w.as_mut_slice()[(at + words + h) as usize] = hi;
            }
            starts[i] = words;
            patches[i] = (words + x.lo_at, lo.wrapping_add(kernarg));
            steps[i] = DispatchSite {
                segment,
                dispatch_dword: at + words + x.dispatch_at,
                kernarg_offset: kernarg,
                kernarg_len: x.kernarg_len,
                kernel: x.kernel,
            };
            words += x.len;
            kernarg += x.kernarg_stride;
        }
        let (period_words, period_kernarg) = (words, kernarg - run.first_kernarg);
        let patches = &patches[..plen];
        self.w.repeat_tail(
            words as usize,
            run.dwords() as usize,
            patches,
            period_kernarg,
        );

        // What `finish` fills in or adds to, step by step: dispatches
        // `i`, `i + plen`, ... of the run are `count_of(i)` equally spaced
        // ones.
        let copies = run.count as usize / plen;
        let count_of = |i: usize| (copies + usize::from(i < run.count as usize % plen)) as u32;
        for (i, beat) in period.iter().enumerate() {
            let x = &self.tables.transitions[beat.transition as usize];
            let first = at + starts[i];
            let count = count_of(i);
            if base.is_none() {
                match count {
                    1 => self.lo_pointer.push(first + x.lo_at),
                    _ => self.lo_runs.push(PatchRun {
                        segment,
                        first: first + x.lo_at,
                        stride: period_words,
                        count,
                    }),
                }
                if let Some(h) = x.hi_at {
                    let positions = (0..count).map(|c| (segment, first + h + c * period_words));
                    self.hi_pointer.extend(positions);
                }
            }
        }
        // Sites in dispatch order (step `i` of copy `c` is `c` periods of
        // words and blocks after step `i` of copy 0): copy 0's, then the
        // sites so far copied whole (doubling) with their dword and block
        // moved on by the copies they skip.
        let first = self.sites.len();
        let count = run.count as usize;
        self.sites.extend_from_slice(&steps[..plen.min(count)]);
        let mut have = plen.min(count);
        while have < count {
            let more = have.min(count - have);
            let skip = (have / plen) as u32;
            self.sites.extend_from_within(first..first + more);
            let (words, kernarg) = (skip * period_words, skip.wrapping_mul(period_kernarg));
            for site in &mut self.sites[first + have..] {
                site.dispatch_dword += words;
                site.kernarg_offset = site.kernarg_offset.wrapping_add(kernarg);
            }
            have += more;
        }
    }
}
