//! `submit`: how long a replay takes from the call to the doorbell write,
//! on `sim:gfx1201` through the simulator's HSA table (TARGETS.md:
//! `submit_p50_ns`, `submit_vs_direct`, `fanout4_p50_ns`).
//!
//! The simulated queue timestamps its doorbell at the write, before its
//! packet processor is woken (`SimQueue::last_doorbell`), so a sample is
//! "Instant at the call" to "doorbell stamp", with no thread wake-up in it.
//! Each sample checks that exactly the expected doorbells were rung, and
//! the replay is waited for outside the timed region. The direct baseline
//! and the scheduler path are sampled in alternating blocks of 100 (see
//! `waited`), so noise on this shared machine hits both alike, in fifteen
//! rounds on new queues (the figures are medians over rounds); a second
//! run alternating every sample is reported as `submit_vs_direct_interleaved`.
//! Baseline: the same 1-dispatch counter IB in
//! executable memory, one vendor PM4-IB packet with a completion signal
//! armed to 1 before the clock starts (the scheduler arms ahead too, so the
//! baseline is the bare packet write and doorbell), `AqlQueue::submit`
//! through a second producer on the actor's own queue
//! (`HsaBackend::producer`): the same ring, doorbell and simulated packet
//! processor for both. At the end every counter must equal
//! the number of replays that incremented it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use relaunch_device::hsa::{AqlPacket, AqlQueue, Signal};
use relaunch_sched::hsa::{HsaBackend, HsaQueueOptions};
use relaunch_sched::scheduler::{LaneProgram, MultiIb, Scheduler};
use relaunch_sched::{ActorOptions, IbHandle};
use relaunch_sim::{hsa, SimQueue};
use relaunch_testsupport::rig::PlacedIb;

use crate::report::Report;
use crate::simrig::{median, read_u32, SimRig};

const WARMUP: usize = 200;
const SAMPLES: usize = 3000;
/// Waited samples per path before switching to the other path.
const BLOCK: usize = 100;
/// Rounds of the waited comparison, each on new queues (medians over them).
const ROUNDS: usize = 15;
/// Submits per burst (fewer than the backend's completion signals).
const BURST: usize = 8;
const BURSTS: usize = 400;
const WAIT: Duration = Duration::from_secs(10);
/// Bytes between the counters of different paths (no sharing of a line).
const STRIDE: u64 = 64;

