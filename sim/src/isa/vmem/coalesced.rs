//! One-dword loads whose lanes all read either one address or
//! consecutive dwords, in a few runs (a broadcast operand, a row per
//! group of lanes, a coalesced vector): one read per run instead of a
//! check and a read per lane. Anything else, or any run that does not lie
//! in memory the wave may read, goes back to the per-lane gather, which
//! names the faulting lane exactly as before.

use super::super::Ctx;
use crate::trace::AccessKind;

/// Runs per instruction this path takes; more go lane by lane.
const RUNS: usize = 4;

/// Lanes `[from, to)`: all reading the dword at `addrs[from]`
/// (`uniform`), or consecutive dwords from it.
#[derive(Clone, Copy, Default)]
struct Run {
    from: usize,
    to: usize,
    uniform: bool,
}

/// Lanes classified together: runs start and end at multiples of it.
const CHUNK: usize = 8;

/// Split `addrs` (every lane live) into runs; `None` past [`RUNS`], or
/// when a run does not start and end at a multiple of [`CHUNK`] lanes.
#[inline]
fn runs(addrs: &[u64], out: &mut [Run; RUNS]) -> Option<usize> {
    if addrs.len() % CHUNK != 0 {
        return None;
    }
    let mut k = 0;
    for (i, chunk) in addrs.chunks_exact(CHUNK).enumerate() {
        // Each chunk one address or consecutive dwords: differences
        // or'ed together, with no branch per lane.
        let a0 = chunk[0];
        let (mut apart, mut gaps) = (0u64, 0u64);
        for (j, &a) in chunk.iter().enumerate() {
            apart |= a ^ a0;
            gaps |= a ^ a0.wrapping_add(4 * j as u64);
        }
        let uniform = match (apart, gaps) {
            (0, _) => true,
            (_, 0) => false,
            _ => return None,
        };
        let from = i * CHUNK;
        // A chunk continuing the previous run the same way joins it.
        if let Some(prev) = out[..k].last_mut() {
            let last = addrs[prev.to - 1];
            let joins = match (prev.uniform, uniform) {
                (true, true) => a0 == last,
                (false, false) => a0 == last.wrapping_add(4),
                _ => false,
            };
            if joins {
                prev.to = from + CHUNK;
                continue;
            }
        }
        if k == RUNS {
            return None;
        }
        out[k] = Run {
            from,
            to: from + CHUNK,
            uniform,
        };
        k += 1;
    }
    Some(k)
}

/// Load one dword per lane from `addrs` into `out` when every lane is live
/// (`live` is the full mask) and the lanes form at most [`RUNS`] runs,
/// recording the ranges read; `false` when this path does not apply or a
/// run faults (the caller then gathers lane by lane, recording again: the
/// trace is a set of ranges, so the union is the same).
#[inline]
pub(super) fn load(ctx: &mut Ctx<'_>, addrs: &[u64], live: u64, out: &mut [u32]) -> bool {
    if addrs.is_empty() || live != super::super::wave::full_mask(addrs.len()) {
        return false;
    }
    let mut found = [Run::default(); RUNS];
    let Some(n) = runs(addrs, &mut found) else {
        return false;
    };
    let found = &found[..n];
    // Each run's dwords, recorded as read (only those: the trace must not
    // claim the bytes between runs).
    let (mut lo, mut hi, mut wraps) = (u64::MAX, 0, false);
    for run in found {
        let (start, end) = span(addrs, run);
        ctx.trace
            .record(AccessKind::VectorRead, start, end.wrapping_sub(start));
        lo = lo.min(start);
        hi = hi.max(end);
        wraps |= end < start;
    }
    // Runs close together (a row per group of lanes): one read of the
    // dwords from the lowest to the highest, each run's taken from it.
    let mut near = [0u32; NEAR];
    let words = (hi.wrapping_sub(lo) / 4) as usize;
    let aligned = found
        .iter()
        .all(|r| addrs[r.from].wrapping_sub(lo) % 4 == 0);
    // (A run past the top of the address space goes run by run, and
    // faults there.)
    if n > 1
        && !wraps
        && words <= NEAR
        && aligned
        && ctx.mem.read_u32s(lo, &mut near[..words]).is_ok()
    {
        for run in found {
            let at = ((addrs[run.from] - lo) / 4) as usize;
            let lanes = &mut out[run.from..run.to];
            if run.uniform {
                lanes.fill(near[at]);
            } else {
                lanes.copy_from_slice(&near[at..at + lanes.len()]);
            }
        }
        return true;
    }
    // Else (or when the bytes between runs may not be read) run by run.
    for run in found {
        let start = addrs[run.from];
        let lanes = &mut out[run.from..run.to];
        let ok = if run.uniform {
            let mut v = [0u32];
            let ok = ctx.mem.read_u32s(start, &mut v).is_ok();
            lanes.fill(v[0]);
            ok
        } else {
            ctx.mem.read_u32s(start, lanes).is_ok()
        };
        if !ok {
            return false;
        }
    }
    true
}

/// Dwords a read of several runs at once may cover.
const NEAR: usize = 64;

