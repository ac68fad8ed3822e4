//! Running a dispatch's workgroups: each on a worker (a compute unit) with
//! waves, LDS and scratch slots of its own, in id order per worker, up to
//! one worker per core (the dispatching thread and the threads of a
//! persistent pool, `with_pool`), each claiming runs of consecutive ids
//! (`Claims`); and the initial state of a workgroup's waves.

use std::cell::OnceCell;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};

use relaunch_facts::family::{FlatScratch, WorkgroupIds};
use relaunch_isa::Isa;

use super::dispatch::{rsrc2, wave_offset_sgpr, IsaError, Launch};
use super::exec;
use super::fault::IsaFault;
use super::growth::Growing;
use super::program::Program;
use super::scratch::{slot_of, ScratchSetup, WaveSlot};
use super::wave::{full_mask, Wave, TTMP0};
use super::Ctx;
use crate::memory::DeviceMemory;
use crate::twins::KernelFault;

/// How many workers run a dispatch's `groups` workgroups: one per core,
/// no more than there are workgroups, and no more than the scratch ring
/// has slots for (each worker's waves keep slots of their own, as a
/// compute unit's resident waves do).
pub(super) fn workers(groups: u64, private: Option<ScratchSetup>, nwaves: usize) -> usize {
    let cores = match WORKERS.load(Ordering::Relaxed) {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let by_slots = private.map_or(usize::MAX, |s| (s.slots as usize / nwaves.max(1)).max(1));
    cores
        .min(by_slots)
        .min(groups.min(usize::MAX as u64) as usize)
        .max(1)
}

/// Run `f` with the threads that help this thread run its dispatches'
/// workgroups: one per core less this one (at least one), made at its
/// first parallel dispatch and kept while the thread lives. A pool per
/// dispatching thread (a queue's processor, say), not one for the
/// process: a dispatch then never waits for another queue's workgroups
/// to free a helper (which a kernel spinning on another queue's result
/// would never do).
fn with_pool<R>(f: impl FnOnce(&rayon::ThreadPool) -> R) -> Result<R, String> {
    thread_local! {
        static POOL: OnceCell<Result<rayon::ThreadPool, String>> = const { OnceCell::new() };
    }
    POOL.with(|cell| {
        let pool = cell.get_or_init(|| {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            rayon::ThreadPoolBuilder::new()
                .num_threads(cores.saturating_sub(1).max(1))
                .thread_name(|i| format!("sim-isa-{i}"))
                .build()
                .map_err(|e| format!("the interpreter's worker threads could not start: {e}"))
        });
        pool.as_ref().map(f).map_err(Clone::clone)
    })
}

/// Workers per dispatch at most (0: one per core). `RELAUNCH_SIM_WORKERS`
/// sets it for a process (1 runs workgroups in id order on the calling
/// thread, e.g. to compare or debug); [`set_workers`] for benchmarks.
static WORKERS: LazyLock<AtomicUsize> = LazyLock::new(|| {
    AtomicUsize::new(
        std::env::var("RELAUNCH_SIM_WORKERS")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0),
    )
});

/// Run each dispatch on at most `n` workers from now on (0: one per core).
pub fn set_workers(n: usize) {
    WORKERS.store(n, Ordering::Relaxed);
}

/// A claim takes the workgroups left over this many times the workers
/// (guided self-scheduling): runs are long while much is left, so the
/// shared counter's cache line crosses cores a few dozen times per
/// dispatch rather than once per workgroup (`relaunch-bench sim_isa` on
/// two cores: a speedup of about 1.65 with a claim per workgroup, 1.85
/// with these runs), and shrink to one workgroup at the end, so the
/// workers still finish together.
const SHARE: u64 = 4;

/// A dispatch's workgroups as its workers claim them, and the lowest that
/// failed. Aligned to a cache line pair of its own: every claim writes
/// it, and nothing a worker reads per workgroup or per instruction should
/// move with it.
#[repr(align(128))]
pub(super) struct Claims {
    next: AtomicU64,
    lowest_failed: AtomicU64,
    groups: u64,
    workers: u64,
}

