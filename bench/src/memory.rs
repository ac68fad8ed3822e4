//! `memory`: what retained IBs cost in bytes, and the largest replay
//! (TARGETS.md: `kernarg_bytes_per_dispatch`, `retained_bytes_per_dispatch`,
//! `max_dispatches_one_replay`), with the real counter kernel on
//! `sim:gfx1201`.
//!
//! - kernarg bytes: the kernarg block an IB of counter dispatches (8-byte
//!   kernarg each) needs, divided by its dispatches.
//! - retained bytes: a 50,000-dispatch counter chain installed on a queue
//!   actor: device memory (PM4 and kernargs, as allocated) plus the host
//!   bookkeeping the installed IB keeps (`IbLayout::retained_bytes`),
//!   divided by the dispatches. The device part is checked against the
//!   simulator's allocation counters.
//! - max dispatches: 1,000,000 counter dispatches with RMW boundaries
//!   (split into segments by the encoder) replayed in one call through the
//!   scheduler; the counter must be exact, else the benchmark fails.

use std::time::{Duration, Instant};

use relaunch_sched::hsa::HsaBackend;
use relaunch_sched::scheduler::{LaneProgram, MultiIb, Scheduler};
use relaunch_sim::hsa;

use crate::report::Report;
use crate::simrig::{read_u32, SimRig};

const KERNARG_DISPATCHES: usize = 10_000;
const RETAINED_DISPATCHES: usize = 50_000;
const MAX_DISPATCHES: usize = 1_000_000;
/// Generous: the simulator checks every one of the million dispatches.
const MAX_WAIT: Duration = Duration::from_secs(600);

pub fn run(report: &mut Report) -> Result<(), String> {
    let rig = SimRig::open()?;
    let counters = rig.device_memory(256)?;
    let base = counters.addr();

    let b = rig.counter_ib(base, KERNARG_DISPATCHES)?;
    let kernarg = b.kernarg_layout().bytes as f64 / KERNARG_DISPATCHES as f64;
    drop(b);
    report.metric(
        "kernarg_bytes_per_dispatch",
        kernarg,
        "bytes",
        Some((64.0, true)),
    );

    let sched = rig.scheduler(1)?;

    let device_before = hsa::memory().stats().live_bytes;
    let chain = install(&sched, rig.counter_ib(base, RETAINED_DISPATCHES)?)?;
    let device = hsa::memory()
        .stats()
        .live_bytes
        .saturating_sub(device_before);
    let layout = chain.lane(0).map_err(|e| e.to_string())?.layout().clone();
    if layout.retained_bytes < device {
        return Err(format!(
            "the IB reports {} retained bytes but its install allocated {device} bytes of device memory",
            layout.retained_bytes
        ));
    }
    let c = chain.replay().map_err(|e| format!("replay: {e}"))?;
    c.wait(MAX_WAIT).map_err(|e| format!("replay wait: {e}"))?;
    expect(
        base,
        RETAINED_DISPATCHES as u32,
        "the 50,000-dispatch chain",
    )?;
    drop(chain);
    println!(
        "memory: {RETAINED_DISPATCHES}-dispatch chain: {} retained bytes ({device} device, {} host), {} IB dwords",
        layout.retained_bytes,
        layout.retained_bytes - device,
        layout.dwords
    );
    report.metric(
        "retained_bytes_per_dispatch",
        layout.retained_bytes as f64 / RETAINED_DISPATCHES as f64,
        "bytes",
        Some((256.0, true)),
    );

    let target = base + 64;
    let start = Instant::now();
    let big = install(&sched, rig.counter_ib(target, MAX_DISPATCHES)?)?;
    let built = start.elapsed();
    let start = Instant::now();
    let c = big.replay().map_err(|e| format!("replay: {e}"))?;
    c.wait(MAX_WAIT)
        .map_err(|e| format!("waiting for the {MAX_DISPATCHES}-dispatch replay: {e}"))?;
    let ran = start.elapsed();
    let got = read_u32(target)?;
    if got != MAX_DISPATCHES as u32 {
        return Err(format!(
            "after one replay of {MAX_DISPATCHES} counter dispatches the counter is {got}"
        ));
    }
    println!(
        "memory: {MAX_DISPATCHES} dispatches in one replay: counter = {got} / {MAX_DISPATCHES} [PASS] (record+install {:.1} s, replay on the simulator {:.1} s)",
        built.as_secs_f64(),
        ran.as_secs_f64()
    );
    drop(big);
    report.metric(
        "max_dispatches_one_replay",
        got as f64,
        "dispatches",
        Some((MAX_DISPATCHES as f64, false)),
    );
    drop(sched);
    drop(counters);
    Ok(())
}

fn install(
    sched: &Scheduler<HsaBackend>,
    program: relaunch_encoders::IbBuilder,
) -> Result<MultiIb<HsaBackend>, String> {
    let work = program.dispatch_count() as u64;
    sched
        .install(vec![LaneProgram { program, work }])
        .map_err(|e| format!("install: {e}"))
}

fn expect(addr: u64, want: u32, what: &str) -> Result<(), String> {
    match read_u32(addr)? {
        got if got == want => Ok(()),
        got => Err(format!("{what}: counter is {got}, expected {want}")),
    }
}
