//! Templates and transitions: what the builder remembers so that a dispatch
//! it has seen before costs its kernarg copy and a few comparisons.
//!
//! A template is one (kernel, launch, kernarg length and alignment) the
//! general path has checked, under an interned id: its derived values and
//! the SH registers one of its dispatches programs. A transition is the
//! words one dispatch of a template writes after a dispatch of another (or
//! the same) template with a given boundary between them, in one segment:
//! the boundary, the registers that change, DISPATCH_DIRECT. It is captured
//! from the general path's own output the first time, so the words exist
//! once; a transition is cached only where they cannot depend on anything
//! else (see `Templates::transition_allowed`).

use relaunch_device::codeobj::KernelDescriptor;
use relaunch_facts::Family;
use rustc_hash::FxHashMap;

use crate::boundary::BoundaryKind;
use crate::dispatch::{KernelCode, Launch, LaunchState, Prepared, RESOURCE_LIMITS_VALUE};
use crate::elide::{TAG_KERNARG_HI, TAG_KERNARG_LO, TAG_SCRATCH};
use crate::kernarg::MIN_KERNARG_ALIGN;
use crate::regs::off;
use crate::scratch::Word;

/// Index of a template in the builder's table (`TemplateId` is the
/// caller's handle on one).
pub(super) type TemplateIx = u32;
pub(super) type TransitionId = u32;

/// First register and index range in `Template::image` of each run of
/// state registers a dispatch programs, in the order they are written.
pub(super) const STATE_RUNS: [(u16, usize, usize); 5] = [
    (off::COMPUTE_NUM_THREAD_X, 0, 3),
    (off::COMPUTE_PGM_LO, 3, 5),
    (off::COMPUTE_PGM_RSRC1, 5, 7),
    (off::COMPUTE_RESOURCE_LIMITS, 7, 8),
    (off::COMPUTE_PGM_RSRC3, 8, 9),
];
/// Where the USER_DATA values start in `Template::image`.
pub(super) const USER_AT: usize = 9;
const IMAGE_LEN: usize = USER_AT + off::USER_DATA_COUNT as usize;

/// What a dispatch must pass to take a template's fast path: the caller's
/// kernel, launch and kernarg shape, compared whole (the symbol by its
/// address: the same string proves the same name without reading it).
#[derive(Debug, Clone, Copy)]
pub(super) struct Identity {
    kd_address: u64,
    symbol: (usize, usize),
    descriptor: KernelDescriptor,
    launch: Launch,
    kernarg: (usize, u32),
    family: Family,
}

impl Identity {
    fn of(code: &KernelCode<'_>, launch: &Launch, kernarg: (usize, u32)) -> Self {
        Identity {
            kd_address: code.kd_address,
            symbol: (code.symbol.as_ptr() as usize, code.symbol.len()),
            descriptor: code.descriptor,
            launch: *launch,
            kernarg,
            family: code.family,
        }
    }
}

/// One checked (kernel, launch, kernarg shape).
#[derive(Debug, Clone)]
pub(super) struct Template {
    identity: Identity,
    /// Index into the builder's kernels.
    pub kernel: u32,
    pub st: LaunchState,
    pub initiator: u32,
    pub kernarg_len: u32,
    pub kernarg_align: u32,
    /// Blocks go right at the image's end (mutable image, alignment <= 16,
    /// non-empty): every dispatch gets a new, higher offset.
    pub fresh: bool,
    /// USER_DATA registers programmed (RSRC2's count).
    pub user: usize,
    /// Values of the state registers (`STATE_RUNS`) then the USER_DATA
    /// ones; the kernarg pointer's dwords hold their tags (offset 0).
    image: [u64; IMAGE_LEN],
    /// Index in `image` of the kernarg pointer's low dword, if any.
    lo: Option<usize>,
    /// Index in `image` of the dispatch packet pointer's low dword, if the
    /// kernel reads its packet.
    packet_lo: Option<usize>,
}