impl Claims {
    pub(super) fn new(groups: u64, workers: usize) -> Self {
        Claims {
            next: AtomicU64::new(0),
            lowest_failed: AtomicU64::new(u64::MAX),
            groups,
            workers: workers.max(1) as u64,
        }
    }

    /// The next run of consecutive workgroup ids for a worker (`None`: all
    /// are taken). The run's length follows from a possibly stale count
    /// of what is left; the ids a claim gets are exact.
    fn claim(&self) -> Option<Range<u64>> {
        let left = self
            .groups
            .saturating_sub(self.next.load(Ordering::Relaxed));
        let want = left.div_ceil(SHARE * self.workers).max(1);
        let first = self.next.fetch_add(want, Ordering::Relaxed);
        (first < self.groups).then(|| first..first.saturating_add(want).min(self.groups))
    }

    /// Workgroup `g` failed.
    fn failed(&self, g: u64) {
        self.lowest_failed.fetch_min(g, Ordering::Relaxed);
    }

    /// A workgroup below `g` failed: `g` need not run (the hardware stops
    /// the queue at a fault; the dispatch's fault is the lowest one's).
    fn after_failure(&self, g: u64) -> bool {
        g > self.lowest_failed.load(Ordering::Relaxed)
    }
}

/// Run `work(k)` for workers `k` in `0..n`: worker 0 on this thread, the
/// others on this thread's pool, each with the dispatch's queue
/// inactivation `inactive` bound while it works. Every worker's result,
/// worker 0's first.
pub(super) fn on_workers<W: Send>(
    n: usize,
    inactive: Option<Arc<AtomicBool>>,
    work: impl Fn(usize) -> W + Sync,
) -> Result<Vec<W>, String> {
    if n <= 1 {
        return Ok(vec![work(0)]);
    }
    let helpers = parking_lot::Mutex::new(Vec::with_capacity(n - 1));
    let mut all = Vec::with_capacity(n);
    with_pool(|pool| {
        pool.in_place_scope(|scope| {
            for k in 1..n {
                let (work, helpers) = (&work, &helpers);
                let inactive = inactive.clone();
                scope.spawn(move |_| {
                    // The flag is per thread: bind this dispatch's
                    // inactivation while working for it.
                    let _bound = inactive.map(crate::memory::BindInactivation::new);
                    let w = work(k);
                    helpers.lock().push(w);
                });
            }
            // A helper that starts late finds no workgroup left.
            all.push(work(0));
        })
    })?;
    all.extend(helpers.into_inner());
    Ok(all)
}

/// What every workgroup of one dispatch starts from.
pub(super) struct GroupStart<'a> {
    pub(super) launch: &'a Launch,
    pub(super) isa: Isa,
    pub(super) user: usize,
    pub(super) tid_dims: usize,
    pub(super) block: [u32; 3],
    pub(super) threads: usize,
    pub(super) lanes: usize,
    pub(super) nwaves: usize,
    pub(super) vgprs: usize,
    pub(super) mode: u32,
    pub(super) trap_en: bool,
    pub(super) packed: bool,
    pub(super) private: Option<ScratchSetup>,
    pub(super) counts: [u32; 3],
}

