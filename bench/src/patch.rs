//! `patch`: a 4-byte kernarg patch on a finalized, installed IB against a
//! bounds-checked 4-byte copy (TARGETS.md: `patch_vs_memcpy`).
//!
//! The patch goes through the path a user calls, `IbHandle::patch` (what
//! the facade's `set_kernargs` calls): the range is checked against the
//! dispatch's kernarg block, the actor is claimed, the IB is found idle
//! (no replay running, so the patch lands now on the caller's thread) and
//! the bytes are written to the host image and the kernarg memory the
//! queue reads. The baseline copies 4 bytes into a buffer of the same
//! size at the same offsets with a bounds check (`get_mut` + copy). Both
//! run in batches; the figure is the ratio of the median batch times. At
//! the end a patch is shown to land: dispatch 0's target is redirected
//! and one replay increments the new counter.

use std::hint::black_box;
use std::time::Instant;

use relaunch_sched::scheduler::LaneProgram;

use crate::report::Report;
use crate::simrig::{median, read_u32, SimRig};

const DISPATCHES: usize = 1000;
const BATCH: usize = 10_000;
const BATCHES: usize = 40;

pub fn run(report: &mut Report) -> Result<(), String> {
    let rig = SimRig::open()?;
    let counters = rig.device_memory(256)?;
    let base = counters.addr();
    let sched = rig.scheduler(1)?;
    let program = rig.counter_ib(base, DISPATCHES)?;
    let kernarg_bytes = program.kernarg_layout().bytes as usize;
    let mut multi = sched
        .install(vec![LaneProgram {
            program,
            work: DISPATCHES as u64,
        }])
        .map_err(|e| format!("install: {e}"))?;
    let ib = multi.lane_mut(0).map_err(|e| e.to_string())?;
    // Each dispatch's block is at a multiple of this stride in the image.
    let stride = kernarg_bytes / DISPATCHES;
    let low = (base as u32).to_le_bytes();

    let mut image = vec![0u8; kernarg_bytes];
    let mut copy_ns = Vec::with_capacity(BATCHES);
    let mut patch_ns = Vec::with_capacity(BATCHES);
    for _ in 0..BATCHES {
        let t = Instant::now();
        for i in 0..BATCH {
            let at = black_box((i % DISPATCHES) * stride);
            let dst = image
                .get_mut(at..at + 4)
                .ok_or_else(|| format!("copy at {at} out of bounds"))?;
            dst.copy_from_slice(black_box(&low));
        }
        copy_ns.push(t.elapsed().as_nanos() as u64);
        let t = Instant::now();
        for i in 0..BATCH {
            // The target's own low dword: the chain stays valid.
            ib.patch(black_box(i % DISPATCHES), 0, black_box(&low))
                .map_err(|e| format!("patch: {e}"))?;
        }
        patch_ns.push(t.elapsed().as_nanos() as u64);
    }
    black_box(&image);

    // Show a patch lands: dispatch 0 now increments the second counter.
    let other = base + 64;
    ib.patch(0, 0, &(other as u32).to_le_bytes())
        .map_err(|e| format!("patch: {e}"))?;
    if other >> 32 != base >> 32 {
        return Err("the two counters straddle a 4 GiB boundary".into());
    }
    let c = ib.replay().map_err(|e| format!("replay: {e}"))?;
    c.wait(std::time::Duration::from_secs(60))
        .map_err(|e| format!("replay wait: {e}"))?;
    let (a, b) = (read_u32(base)?, read_u32(other)?);
    if (a, b) != (DISPATCHES as u32 - 1, 1) {
        return Err(format!(
            "after patching dispatch 0 the counters are {a} and {b}, expected {} and 1",
            DISPATCHES - 1
        ));
    }
    drop(multi);
    drop(sched);

    let copy = median(&mut copy_ns) as f64 / BATCH as f64;
    let patch = median(&mut patch_ns) as f64 / BATCH as f64;
    println!("patch: IbHandle::patch {patch:.1} ns, bounds-checked 4-byte copy {copy:.2} ns");
    report.metric(
        "patch_vs_memcpy",
        patch / copy.max(1e-3),
        "ratio",
        Some((2.0, true)),
    );
    Ok(())
}
