//! `IbBuilder`: records dispatches and boundaries into PM4 (phase one), then
//! `finish(kernarg_base)` fixes kernarg addresses and returns the segments
//! (phase two). Per-kernel checks run once per kernel; a dispatch of a known
//! kernel costs a few comparisons, the dwords it writes and its kernarg copy.

use relaunch_device::codeobj::KernelDescriptor;
use relaunch_device::Family;

use crate::boundary::{emit_epilogue, emit_prologue, BoundaryKind, EPILOGUE_DWORDS};
use crate::dispatch::{
    check_launch, KernelCode, Launch, LaunchState, Prepared, RESOURCE_LIMITS_VALUE,
};
use crate::elide::{ShShadow, TAG_KERNARG_HI, TAG_KERNARG_LO};
use crate::emit;
use crate::error::EncodeError;
use crate::ib::{DispatchId, DispatchSite, EncodedIb, KernargLayout, KernelInfo, Segment};
use crate::kernarg::KernargImage;
use crate::packet::{op, type3, MAX_IB_DWORDS};
use crate::regs::off;
use crate::writer::DwordWriter;

/// Environment variable that forces `full_state` when set to `1`.
pub const FULL_STATE_ENV: &str = "RELAUNCH_PM4_FULL_STATE";
/// Smallest segment size `max_segment_dwords` is raised to.
pub const MIN_SEGMENT_DWORDS: u32 = 256;
/// Upper bound of one dispatch's dwords including a pending boundary: every
/// state register in its own run (9 x 3), six user SGPRs likewise (6 x 3),
/// DISPATCH_DIRECT (5) and an RMW boundary (10).
const MAX_DISPATCH_DWORDS: usize = 27 + 18 + 5 + 10;

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

/// What a dispatch of a kernarg-pointer-only kernel needs to be repeated
/// without re-checking: same kernel, launch, kernarg length and alignment.
#[derive(Debug, Clone, Copy)]
struct Repeat {
    kernel: usize,
    launch: Launch,
    kernarg_len: usize,
    kernarg_align: u32,
    state: (u32, [u32; 3], u32),
    groups: [u32; 3],
    initiator: u32,
}

/// `lo_pointer[i]` when dispatch `i` wrote no kernarg-pointer dword.
const NO_DWORD: u32 = u32::MAX;

/// Records one IB. See the module docs and `docs/pm4.md`.
pub struct IbBuilder {
    family: Family,
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
    /// Set after a dispatch the fast path can repeat (see `try_repeat`).
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
    /// Per dispatch: dword index (in its segment) of the low kernarg-pointer
    /// dword it wrote, filled at `finish`.
    lo_pointer: Vec<u32>,
    /// (segment, dword) of high kernarg-pointer dwords, filled at `finish`.
    hi_pointer: Vec<(u32, u32)>,
}