impl GroupStart<'_> {
    /// Workgroup `g`'s id (x fastest, as the hardware walks the grid).
    pub(super) fn id(&self, g: u64) -> [u32; 3] {
        let [cx, cy, _] = self.counts.map(u64::from);
        [
            (g % cx) as u32,
            ((g / cx) % cy) as u32,
            (g / (cx * cy)) as u32,
        ]
    }

    /// Set `waves` up for workgroup `wg` on worker `worker`.
    pub(super) fn init(&self, waves: &mut [Wave], wg: [u32; 3], worker: u32) {
        let (launch, r2) = (self.launch, self.launch.rsrc2);
        for (w, wave) in waves.iter_mut().enumerate() {
            wave.reset();
            wave.mode = self.mode;
            wave.trap_en = self.trap_en;
            wave.wave_in_group = w as u32;
            wave.workgroup_id = wg;
            let first = w * self.lanes;
            let n = (self.threads - first).min(self.lanes);
            wave.exec = full_mask(n);
            for (i, v) in launch.user_sgprs.iter().take(self.user).enumerate() {
                wave.sgpr[i] = *v;
            }
            let slot = self.private.map(|s| {
                let n = slot_of(worker, w as u32, self.nwaves as u32, s.slots);
                (n, s.slot_base(n))
            });
            match self.isa.family.facts().dispatch.workgroup_ids {
                // System SGPRs after the user ones, as RSRC2 enables them.
                WorkgroupIds::SystemSgprs => {
                    let mut s = self.user;
                    for (d, bit) in [rsrc2::TGID_X_EN, rsrc2::TGID_Y_EN, rsrc2::TGID_Z_EN]
                        .into_iter()
                        .enumerate()
                    {
                        if r2 & bit != 0 {
                            wave.sgpr[s] = wg[d];
                            s += 1;
                        }
                    }
                    // The private segment wave byte offset comes last
                    // (TG_SIZE, between, is refused above).
                    if let (Some((_, at)), Some(setup)) = (slot, self.private) {
                        if wave_offset_sgpr(self.isa.family) {
                            wave.sgpr[s] = (at - setup.base) as u32;
                        }
                    }
                }
                // Architected SGPRs: the workgroup ids are always in TTMP9
                // (x) and TTMP7 (y in 15:0, z in 31:16).
                WorkgroupIds::Ttmp => {
                    wave.sgpr[TTMP0 + 9] = wg[0];
                    wave.sgpr[TTMP0 + 7] = (wg[1] & 0xFFFF) | (wg[2] << 16);
                }
            }
            if let (Some((_, at)), Some(setup)) = (slot, self.private) {
                wave.slot = Some(WaveSlot {
                    base: at,
                    bytes: setup.wave_bytes,
                    backing: (setup.base, setup.base + setup.bytes()),
                });
                wave.flat_scratch = match self.isa.family.scratch().flat_scratch {
                    // The prologue builds it from flat scratch init.
                    FlatScratch::Init => 0,
                    FlatScratch::Architected => at,
                };
            }
            // The first lane's ids by division, the others counted on
            // (a division per lane cost more than the rest of the set-up).
            let [bx, by, _] = self.block;
            let t = first as u32;
            let (mut x, mut y, mut z) = (t % bx, (t / bx) % by, t / (bx * by));
            for l in 0..n {
                let ids = [x, y, z];
                x += 1;
                if x == bx {
                    x = 0;
                    y += 1;
                    if y == by {
                        y = 0;
                        z += 1;
                    }
                }
                if self.packed {
                    let mut v = 0;
                    for (d, id) in ids.iter().enumerate().take(self.tid_dims) {
                        v |= id << (10 * d);
                    }
                    wave.vgpr[0][l] = v;
                } else {
                    for (d, id) in ids.iter().enumerate().take(self.tid_dims) {
                        wave.vgpr[d][l] = *id;
                    }
                }
            }
        }
    }
}

/// One worker (a compute unit): its waves, LDS and staging buffers, and
/// what it did.
pub(super) struct Worker<'a> {
    pub(super) start: &'a GroupStart<'a>,
    pub(super) waves: Vec<Wave>,
    pub(super) lds: Vec<u8>,
    pub(super) tbuf: super::tracebuf::TraceBuf,
    pub(super) staging: Vec<u8>,
    /// Which worker it is (its waves' scratch slots follow from it).
    pub(super) index: u32,
    pub(super) executed: u64,
    /// The first workgroup it saw fail, with the fault.
    pub(super) failure: Option<(u64, KernelFault)>,
}

impl<'a> Worker<'a> {
    pub(super) fn new(start: &'a GroupStart<'a>, lds_bytes: usize, k: usize) -> Self {
        Worker {
            start,
            waves: (0..start.nwaves)
                .map(|_| Wave::new(start.isa, start.vgprs))
                .collect(),
            lds: vec![0u8; lds_bytes],
            tbuf: super::tracebuf::TraceBuf::default(),
            staging: vec![0u8; super::wave::MAX_LANES * 16],
            index: k as u32,
            executed: 0,
            failure: None,
        }
    }