/// The bytes `run` reads, `[start, end)`.
#[inline(always)]
fn span(addrs: &[u64], run: &Run) -> (u64, u64) {
    let start = addrs[run.from];
    let end = if run.uniform {
        start.wrapping_add(4)
    } else {
        addrs[run.to - 1].wrapping_add(4)
    };
    (start, end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::tracebuf::TraceBuf;
    use crate::memory::{DeviceMemory, MemKind};
    use crate::trace::AccessTrace;

    /// `load` of `addrs` into a fresh register: what it returned, the
    /// register, and the trace's vector reads.
    fn run_load(mem: &DeviceMemory, addrs: &[u64]) -> (bool, Vec<u32>, Vec<(u64, u64)>) {
        let pin = mem.pin();
        let mut trace = TraceBuf::default();
        let (mut scratch, mut lds) = (vec![0u8; 1024], vec![0u8; 16]);
        let mut ctx = Ctx {
            mem: &pin,
            trace: &mut trace,
            scratch: &mut scratch,
            lds: &mut lds,
            inactive: None,
            interrupt: None,
        };
        let mut out = vec![0u32; addrs.len()];
        let full = super::super::super::wave::full_mask(addrs.len());
        let ok = load(&mut ctx, addrs, full, &mut out);
        let mut t = AccessTrace::default();
        trace.flush_into(&mut t);
        (ok, out, t.vector_reads.iter().collect())
    }

    #[test]
    fn runs_read_what_the_lanes_read() {
        let mem = DeviceMemory::new(1 << 20);
        let a = mem.allocate(256, MemKind::Device).unwrap();
        let words: Vec<u8> = (0..64u32).flat_map(|w| (w * 3 + 1).to_le_bytes()).collect();
        mem.write(a, &words).unwrap();
        let word = |addr: u64| (addr - a) as u32 / 4 * 3 + 1;
        // Two heads of 16 lanes (one read covers both), a coalesced row, one
        // address, rows far apart (run by run).
        let cases: [Vec<u64>; 4] = [
            (0..32).map(|l| a + 8 + 0x40 * (l / 16)).collect(),
            (0..32).map(|l| a + 4 * l).collect(),
            vec![a + 0x20; 32],
            (0..32).map(|l| a + 0xC0 * (l / 16)).collect(),
        ];
        for addrs in &cases {
            let (ok, out, reads) = run_load(&mem, addrs);
            assert!(ok, "{addrs:x?}");
            let want: Vec<u32> = addrs.iter().map(|&x| word(x)).collect();
            assert_eq!(out, want, "{addrs:x?}");
            // Exactly the lanes' dwords: not the bytes between runs.
            let mut lanes: Vec<(u64, u64)> = addrs.iter().map(|&x| (x, x + 4)).collect();
            lanes.sort_unstable();
            lanes.dedup();
            let mut merged: Vec<(u64, u64)> = Vec::new();
            for (s, e) in lanes {
                match merged.last_mut() {
                    Some(last) if s <= last.1 => last.1 = last.1.max(e),
                    _ => merged.push((s, e)),
                }
            }
            assert_eq!(reads, merged, "{addrs:x?}");
        }
        // Past the allocation's end (one address; a row running over it):
        // left to the per-lane gather, which names the faulting lane.
        for addrs in [
            vec![a + 256; 32],
            (0..32).map(|l| a + 192 + 4 * l).collect::<Vec<_>>(),
            (0..32).map(|l| a + 0x100 * (l / 16)).collect(),
        ] {
            assert!(!run_load(&mem, &addrs).0, "{addrs:x?}");
        }
    }

    fn split(addrs: &[u64]) -> Option<Vec<(usize, usize, bool)>> {
        let mut out = [Run::default(); RUNS];
        let n = runs(addrs, &mut out)?;
        Some(out[..n].iter().map(|r| (r.from, r.to, r.uniform)).collect())
    }

    #[test]
    fn lanes_split_into_uniform_and_consecutive_runs() {
        // Two groups of lanes each reading one address (a row per head).
        let mut a: Vec<u64> = (0..32).map(|l| 0x1000 + 0x40 * (l / 16)).collect();
        assert_eq!(split(&a), Some(vec![(0, 16, true), (16, 32, true)]));
        // A coalesced vector, in wave64 too.
        let c: Vec<u64> = (0..64).map(|l| 0x2000 + 4 * l).collect();
        assert_eq!(split(&c[..32]), Some(vec![(0, 32, false)]));
        assert_eq!(split(&c), Some(vec![(0, 64, false)]));
        // One address for all.
        assert_eq!(split(&[0x40; 32]), Some(vec![(0, 32, true)]));
        // Consecutive chunks that do not continue each other.
        a = (0..32)
            .map(|l| 0x1000 + 0x100 * (l / 8) + 4 * (l % 8))
            .collect();
        let v = vec![
            (0, 8, false),
            (8, 16, false),
            (16, 24, false),
            (24, 32, false),
        ];
        assert_eq!(split(&a), Some(v));
        // One address then consecutive dwords after it: two runs.
        a = (0..32).map(|l| 0x1000 + 4 * l.max(8)).collect();
        a[8] = 0x1000 + 4 * 9;
        assert_eq!(split(&a), None);
        a = (0..32).map(|l| 0x1000 + 4 * l.max(7)).collect();
        assert_eq!(split(&a), Some(vec![(0, 8, true), (8, 32, false)]));
        // Five chunks of different kinds, a stride, a run ending inside a
        // chunk, a lane count not a multiple of the chunk: lane by lane.
        a = (0..64).map(|l| 0x1000 + 0x1000 * (l / 8)).collect();
        assert_eq!(split(&a), None);
        a = (0..32).map(|l| 0x1000 + 0x100 * l).collect();
        assert_eq!(split(&a), None);
        a = (0..32).map(|l| 0x1000 + 0x40 * (l / 12)).collect();
        assert_eq!(split(&a), None);
        assert_eq!(split(&[8]), None);
    }
}
