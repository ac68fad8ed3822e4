//! Finishing: the epilogue, the kernarg pointers for the final base, the
//! segments; and cutting a segment while recording.

use super::IbBuilder;
use crate::boundary::{emit_epilogue, emit_prologue};
use crate::dispatch_packet::KERNARG_ADDRESS_OFFSET;
use crate::error::EncodeError;
use crate::ib::{EncodedIb, Segment};
use crate::scratch::{ScratchRing, Word};
use crate::stream_order;
use crate::writer::DwordWriter;

impl IbBuilder {
    /// Close the last segment with the epilogue, fill in kernarg pointers for
    /// a kernarg block at `kernarg_base`, and return the IB. An IB with
    /// scratch dispatches needs `finish_with_scratch`.
    pub fn finish(self, kernarg_base: u64) -> Result<EncodedIb, EncodeError> {
        self.finish_with_scratch(kernarg_base, None)
    }

    /// [`IbBuilder::finish`] for a queue whose scratch backing is `scratch`
    /// (planned from [`IbBuilder::scratch_need`]): its register and V#
    /// values go where recording left scratch placeholders.
    pub fn finish_with_scratch(
        mut self,
        kernarg_base: u64,
        scratch: Option<&ScratchRing>,
    ) -> Result<EncodedIb, EncodeError> {
        if self.dispatch_count() == 0 {
            return Err(EncodeError::Empty);
        }
        if let Some(need) = self.scratch_need() {
            let ring = scratch.ok_or(EncodeError::ScratchNotProvided)?;
            let plan = &ring.plan;
            if plan.family != self.family
                || plan.wave_bytes < need.wave_bytes
                || plan.slots < u64::from(need.group_waves)
            {
                return Err(EncodeError::Scratch {
                    reason: format!(
                        "the backing's plan ({} slots of {} bytes, {}) does not cover the IB's \
                         need ({} bytes per wave, {} waves per workgroup, {})",
                        plan.slots,
                        plan.wave_bytes,
                        plan.family,
                        need.wave_bytes,
                        need.group_waves,
                        self.family
                    ),
                });
            }
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
        self.push_segment(false);
        if let Some(ring) = scratch {
            for &(segment, pos, word) in &self.scratch_at {
                let w = Word::ALL[word as usize];
                self.segments[segment as usize].dwords[pos as usize] = ring.word(w);
            }
        }
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

    /// Close the open segment; `more`: another one follows (it takes a
    /// recycled buffer if one is left).
    fn push_segment(&mut self, more: bool) {
        let first = self.segment_first_dispatch;
        let count = self.sites.len() as u32 - first;
        let spare = if more { self.spare_dwords.pop() } else { None };
        let dwords = match spare {
            Some(spare) => std::mem::replace(&mut self.w, DwordWriter::from_vec(spare)).into_vec(),
            None => self.w.take(),
        };
        self.segments.push(Segment {
            dwords,
            first_dispatch: first,
            dispatch_count: count,
        });
        self.lo_pointer_ends.push(self.lo_pointer.len());
        self.segment_first_dispatch = self.sites.len() as u32;
    }

    /// End the current segment (no epilogue: only the last one carries it)
    /// and start the next with the prologue and no remembered state.
    pub(super) fn close_segment(&mut self) {
        self.last = None;
        self.push_segment(true);
        emit_prologue(&mut self.w);
        self.shadow.reset();
    }
}
