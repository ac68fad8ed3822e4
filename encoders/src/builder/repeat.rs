//! The fast path: a dispatch repeating the previous one's kernel, launch and
//! kernarg shape in the same segment. The SH registers then already hold
//! everything but the kernarg pointer's low dword, so the dispatch is its
//! kernarg copy, the pending boundary, at most one SET_SH_REG and the
//! DISPATCH_DIRECT, written from a template the general path built. Every
//! check the general path made still holds for it; anything that differs
//! (kernel, launch, kernarg length or alignment, room left in the segment)
//! sends the dispatch down the general path instead.
//!
//! With fresh kernarg blocks (the default, mutable image), repeats after the
//! same boundary are identical but for the kernarg offset, which grows by a
//! fixed stride: they are kept as a run (count, first offset) and their
//! dwords and sites are written when the run ends, in one loop. A run that
//! ends at `finish` is written with final kernarg addresses, so a serial
//! chain's IB is written once and never patched; a run that ends earlier
//! (another kernel, boundary or segment) holds offsets, patched at `finish`.

use relaunch_device::codeobj::KernelDescriptor;
use relaunch_device::Family;

use super::IbBuilder;
use crate::boundary::BoundaryKind;
use crate::dispatch::{KernelCode, Launch, LaunchState, Prepared};
use crate::elide::TAG_KERNARG_LO;
use crate::emit;
use crate::ib::{DispatchId, DispatchSite};
use crate::packet::{op, type3};
use crate::regs::off;
use crate::writer::DwordWriter;

/// Most dwords a repeated dispatch writes: an RMW boundary (10), the low
/// pointer dword's SET_SH_REG (3) and DISPATCH_DIRECT (5).
pub(super) const MAX_REPEAT_DWORDS: usize = 10 + 3 + 5;

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

/// Repeats recorded since the run began: the same boundary before each,
/// so the same stride in the IB and in the kernarg image.
#[derive(Debug, Clone, Copy)]
struct Run {
    count: u32,
    boundary: Option<BoundaryKind>,
    /// DISPATCH_DIRECT dword of the first.
    first_dword: u32,
    first_kernarg: u32,
    dword_stride: u32,
}

/// What the previous dispatch was, and the dwords a repeat of it writes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Repeat {
    kernel: u32,
    family: Family,
    kd_address: u64,
    /// Address and length of the symbol string: the very same string again
    /// proves the same name without comparing bytes.
    symbol: (usize, usize),
    descriptor: KernelDescriptor,
    launch: Launch,
    /// Kernarg length and alignment.
    kernarg: (usize, u32),
    /// Blocks go right at the image's end, one after the other (mutable
    /// image, alignment <= 16, non-empty), so every repeat gets a new
    /// pointer and repeats form runs.
    fresh_kernarg: bool,
    /// Bytes each fresh block takes in the image (its length padded to 16).
    kernarg_stride: u32,
    /// Repeats left before the general path must look again: bounded by the
    /// room in the segment, in the kernarg image below 4 GiB and in dispatch
    /// ids, each repeat counted at its largest.
    budget: u32,
    run: Run,
    /// The segment this template writes into.
    segment: u32,
    /// USER_DATA register of the kernarg pointer's low dword.
    lo_register: u16,
    /// SET_SH_REG of the low dword (word 2 takes the block's offset), then
    /// DISPATCH_DIRECT.
    words: [u32; 8],
}

/// Where the builder stands when a template is made.
pub(super) struct Room {
    /// Dwords the segment can still take before its epilogue.
    pub dwords: usize,
    pub image_len: usize,
    pub dispatches: usize,
    pub segment: u32,
    pub fresh_image: bool,
}

