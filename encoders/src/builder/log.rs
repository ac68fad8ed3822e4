//! The log: fast-path dispatches whose words are not written yet, as runs
//! of one transition with their kernarg blocks back to back. Nothing
//! about a logged dispatch is left to decide, so the log is written out in
//! one pass: when something else must write into the segment (the general
//! path, another emitter) with offsets for `finish` to patch; and when a
//! segment closes or at `finish`, with the final kernarg addresses at
//! `finish` (a closed segment's sites are known at once, its words wait),
//! so a steady stream's IB is written once and never patched.

use super::template::{Templates, TransitionId, SHORT, STATE_RUNS, USER_AT};
use super::IbBuilder;
use crate::boundary::EPILOGUE_DWORDS;
use crate::ib::DispatchSite;
use crate::regs::off;
use crate::writer::DwordWriter;

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

/// A closed segment's log: its sites are recorded, its words go after the
/// segment's other dwords at `finish`.
#[derive(Debug)]
struct Parked {
    segment: u32,
    runs: Vec<Run>,
    dwords: usize,
}

/// Dispatches recorded on the fast path whose words are not written yet.
#[derive(Debug, Default)]
pub(super) struct Log {
    runs: Vec<Run>,
    pub dispatches: usize,
    pub dwords: usize,
    parked: Vec<Parked>,
    /// Dwords of the parked logs.
    pub parked_dwords: usize,
}

impl Log {
    pub fn reserve(&mut self, runs: usize) {
        self.runs.reserve(runs);
    }

    /// Log a dispatch taking `transition` (`len` dwords) with its block at
    /// `koff`.
    #[inline(always)]
    pub fn push(&mut self, transition: TransitionId, koff: u32, len: usize) {
        match self.runs.last_mut() {
            Some(r) if r.transition == transition => r.count += 1,
            _ => self.runs.push(Run {
                transition,
                first_kernarg: koff,
                count: 1,
            }),
        }
        self.dispatches += 1;
        self.dwords += len;
    }
}

/// Append `runs`' words to `w`: low pointer dwords `base_lo` + the block's
/// offset, high ones `base_hi` (zeros: offsets and placeholders to patch).
fn write_words(w: &mut DwordWriter, tables: &Templates, runs: &[Run], base_lo: u32, base_hi: u32) {
    for run in runs {
        let x = &tables.transitions[run.transition as usize];
        let (len, lo_at) = (x.len as usize, x.lo_at as usize);
        let at = w.len();
        let first = base_lo.wrapping_add(run.first_kernarg);
        if run.count == 1 && len <= SHORT {
            // One dispatch (a kernel switch, most often): one fixed copy.
            w.put_prefix(tables.short_words_of(x), len);
            w.as_mut_slice()[at + lo_at] = first;
        } else {
            let count = run.count as usize;
            w.put_run(tables.words_of(x), lo_at, first, x.kernarg_stride, count);
        }
        if let Some(hi) = x.hi_at {
            let d = &mut w.as_mut_slice()[at..];
            for i in 0..run.count as usize {
                d[hi as usize + i * len] = base_hi;
            }
        }
    }
}

/// Append the sites of `runs` (`dispatches` in all), whose words start at
/// dword `at`.
fn push_sites(
    sites: &mut Vec<DispatchSite>,
    tables: &Templates,
    runs: &[Run],
    dispatches: usize,
    segment: u32,
    mut at: u32,
) {
    sites.reserve(dispatches);
    for run in runs {
        let x = &tables.transitions[run.transition as usize];
        let (first, len, stride) = (at + x.dispatch_at, x.len, x.kernarg_stride);
        let (kernel, kernarg_len, koff) = (x.kernel, x.kernarg_len, run.first_kernarg);
        if run.count == 1 {
            // Most runs after a kernel switch: no iterator to set up.
            sites.push(DispatchSite {
                segment,
                dispatch_dword: first,
                kernarg_offset: koff,
                kernarg_len,
                kernel,
            });
            at += len;
            continue;
        }
        sites.extend((0..run.count).map(|i| DispatchSite {
            segment,
            dispatch_dword: first + i * len,
            kernarg_offset: koff.wrapping_add(i * stride),
            kernarg_len,
            kernel,
        }));
        at += len * run.count;
    }
}