    /// Take runs of workgroups, each in id order, until none is left or
    /// one failed before the next (the hardware stops the queue at a
    /// fault).
    pub(super) fn run(
        &mut self,
        mem: &DeviceMemory,
        kernel: &str,
        code: &Growing,
        claims: &Claims,
        inactive: Option<&AtomicBool>,
        interrupt: Option<&(dyn Fn(u32) + Send + Sync)>,
    ) {
        // The allocation map stays read-locked while this worker runs
        // (let go between workgroups and every `exec::CHECK_EVERY`
        // instructions for a waiting allocation or free).
        let pin = mem.pin();
        // This worker's copy of the program, swapped for a grown one when
        // a wave jumps to code not decoded yet.
        let mut prog = code.latest();
        while let Some(run) = claims.claim() {
            for g in run {
                pin.yield_to_writers();
                if claims.after_failure(g) {
                    return;
                }
                let wg = self.start.id(g);
                self.lds.fill(0);
                self.start.init(&mut self.waves, wg, self.index);
                let mut c = Ctx {
                    mem: &pin,
                    trace: &mut self.tbuf,
                    scratch: &mut self.staging,
                    lds: &mut self.lds,
                    inactive,
                    interrupt,
                };
                if let Err((w, pc, fault)) = exec::run_workgroup(
                    &mut prog,
                    code,
                    &mut self.waves,
                    &mut c,
                    &mut self.executed,
                ) {
                    let f = group_fault(kernel, &prog, self.start.launch, wg, w, pc, fault);
                    claims.failed(g);
                    self.failure = Some((g, f));
                    return;
                }
            }
        }
    }
}

/// The fault of wave `w` of workgroup `wg` at instruction `pc`.
pub(super) fn group_fault(
    kernel: &str,
    prog: &Program,
    launch: &Launch,
    wg: [u32; 3],
    w: usize,
    pc: u32,
    fault: IsaFault,
) -> KernelFault {
    let inst = &prog.insts[pc as usize];
    match fault {
        IsaFault::Vm(f) => {
            tracing::warn!(
                kernel,
                offset = inst.from_entry(),
                mnemonic = %inst.decoded.mnemonic(),
                "VM fault raised by the instruction interpreter"
            );
            KernelFault::Vm(f)
        }
        fault => KernelFault::Isa(Box::new(IsaError {
            kernel: kernel.to_string(),
            offset: inst.from_entry(),
            mnemonic: inst.decoded.mnemonic(),
            processor: launch.processor.clone(),
            workgroup: wg,
            wave: w,
            fault,
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::Claims;

    #[test]
    fn claims_cover_every_workgroup_once_in_runs_that_shrink_to_one() {
        for (groups, workers) in [(1, 2), (7, 2), (256, 2), (1024, 3), (1000, 8)] {
            let claims = Claims::new(groups, workers);
            let runs: Vec<_> = std::iter::from_fn(|| claims.claim()).collect();
            let ids: Vec<u64> = runs.iter().flat_map(|r| r.clone()).collect();
            assert_eq!(
                ids,
                (0..groups).collect::<Vec<_>>(),
                "{groups} on {workers}"
            );
            let len = |r: &std::ops::Range<u64>| r.end - r.start;
            assert!(runs.windows(2).all(|w| len(&w[0]) >= len(&w[1])));
            assert_eq!(runs.last().map(len), Some(1));
            // Far fewer claims than workgroups (SHARE x workers x the log
            // of the workgroups per such share, about).
            if groups >= 256 {
                assert!(runs.len() as u64 <= groups / 4, "{} runs", runs.len());
            }
        }
    }

    #[test]
    fn claims_from_several_threads_are_disjoint_and_cover_the_dispatch() {
        let claims = Claims::new(5000, 4);
        let mut ids: Vec<u64> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        std::iter::from_fn(|| claims.claim())
                            .flatten()
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        ids.sort_unstable();
        assert_eq!(ids, (0..5000).collect::<Vec<_>>());
    }
}
