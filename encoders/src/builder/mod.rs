//! `IbBuilder`: records dispatches and boundaries into PM4, then
//! `finish(kernarg_base)` fills in the kernarg pointers and returns the
//! segments. Every dword is written once, in recording order: the general
//! path writes a dispatch's changed state as it is recorded; a dispatch
//! repeating the previous one's kernel, launch and kernarg shape takes the
//! fast path in `repeat.rs` (a few comparisons and its kernarg copy) and is
//! written with the rest of its run when the run ends. Low kernarg-pointer
//! dwords written before `finish` hold offsets from the base, which `finish`
//! adds. Per-kernel checks run once per kernel.

mod repeat;
mod transfer;

use relaunch_device::codeobj::KernelDescriptor;
use relaunch_facts::{Family, Limits, TargetFacts};

use crate::boundary::{emit_epilogue, emit_prologue, BoundaryKind, EPILOGUE_DWORDS};
use crate::dispatch::{
    check_launch, KernelCode, Launch, LaunchState, Prepared, RESOURCE_LIMITS_VALUE,
};
use crate::dispatch_packet::{DispatchPacketImage, DISPATCH_PACKET_ALIGN, KERNARG_ADDRESS_OFFSET};
use crate::elide::{ShShadow, TAG_KERNARG_HI, TAG_KERNARG_LO};
use crate::emit;
use crate::error::EncodeError;
use crate::ib::{DispatchId, DispatchSite, EncodedIb, KernargLayout, KernelInfo, Segment};
use crate::kernarg::KernargImage;
use crate::packet::MAX_IB_DWORDS;
use crate::regs::off;
use crate::stream_order::{self, StreamWords};
use crate::writer::DwordWriter;
use repeat::{PatchRun, Repeat, Room};

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
    /// (kernel, block, rsrc2) whose state registers the shadow holds.
    last_state: Option<(u32, [u32; 3], u32)>,
    /// The last checked (kernel, launch) and its derived values: a repeated
    /// launch skips the checks and divisions.
    last_launch: Option<(usize, Launch, LaunchState)>,
    /// Set after a dispatch the fast path can repeat (see `repeat.rs`).
    repeat: Option<Repeat>,
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
    /// Dword indexes (in their segment) of low kernarg-pointer dwords, which
    /// hold the block's offset until `finish` adds the base's low dword.
    lo_pointer: Vec<u32>,
    /// Where each closed segment's entries in `lo_pointer` end.
    lo_pointer_ends: Vec<usize>,
    /// Runs of low kernarg-pointer dwords written by fast-path repeats,
    /// also offsets until `finish`.
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
            last_state: None,
            last_launch: None,
            repeat: None,
            pending: None,
            prepared: Vec::new(),
            descriptors: Vec::new(),
            kernels: Vec::new(),
            last_kernel: 0,
            last_symbol: (0, 0),
            kernargs: KernargImage::new(opts.kernargs_immutable),
            sites: Vec::new(),
            lo_pointer: Vec::new(),
            lo_pointer_ends: Vec::new(),
            lo_runs: Vec::new(),
            hi_pointer: Vec::new(),
            packets: Vec::new(),
            stream,
            profile: None,
        }
    }

    /// Reserve room for `dispatches` more dispatches of the counter shape
    /// (18 dwords, one 16-byte kernarg block each), so recording a chain of
    /// known length does not regrow its buffers.
    pub fn reserve(&mut self, dispatches: usize) {
        // 18 per dispatch plus room for the first full state and the epilogue.
        let dwords = self.w.len() + dispatches.saturating_mul(18) + MAX_DISPATCH_DWORDS + 64;
        self.w.reserve_total(dwords.min(self.limit));
        self.kernargs.reserve(dispatches.saturating_mul(16));
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
        self.sites.len()
            + self
                .repeat
                .as_ref()
                .map_or(0, |r| r.pending_sites() as usize)
    }

    /// Dwords recorded so far (all segments, the current run included, no
    /// epilogue yet).
    pub fn dwords(&self) -> usize {
        let run = self.repeat.as_ref().map_or(0, |r| r.pending_dwords());
        self.segments.iter().map(|s| s.dwords.len()).sum::<usize>() + self.w.len() + run
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
        if let Some(id) = self.try_repeat(code, launch, kernarg, kernarg_align) {
            return Ok(id);
        }
        self.dispatch_general(code, launch, kernarg, kernarg_align)
    }

    /// Every dispatch the fast path does not take: checks the kernel (once
    /// per kernel) and the launch, and writes the state that changed.
    #[inline(never)]
    fn dispatch_general(
        &mut self,
        code: &KernelCode<'_>,
        launch: &Launch,
        kernarg: &[u8],
        kernarg_align: u32,
    ) -> Result<DispatchId, EncodeError> {
        self.end_repeat();
        let k = self.kernel_index(code)?;
        let p = self.prepared[k];
        let st = match self.last_launch {
            Some((lk, ref ll, st)) if lk == k && ll == launch => st,
            _ => {
                let st = check_launch(&p, launch, code.symbol)?;
                self.last_launch = Some((k, *launch, st));
                st
            }
        };
        if p.kernarg_ptr {
            if kernarg.len() < p.kernarg_size as usize {
                return Err(EncodeError::KernargTooShort {
                    symbol: code.symbol.to_string(),
                    need: p.kernarg_size,
                    got: kernarg.len(),
                });
            }
        } else if !kernarg.is_empty() {
            return Err(EncodeError::KernargUnused {
                symbol: code.symbol.to_string(),
                got: kernarg.len(),
            });
        }
        if !kernarg_align.is_power_of_two() || kernarg_align > 4096 {
            return Err(EncodeError::BadKernargAlign {
                symbol: code.symbol.to_string(),
                align: kernarg_align,
            });
        }
        let id = self.sites.len() as u32;
        if self.sites.len() >= u32::MAX as usize {
            return Err(EncodeError::TooManyDispatches { max: u32::MAX - 1 });
        }
        let (koff, klen) = self.kernargs.place(kernarg, kernarg_align)?;
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

        if self.w.len() + MAX_DISPATCH_DWORDS + EPILOGUE_DWORDS > self.limit {
            self.close_segment();
        }
        if let Some(b) = self.pending.take() {
            if id > 0 {
                b.emit(&mut self.w);
            }
        }
        let full = self.opts.full_state;
        let segment = self.segments.len() as u32;
        let key = (k as u32, launch.block, st.rsrc2);
        if full || self.last_state != Some(key) {
            self.write_state(&p, launch.block, st.rsrc2);
            self.last_state = if full { None } else { Some(key) };
        }
        // USER_DATA: [private segment buffer zeros], [dispatch packet
        // pointer], kernarg pointer (low dwords as offsets from the base,
        // high dwords filled at finish), then the padding zeros RSRC2 declares.
        let n = p.user_sgprs();
        if n > 0 {
            let mut user = [0u64; off::USER_DATA_COUNT as usize];
            let mut at = p.private_segment_dwords as usize;
            if let Some(packet) = packet {
                user[at] = TAG_KERNARG_LO | packet as u64;
                user[at + 1] = TAG_KERNARG_HI;
                at += 2;
            }
            if p.kernarg_ptr {
                user[at] = TAG_KERNARG_LO | koff as u64;
                user[at + 1] = TAG_KERNARG_HI;
            }
            let (lo, hi) = (&mut self.lo_pointer, &mut self.hi_pointer);
            self.shadow.write_tagged(
                &mut self.w,
                off::COMPUTE_USER_DATA_0,
                &user[..n],
                full,
                |pos, tag| {
                    if tag & TAG_KERNARG_HI != 0 {
                        hi.push((segment, pos as u32));
                    } else {
                        lo.push(pos as u32);
                    }
                },
            );
        }
        let dispatch_dword = self.w.len() as u32;
        emit::dispatch_direct(&mut self.w, st.groups, p.initiator);
        debug_assert!(self.w.len() + EPILOGUE_DWORDS <= self.limit);
        self.sites.push(DispatchSite {
            segment,
            dispatch_dword,
            kernarg_offset: koff,
            kernarg_len: klen,
            kernel: k as u32,
        });
        // The fast path repeats the kernarg pointer only; a dispatch packet
        // per dispatch goes through here.
        if p.kernarg_ptr && !full && !p.dispatch_ptr {
            let room = Room {
                dwords: (self.limit - EPILOGUE_DWORDS).saturating_sub(self.w.len()),
                image_len: self.kernargs.len(),
                dispatches: self.sites.len(),
                segment,
                fresh_image: !self.kernargs.immutable(),
            };
            let shape = (kernarg.len(), kernarg_align);
            self.repeat = Some(Repeat::new(k as u32, code, launch, shape, &p, st, room));
        }
        Ok(id)
    }

    /// Drop the fast path's template after writing out its current run.
    fn end_repeat(&mut self) {
        self.end_run(None);
        self.repeat = None;
    }

    /// The kernel's state registers for a launch with `block` and `rsrc2`,
    /// each run written where the shadow says it changed.
    fn write_state(&mut self, p: &Prepared, block: [u32; 3], rsrc2: u32) {
        let full = self.opts.full_state;
        let no_patch = |_: usize, _: u64| {};
        let (sh, w) = (&mut self.shadow, &mut self.w);
        let b = block.map(u64::from);
        sh.write_tagged(w, off::COMPUTE_NUM_THREAD_X, &b, full, no_patch);
        let pgm = p.pgm.map(u64::from);
        sh.write_tagged(w, off::COMPUTE_PGM_LO, &pgm, full, no_patch);
        let rsrc = [p.rsrc1 as u64, rsrc2 as u64];
        sh.write_tagged(w, off::COMPUTE_PGM_RSRC1, &rsrc, full, no_patch);
        let limits = [RESOURCE_LIMITS_VALUE as u64];
        sh.write_tagged(w, off::COMPUTE_RESOURCE_LIMITS, &limits, full, no_patch);
        let rsrc3 = [p.rsrc3 as u64];
        sh.write_tagged(w, off::COMPUTE_PGM_RSRC3, &rsrc3, full, no_patch);
    }

    /// Close the last segment with the epilogue, fill in kernarg pointers for
    /// a kernarg block at `kernarg_base`, and return the IB.
    pub fn finish(mut self, kernarg_base: u64) -> Result<EncodedIb, EncodeError> {
        if self.sites.is_empty() {
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
        // The last run is written now, with final pointers.
        self.end_run(Some(base_lo));
        self.repeat = None;
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
        self.end_repeat();
        self.push_segment();
        emit_prologue(&mut self.w);
        self.shadow.reset();
        self.last_state = None;
    }

    fn kernel_index(&mut self, code: &KernelCode<'_>) -> Result<usize, EncodeError> {
        let symbol = (code.symbol.as_ptr() as usize, code.symbol.len());
        let same_code = |i: usize| {
            self.prepared[i].kd_address == code.kd_address && self.descriptors[i] == code.descriptor
        };
        if code.family == self.family {
            let last = self.last_kernel;
            // kd_address identifies a loaded kernel for the IB's lifetime; the
            // symbol text is compared unless it is the very same string.
            if last < self.prepared.len()
                && same_code(last)
                && (symbol == self.last_symbol || self.kernels[last].symbol == code.symbol)
            {
                self.last_symbol = symbol;
                return Ok(last);
            }
            let found = (0..self.prepared.len())
                .find(|&i| same_code(i) && self.kernels[i].symbol == code.symbol);
            if let Some(i) = found {
                self.last_kernel = i;
                self.last_symbol = symbol;
                return Ok(i);
            }
        }
        let p = Prepared::new(code, self.family, self.limits)?;
        self.prepared.push(p);
        self.descriptors.push(code.descriptor);
        self.kernels.push(KernelInfo {
            symbol: code.symbol.to_string(),
            kd_address: code.kd_address,
        });
        self.last_kernel = self.prepared.len() - 1;
        self.last_symbol = symbol;
        Ok(self.last_kernel)
    }
}
