//! Profiled replay: IBs that time themselves. `Gpu::finalize_profiled`
//! (and `finalize_multi_profiled`) install an IB whose PM4 writes the GPU
//! clock counter at its start (after the prologue) and end (after the
//! epilogue) on each queue, and, with [`Profiling::Dispatches`], before
//! and after every dispatch (see `encoders/src/profile.rs`). The writes go
//! to memory this module allocates and the IB retains, one 8-byte slot per
//! write, fine-grained host memory the GPU writes coherently (a write after
//! the epilogue's GL2 write-back must not wait in GL2 for a host copy; see
//! `docs/pm4.md`); after a profiled replay completes they are read back
//! and converted with the agent's timestamp frequency
//! (`HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY`). Nothing is estimated on the
//! host: a slot the GPU did not write, or readings out of order, is an
//! error, never a made-up time.

use relaunch_encoders::profile::{dispatch_slots, IB_END_SLOT, IB_START_SLOT};
use relaunch_encoders::timestamp::{ticks_to_us, TIMESTAMP_BYTES};
use relaunch_encoders::Profile;

use crate::error::{Error, Result};
use crate::gpu::{DeviceBuffer, Gpu};
use crate::refusal::{Refusal, TimestampMark};

/// Which timestamps a profiled IB writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Profiling {
    /// The IB's start and end on each queue: the GPU execution span.
    Span,
    /// The span, and the start and end of every dispatch (16 more IB
    /// dwords per dispatch).
    Dispatches,
}

/// One dispatch of a profiled replay, in microseconds from the replay's
/// origin (the IB's start; for a multi-IB, the earliest lane's start).
/// `start_us` is when everything before the dispatch in its IB had
/// finished, `end_us` when the dispatch (and everything before) had: a
/// dispatch that overlaps its predecessor (no boundary between them) is
/// only bounded, not measured alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DispatchTime {
    pub start_us: f64,
    pub end_us: f64,
}

/// One lane (queue program) of a profiled replay, from the origin.
#[derive(Debug, Clone, PartialEq)]
pub struct LaneTimes {
    pub start_us: f64,
    pub end_us: f64,
    /// Per dispatch, in recording order; empty unless the IB was
    /// finalized with [`Profiling::Dispatches`].
    pub dispatches: Vec<DispatchTime>,
}

/// What a profiled replay measured.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayTimes {
    /// GPU execution span in microseconds: from the earliest lane start to
    /// the latest lane end (one IB: its start to its end).
    pub gpu_us: f64,
    pub lanes: Vec<LaneTimes>,
}

/// The timestamp memory of one profiled IB or multi-IB: the slots of each
/// lane one after another.
pub(crate) struct Slots {
    mem: DeviceBuffer,
    profiling: Profiling,
    /// Per lane: its first slot and its dispatch count.
    lanes: Vec<(usize, usize)>,
    total: usize,
    hz: u64,
}

impl Slots {
    /// Allocates slots for lanes of `dispatches` dispatches each.
    pub(crate) fn new(gpu: &Gpu, profiling: Profiling, dispatches: &[usize]) -> Result<Slots> {
        let hz = gpu.inner.runtime.timestamp_frequency();
        if hz == 0 {
            return Err(Refusal::NoTimestampFrequency.into());
        }
        let mut lanes = Vec::with_capacity(dispatches.len());
        let mut total = 0usize;
        for &n in dispatches {
            lanes.push((total, n));
            total += profile_shape(profiling).slot_count(n);
        }
        let bytes = total * TIMESTAMP_BYTES as usize;
        let mem = gpu
            .alloc(bytes, true)
            .map_err(|e| e.context("allocating profiled-replay timestamp memory"))?;
        Ok(Slots {
            mem,
            profiling,
            lanes,
            total,
            hz,
        })
    }

    pub(crate) fn profiling(&self) -> Profiling {
        self.profiling
    }

    /// What lane `lane`'s builder splices in.
    pub(crate) fn profile(&self, lane: usize) -> Profile {
        let first = self.lanes[lane].0;
        Profile {
            slots: self.mem.address() + (first as u64) * TIMESTAMP_BYTES,
            ..profile_shape(self.profiling)
        }
    }

    /// Zeroes every slot, so a slot the next replay does not write is
    /// caught instead of read stale. Only while no replay of the IB runs.
    pub(crate) fn clear(&self) -> Result<()> {
        self.mem
            .write(0, &vec![0; self.total * TIMESTAMP_BYTES as usize])
    }

