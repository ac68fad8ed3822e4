//! `IbBuilder`: records dispatches and boundaries into PM4, then
//! `finish(kernarg_base)` fills in the kernarg pointers and returns the
//! segments. Every dword is written once, in recording order. A dispatch is
//! of a template (`template.rs`): one checked (kernel, launch, kernarg
//! length and alignment), interned under an id the caller keeps
//! (`intern`, then `dispatch_template`) or found from the caller's values
//! (`dispatch`, `check.rs`). The general path (`general.rs`) writes the
//! registers that changed and DISPATCH_DIRECT through the one emitter and
//! caches what it wrote as the transition from the previous dispatch's
//! template. A dispatch whose transition is cached takes the fast path
//! (`fast.rs`): its kernarg copy, a comparison or two and a count in the
//! open run (`run.rs`), a period of transitions taken over and over whose
//! words are written in one pass when it ends. A kernel that reads its dispatch packet, and full
//! state, always take the general path. Low kernarg-pointer dwords written
//! before `finish` hold offsets from the base, which `finish` adds
//! (`finish.rs`; a run open at `finish` is written with the final
//! pointers).

mod check;
mod fast;
mod finish;
mod general;
mod run;
mod template;
mod transfer;

use std::sync::atomic::{AtomicU64, Ordering};

use relaunch_device::codeobj::KernelDescriptor;
use relaunch_facts::{Family, Limits, TargetFacts};

use crate::boundary::{emit_prologue, BoundaryKind};
use crate::dispatch::{KernelCode, Launch, Prepared};
use crate::elide::ShShadow;
use crate::error::EncodeError;
use crate::ib::{DispatchId, DispatchSite, IbStorage, KernargLayout, KernelInfo, Segment};
use crate::kernarg::{KernargImage, MIN_KERNARG_ALIGN};
use crate::packet::MAX_IB_DWORDS;
use crate::stream_order::{self, StreamWords};
use crate::writer::DwordWriter;
use fast::{Last, NO_TRANSITION};
use run::{PatchRun, Run};
use template::{TemplateIx, Templates};

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
    /// The runtime installed a trap handler for the GPU (ROCr's rule; the
    /// facade sets it from the device): COMPUTE_PGM_RSRC2.TRAP_PRESENT is
    /// then set on gfx10/gfx11, as the CP sets it for an AQL dispatch.
    /// Default true (ROCr on a driver with exception debugging).
    pub trap_handler: bool,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            full_state: false,
            kernargs_immutable: false,
            max_segment_dwords: MAX_IB_DWORDS,
            trap_handler: true,
        }
    }
}

/// A checked (kernel, launch, kernarg length and alignment) of one
/// builder (`IbBuilder::intern`): what `IbBuilder::dispatch_template`
/// records a dispatch of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TemplateId {
    /// The builder's serial (`NEXT_SERIAL`): another builder's id is refused.
    builder: u64,
    index: TemplateIx,
}

/// Serial of the next builder made.
static NEXT_SERIAL: AtomicU64 = AtomicU64::new(0);

/// Records one IB. See the module docs and `docs/pm4.md`.
pub struct IbBuilder {
    /// This builder's serial, in its `TemplateId`s.
    serial: u64,
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
    /// The template `resolve` found last (`TemplateIx::MAX`: none yet).
    last_resolved: TemplateIx,
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
    /// The gate word of a stream-ordered IB (see `stream_order.rs`).
    stream: Option<StreamWords>,
    /// (dispatch, image offset) of synthesized dispatch packets, whose
    /// `kernarg_address` holds an offset from the base until `finish`.
    packets: Vec<(DispatchId, u32)>,
    /// Timestamps `finish` splices in (`profile.rs`); recording ignores it.
    profile: Option<crate::profile::Profile>,
    /// Recycled buffers later segments take (`recycle`), last first.
    spare_dwords: Vec<Vec<u32>>,
    /// What the scratch dispatches recorded so far need of a backing.
    scratch_need: crate::scratch::ScratchNeed,
    /// (segment, dword, `scratch::Word`) of scratch placeholders, filled
    /// at `finish_with_scratch`.
    scratch_at: Vec<(u32, u32, u32)>,
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

    /// A builder for any target of `family`, checking launches against the
    /// limits every one of them allows: for IBs made before (or without) a
    /// device, as tests and the benchmarks make them. A device's IBs are
    /// built for its target (`for_target`). `RELAUNCH_PM4_FULL_STATE=1`
    /// forces full state.
    pub fn new(family: Family, opts: EncodeOptions) -> Self {
        Self::with_stream(family, Limits::of_family(family), opts, None)
    }

    /// A builder for one target: its family, and its own limits.
    pub fn for_target(target: &TargetFacts, opts: EncodeOptions) -> Self {
        Self::with_stream(target.family, target.limits, opts, None)
    }