impl Template {
    /// True when a dispatch of `code` with `launch` and `kernarg` (length,
    /// alignment) is one of this template's. Every field is compared, in
    /// one pass without branches (this runs once per dispatch); the
    /// destructuring names every field, so a field added to these types
    /// must be added here.
    #[inline(always)]
    pub fn matches(&self, code: &KernelCode<'_>, launch: &Launch, kernarg: (usize, u32)) -> bool {
        let KernelCode {
            symbol,
            family,
            descriptor,
            kd_address,
            // Acceptance only: the bytes follow from the descriptor.
            unread: _,
        } = *code;
        let KernelDescriptor {
            group_segment_fixed_size: g,
            private_segment_fixed_size: pr,
            kernarg_size: ks,
            kernel_code_entry_byte_offset: entry,
            compute_pgm_rsrc3: r3,
            compute_pgm_rsrc1: r1,
            compute_pgm_rsrc2: r2,
            kernel_code_properties: props,
            kernarg_preload: pre,
        } = descriptor;
        let Launch {
            grid,
            block,
            dynamic_group_bytes: dynamic,
        } = *launch;
        let (i, d, l) = (
            &self.identity,
            &self.identity.descriptor,
            &self.identity.launch,
        );
        let wide = (kd_address ^ i.kd_address)
            | (symbol.as_ptr() as u64 ^ i.symbol.0 as u64)
            | (symbol.len() as u64 ^ i.symbol.1 as u64)
            | (kernarg.0 as u64 ^ i.kernarg.0 as u64)
            | (entry ^ d.kernel_code_entry_byte_offset) as u64;
        let narrow = (kernarg.1 ^ i.kernarg.1)
            | (grid[0] ^ l.grid[0])
            | (grid[1] ^ l.grid[1])
            | (grid[2] ^ l.grid[2])
            | (block[0] ^ l.block[0])
            | (block[1] ^ l.block[1])
            | (block[2] ^ l.block[2])
            | (dynamic ^ l.dynamic_group_bytes)
            | (g ^ d.group_segment_fixed_size)
            | (pr ^ d.private_segment_fixed_size)
            | (ks ^ d.kernarg_size)
            | (r3 ^ d.compute_pgm_rsrc3)
            | (r1 ^ d.compute_pgm_rsrc1)
            | (r2 ^ d.compute_pgm_rsrc2)
            | (props ^ d.kernel_code_properties) as u32
            | (pre ^ d.kernarg_preload) as u32
            | (family as u32 ^ i.family as u32);
        wide | narrow as u64 == 0
    }

    /// The launch the template was checked with.
    pub fn launch(&self) -> &Launch {
        &self.identity.launch
    }

    /// The register holding the kernarg pointer's low dword, if any.
    pub fn lo_register(&self) -> Option<u16> {
        self.lo
            .map(|at| off::COMPUTE_USER_DATA_0 + (at - USER_AT) as u16)
    }

    /// The register values with the kernarg block at `koff` and the
    /// dispatch packet (for a kernel that reads it) at `packet`.
    #[inline]
    pub fn image(&self, koff: u32, packet: Option<u32>) -> [u64; IMAGE_LEN] {
        let mut image = self.image;
        if let Some(lo) = self.lo {
            image[lo] |= koff as u64;
        }
        if let (Some(lo), Some(at)) = (self.packet_lo, packet) {
            image[lo] |= at as u64;
        }
        image
    }
}

/// Longest transition written with a fixed-size copy (`SHORT` dwords are
/// copied, `len` kept): a dispatch switching kernels with an RMW boundary
/// takes 24.
pub(super) const SHORT: usize = 32;

/// Words of one transition, in `Templates::words`, and what the fast path needs
/// of its template to write it out.
#[derive(Debug, Clone, Copy)]
pub(super) struct Transition {
    /// Its `step_key`: the boundary before it and the template it writes a
    /// dispatch of.
    pub key: u64,
    /// The template it writes a dispatch of.
    pub template: TemplateIx,
    pub kernel: u32,
    pub kernarg_len: u32,
    /// Bytes one fresh block takes (its length padded to 16).
    pub kernarg_stride: u32,
    pub start: u32,
    pub len: u32,
    /// Offsets in the words of the kernarg pointer's low dword (holding 0,
    /// the block's offset goes there), of its high dword if written, and
    /// of DISPATCH_DIRECT.
    pub lo_at: u32,
    pub hi_at: Option<u32>,
    pub dispatch_at: u32,
    /// The last two steps taken after this one (`step_key`, newest first)
    /// and their transitions: the next dispatch is found with a comparison
    /// or two while the stream repeats, also where one transition has two
    /// successors (a decode step's shared norm kernel is followed by one
    /// projection or the other); a miss costs a look-up, never a wrong
    /// dispatch.
    pub next: [(u64, TransitionId); 2],
}

/// `Transition::next_key` of a transition with no memo yet.
const NO_STEP: u64 = u64::MAX;

/// The step to template `to` after `boundary`, as one number (below
/// `NO_STEP`).
#[inline(always)]
pub(super) fn step_key(boundary: Option<BoundaryKind>, to: TemplateIx) -> u64 {
    let b = match boundary {
        None => 0,
        Some(BoundaryKind::Wait) => 1,
        Some(BoundaryKind::RmwVmem) => 2,
        Some(BoundaryKind::Rmw) => 3,
    };
    (to as u64) << 2 | b
}

