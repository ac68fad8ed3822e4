//! The general path: every dispatch the fast path does not take goes
//! through the one emitter (`emit_dispatch`), which writes the registers
//! the shadow says changed and DISPATCH_DIRECT; what it wrote is cached as
//! the transition from the previous dispatch's template where nothing else
//! could change it (`Templates::transition_allowed`).

use super::template::{TemplateIx, STATE_RUNS, USER_AT};
use super::{IbBuilder, Last, MAX_DISPATCH_DWORDS, NO_TRANSITION};
use crate::boundary::EPILOGUE_DWORDS;
use crate::dispatch_packet::{DispatchPacketImage, DISPATCH_PACKET_ALIGN};
use crate::elide::{TAG_KERNARG_HI, TAG_SCRATCH};
use crate::emit;
use crate::error::EncodeError;
use crate::ib::{DispatchId, DispatchSite};
use crate::regs::off;
use crate::scratch::{dispatch_base_registers, Word};

/// Most dwords a dispatch with scratch adds: COMPUTE_TMPRING_SIZE (3) and
/// the dispatch scratch base pair (4), each in its own SET_SH_REG.
const SCRATCH_RING_DWORDS: usize = 3 + 4;

/// Where `emit_dispatch` wrote a dispatch's placeholders and packet.
struct Written {
    lo: Option<usize>,
    hi: Option<usize>,
    dispatch: usize,
}

impl IbBuilder {
    /// Every dispatch the fast path does not take: finds or makes its
    /// template (the checks), writes what changed, and caches that as the
    /// transition from the previous dispatch where it may.
    #[inline(never)]
    pub(super) fn dispatch_general(
        &mut self,
        t: TemplateIx,
        same: bool,
        kernarg: &[u8],
    ) -> Result<DispatchId, EncodeError> {
        let before = self.last;
        // Until a dispatch is recorded here, the next one looks here too.
        if let Some(last) = &mut self.last {
            last.budget = Some(0);
        }
        let tpl = &self.tables.templates[t as usize];
        let (k, kernarg_align, launch) = (tpl.kernel as usize, tpl.kernarg_align, *tpl.launch());
        // A repeat within its budget whose transition is not cached yet:
        // where the segment is cut must not depend on the cache.
        let kept_budget = match before {
            Some(b) if same && b.template == t => match self.budget_left(&b) {
                0 => None,
                left => Some(left - 1),
            },
            _ => None,
        };
        let id = self.dispatch_count();
        if id >= u32::MAX as usize {
            return Err(EncodeError::TooManyDispatches { max: u32::MAX - 1 });
        }
        let id = id as u32;
        let (koff, klen) = self.kernargs.place(kernarg, kernarg_align)?;
        let p = &self.prepared[k];
        let packet = if p.sgprs.dispatch_ptr {
            let mut image =
                DispatchPacketImage::for_launch(p.kd_address, &launch, p.static_lds, koff.into());
            // What HIP puts in an AQL packet: the kernel's private size.
            image.private_segment_size = p.private_bytes;
            let (at, _) = self
                .kernargs
                .place(&image.to_bytes(), DISPATCH_PACKET_ALIGN)?;
            self.packets.push((id, at));
            Some(at)
        } else {
            None
        };

        // The run's words come before this dispatch's.
        self.flush_run(None);
        let ring = self.prepared[k].ring;
        let most = MAX_DISPATCH_DWORDS + if ring { SCRATCH_RING_DWORDS } else { 0 };
        if kept_budget.is_none() && self.w.len() + most + EPILOGUE_DWORDS > self.limit {
            self.close_segment();
        } else {
            self.sync_shadow();
        }
        let start = self.w.len();
        let boundary = self.pending.take();
        if let Some(b) = boundary {
            if id > 0 {
                b.emit(&mut self.w);
            }
        }
        let written = self.emit_dispatch(t, koff, packet);
        debug_assert!(self.w.len() + EPILOGUE_DWORDS <= self.limit);
        let tpl = &self.tables.templates[t as usize];
        self.sites.push(DispatchSite {
            segment: self.segments.len() as u32,
            dispatch_dword: written.dispatch as u32,
            kernarg_offset: koff,
            kernarg_len: klen,
            kernel: tpl.kernel,
        });
        let prev = self.last.take();
        let p = &self.prepared[k];
        if p.ring {
            let lanes = if p.wave64 { 64 } else { 32 };
            let threads: u32 = launch.block.iter().product();
            self.scratch_need.add(p.wave_bytes, threads.div_ceil(lanes));
        }
        // A dispatch packet is placed per dispatch, so such a dispatch is
        // never a transition the fast path could repeat; nor is one with
        // scratch placeholders (only the general path notes where they are).
        if self.opts.full_state || !p.sgprs.kernarg_ptr || p.sgprs.dispatch_ptr || p.ring {
            // Nothing the next dispatch could repeat without looking.
            return Ok(id);
        }
        let transition = match (prev, written.lo) {
            (Some(p), Some(lo)) if self.tables.transition_allowed(p.template, t) => {
                let step = (p.template, boundary, t);
                let x = match self.tables.step(step.0, step.1, step.2) {
                    Some(x) => x,
                    None => {
                        let hi = written.hi.map(|h| h - start);
                        let words = &self.w.as_slice()[start..];
                        let d = written.dispatch - start;
                        let x = self.tables.add_transition(step, words, lo - start, hi, d);
                        // IB room by the longest transition, for what
                        // `reserve` announced (within the segment).
                        let left = self.reserved.saturating_sub(self.sites.len());
                        let longest = self.tables.longest as usize;
                        let total = self.w.len().saturating_add(left.saturating_mul(longest));
                        self.w.reserve_total(total.min(self.limit));
                        x
                    }
                };
                x
            }
            _ => NO_TRANSITION,
        };
        self.last = Some(Last {
            template: t,
            transition,
            koff,
            budget: kept_budget,
        });
        Ok(id)
    }