impl IbBuilder {
    /// Write out the log now, with kernarg offsets that `finish` patches,
    /// and bring the shadow up to date: before anything else writes.
    pub(super) fn end_run(&mut self) {
        if self.log.runs.is_empty() {
            return;
        }
        let segment = self.segments.len() as u32;
        let at = self.w.len();
        let runs = std::mem::take(&mut self.log.runs);
        push_sites(
            &mut self.sites,
            &self.tables,
            &runs,
            self.log.dispatches,
            segment,
            at as u32,
        );
        self.w.reserve_total(at + self.log.dwords + EPILOGUE_DWORDS);
        write_words(&mut self.w, &self.tables, &runs, 0, 0);
        let mut pos = at as u32;
        for run in &runs {
            let x = &self.tables.transitions[run.transition as usize];
            self.lo_runs.push(PatchRun {
                segment,
                first: pos + x.lo_at,
                stride: x.len,
                count: run.count,
            });
            if let Some(hi) = x.hi_at {
                for i in 0..run.count {
                    self.hi_pointer.push((segment, pos + hi + i * x.len));
                }
            }
            pos += x.len * run.count;
        }
        self.log.runs = runs;
        self.log.runs.clear();
        self.log.dispatches = 0;
        self.log.dwords = 0;
        // Every logged dispatch programmed the same registers (transitions
        // keep the USER_DATA count), so the last one's values are the
        // shadow's.
        if let Some(last) = self.last {
            let t = &self.tables.templates[last.template as usize];
            let image = t.image(last.koff, None);
            for (first, from, to) in STATE_RUNS {
                self.shadow.assign(first, &image[from..to]);
            }
            let user = &image[USER_AT..USER_AT + t.user];
            self.shadow.assign(off::COMPUTE_USER_DATA_0, user);
        }
    }

    /// The segment is closing: record the log's sites now (its words follow
    /// the segment's dwords) and write its words at `finish`.
    pub(super) fn park_log(&mut self) {
        if self.log.runs.is_empty() {
            return;
        }
        let segment = self.segments.len() as u32;
        let at = self.w.len() as u32;
        let runs = std::mem::take(&mut self.log.runs);
        push_sites(
            &mut self.sites,
            &self.tables,
            &runs,
            self.log.dispatches,
            segment,
            at,
        );
        let dwords = self.log.dwords;
        self.log.parked.push(Parked {
            segment,
            runs,
            dwords,
        });
        self.log.parked_dwords += self.log.dwords;
        self.log.dispatches = 0;
        self.log.dwords = 0;
    }

    /// At `finish`: the log's sites and words into the last segment, with
    /// the final kernarg pointers for a block at `base`.
    pub(super) fn write_log_final(&mut self, base: u64) {
        let segment = self.segments.len() as u32;
        let at = self.w.len();
        let (runs, n) = (&self.log.runs, self.log.dispatches);
        push_sites(&mut self.sites, &self.tables, runs, n, segment, at as u32);
        self.w.reserve_total(at + self.log.dwords + EPILOGUE_DWORDS);
        let (lo, hi) = (base as u32, (base >> 32) as u32);
        write_words(&mut self.w, &self.tables, &self.log.runs, lo, hi);
        self.log.runs.clear();
        self.log.dispatches = 0;
        self.log.dwords = 0;
    }

    /// At `finish`, once the segments are pushed: the parked logs' words
    /// after their segments' dwords, with final kernarg pointers.
    pub(super) fn write_parked(&mut self, base: u64) {
        let (lo, hi) = (base as u32, (base >> 32) as u32);
        for p in std::mem::take(&mut self.log.parked) {
            let seg = &mut self.segments[p.segment as usize];
            let mut w = DwordWriter::from_vec(std::mem::take(&mut seg.dwords));
            w.reserve_total(w.len() + p.dwords);
            write_words(&mut w, &self.tables, &p.runs, lo, hi);
            seg.dwords = w.into_vec();
        }
        self.log.parked_dwords = 0;
    }
}