/// Every template and transition of one builder.
#[derive(Debug, Default)]
pub(super) struct Templates {
    pub templates: Vec<Template>,
    by_key: FxHashMap<(u32, Launch, usize, u32), TemplateIx>,
    pub transitions: Vec<Transition>,
    by_step: FxHashMap<(TemplateIx, Option<BoundaryKind>, TemplateIx), TransitionId>,
    /// Every transition's words, one after another, then `SHORT` zeros
    /// (so any transition's first `SHORT` dwords can be copied at once).
    words: Vec<u32>,
    /// Largest fresh kernarg stride seen (for `IbBuilder::reserve`).
    pub max_stride: u32,
    /// Dwords of the longest transition (for `IbBuilder::reserve`).
    pub longest: u32,
}

impl Templates {
    /// The template of prepared kernel `kernel` with `launch` and `kernarg`
    /// (length, alignment), if one was made.
    pub fn find(&self, kernel: u32, launch: &Launch, kernarg: (usize, u32)) -> Option<TemplateIx> {
        self.by_key
            .get(&(kernel, *launch, kernarg.0, kernarg.1))
            .copied()
    }

    /// Remember a checked launch: `st` from `check_launch`, the kernarg
    /// shape checked against `p`.
    #[allow(clippy::too_many_arguments)]
    pub fn insert(
        &mut self,
        kernel: u32,
        code: &KernelCode<'_>,
        p: &Prepared,
        launch: &Launch,
        st: LaunchState,
        kernarg: (usize, u32),
        fresh_image: bool,
    ) -> TemplateIx {
        let (len, align) = kernarg;
        let mut image = [0u64; IMAGE_LEN];
        image[..3].copy_from_slice(&launch.block.map(u64::from));
        image[3..5].copy_from_slice(&p.pgm.map(u64::from));
        image[5..9].copy_from_slice(&[
            p.rsrc1 as u64,
            st.rsrc2 as u64,
            RESOURCE_LIMITS_VALUE as u64,
            p.rsrc3 as u64,
        ]);
        // USER_DATA: [private segment buffer], [dispatch packet pointer],
        // [queue pointer zeros], kernarg pointer, [dispatch id zeros], [flat scratch init], [private segment size],
        // then the padding zeros RSRC2 declares. Both pointers are tagged:
        // low dwords offsets from the base until `finish`, high dwords
        // filled there; the scratch V# (zeros for a kernel without
        // scratch) and flat scratch init are scratch placeholders.
        let scratch = |w: Word| TAG_SCRATCH | w as u64;
        if p.sgprs.private_segment_dwords == 4 && p.scratch_en {
            let srd3 = if p.wave64 {
                Word::Srd3Wave64
            } else {
                Word::Srd3Wave32
            };
            let srd = [Word::Srd0, Word::Srd1, Word::Srd2, srd3].map(scratch);
            image[USER_AT..USER_AT + 4].copy_from_slice(&srd);
        }
        let mut at = USER_AT + p.sgprs.private_segment_dwords as usize;
        let pointer = |image: &mut [u64; IMAGE_LEN], at: &mut usize, wanted: bool| {
            wanted.then(|| {
                image[*at] = TAG_KERNARG_LO;
                image[*at + 1] = TAG_KERNARG_HI;
                *at += 2;
                *at - 2
            })
        };
        let packet_lo = pointer(&mut image, &mut at, p.sgprs.dispatch_ptr);
        // Zeros for the queue pointer and the dispatch id, which the
        // verdict lets through only for code that never reads them.
        at += if p.sgprs.queue_ptr { 2 } else { 0 };
        let lo = pointer(&mut image, &mut at, p.sgprs.kernarg_ptr);
        at += if p.sgprs.dispatch_id { 2 } else { 0 };
        if p.sgprs.flat_scratch_init {
            image[at] = scratch(Word::InitLo);
            image[at + 1] = scratch(Word::InitHi);
            at += 2;
        }
        if let Some(size) = p.private_segment_size {
            image[at] = u64::from(size);
        }
        let fresh = fresh_image && align <= MIN_KERNARG_ALIGN && len > 0;
        let stride = len.div_ceil(16) * 16;
        if fresh {
            self.max_stride = self.max_stride.max(stride as u32);
        }
        let id = self.templates.len() as TemplateIx;
        self.templates.push(Template {
            identity: Identity::of(code, launch, kernarg),
            kernel,
            st,
            initiator: p.initiator,
            kernarg_len: len as u32,
            kernarg_align: align,
            fresh,
            user: p.user_sgprs(),
            image,
            lo,
            packet_lo,
        });
        self.by_key.insert((kernel, *launch, len, align), id);
        id
    }