pub fn run(report: &mut Report) -> Result<(), String> {
    let rig = SimRig::open()?;
    let counters = rig.device_memory(STRIDE as usize * 8)?;
    let base = counters.addr();

    // Direct and single-queue scheduler, waited replays in alternating
    // blocks, in ROUNDS rounds, each on new queues (so new simulator
    // threads, placed anew by the OS: one placement can favour either
    // path for a whole round); the figures are medians over the rounds.
    let mut rounds = Vec::with_capacity(ROUNDS);
    let mut replays_each = 0;
    for round in 0..ROUNDS {
        let (sched, queues, producer) = scheduler(&rig, 1)?;
        let mut direct = Direct::new(&rig, base, producer)?;
        let multi = install(&sched, &rig, &[base + STRIDE])?;
        let ib = multi.lane(0).map_err(|e| e.to_string())?;
        let (mut d, mut a) = waited(&mut direct, ib, &queues[0], BLOCK)?;
        replays_each += WARMUP + SAMPLES;
        let (d, a) = (median(&mut d), median(&mut a));
        println!("submit: round {round}: direct p50 {d} ns, through the scheduler p50 {a} ns");
        rounds.push((d, a));
    }
    let (sched, queues, producer) = scheduler(&rig, 1)?;
    let mut direct = Direct::new(&rig, base, producer)?;
    let multi = install(&sched, &rig, &[base + STRIDE])?;
    let ib = multi.lane(0).map_err(|e| e.to_string())?;
    let actor_queue = &queues[0];
    // Interleaved sample by sample (informative).
    let (mut direct_mixed, mut actor_mixed) = waited(&mut direct, ib, actor_queue, 1)?;
    replays_each += WARMUP + SAMPLES;
    // Bursts: BURST submits back to back, then one wait for all, so the
    // submit path's data stays in cache (an informative second regime).
    let mut direct_burst = Vec::with_capacity(BURSTS * BURST);
    let mut actor_burst = Vec::with_capacity(BURSTS * BURST);
    for i in 0..BURSTS + BURSTS / 10 {
        let d = direct.burst()?;
        let mut pending = Vec::with_capacity(BURST);
        let mut a = Vec::with_capacity(BURST);
        for _ in 0..BURST {
            let was = rings(actor_queue);
            let t = Instant::now();
            pending.push(ib.replay().map_err(|e| format!("replay: {e}"))?);
            a.push(doorbell_ns(actor_queue, was, 1, t)?);
        }
        for done in pending {
            done.wait(WAIT).map_err(|e| format!("replay wait: {e}"))?;
        }
        if i >= BURSTS / 10 {
            direct_burst.extend(d);
            actor_burst.extend(a);
        }
    }
    let single = (replays_each + (BURSTS + BURSTS / 10) * BURST) as u32;
    expect_counter(base, single, "direct")?;
    expect_counter(base + STRIDE, single, "scheduler")?;
    drop((multi, sched, queues, direct));

    // Fan-out: four lanes on four queues, call to the last doorbell.
    let (sched, queues, _) = scheduler(&rig, 4)?;
    let targets: Vec<u64> = (0..4).map(|l| base + STRIDE * (2 + l)).collect();
    let multi = install(&sched, &rig, &targets)?;
    let lane_queues: Vec<&Arc<SimQueue>> = (0..4)
        .map(|l| multi.lane(l).map(|h| &queues[h.actor().index()]))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    if multi.queues_used() != 4 {
        return Err(format!(
            "the four lanes landed on {} queues, not 4",
            multi.queues_used()
        ));
    }
    let mut fan_ns = Vec::with_capacity(SAMPLES);
    for i in 0..WARMUP + SAMPLES {
        let before: Vec<u64> = lane_queues.iter().map(|q| rings(q)).collect();
        let t = Instant::now();
        let done = multi.replay().map_err(|e| format!("fan-out replay: {e}"))?;
        let mut last = 0;
        for (q, was) in lane_queues.iter().zip(before) {
            last = last.max(doorbell_ns(q, was, 1, t)?);
        }
        done.wait(WAIT)
            .map_err(|e| format!("fan-out replay wait: {e}"))?;
        if i >= WARMUP {
            fan_ns.push(last);
        }
    }
    let replays = (WARMUP + SAMPLES) as u32;
    for (l, &t) in targets.iter().enumerate() {
        expect_counter(t, replays, &format!("fan-out lane {l}"))?;
    }
    drop((multi, sched, queues));
    drop(counters);

    let mut ratios: Vec<f64> = rounds
        .iter()
        .map(|&(d, a)| a as f64 / d.max(1) as f64)
        .collect();
    ratios.sort_by(f64::total_cmp);
    let ratio = ratios[ratios.len() / 2];
    let mut direct_ns: Vec<u64> = rounds.iter().map(|r| r.0).collect();
    let mut actor_ns: Vec<u64> = rounds.iter().map(|r| r.1).collect();
    let direct_p50 = median(&mut direct_ns);
    let actor_p50 = median(&mut actor_ns);
    let direct_mixed_p50 = median(&mut direct_mixed);
    let actor_mixed_p50 = median(&mut actor_mixed);
    let fan_p50 = median(&mut fan_ns);
    let direct_burst_p50 = median(&mut direct_burst);
    let actor_burst_p50 = median(&mut actor_burst);
    println!(
        "submit: {ROUNDS} rounds of {SAMPLES} samples each, each replay waited, alternating blocks of {BLOCK}: median direct p50 {direct_p50} ns, through the scheduler {actor_p50} ns, median ratio {ratio:.3}"
    );
    println!(
        "submit: {SAMPLES} samples each, each replay waited, alternating every sample: direct p50 {direct_mixed_p50} ns, through the scheduler p50 {actor_mixed_p50} ns"
    );
    println!(
        "submit: in bursts of {BURST} (waited per burst): direct p50 {direct_burst_p50} ns, through the scheduler p50 {actor_burst_p50} ns"
    );
    report.metric(
        "submit_p50_ns",
        actor_p50 as f64,
        "ns",
        Some((1500.0, true)),
    );
    report.metric("submit_vs_direct", ratio, "ratio", Some((1.2, true)));
    report.metric("fanout4_p50_ns", fan_p50 as f64, "ns", Some((4000.0, true)));
    report.metric(
        "submit_vs_direct_interleaved",
        actor_mixed_p50 as f64 / direct_mixed_p50.max(1) as f64,
        "ratio",
        None,
    );
    report.metric("submit_burst_p50_ns", actor_burst_p50 as f64, "ns", None);
    report.metric(
        "submit_vs_direct_burst",
        actor_burst_p50 as f64 / direct_burst_p50.max(1) as f64,
        "ratio",
        None,
    );
    Ok(())
}