    /// The one emitter of a dispatch: write template `t`'s registers with
    /// its kernarg block at `koff` (and its dispatch packet at `packet`)
    /// where the shadow says they changed (all of them in full state), then
    /// DISPATCH_DIRECT. Low pointer dwords (offsets until `finish`) and high
    /// ones (filled at `finish`) are noted for patching.
    fn emit_dispatch(&mut self, t: TemplateIx, koff: u32, packet: Option<u32>) -> Written {
        let full = self.opts.full_state;
        let tpl = &self.tables.templates[t as usize];
        let image = tpl.image(koff, packet);
        let segment = self.segments.len() as u32;
        let (sh, w) = (&mut self.shadow, &mut self.w);
        for (first, from, to) in STATE_RUNS {
            sh.write_tagged(w, first, &image[from..to], full, |_, _| {});
        }
        let scratch_at = &mut self.scratch_at;
        let mut note_scratch = |pos: usize, tag: u64| {
            scratch_at.push((segment, pos as u32, tag as u32));
        };
        if self.prepared[tpl.kernel as usize].ring {
            // The IB's ring, before the dispatch that uses it (the same
            // values all IB long, so written once per segment).
            let tag = |w: Word| TAG_SCRATCH | w as u64;
            sh.write_tagged(
                w,
                off::COMPUTE_TMPRING_SIZE,
                &[tag(Word::TmpringSize)],
                full,
                &mut note_scratch,
            );
            if dispatch_base_registers(self.family) {
                let base = [tag(Word::DispatchBaseLo), tag(Word::DispatchBaseHi)];
                sh.write_tagged(
                    w,
                    off::COMPUTE_DISPATCH_SCRATCH_BASE_LO,
                    &base,
                    full,
                    &mut note_scratch,
                );
            }
        }
        let (mut lo, mut hi) = (None, None);
        let (lo_pointer, hi_pointer) = (&mut self.lo_pointer, &mut self.hi_pointer);
        let user = &image[USER_AT..USER_AT + tpl.user];
        sh.write_tagged(w, off::COMPUTE_USER_DATA_0, user, full, |pos, tag| {
            if tag & TAG_SCRATCH != 0 {
                note_scratch(pos, tag);
            } else if tag & TAG_KERNARG_HI != 0 {
                hi_pointer.push((segment, pos as u32));
                hi = Some(pos);
            } else {
                lo_pointer.push(pos as u32);
                lo = Some(pos);
            }
        });
        let dispatch = w.len();
        emit::dispatch_direct(w, tpl.st.groups, tpl.initiator);
        Written { lo, hi, dispatch }
    }

    /// Bring the shadow up to date with the previous dispatch, whose words
    /// the fast path copied without it. Every dispatch since the general
    /// path last wrote programmed the same registers (transitions keep the
    /// USER_DATA count), so the previous one's values are the shadow's.
    fn sync_shadow(&mut self) {
        if let Some(last) = self.last {
            let t = &self.tables.templates[last.template as usize];
            let image = t.image(last.koff, None);
            for (first, from, to) in STATE_RUNS {
                self.shadow.assign(first, &image[from..to]);
            }
            self.shadow
                .assign(off::COMPUTE_USER_DATA_0, &image[USER_AT..USER_AT + t.user]);
        }
    }

    /// Forget the previous dispatch (the shadow brought up to date), so the
    /// next one takes the general path: what an emitter of other packets
    /// between dispatches (`transfer.rs`) calls before it writes.
    pub(super) fn end_repeat(&mut self) {
        self.settle();
        self.flush_run(None);
        self.sync_shadow();
        self.last = None;
    }
}