impl Repeat {
    /// The template for repeating a dispatch of prepared kernel `kernel`
    /// (which takes a kernarg pointer) with `launch`, checked as `st`.
    pub(super) fn new(
        kernel: u32,
        code: &KernelCode<'_>,
        launch: &Launch,
        kernarg: (usize, u32),
        p: &Prepared,
        st: LaunchState,
        room: Room,
    ) -> Self {
        let lo_register = off::COMPUTE_USER_DATA_0 + p.private_segment_dwords as u16;
        let mut dd = DwordWriter::with_capacity(5);
        emit::dispatch_direct(&mut dd, st.groups, p.initiator);
        let dd = dd.as_slice();
        let words = [
            type3(op::SET_SH_REG, 2, true),
            lo_register as u32,
            0,
            dd[0],
            dd[1],
            dd[2],
            dd[3],
            dd[4],
        ];
        let (len, align) = kernarg;
        // A block takes at most its length rounded up to 16 plus the
        // alignment padding before it.
        let padded = len.div_ceil(16) * 16;
        let block = (padded + align as usize).max(1);
        let image_room = (u32::MAX as usize).saturating_sub(room.image_len) / block;
        let id_room = (u32::MAX as usize - 1).saturating_sub(room.dispatches);
        let budget = (room.dwords / MAX_REPEAT_DWORDS)
            .min(image_room)
            .min(id_room)
            .min(u32::MAX as usize) as u32;
        Repeat {
            kernel,
            family: code.family,
            kd_address: code.kd_address,
            symbol: (code.symbol.as_ptr() as usize, code.symbol.len()),
            descriptor: code.descriptor,
            launch: *launch,
            kernarg,
            fresh_kernarg: room.fresh_image
                && align <= crate::kernarg::MIN_KERNARG_ALIGN
                && len > 0,
            kernarg_stride: padded as u32,
            budget,
            run: Run {
                count: 0,
                boundary: None,
                first_dword: 0,
                first_kernarg: 0,
                dword_stride: 0,
            },
            segment: room.segment,
            lo_register,
            words,
        }
    }

    /// True when `code`, `launch` or the kernarg shape differ from what this
    /// template was made for. Every field is compared inline, without calls
    /// (this runs once per dispatch); the destructuring names every field,
    /// so a field added to these types must be added here.
    #[inline(always)]
    fn differs(&self, code: &KernelCode<'_>, launch: &Launch, kernarg: (usize, u32)) -> bool {
        let KernelCode {
            symbol,
            family,
            descriptor,
            kd_address,
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
        let (d, l) = (&self.descriptor, &self.launch);
        // Cheapest and likeliest to differ first; each compare is its own
        // well-predicted branch, with no reduction to wait for.
        kd_address != self.kd_address
            || symbol.as_ptr() as usize != self.symbol.0
            || symbol.len() != self.symbol.1
            || kernarg != self.kernarg
            || grid[0] != l.grid[0]
            || grid[1] != l.grid[1]
            || grid[2] != l.grid[2]
            || block[0] != l.block[0]
            || block[1] != l.block[1]
            || block[2] != l.block[2]
            || dynamic != l.dynamic_group_bytes
            || family as u32 != self.family as u32
            || entry != d.kernel_code_entry_byte_offset
            || g != d.group_segment_fixed_size
            || pr != d.private_segment_fixed_size
            || ks != d.kernarg_size
            || r3 != d.compute_pgm_rsrc3
            || r1 != d.compute_pgm_rsrc1
            || r2 != d.compute_pgm_rsrc2
            || props != d.kernel_code_properties
            || pre != d.kernarg_preload
    }

    /// Repeats recorded in the current run (their sites are not written yet).
    pub(super) fn pending_sites(&self) -> u32 {
        self.run.count
    }

    /// Dwords the current run will write.
    pub(super) fn pending_dwords(&self) -> usize {
        self.run.count as usize * self.run.dword_stride as usize
    }
}

impl IbBuilder {
    /// Record the dispatch on the fast path, or return `None` (having
    /// changed nothing) when the general path must take it.
    #[inline(always)]
    pub(super) fn try_repeat(
        &mut self,
        code: &KernelCode<'_>,
        launch: &Launch,
        kernarg: &[u8],
        kernarg_align: u32,
    ) -> Option<DispatchId> {
        let r = self.repeat.as_mut()?;
        if r.budget == 0 || r.differs(code, launch, (kernarg.len(), kernarg_align)) {
            return None;
        }
        r.budget -= 1;
        if !r.fresh_kernarg {
            return self.repeat_shared(kernarg, kernarg_align);
        }
        let pending = self.pending.take();
        if r.run.count > 0 && pending != r.run.boundary {
            self.end_run(None);
        }
        let r = self.repeat.as_mut()?;
        let id = self.sites.len() as u32 + r.run.count;
        // A new block always moves the pointer: nothing to ask the shadow
        // (`end_run` tells it the last value).
        let koff = self.kernargs.push_fresh(kernarg);
        if r.run.count == 0 {
            let stride = pending.map_or(0, BoundaryKind::dwords) + r.words.len();
            r.run = Run {
                count: 0,
                boundary: pending,
                first_dword: (self.w.len() + stride - 5) as u32,
                first_kernarg: koff,
                dword_stride: stride as u32,
            };
        }
        r.run.count += 1;
        Some(id)
    }