impl IbBuilder {
    /// A builder for `family`. `RELAUNCH_PM4_FULL_STATE=1` forces full state.
    pub fn new(family: Family, mut opts: EncodeOptions) -> Self {
        if std::env::var(FULL_STATE_ENV).is_ok_and(|v| v == "1") {
            opts.full_state = true;
        }
        let limit = opts
            .max_segment_dwords
            .clamp(MIN_SEGMENT_DWORDS, MAX_IB_DWORDS) as usize;
        let mut w = DwordWriter::new();
        emit_prologue(&mut w);
        IbBuilder {
            family,
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
            hi_pointer: Vec::new(),
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
        self.lo_pointer.reserve(dispatches);
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
    }

    /// Dwords written so far (all segments, no epilogue yet).
    pub fn dwords(&self) -> usize {
        self.segments.iter().map(|s| s.dwords.len()).sum::<usize>() + self.w.len()
    }

    /// Require `kind` between everything recorded so far and the next
    /// dispatch. Consecutive boundaries merge into the strongest; a boundary
    /// before the first dispatch or after the last is dropped (the AQL
    /// packet's barrier bit and the epilogue already order those).
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
    pub fn dispatch(
        &mut self,
        code: &KernelCode<'_>,
        launch: &Launch,
        kernarg: &[u8],
        kernarg_align: u32,
    ) -> Result<DispatchId, EncodeError> {
        if let Some(id) = self.try_repeat(code, launch, kernarg, kernarg_align)? {
            return Ok(id);
        }
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
            let b = launch.block;
            let no_patch = |_: usize, _: u64| {};
            let sh = &mut self.shadow;
            let w = &mut self.w;
            sh.write_tagged(
                w,
                off::COMPUTE_NUM_THREAD_X,
                &[b[0] as u64, b[1] as u64, b[2] as u64],
                full,
                no_patch,
            );
            sh.write_tagged(
                w,
                off::COMPUTE_PGM_LO,
                &[p.pgm[0] as u64, p.pgm[1] as u64],
                full,
                no_patch,
            );
            sh.write_tagged(
                w,
                off::COMPUTE_PGM_RSRC1,
                &[p.rsrc1 as u64, st.rsrc2 as u64],
                full,
                no_patch,
            );
            sh.write_tagged(
                w,
                off::COMPUTE_RESOURCE_LIMITS,
                &[RESOURCE_LIMITS_VALUE as u64],
                full,
                no_patch,
            );
            sh.write_tagged(w, off::COMPUTE_PGM_RSRC3, &[p.rsrc3 as u64], full, no_patch);
            self.last_state = if full { None } else { Some(key) };
        }
        let n = p.user_sgprs();
        let mut lo = NO_DWORD;
        let lo_tag = TAG_KERNARG_LO | koff as u64;
        if n == 2 && p.kernarg_ptr && !full && self.shadow.holds_hi_at_user_data_1() {
            // The common case (kernarg pointer only, high dword unchanged):
            // at most one single-register write of the low dword.
            if self.shadow.replace(off::COMPUTE_USER_DATA_0, lo_tag) {
                lo = self.w.len() as u32 + 2;
                self.w.put(&[
                    type3(op::SET_SH_REG, 2, true),
                    off::COMPUTE_USER_DATA_0 as u32,
                    koff,
                ]);
            }
        } else if n > 0 {
            let mut user = [0u64; 6];
            if p.kernarg_ptr {
                let at = p.private_segment_dwords as usize;
                user[at] = lo_tag;
                user[at + 1] = TAG_KERNARG_HI;
            }
            let hi = &mut self.hi_pointer;
            self.shadow.write_tagged(
                &mut self.w,
                off::COMPUTE_USER_DATA_0,
                &user[..n],
                full,
                |pos, tag| {
                    if tag & TAG_KERNARG_HI != 0 {
                        hi.push((segment, pos as u32));
                    } else {
                        lo = pos as u32;
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
        self.lo_pointer.push(lo);
        self.repeat = (n == 2 && p.kernarg_ptr && !full).then_some(Repeat {
            kernel: k,
            launch: *launch,
            kernarg_len: kernarg.len(),
            kernarg_align,
            state: key,
            groups: st.groups,
            initiator: p.initiator,
        });
        Ok(id)
    }

    /// The fast path: a dispatch identical in kernel, launch and kernarg
    /// shape to the previous one, whose state registers the shadow still
    /// holds, needs only its kernarg block, pointer write and DISPATCH_DIRECT.
    /// Returns `None` when the general path must run.
    #[inline(always)]
    fn try_repeat(
        &mut self,
        code: &KernelCode<'_>,
        launch: &Launch,
        kernarg: &[u8],
        kernarg_align: u32,
    ) -> Result<Option<DispatchId>, EncodeError> {
        let Some(r) = self.repeat else {
            return Ok(None);
        };
        let symbol = (code.symbol.as_ptr() as usize, code.symbol.len());
        let same = code.family == self.family
            && self.prepared[r.kernel].kd_address == code.kd_address
            && symbol == self.last_symbol
            && self.descriptors[r.kernel] == code.descriptor
            && r.launch == *launch
            && r.kernarg_len == kernarg.len()
            && r.kernarg_align == kernarg_align
            && self.last_state == Some(r.state)
            && self.shadow.holds_hi_at_user_data_1()
            && self.sites.len() < u32::MAX as usize
            && self.w.len() + MAX_DISPATCH_DWORDS + EPILOGUE_DWORDS <= self.limit;
        if !same {
            return Ok(None);
        }
        let id = self.sites.len() as u32;
        let (koff, klen) = self.kernargs.place(kernarg, kernarg_align)?;
        if let Some(b) = self.pending.take() {
            b.emit(&mut self.w);
        }
        let mut lo = NO_DWORD;
        if self
            .shadow
            .replace(off::COMPUTE_USER_DATA_0, TAG_KERNARG_LO | koff as u64)
        {
            lo = self.w.len() as u32 + 2;
            self.w.put(&[
                type3(op::SET_SH_REG, 2, true),
                off::COMPUTE_USER_DATA_0 as u32,
                koff,
            ]);
        }
        let dispatch_dword = self.w.len() as u32;
        emit::dispatch_direct(&mut self.w, r.groups, r.initiator);
        self.sites.push(DispatchSite {
            segment: self.segments.len() as u32,
            dispatch_dword,
            kernarg_offset: koff,
            kernarg_len: klen,
            kernel: r.kernel as u32,
        });
        self.lo_pointer.push(lo);
        Ok(Some(id))
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
        self.pending = None;
        emit_epilogue(&mut self.w);
        self.push_segment();
        for (site, &pos) in self.sites.iter().zip(&self.lo_pointer) {
            if pos != NO_DWORD {
                let value = (kernarg_base + site.kernarg_offset as u64) as u32;
                self.segments[site.segment as usize].dwords[pos as usize] = value;
            }
        }
        for &(segment, pos) in &self.hi_pointer {
            self.segments[segment as usize].dwords[pos as usize] = (kernarg_base >> 32) as u32;
        }
        tracing::debug!(
            family = %self.family,
            dispatches = self.sites.len(),
            segments = self.segments.len(),
            kernarg_bytes = self.kernargs.len(),
            "pm4 ib finished"
        );
        Ok(EncodedIb {
            family: self.family,
            segments: self.segments,
            kernarg_image: self.kernargs.into_bytes(),
            kernarg_base,
            sites: self.sites,
            kernels: self.kernels,
            kernargs_shared: self.opts.kernargs_immutable,
        })
    }

    fn push_segment(&mut self) {
        let first = self.segment_first_dispatch;
        let count = self.sites.len() as u32 - first;
        self.segments.push(Segment {
            dwords: self.w.take(),
            first_dispatch: first,
            dispatch_count: count,
        });
        self.segment_first_dispatch = self.sites.len() as u32;
    }

    /// End the current segment (no epilogue: only the last one carries it)
    /// and start the next with the prologue and no remembered state.
    fn close_segment(&mut self) {
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
        let p = Prepared::new(code, self.family)?;
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