    /// Point template `t` at the caller's symbol string (same text, found by
    /// comparing it), so the next dispatch passing it matches at once.
    pub fn remember_symbol(&mut self, t: TemplateIx, code: &KernelCode<'_>) {
        let i = &mut self.templates[t as usize].identity;
        i.symbol = (code.symbol.as_ptr() as usize, code.symbol.len());
    }

    /// True when the words of a dispatch of `to` right after one of `from`
    /// in the same segment depend on nothing else: the registers `to`
    /// programs are all ones `from` programmed (the same USER_DATA count;
    /// the state registers every dispatch programs), so the shadow holds
    /// `from`'s values for each, and both take fresh blocks (so both have a
    /// kernarg pointer, and its low dword always changes: a fresh block's
    /// offset is above every earlier one).
    pub fn transition_allowed(&self, from: TemplateIx, to: TemplateIx) -> bool {
        let (f, t) = (&self.templates[from as usize], &self.templates[to as usize]);
        t.fresh && f.fresh && f.user == t.user
    }

    /// The transition a dispatch of `to` after `boundary` takes following
    /// one of template `from` that took `last` (`NO_TRANSITION`: none), if
    /// cached: `last`'s memo first, else the table (and the memo learns
    /// it).
    #[inline(always)]
    pub fn next_step(
        &mut self,
        from: TemplateIx,
        last: TransitionId,
        boundary: Option<BoundaryKind>,
        to: TemplateIx,
    ) -> Option<TransitionId> {
        let key = step_key(boundary, to);
        if let Some(x) = self.transitions.get(last as usize) {
            for (k, next) in x.next {
                if k == key {
                    return Some(next);
                }
            }
        }
        self.learn_step(from, last, boundary, to)
    }

    #[inline(never)]
    fn learn_step(
        &mut self,
        from: TemplateIx,
        last: TransitionId,
        boundary: Option<BoundaryKind>,
        to: TemplateIx,
    ) -> Option<TransitionId> {
        let next = self.step(from, boundary, to)?;
        if let Some(x) = self.transitions.get_mut(last as usize) {
            x.next = [(step_key(boundary, to), next), x.next[0]];
        }
        Some(next)
    }

    /// The transition from `from` to `to` across `boundary`, if cached.
    pub fn step(
        &self,
        from: TemplateIx,
        boundary: Option<BoundaryKind>,
        to: TemplateIx,
    ) -> Option<TransitionId> {
        self.by_step.get(&(from, boundary, to)).copied()
    }

    /// Cache `words` (what the general path wrote for a dispatch of `to`
    /// after one of `from`) as their transition. Offsets are into `words`.
    pub fn add_transition(
        &mut self,
        step: (TemplateIx, Option<BoundaryKind>, TemplateIx),
        words: &[u32],
        lo_at: usize,
        hi_at: Option<usize>,
        dispatch_at: usize,
    ) -> TransitionId {
        let id = self.transitions.len() as TransitionId;
        let t = &self.templates[step.2 as usize];
        let start = self.words.len().saturating_sub(SHORT);
        self.transitions.push(Transition {
            key: step_key(step.1, step.2),
            template: step.2,
            kernel: t.kernel,
            kernarg_len: t.kernarg_len,
            kernarg_stride: t.kernarg_len.div_ceil(16) * 16,
            start: start as u32,
            len: words.len() as u32,
            lo_at: lo_at as u32,
            hi_at: hi_at.map(|h| h as u32),
            dispatch_at: dispatch_at as u32,
            next: [(NO_STEP, 0); 2],
        });
        self.longest = self.longest.max(words.len() as u32);
        self.words.truncate(start);
        self.words.extend_from_slice(words);
        self.words.extend_from_slice(&[0; SHORT]);
        self.by_step.insert(step, id);
        id
    }

    /// The words of transition `x`.
    #[inline(always)]
    pub fn words_of(&self, x: &Transition) -> &[u32] {
        &self.words[x.start as usize..(x.start + x.len) as usize]
    }

    /// The first `SHORT` words from transition `x`'s (its own and what
    /// follows them).
    #[inline(always)]
    pub fn short_words_of(&self, x: &Transition) -> &[u32; SHORT] {
        let from = &self.words[x.start as usize..];
        from.first_chunk().expect("SHORT zeros end the words")
    }
}
