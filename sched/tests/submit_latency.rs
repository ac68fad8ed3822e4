//! Hot-path measurement (run on demand, release build):
//! `cargo test -p relaunch-sched --release --test submit_latency -- --ignored --nocapture`
//! p50 of (a) a raw `AqlQueue::submit` of a 1-dispatch IB, (b) the HSA
//! backend's submit without an actor, (c) `IbHandle::replay` through an
//! idle actor (the caller's thread submits), (d) a 4-lane fan-out over 4
//! actors. Each sample times the call that rings the doorbell; the replay
//! is waited for outside the timed region so the ring never fills.

#![cfg(not(loom))]

mod common;

use std::time::{Duration, Instant};

use common::SimGpu;
use relaunch_device::hsa::{pm4_ib_packet, AllocFlags, AqlPacket};
use relaunch_sched::hsa_backend::{HsaBackend, HsaQueueOptions};
use relaunch_sched::scheduler::{LaneProgram, Scheduler};
use relaunch_sched::{Actor, ActorOptions, CompletionWatch, QueueBackend};

const SAMPLES: usize = 2000;
const WAIT: Duration = Duration::from_secs(10);

fn p50(mut ns: Vec<u128>) -> u128 {
    ns.sort_unstable();
    ns[ns.len() / 2]
}

#[test]
#[ignore = "timing measurement; run with --ignored --nocapture in release"]
fn submit_latency_p50() {
    let sim = SimGpu::gfx1100();
    let rt = &sim.rt;
    let counter = rt
        .allocate(
            &rt.device_pool(&sim.gpu).unwrap(),
            64,
            AllocFlags::default(),
        )
        .unwrap();

    // (a) Raw: IB placed by hand, one packet, one signal.
    let b = sim.counter_ib(counter.addr(), 1).unwrap();
    let pool = rt.kernarg_pool().unwrap();
    let mut kernargs = rt
        .allocate(
            &pool,
            b.kernarg_layout().bytes as usize,
            AllocFlags::default(),
        )
        .unwrap();
    kernargs.allow_access(&[&sim.gpu]).unwrap();
    let ib = b.finish(kernargs.addr()).unwrap();
    kernargs.write(0, &ib.kernarg_image).unwrap();
    let bytes: Vec<u8> = ib.segments[0]
        .dwords
        .iter()
        .flat_map(|d| d.to_le_bytes())
        .collect();
    let mut code = rt
        .allocate(&pool, bytes.len(), AllocFlags { executable: true })
        .unwrap();
    code.allow_access(&[&sim.gpu]).unwrap();
    code.write(0, &bytes).unwrap();
    let mut queue = rt.create_queue(&sim.gpu, 1024).unwrap();
    let done = rt.create_signal(0).unwrap();
    let packet = AqlPacket::Pm4Ib(
        pm4_ib_packet(
            code.addr(),
            ib.segments[0].dwords.len() as u32,
            done.handle(),
        )
        .unwrap(),
    );
    let raw: Vec<u128> = (0..SAMPLES)
        .map(|_| {
            // Arming the completion signal is part of a direct submit too.
            let t = Instant::now();
            done.silent_store_relaxed(1);
            queue.submit(&packet).unwrap();
            let ns = t.elapsed().as_nanos();
            queue.wait(&done, 1, WAIT).unwrap();
            ns
        })
        .collect();

    // (b) The backend alone.
    let mut backend = HsaBackend::new(rt, &sim.gpu, HsaQueueOptions::default()).unwrap();
    let watch = backend.watch();
    let installed = backend
        .install(sim.counter_ib(counter.addr(), 1).unwrap())
        .unwrap();
    let direct: Vec<u128> = (0..SAMPLES)
        .map(|_| {
            let t = Instant::now();
            let ticket = backend.submit(&installed).unwrap();
            let ns = t.elapsed().as_nanos();
            watch.wait(ticket, WAIT).unwrap();
            ns
        })
        .collect();

    // (c) Through an idle actor.
    let actor = Actor::spawn(0, backend, ActorOptions::default()).unwrap();
    let handle = actor
        .install(sim.counter_ib(counter.addr(), 1).unwrap())
        .unwrap();
    let actor_ns: Vec<u128> = (0..SAMPLES)
        .map(|_| {
            let t = Instant::now();
            let c = handle.replay().unwrap();
            let ns = t.elapsed().as_nanos();
            c.wait(WAIT).unwrap();
            ns
        })
        .collect();

    // (d) Fan-out over four actors, one lane each. Earlier queues go
    // first: each simulated queue has a polling processor thread.
    drop((handle, actor, queue));
    let backends = (0..4)
        .map(|_| HsaBackend::new(rt, &sim.gpu, HsaQueueOptions::default()).unwrap())
        .collect();
    let sched = Scheduler::new(backends, ActorOptions::default()).unwrap();
    let lanes = (0..4)
        .map(|l| LaneProgram {
            program: sim.counter_ib(counter.addr() + 16 * l, 1).unwrap(),
            work: 1,
        })
        .collect();
    let multi = sched.install(lanes).unwrap();
    let fan: Vec<u128> = (0..SAMPLES)
        .map(|_| {
            let t = Instant::now();
            let c = multi.replay().unwrap();
            let ns = t.elapsed().as_nanos();
            c.wait(WAIT).unwrap();
            ns
        })
        .collect();

    let (raw, direct, actor_ns, fan) = (p50(raw), p50(direct), p50(actor_ns), p50(fan));
    println!("METRIC raw_submit_p50_ns {raw}");
    println!("METRIC backend_submit_p50_ns {direct}");
    println!("METRIC submit_p50_ns {actor_ns}");
    println!(
        "METRIC submit_vs_direct {:.2}",
        actor_ns as f64 / raw as f64
    );
    println!("METRIC fanout4_p50_ns {fan}");
    drop((multi, sched, installed));
}
