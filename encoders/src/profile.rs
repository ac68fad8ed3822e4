//! Profiled IBs: timestamp writes spliced into a finished IB. Recording
//! never knows about profiling (the C API decides at finalize, after every
//! dispatch was recorded): `IbBuilder::finish` encodes exactly what it
//! would without profiling, then, when a [`Profile`] was set, this module
//! inserts the timestamp packets at positions the IB already records (the
//! end of the prologue, each dispatch's DISPATCH_DIRECT, the end of the
//! epilogue) and moves the dispatch sites after them. Splicing after the
//! kernarg pointers were filled in is safe: nothing in the IB refers to a
//! dword position (the INDIRECT_BUFFER packets are built from the segments
//! afterwards), and non-profiled IBs are untouched, byte for byte.
//!
//! Slots: one 8-byte slot per write, in memory the caller owns:
//! [`IB_START_SLOT`], [`IB_END_SLOT`], then dispatch `i`'s start and end
//! at [`dispatch_slots`]`(i)`. A slot holds the GPU clock counter when
//! everything before it in the IB has finished (an end-of-pipe write).

use crate::boundary::PROLOGUE_DWORDS;
use crate::error::EncodeError;
use crate::ib::EncodedIb;
use crate::packet::MAX_IB_DWORDS;
use crate::stream_order::{DONE_DWORDS, GATE_DWORDS};
use crate::timestamp::{emit_timestamp, TIMESTAMP_BYTES, TIMESTAMP_DWORDS};
use crate::writer::DwordWriter;

/// Slot of the IB's start (after the prologue of its first segment).
pub const IB_START_SLOT: usize = 0;
/// Slot of the IB's end (after the epilogue of its last segment).
pub const IB_END_SLOT: usize = 1;
/// Dwords of one DISPATCH_DIRECT (header and four body dwords).
const DISPATCH_DIRECT_DWORDS: u32 = 5;
/// Extra IB dwords per dispatch when per-dispatch timestamps are on.
pub const DWORDS_PER_DISPATCH: usize = 2 * TIMESTAMP_DWORDS;

/// Which timestamps a profiled IB writes, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// GPU address of slot 0 (nonzero, 8-byte aligned); the memory holds
    /// [`Profile::slot_count`] slots of 8 bytes the CP can write.
    pub slots: u64,
    /// Also bracket every dispatch (two more slots per dispatch).
    pub per_dispatch: bool,
}

impl Profile {
    /// Slots an IB of `dispatches` dispatches writes.
    pub fn slot_count(&self, dispatches: usize) -> usize {
        if self.per_dispatch {
            2 + 2 * dispatches
        } else {
            2
        }
    }

    fn address(&self, slot: usize) -> u64 {
        self.slots + slot as u64 * TIMESTAMP_BYTES
    }
}

/// Start and end slots of dispatch `index` in a per-dispatch profile.
pub const fn dispatch_slots(index: usize) -> (usize, usize) {
    (2 + 2 * index, 3 + 2 * index)
}

/// Dwords before an IB's first dispatch state that the start timestamp
/// follows: the stream gate (when stream-ordered) and the prologue.
pub const fn head_dwords(stream_ordered: bool) -> usize {
    if stream_ordered {
        GATE_DWORDS + PROLOGUE_DWORDS
    } else {
        PROLOGUE_DWORDS
    }
}

/// Dwords after the epilogue that the end timestamp precedes: the stream
/// gate's close (when stream-ordered), so the span ends before the other
/// queue is told the IB finished.
pub const fn tail_dwords(stream_ordered: bool) -> usize {
    if stream_ordered {
        DONE_DWORDS
    } else {
        0
    }
}

/// Inserts `profile`'s timestamps into `ib` (see the module docs).
pub fn splice(
    ib: &mut EncodedIb,
    profile: Profile,
    stream_ordered: bool,
) -> Result<(), EncodeError> {
    if profile.slots == 0 || profile.slots % TIMESTAMP_BYTES != 0 {
        return Err(EncodeError::BadTimestampSlots {
            address: profile.slots,
        });
    }
    let last = ib.segments.len().saturating_sub(1);
    for (index, segment) in ib.segments.iter_mut().enumerate() {
        // (dword position, slot), in position order.
        let mut at: Vec<(usize, usize)> = Vec::new();
        if index == 0 {
            at.push((head_dwords(stream_ordered), IB_START_SLOT));
        }
        let first = segment.first_dispatch as usize;
        let sites = &ib.sites[first..first + segment.dispatch_count as usize];
        if profile.per_dispatch {
            for (i, site) in sites.iter().enumerate() {
                let (start, end) = dispatch_slots(first + i);
                let dd = site.dispatch_dword as usize;
                at.push((dd, start));
                at.push((dd + DISPATCH_DIRECT_DWORDS as usize, end));
            }
        }
        if index == last {
            let tail = tail_dwords(stream_ordered);
            at.push((segment.dwords.len().saturating_sub(tail), IB_END_SLOT));
        }
        let dwords = segment.dwords.len() + at.len() * TIMESTAMP_DWORDS;
        if dwords > MAX_IB_DWORDS as usize {
            return Err(EncodeError::ProfiledSegmentTooLong {
                segment: index,
                dwords,
                max: MAX_IB_DWORDS,
            });
        }
        let mut w = DwordWriter::new();
        w.reserve_total(dwords);
        let mut from = 0;
        for &(pos, slot) in &at {
            w.reserve(pos - from).extend(&segment.dwords[from..pos]);
            emit_timestamp(&mut w, profile.address(slot));
            from = pos;
        }
        let rest = segment.dwords.len() - from;
        w.reserve(rest).extend(&segment.dwords[from..]);
        // Each dispatch moves by the timestamps inserted before it: the IB
        // start (segment 0) plus two per earlier dispatch of the segment
        // and its own start.
        if profile.per_dispatch || index == 0 {
            let base = u32::from(index == 0);
            let per = u32::from(profile.per_dispatch);
            for (i, site) in ib.sites[first..first + segment.dispatch_count as usize]
                .iter_mut()
                .enumerate()
            {
                let before = base + per * (2 * i as u32 + 1);
                site.dispatch_dword += before * TIMESTAMP_DWORDS as u32;
            }
        }
        segment.dwords = w.into_vec();
    }
    Ok(())
}
