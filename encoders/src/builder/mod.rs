//! `IbBuilder`: records dispatches and boundaries into PM4, then
//! `finish(kernarg_base)` fills in the kernarg pointers and returns the
//! segments. Every dword is written once, in recording order. The general
//! path checks a dispatch (each kernel once, each launch shape once: the
//! result is a template, `template.rs`), writes the registers that changed
//! and DISPATCH_DIRECT through the one emitter (`emit_dispatch`), and
//! caches what it wrote as the transition from the previous dispatch's
//! template. A dispatch whose transition is cached takes the fast path
//! (`fast.rs`): its kernarg copy, a few comparisons and a copy of the
//! transition's words; from the second of a chain of the same dispatch on,
//! only a count in the open run (`run.rs`), whose words are written in one
//! pass when it ends. A kernel that reads its dispatch packet, and full
//! state, always take the general path. Low kernarg-pointer dwords written
//! before `finish` hold offsets from the base, which `finish` adds (a run
//! open at `finish` is written with the final pointers).

mod check;
mod fast;
mod run;
mod template;
mod transfer;

use relaunch_device::codeobj::KernelDescriptor;
use relaunch_facts::{Family, Limits, TargetFacts};

use crate::boundary::{emit_epilogue, emit_prologue, BoundaryKind, EPILOGUE_DWORDS};
use crate::dispatch::{KernelCode, Launch, Prepared};
use crate::dispatch_packet::{DispatchPacketImage, DISPATCH_PACKET_ALIGN, KERNARG_ADDRESS_OFFSET};
use crate::elide::{ShShadow, TAG_KERNARG_HI};
use crate::emit;
use crate::error::EncodeError;
use crate::ib::{DispatchId, DispatchSite, EncodedIb, KernargLayout, KernelInfo, Segment};
use crate::kernarg::{KernargImage, MIN_KERNARG_ALIGN};
use crate::packet::MAX_IB_DWORDS;
use crate::regs::off;
use crate::stream_order::{self, StreamWords};
use crate::writer::DwordWriter;
use fast::{Guesses, Last, NO_TRANSITION};
use run::{PatchRun, Run};
use template::{Next, TemplateId, Templates, STATE_RUNS, USER_AT};

/// Environment variable that forces `full_state` when set to `1`.
pub const FULL_STATE_ENV: &str = "RELAUNCH_PM4_FULL_STATE";
/// Smallest segment size `max_segment_dwords` is raised to.
pub const MIN_SEGMENT_DWORDS: u32 = 256;
/// Upper bound of one dispatch's dwords including a pending boundary: every
/// state register in its own run (9 x 3), sixteen user SGPRs likewise
/// (16 x 3), DISPATCH_DIRECT (5) and an RMW boundary (10).
const MAX_DISPATCH_DWORDS: usize = 27 + 48 + 5 + 10;

/// How an IB is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncodeOptions {
    /// Write every register every dispatch (no elision). Forced on by
    /// `RELAUNCH_PM4_FULL_STATE=1`.
    pub full_state: bool,
    /// The caller promises never to patch kernargs: identical kernarg blocks
    /// are then shared (and their pointer writes elided).
    pub kernargs_immutable: bool,
    /// Segment size limit in dwords; clamped to
    /// `MIN_SEGMENT_DWORDS..=1_048_575` (tests use small values).
    pub max_segment_dwords: u32,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            full_state: false,
            kernargs_immutable: false,
            max_segment_dwords: MAX_IB_DWORDS,
        }
    }
}

/// Records one IB. See the module docs and `docs/pm4.md`.
pub struct IbBuilder {
    /// A name for the IB in dumps and logs (e.g. `lane1`); not encoded.
    label: Option<String>,
    family: Family,
    /// Workgroup limits launches are checked against (the target's).
    limits: Limits,
    opts: EncodeOptions,
    limit: usize,
    w: DwordWriter,
    segments: Vec<Segment>,
    segment_first_dispatch: u32,
    shadow: ShShadow,
    /// Every checked launch shape and cached transition.
    tables: Templates,
    guesses: Guesses,
    /// The previous dispatch, while the next may take the fast path.
    last: Option<Last>,
    /// Fast-path dispatches not written yet (`run.rs`).
    run: Run,
    pending: Option<BoundaryKind>,
    prepared: Vec<Prepared>,
    /// The descriptor each prepared kernel was checked with (identity only).
    descriptors: Vec<KernelDescriptor>,
    kernels: Vec<KernelInfo>,
    last_kernel: usize,
    /// Address and length of the symbol string last matched to
    /// `last_kernel`: the same string again skips the byte comparison.
    last_symbol: (usize, usize),
    kernargs: KernargImage,
    sites: Vec<DispatchSite>,
    /// Dispatches `reserve` announced in all (kernarg room is reserved by
    /// the real block sizes as templates show them).
    reserved: usize,
    /// Dword indexes (in their segment) of low kernarg-pointer dwords, which
    /// hold the block's offset until `finish` adds the base's low dword.
    lo_pointer: Vec<u32>,
    /// Where each closed segment's entries in `lo_pointer` end.
    lo_pointer_ends: Vec<usize>,
    /// Runs of low kernarg-pointer dwords written by `flush_run`, also
    /// offsets until `finish`.
    lo_runs: Vec<PatchRun>,
    /// (segment, dword) of high kernarg-pointer dwords, filled at `finish`.
    hi_pointer: Vec<(u32, u32)>,
    /// Gate and done words of a stream-ordered IB (see `stream_order.rs`).
    stream: Option<StreamWords>,
    /// (dispatch, image offset) of synthesized dispatch packets, whose
    /// `kernarg_address` holds an offset from the base until `finish`.
    packets: Vec<(DispatchId, u32)>,
    /// Timestamps `finish` splices in (`profile.rs`); recording ignores it.
    profile: Option<crate::profile::Profile>,
}