    /// Reads the slots a completed replay wrote and converts them.
    pub(crate) fn read(&self) -> Result<ReplayTimes> {
        let mut raw = vec![0u8; self.total * TIMESTAMP_BYTES as usize];
        self.mem.read(0, &mut raw)?;
        let ticks: Vec<u64> = raw
            .chunks_exact(TIMESTAMP_BYTES as usize)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8-byte chunks")))
            .collect();
        let multi = self.lanes.len() > 1;
        let mut spans = Vec::with_capacity(self.lanes.len());
        for (lane, &(first, n)) in self.lanes.iter().enumerate() {
            let at = |slot: usize| -> Result<u64> {
                match ticks[first + slot] {
                    0 => Err(unwritten(multi.then_some(lane), slot)),
                    t => Ok(t),
                }
            };
            let (start, end) = (at(IB_START_SLOT)?, at(IB_END_SLOT)?);
            let mut marks = Vec::new();
            if self.profiling == Profiling::Dispatches {
                marks.reserve(n);
                for i in 0..n {
                    let (s, e) = dispatch_slots(i);
                    marks.push((at(s)?, at(e)?));
                }
            }
            // In IB order every reading is at or after the one before
            // (end-of-pipe writes retire in order).
            let order = std::iter::once(start)
                .chain(marks.iter().flat_map(|&(s, e)| [s, e]))
                .chain(std::iter::once(end));
            if order.clone().zip(order.skip(1)).any(|(a, b)| b < a) || end <= start {
                return Err(Refusal::TimestampsOutOfOrder {
                    lane: multi.then_some(lane),
                    start,
                    end,
                }
                .into());
            }
            spans.push((start, end, marks));
        }
        let origin = spans.iter().map(|s| s.0).min().unwrap_or(0);
        let last = spans.iter().map(|s| s.1).max().unwrap_or(0);
        let us = |t: u64| ticks_to_us(origin, t, self.hz);
        let lanes = spans
            .into_iter()
            .map(|(start, end, marks)| LaneTimes {
                start_us: us(start),
                end_us: us(end),
                dispatches: marks
                    .into_iter()
                    .map(|(s, e)| DispatchTime {
                        start_us: us(s),
                        end_us: us(e),
                    })
                    .collect(),
            })
            .collect();
        Ok(ReplayTimes {
            gpu_us: us(last),
            lanes,
        })
    }
}

/// A profiled IB's slots and the times its last profiled replay read.
pub(crate) struct Profiled {
    slots: Slots,
    last: parking_lot::Mutex<Option<ReplayTimes>>,
}

impl Profiled {
    pub(crate) fn new(slots: Slots) -> Profiled {
        Profiled {
            slots,
            last: parking_lot::Mutex::new(None),
        }
    }

    pub(crate) fn profiling(&self) -> Profiling {
        self.slots.profiling()
    }

    /// Before a profiled replay (none of the IB running): forget the last
    /// times and clear the slots.
    pub(crate) fn start(&self) -> Result<()> {
        *self.last.lock() = None;
        self.slots.clear()
    }

    /// After the profiled replay completed: read, keep and return.
    pub(crate) fn finish(&self) -> Result<ReplayTimes> {
        let times = self.slots.read()?;
        *self.last.lock() = Some(times.clone());
        Ok(times)
    }
}

/// Lane `lane`'s per-dispatch times of the last profiled replay.
pub(crate) fn dispatch_times(profile: Option<&Profiled>, lane: usize) -> Result<Vec<DispatchTime>> {
    let profiling = profile.map(Profiled::profiling);
    if profiling != Some(Profiling::Dispatches) {
        return Err(no_dispatch_times(profiling));
    }
    let last = profile.and_then(|p| p.last.lock().clone());
    let times = last.ok_or_else(|| no_dispatch_times(profiling))?;
    Ok(times.lanes[lane].dispatches.clone())
}

fn profile_shape(profiling: Profiling) -> Profile {
    Profile {
        slots: 0,
        per_dispatch: match profiling {
            Profiling::Span => false,
            Profiling::Dispatches => true,
        },
    }
}

fn unwritten(lane: Option<usize>, slot: usize) -> Error {
    let mark = match slot {
        IB_START_SLOT => TimestampMark::IbStart,
        IB_END_SLOT => TimestampMark::IbEnd,
        s if s % 2 == 0 => TimestampMark::DispatchStart((s - 2) / 2),
        s => TimestampMark::DispatchEnd((s - 3) / 2),
    };
    Refusal::TimestampUnwritten { lane, mark }.into()
}

/// The error for a profiled replay of an IB finalized without profiling.
pub(crate) fn not_profiled(what: &str) -> Error {
    Refusal::NotProfiled {
        call: what.to_string(),
    }
    .into()
}

/// The error for per-dispatch times nobody measured (yet).
fn no_dispatch_times(profiling: Option<Profiling>) -> Error {
    Refusal::NoDispatchTimes { profiling }.into()
}