/// `WARMUP + SAMPLES` waited replays on each path (direct, then through
/// the scheduler), switching paths every `block` samples and starting each
/// round with the path that went second in the previous one; returns the
/// (direct, scheduler) samples after the warm-up.
///
/// Why blocks: sample-by-sample alternation puts a whole direct submit
/// and wait (another queue, signal and simulator thread) between two
/// scheduler replays, which evicts more of the larger scheduler path's
/// state than the reverse (measured: scheduler p50 ~0.45 us alone, ~1 us
/// interleaved; direct ~0.4 us either way). An engine replaying its graph
/// does not do that, so the target compares blocks; the interleaved
/// figure is printed too.
fn waited(
    direct: &mut Direct,
    ib: &IbHandle<HsaBackend>,
    actor_queue: &SimQueue,
    block: usize,
) -> Result<(Vec<u64>, Vec<u64>), String> {
    let mut direct_ns = Vec::with_capacity(SAMPLES);
    let mut actor_ns = Vec::with_capacity(SAMPLES);
    let (mut d_done, mut a_done) = (0, 0);
    let total = WARMUP + SAMPLES;
    let mut direct_first = true;
    while d_done < total || a_done < total {
        for path in [direct_first, !direct_first] {
            for _ in 0..block {
                if path && d_done < total {
                    let d = direct.sample()?;
                    if d_done >= WARMUP {
                        direct_ns.push(d);
                    }
                    d_done += 1;
                } else if !path && a_done < total {
                    let was = rings(actor_queue);
                    let t = Instant::now();
                    let done = ib.replay().map_err(|e| format!("replay: {e}"))?;
                    let a = doorbell_ns(actor_queue, was, 1, t)?;
                    done.wait(WAIT).map_err(|e| format!("replay wait: {e}"))?;
                    if a_done >= WARMUP {
                        actor_ns.push(a);
                    }
                    a_done += 1;
                }
            }
        }
        direct_first = !direct_first;
    }
    Ok((direct_ns, actor_ns))
}

/// Doorbell writes of `q` so far.
fn rings(q: &SimQueue) -> u64 {
    q.last_doorbell().map_or(0, |(_, n)| n)
}

/// Nanoseconds from `t` to `q`'s latest doorbell write, which must be the
/// `expect`-th after `was` writes.
fn doorbell_ns(q: &SimQueue, was: u64, expect: u64, t: Instant) -> Result<u64, String> {
    match q.last_doorbell() {
        Some((at, n)) if n == was + expect => Ok(at.saturating_duration_since(t).as_nanos() as u64),
        seen => Err(format!(
            "queue {}: expected doorbell write {} after the call, saw {:?}",
            q.id,
            was + expect,
            seen.map(|(_, n)| n)
        )),
    }
}

fn expect_counter(addr: u64, want: u32, what: &str) -> Result<(), String> {
    let got = read_u32(addr)?;
    if got != want {
        return Err(format!("{what} counter is {got}, expected {want}"));
    }
    Ok(())
}

