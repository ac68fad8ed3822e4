//! The open run: consecutive fast-path dispatches taking one transition
//! (a chain of the same dispatch, most often), kept as a count until
//! something else must write into the segment. Their kernarg blocks are
//! back to back (fresh blocks, nothing placed between them), so the run's
//! words and sites are written in one pass: with offsets `finish` patches
//! when the run ends early, with the final kernarg pointers when it ends
//! at `finish`, so a steady chain's IB is written once and never patched.

use super::template::{TemplateIx, TransitionId, SHORT};
use super::IbBuilder;
use crate::boundary::BoundaryKind;
use crate::ib::DispatchSite;

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

/// Dispatches recorded on the fast path whose words are not written yet:
/// `count` of `transition`, the first block at `first_kernarg`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Run {
    pub transition: TransitionId,
    /// The transition's template (repeating), boundary and dwords.
    pub template: TemplateIx,
    pub boundary: Option<BoundaryKind>,
    pub len: u32,
    pub first_kernarg: u32,
    pub count: u32,
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
        let x = &self.tables.transitions[run.transition as usize];
        let segment = self.segments.len() as u32;
        let at = self.w.len() as u32;
        let (lo, hi) = base.map_or((0, 0), |b| (b as u32, (b >> 32) as u32));
        let first = lo.wrapping_add(run.first_kernarg);
        if run.count == 1 && x.len as usize <= SHORT {
            // One dispatch (a kernel switch, most often): one fixed copy.
            self.w
                .put_prefix(self.tables.short_words_of(x), x.len as usize);
            self.w.as_mut_slice()[(at + x.lo_at) as usize] = first;
        } else {
            let words = self.tables.words_of(x);
            let count = run.count as usize;
            self.w
                .put_run(words, x.lo_at as usize, first, x.kernarg_stride, count);
        }
        if base.is_none() {
            self.lo_runs.push(PatchRun {
                segment,
                first: at + x.lo_at,
                stride: x.len,
                count: run.count,
            });
        }
        if let Some(h) = x.hi_at {
            let d = &mut self.w.as_mut_slice()[at as usize..];
            for i in 0..run.count {
                let pos = h + i * x.len;
                d[pos as usize] = hi;
                if base.is_none() {
                    self.hi_pointer.push((segment, at + pos));
                }
            }
        }
        let (len, stride) = (x.len, x.kernarg_stride);
        let (kernel, kernarg_len) = (x.kernel, x.kernarg_len);
        let (mut dispatch, mut offset) = (at + x.dispatch_at, run.first_kernarg);
        self.sites.extend((0..run.count).map(|_| {
            let site = DispatchSite {
                segment,
                dispatch_dword: dispatch,
                kernarg_offset: offset,
                kernarg_len,
                kernel,
            };
            dispatch = dispatch.wrapping_add(len);
            offset = offset.wrapping_add(stride);
            site
        }));
    }
}