    /// A builder for one target whose IB is ordered with another queue's
    /// work through `words`: it waits for the gate to open before its
    /// prologue and closes it after its epilogue (see `stream_order.rs`).
    pub fn new_stream_ordered(
        target: &TargetFacts,
        opts: EncodeOptions,
        words: StreamWords,
    ) -> Result<Self, EncodeError> {
        crate::stream_order::check(words)?;
        Ok(Self::with_stream(
            target.family,
            target.limits,
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
        // Also `REDLINE_PM4_FULL_STATE`, the reference system's name, with a
        // one-time warning (`relaunch_device::migration`).
        if relaunch_device::migration::setting(FULL_STATE_ENV).is_some_and(|v| v == "1") {
            opts.full_state = true;
        }
        let mut limit = opts
            .max_segment_dwords
            .clamp(MIN_SEGMENT_DWORDS, MAX_IB_DWORDS) as usize;
        let mut w = DwordWriter::new();
        if let Some(words) = stream {
            // The gate is waited for before the acquire, so the stream's
            // earlier writes are visible to the IB's kernels; every
            // segment keeps room for the gate's close after the epilogue.
            stream_order::emit_gate(&mut w, words);
            limit -= stream_order::DONE_DWORDS;
        }
        emit_prologue(&mut w);
        IbBuilder {
            serial: NEXT_SERIAL.fetch_add(1, Ordering::Relaxed),
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
            last: None,
            run: Run::default(),
            pending: None,
            prepared: Vec::new(),
            descriptors: Vec::new(),
            kernels: Vec::new(),
            last_kernel: 0,
            last_resolved: TemplateIx::MAX,
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
            spare_dwords: Vec::new(),
            scratch_need: Default::default(),
            scratch_at: Vec::new(),
        }
    }

    /// What the IB's scratch dispatches need of the queue's scratch
    /// backing (`None`: no dispatch needs one); the installer plans and
    /// allocates it (`ScratchPlan`) and passes it to `finish_with_scratch`.
    pub fn scratch_need(&self) -> Option<crate::scratch::ScratchNeed> {
        (self.scratch_need.group_waves > 0).then_some(self.scratch_need)
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

    /// Record into the buffers of a finished IB (`EncodedIb::into_storage`)
    /// instead of new ones: what re-encoding a graph does, so its words go
    /// to memory the process already touched. Only before the first
    /// dispatch; the IB's bytes are the same either way.
    pub fn recycle(&mut self, storage: IbStorage) -> Result<(), EncodeError> {
        let dispatches = self.dispatch_count();
        if dispatches > 0 || !self.segments.is_empty() {
            return Err(EncodeError::RecycleAfterRecording { dispatches });
        }
        // (Every buffer of an `IbStorage` is empty.)
        let IbStorage {
            mut dwords,
            kernargs,
            sites,
        } = storage;
        debug_assert!(sites.is_empty() && dwords.iter().all(Vec::is_empty));
        if let Some(mut first) = dwords.pop() {
            // The words written so far (the prologue) move over.
            first.extend_from_slice(self.w.as_slice());
            self.w = DwordWriter::from_vec(first);
        }
        self.spare_dwords = dwords;
        self.kernargs.adopt(kernargs);
        self.sites = sites;
        Ok(())
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
        self.w.len() + self.run.dwords() as usize
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
    /// The same as `intern` then `dispatch_template`, with the template
    /// found from the values each time.
    #[inline]
    pub fn dispatch(
        &mut self,
        code: &KernelCode<'_>,
        launch: &Launch,
        kernarg: &[u8],
        kernarg_align: u32,
    ) -> Result<DispatchId, EncodeError> {
        let (t, named_same) = match self.resolve(code, launch, (kernarg.len(), kernarg_align)) {
            Ok(found) => found,
            Err(e) => return Err(self.refuse(e)),
        };
        self.record(t, named_same, kernarg)
    }

    /// Check `code` launched as `launch` with kernarg blocks of
    /// `kernarg_len` bytes aligned to max(16, `kernarg_align`) (each kernel
    /// once, each such shape once), and return its template: then
    /// `dispatch_template(id, kernarg)` records a dispatch of it with one
    /// comparison for its identity. The id is this builder's only.
    pub fn intern(
        &mut self,
        code: &KernelCode<'_>,
        launch: &Launch,
        kernarg_len: usize,
        kernarg_align: u32,
    ) -> Result<TemplateId, EncodeError> {
        let index = self.template_of(code, launch, (kernarg_len, kernarg_align))?;
        Ok(TemplateId {
            builder: self.serial,
            index,
        })
    }

    /// Record one dispatch of template `id` (from this builder's `intern`)
    /// with `kernarg`, which must be as long as the template says.
    #[inline]
    pub fn dispatch_template(
        &mut self,
        id: TemplateId,
        kernarg: &[u8],
    ) -> Result<DispatchId, EncodeError> {
        if id.builder != self.serial {
            return Err(self.refuse(EncodeError::ForeignTemplate));
        }
        let t = id.index;
        if let Some(id) = self.glide(t, true, kernarg) {
            return Ok(id);
        }
        self.settle();
        let tpl = &self.tables.templates[t as usize];
        if kernarg.len() != tpl.kernarg_len as usize {
            let e = EncodeError::KernargLengthMismatch {
                symbol: self.kernels[tpl.kernel as usize].symbol.clone(),
                template: tpl.kernarg_len as usize,
                got: kernarg.len(),
            };
            return Err(self.refuse(e));
        }
        self.record_settled(t, true, kernarg)
    }

    /// Record a dispatch of template `t` (`named_same`: see `try_fast`).
    #[inline(always)]
    fn record(
        &mut self,
        t: TemplateIx,
        named_same: bool,
        kernarg: &[u8],
    ) -> Result<DispatchId, EncodeError> {
        if let Some(id) = self.glide(t, named_same, kernarg) {
            return Ok(id);
        }
        self.settle();
        self.record_settled(t, named_same, kernarg)
    }

    /// `record` past the glide (`last` up to date).
    #[inline(always)]
    fn record_settled(
        &mut self,
        t: TemplateIx,
        named_same: bool,
        kernarg: &[u8],
    ) -> Result<DispatchId, EncodeError> {
        if let Some(id) = self.try_fast(t, named_same, kernarg) {
            return Ok(id);
        }
        self.dispatch_general(t, named_same, kernarg)
    }

    /// A refused dispatch: the next one looks again where the general path
    /// would (its room check), as if this one had been recorded there.
    #[cold]
    fn refuse(&mut self, e: EncodeError) -> EncodeError {
        self.settle();
        if let Some(last) = &mut self.last {
            last.budget = Some(0);
        }
        e
    }
}