/// A scheduler, each actor's simulated queue, and a second producer on the
/// first actor's queue (the direct baseline's).
type Actors = (Scheduler<HsaBackend>, Vec<Arc<SimQueue>>, AqlQueue);

/// [`Actors`] of `n` HSA queues.
fn scheduler(rig: &SimRig, n: usize) -> Result<Actors, String> {
    let backends = (0..n)
        .map(|_| HsaBackend::new(&rig.rt, &rig.gpu, HsaQueueOptions::default()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("creating a queue backend: {e}"))?;
    let producer = backends[0].producer();
    let queues = backends
        .iter()
        .map(|b| {
            hsa::queue_by_id(b.queue_id())
                .ok_or_else(|| format!("no simulated queue with id {}", b.queue_id()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let sched = Scheduler::new(backends, ActorOptions::default()).map_err(|e| e.to_string())?;
    Ok((sched, queues, producer))
}

/// One 1-dispatch counter lane per target.
fn install(
    sched: &Scheduler<HsaBackend>,
    rig: &SimRig,
    targets: &[u64],
) -> Result<MultiIb<HsaBackend>, String> {
    let lanes = targets
        .iter()
        .map(|&t| {
            Ok(LaneProgram {
                program: rig.counter_ib(t, 1)?,
                work: 1,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    sched.install(lanes).map_err(|e| format!("install: {e}"))
}

/// The baseline: the packet written and the doorbell rung directly.
struct Direct {
    queue: AqlQueue,
    sim: Arc<SimQueue>,
    done: Signal,
    packet: AqlPacket,
    /// One signal and packet per submit of a burst.
    burst: Vec<(Signal, AqlPacket)>,
    /// The IB and its kernargs, in memory while the packets may run.
    _ib: PlacedIb,
}

impl Direct {
    fn new(rig: &SimRig, target: u64, queue: AqlQueue) -> Result<Direct, String> {
        let rt = &rig.rt;
        let ib = rig.place(rig.counter_ib(target, 1)?)?;
        let sim = hsa::queue_by_id(queue.id())
            .ok_or_else(|| format!("no simulated queue with id {}", queue.id()))?;
        // The vendor PM4-IB packet of the one segment (an error for more).
        let signalled = |signal: &Signal| ib.packet(signal.handle()).map_err(|e| e.to_string());
        let done = rt.create_signal(0).map_err(|e| e.to_string())?;
        let packet = signalled(&done)?;
        let mut burst = Vec::with_capacity(BURST);
        for _ in 0..BURST {
            let signal = rt.create_signal(0).map_err(|e| e.to_string())?;
            let packet = signalled(&signal)?;
            burst.push((signal, packet));
        }
        Ok(Direct {
            queue,
            sim,
            done,
            packet,
            burst,
            _ib: ib,
        })
    }

    /// `BURST` timed direct submits back to back, then waited.
    fn burst(&mut self) -> Result<Vec<u64>, String> {
        let mut out = Vec::with_capacity(BURST);
        for (signal, packet) in &self.burst {
            let was = rings(&self.sim);
            signal.silent_store_relaxed(1);
            let t = Instant::now();
            self.queue
                .submit(packet)
                .map_err(|e| format!("direct submit: {e}"))?;
            out.push(doorbell_ns(&self.sim, was, 1, t)?);
        }
        for (signal, _) in &self.burst {
            self.queue
                .wait(signal, 1, WAIT)
                .map_err(|e| format!("direct wait: {e}"))?;
        }
        Ok(out)
    }

    /// One timed direct submit (arm the signal, write, ring), then waited.
    fn sample(&mut self) -> Result<u64, String> {
        let was = rings(&self.sim);
        // Armed before the clock starts, as the scheduler arms ahead.
        self.done.silent_store_relaxed(1);
        let t = Instant::now();
        self.queue
            .submit(&self.packet)
            .map_err(|e| format!("direct submit: {e}"))?;
        let ns = doorbell_ns(&self.sim, was, 1, t)?;
        self.queue
            .wait(&self.done, 1, WAIT)
            .map_err(|e| format!("direct wait: {e}"))?;
        Ok(ns)
    }
}