    /// A repeat whose kernarg block may be shared (immutable image) or
    /// needs more than 16-byte alignment: placed and recorded one by one.
    fn repeat_shared(&mut self, kernarg: &[u8], kernarg_align: u32) -> Option<DispatchId> {
        // The budget keeps the block below 4 GiB, so `place` does not fail.
        let koff = self.kernargs.place(kernarg, kernarg_align).ok()?.0;
        let r = self.repeat.as_ref()?;
        let id = self.sites.len() as u32;
        if let Some(b) = self.pending.take() {
            b.emit(&mut self.w);
        }
        let at = self.w.len();
        let dd = if self
            .shadow
            .replace(r.lo_register, TAG_KERNARG_LO | koff as u64)
        {
            let mut words = r.words;
            words[2] = koff;
            self.w.put(&words);
            self.lo_pointer.push(at as u32 + 2);
            at + 3
        } else {
            let [_, _, _, dd @ ..] = r.words;
            self.w.put(&dd);
            at
        };
        self.sites.push(DispatchSite {
            segment: r.segment,
            dispatch_dword: dd as u32,
            kernarg_offset: koff,
            kernarg_len: kernarg.len() as u32,
            kernel: r.kernel,
        });
        Some(id)
    }

    /// Write out the current run: its dwords (with final kernarg pointers
    /// when `base_lo`, the kernarg base's low dword, is known, else with
    /// offsets to patch at `finish`), its sites, and the last low pointer
    /// dword for the shadow.
    pub(super) fn end_run(&mut self, base_lo: Option<u32>) {
        let Some(r) = self.repeat.as_mut() else {
            return;
        };
        let run = r.run;
        if run.count == 0 {
            return;
        }
        r.run.count = 0;
        let boundary = run.boundary.map_or(&[][..], BoundaryKind::words);
        let mut template = [0u32; MAX_REPEAT_DWORDS];
        let len = boundary.len() + r.words.len();
        template[..boundary.len()].copy_from_slice(boundary);
        template[boundary.len()..len].copy_from_slice(&r.words);
        let lo_at = boundary.len() + 2;
        let kstride = r.kernarg_stride;
        let first = base_lo.map_or(run.first_kernarg, |b| b.wrapping_add(run.first_kernarg));
        let at = self.w.len();
        self.w
            .put_run(&template[..len], lo_at, first, kstride, run.count as usize);
        debug_assert_eq!(at + len - 5, run.first_dword as usize);
        let (segment, kernel) = (r.segment, r.kernel);
        let klen = r.kernarg.0 as u32;
        let (mut dword, mut offset) = (run.first_dword, run.first_kernarg);
        self.sites.extend((0..run.count).map(move |_| {
            let site = DispatchSite {
                segment,
                dispatch_dword: dword,
                kernarg_offset: offset,
                kernarg_len: klen,
                kernel,
            };
            dword = dword.wrapping_add(run.dword_stride);
            offset = offset.wrapping_add(kstride);
            site
        }));
        if base_lo.is_none() {
            self.lo_runs.push(PatchRun {
                segment,
                first: (at + lo_at) as u32,
                stride: run.dword_stride,
                count: run.count,
            });
        }
        let last = run.first_kernarg + (run.count - 1) * kstride;
        self.shadow.set(r.lo_register, TAG_KERNARG_LO | last as u64);
    }
}