/// Where `emit_dispatch` wrote a dispatch's placeholders and packet.
struct Written {
    lo: Option<usize>,
    hi: Option<usize>,
    dispatch: usize,
}

impl IbBuilder {
    /// Names the IB for dumps and logs (e.g. its lane); not encoded.
    pub fn set_label(&mut self, label: impl Into<String>) {
        self.label = Some(label.into());
    }

    /// Makes `finish` splice `profile`'s timestamps into the IB (see
    /// `profile.rs`); may be set any time before `finish`, recording does
    /// not depend on it. `None` (the default) encodes no timestamps.
    pub fn set_profile(&mut self, profile: Option<crate::profile::Profile>) {
        self.profile = profile;
    }

    /// The name given with [`IbBuilder::set_label`].
    pub fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }

    /// A builder for `family`, checking launches against the limits every
    /// target of the family allows. `RELAUNCH_PM4_FULL_STATE=1` forces full
    /// state.
    pub fn new(family: Family, opts: EncodeOptions) -> Self {
        Self::with_stream(family, Limits::of_family(family), opts, None)
    }

    /// A builder for one target: its family, and its own limits.
    pub fn for_target(target: &TargetFacts, opts: EncodeOptions) -> Self {
        Self::with_stream(target.family, target.limits, opts, None)
    }

    /// A builder whose IB is ordered with another queue's work through
    /// `words`: it waits for (and closes) the gate before its prologue and
    /// writes done after its epilogue (see `stream_order.rs`).
    pub fn new_stream_ordered(
        family: Family,
        opts: EncodeOptions,
        words: StreamWords,
    ) -> Result<Self, EncodeError> {
        crate::stream_order::check(words)?;
        Ok(Self::with_stream(
            family,
            Limits::of_family(family),
            opts,
            Some(words),
        ))
    }

    fn with_stream(
        family: Family,
        limits: Limits,
        mut opts: EncodeOptions,
        stream: Option<StreamWords>,
    ) -> Self {
        if std::env::var(FULL_STATE_ENV).is_ok_and(|v| v == "1") {
            opts.full_state = true;
        }
        let mut limit = opts
            .max_segment_dwords
            .clamp(MIN_SEGMENT_DWORDS, MAX_IB_DWORDS) as usize;
        let mut w = DwordWriter::new();
        if let Some(words) = stream {
            // The gate is waited for before the acquire, so the stream's
            // earlier writes are visible to the IB's kernels; every
            // segment keeps room for the done write after the epilogue.
            stream_order::emit_gate(&mut w, words);
            limit -= stream_order::DONE_DWORDS;
        }
        emit_prologue(&mut w);
        IbBuilder {
            label: None,
            family,
            limits,
            opts,
            limit,
            w,
            segments: Vec::new(),
            segment_first_dispatch: 0,
            shadow: ShShadow::new(),
            tables: Templates::default(),
            guesses: Guesses::default(),
            last: None,
            run: Run::default(),
            pending: None,
            prepared: Vec::new(),
            descriptors: Vec::new(),
            kernels: Vec::new(),
            last_kernel: 0,
            last_symbol: (0, 0),
            kernargs: KernargImage::new(opts.kernargs_immutable),
            sites: Vec::new(),
            reserved: 0,
            lo_pointer: Vec::new(),
            lo_pointer_ends: Vec::new(),
            lo_runs: Vec::new(),
            hi_pointer: Vec::new(),
            packets: Vec::new(),
            stream,
            profile: None,
        }
    }

    /// Reserve room for `dispatches` more dispatches, so recording a chain
    /// of known length does not regrow its buffers: sites now, kernarg
    /// bytes by the largest block the templates have shown (16 until one
    /// shows more), IB dwords by the longest transition once one is cached.
    pub fn reserve(&mut self, dispatches: usize) {
        self.reserved = self.dispatch_count().saturating_add(dispatches);
        let block = self.tables.max_stride.max(MIN_KERNARG_ALIGN) as usize;
        self.kernargs.reserve(dispatches.saturating_mul(block));
        self.sites.reserve(dispatches);
    }

    pub fn family(&self) -> Family {
        self.family
    }

    pub fn options(&self) -> EncodeOptions {
        self.opts
    }

    /// Dispatches recorded so far.
    pub fn dispatch_count(&self) -> usize {
        self.sites.len() + self.run.count as usize
    }

    /// Dwords recorded so far (all segments, the open run included, no
    /// epilogue yet).
    pub fn dwords(&self) -> usize {
        let closed: usize = self.segments.iter().map(|s| s.dwords.len()).sum();
        closed + self.open_dwords()
    }

    /// Dwords of the open segment, the open run's included.
    #[inline(always)]
    fn open_dwords(&self) -> usize {
        self.w.len() + self.run.count as usize * self.run.len as usize
    }

    /// Require `kind` between everything recorded so far and the next
    /// dispatch. Consecutive boundaries merge into the strongest; a boundary
    /// before the first dispatch or after the last is dropped (the AQL
    /// packet's barrier bit and the epilogue already order those).
    #[inline]
    pub fn boundary(&mut self, kind: BoundaryKind) {
        self.pending = Some(match self.pending {
            Some(p) if p.covers(kind) => p,
            _ => kind,
        });
    }

    /// Size and alignment of the kernarg block `finish` expects.
    pub fn kernarg_layout(&self) -> KernargLayout {
        KernargLayout {
            bytes: self.kernargs.len() as u64,
            align: self.kernargs.align(),
            within_4gib: !self.hi_pointer.is_empty(),
        }
    }

    /// Record one dispatch of `code` with `kernarg` bytes (copied into the
    /// kernarg image at an offset aligned to max(16, `kernarg_align`)).
    #[inline]
    pub fn dispatch(
        &mut self,
        code: &KernelCode<'_>,
        launch: &Launch,
        kernarg: &[u8],
        kernarg_align: u32,
    ) -> Result<DispatchId, EncodeError> {
        if let Some(id) = self.try_fast(code, launch, kernarg, kernarg_align) {
            return Ok(id);
        }
        self.dispatch_general(code, launch, kernarg, kernarg_align)
    }

    /// Every dispatch the fast path does not take: finds or makes its
    /// template (the checks), writes what changed, and caches that as the
    /// transition from the previous dispatch where it may.
    #[inline(never)]
    fn dispatch_general(
        &mut self,
        code: &KernelCode<'_>,
        launch: &Launch,
        kernarg: &[u8],
        kernarg_align: u32,
    ) -> Result<DispatchId, EncodeError> {
        let before = self.last;
        // Until a dispatch is recorded here, the next one looks here too.
        if let Some(last) = &mut self.last {
            last.budget = Some(0);
        }
        let k = self.kernel_index(code)?;
        let shape = (kernarg.len(), kernarg_align);
        let (t, same) = match self.tables.find(k as u32, launch, shape) {
            Some(t) => {
                let same = self.tables.templates[t as usize].matches(code, launch, shape);
                self.tables.remember_symbol(t, code);
                (t, same)
            }
            None => (self.new_template(k, code, launch, shape)?, false),
        };
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
        let packet = if p.dispatch_ptr {
            let image =
                DispatchPacketImage::for_launch(p.kd_address, launch, p.static_lds, koff.into());
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
        if kept_budget.is_none()
            && self.w.len() + MAX_DISPATCH_DWORDS + EPILOGUE_DWORDS > self.limit
        {
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
        // A dispatch packet is placed per dispatch, so such a dispatch is
        // never a transition the fast path could repeat.
        if self.opts.full_state || !p.kernarg_ptr || p.dispatch_ptr {
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
                let next = Next {
                    from: p.template,
                    boundary,
                    template: t,
                    transition: x,
                };
                self.guesses.set(&p, next);
                x
            }
            _ => NO_TRANSITION,
        };
        self.last = Some(Last {
            template: t,
            transition,
            before: prev.map_or(NO_TRANSITION, |p| p.transition),
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
    fn emit_dispatch(&mut self, t: TemplateId, koff: u32, packet: Option<u32>) -> Written {
        let full = self.opts.full_state;
        let tpl = &self.tables.templates[t as usize];
        let image = tpl.image(koff, packet);
        let segment = self.segments.len() as u32;
        let (sh, w) = (&mut self.shadow, &mut self.w);
        for (first, from, to) in STATE_RUNS {
            sh.write_tagged(w, first, &image[from..to], full, |_, _| {});
        }
        let (mut lo, mut hi) = (None, None);
        let (lo_pointer, hi_pointer) = (&mut self.lo_pointer, &mut self.hi_pointer);
        let user = &image[USER_AT..USER_AT + tpl.user];
        sh.write_tagged(w, off::COMPUTE_USER_DATA_0, user, full, |pos, tag| {
            if tag & TAG_KERNARG_HI != 0 {
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
    fn end_repeat(&mut self) {
        self.flush_run(None);
        self.sync_shadow();
        self.last = None;
    }

    /// Close the last segment with the epilogue, fill in kernarg pointers for
    /// a kernarg block at `kernarg_base`, and return the IB.
    pub fn finish(mut self, kernarg_base: u64) -> Result<EncodedIb, EncodeError> {
        if self.dispatch_count() == 0 {
            return Err(EncodeError::Empty);
        }
        let layout = self.kernarg_layout();
        if kernarg_base % layout.align as u64 != 0 {
            return Err(EncodeError::MisalignedKernargBase {
                base: kernarg_base,
                align: layout.align,
            });
        }
        if layout.within_4gib {
            let last = kernarg_base.checked_add(layout.bytes.max(1) - 1).ok_or(
                EncodeError::KernargCrosses4GiB {
                    base: kernarg_base,
                    bytes: layout.bytes,
                },
            )?;
            if last >> 32 != kernarg_base >> 32 {
                return Err(EncodeError::KernargCrosses4GiB {
                    base: kernarg_base,
                    bytes: layout.bytes,
                });
            }
        }
        // Low dwords hold offsets below the image size; the block does not
        // cross a 4 GiB boundary (checked above: low pointer dwords exist only
        // where high ones do), so adding the base's low dword cannot carry.
        let base_lo = kernarg_base as u32;
        // The open run is written now, with final pointers.
        self.flush_run(Some(kernarg_base));
        self.last = None;
        self.pending = None;
        emit_epilogue(&mut self.w, self.family);
        if let Some(words) = self.stream {
            stream_order::emit_done(&mut self.w, words);
        }
        self.push_segment();
        let mut from = 0;
        for (seg, &end) in self.segments.iter_mut().zip(&self.lo_pointer_ends) {
            let d = &mut seg.dwords[..];
            for &pos in &self.lo_pointer[from..end] {
                d[pos as usize] = d[pos as usize].wrapping_add(base_lo);
            }
            from = end;
        }
        for run in &self.lo_runs {
            let d = &mut self.segments[run.segment as usize].dwords[..];
            let mut pos = run.first as usize;
            for _ in 0..run.count {
                d[pos] = d[pos].wrapping_add(base_lo);
                pos += run.stride as usize;
            }
        }
        for &(segment, pos) in &self.hi_pointer {
            self.segments[segment as usize].dwords[pos as usize] = (kernarg_base >> 32) as u32;
        }
        let mut image = self.kernargs.into_bytes();
        // Shared (immutable) packets appear once per dispatch: fix each once.
        let mut fixed: Vec<u32> = self.packets.iter().map(|&(_, at)| at).collect();
        fixed.sort_unstable();
        fixed.dedup();
        for at in fixed {
            let field = at as usize + KERNARG_ADDRESS_OFFSET;
            let slot: &mut [u8; 8] = (&mut image[field..field + 8])
                .try_into()
                .expect("packet images are 64 bytes inside the kernarg image");
            *slot = u64::from_le_bytes(*slot)
                .wrapping_add(kernarg_base)
                .to_le_bytes();
        }
        tracing::debug!(
            family = %self.family,
            dispatches = self.sites.len(),
            segments = self.segments.len(),
            kernarg_bytes = image.len(),
            "pm4 ib finished"
        );
        let mut ib = EncodedIb {
            family: self.family,
            segments: self.segments,
            kernarg_image: image,
            kernarg_base,
            sites: self.sites,
            dispatch_packets: self.packets,
            kernels: self.kernels,
            kernargs_shared: self.opts.kernargs_immutable,
        };
        if let Some(profile) = self.profile {
            crate::profile::splice(&mut ib, profile, self.stream.is_some())?;
        }
        Ok(ib)
    }

    fn push_segment(&mut self) {
        let first = self.segment_first_dispatch;
        let count = self.sites.len() as u32 - first;
        self.segments.push(Segment {
            dwords: self.w.take(),
            first_dispatch: first,
            dispatch_count: count,
        });
        self.lo_pointer_ends.push(self.lo_pointer.len());
        self.segment_first_dispatch = self.sites.len() as u32;
    }

    /// End the current segment (no epilogue: only the last one carries it)
    /// and start the next with the prologue and no remembered state.
    fn close_segment(&mut self) {
        self.last = None;
        self.push_segment();
        emit_prologue(&mut self.w);
        self.shadow.reset();
    }
}
