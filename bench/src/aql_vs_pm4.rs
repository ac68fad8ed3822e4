//! `aql_vs_pm4`: the public-AQL path against retained PM4 on the same
//! graph, in one run on `sim:gfx1201` (issue 31.1). The graph: 4
//! independent chains of 64 `counter` nodes, each reading and writing its
//! own word (an RMW boundary between consecutive nodes), instantiated once
//! and lowered both ways (`EncoderSink` into one PM4 IB per lane, `AqlSink`
//! into one kernel-dispatch packet per node), installed on 2 queues each.
//!
//! Figures: host submit cost per replay (the fan-out call, from the call
//! until every lane's doorbell is rung; waited outside the timed region),
//! sampled in alternating blocks so noise hits both paths alike, as a
//! ratio AQL / PM4; and per replay, what the simulated command processor
//! parsed (AQL packets + PM4 packets, PM4 dwords) and the cache actions it
//! performed, as ratios AQL / PM4. Every counter is checked exact.

use std::time::{Duration, Instant};

use relaunch_encoders::{AqlBuilder, EncodeOptions, IbBuilder};
use relaunch_lanes::{
    Access, AqlSink, EncoderSink, Graph, GraphOptions, KernelNode, KernelRef, ResolvedKernel,
};
use relaunch_sched::hsa::{HsaBackend, HsaProgram};
use relaunch_sched::scheduler::{LaneProgram, MultiIb};

use crate::report::Report;
use crate::simrig::{median, read_u32, SimRig};

const LANES: usize = 4;
const CHAIN: usize = 64;
const QUEUES: usize = 2;
const BLOCK: usize = 50;
const ROUNDS: usize = 10;
const WAIT: Duration = Duration::from_secs(30);

pub fn run(report: &mut Report) -> Result<(), String> {
    let rig = SimRig::open()?;
    let counters = rig.device_memory(64 * 2 * LANES)?;
    let sched = rig.scheduler(QUEUES)?;
    // PM4 lanes count at words 0..LANES, AQL lanes at LANES..2*LANES.
    let pm4 = install(&rig, &sched, counters.addr(), false)?;
    let aql = install(&rig, &sched, counters.addr() + 64 * LANES as u64, true)?;

    let cp = |multi: &MultiIb<HsaBackend>| -> Result<relaunch_sim::counters::CpCounts, String> {
        let before = rig.device.cp_counts();
        replay(multi)?;
        let after = rig.device.cp_counts();
        Ok(delta(&before, &after))
    };
    let (pm4_cp, aql_cp) = (cp(&pm4)?, cp(&aql)?);
    let mut replays = 1u32;

    let (mut pm4_ns, mut aql_ns) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        for (multi, samples) in [(&pm4, &mut pm4_ns), (&aql, &mut aql_ns)] {
            for _ in 0..BLOCK {
                let start = Instant::now();
                let done = multi.replay().map_err(|e| e.to_string())?;
                samples.push(start.elapsed().as_nanos() as u64);
                done.wait(WAIT).map_err(|e| e.to_string())?;
            }
        }
        replays += BLOCK as u32;
    }
    for lane in 0..2 * LANES {
        let got = read_u32(counters.addr() + 64 * lane as u64)?;
        let want = replays * CHAIN as u32;
        if got != want {
            return Err(format!("counter of lane {lane}: {got}, expected {want}"));
        }
    }
    let (pm4_p50, aql_p50) = (median(&mut pm4_ns), median(&mut aql_ns));
    println!(
        "aql_vs_pm4: {LANES} lanes x {CHAIN} dispatches on {QUEUES} queues, per replay:\n\
         \x20 path  submit p50   CP packets  PM4 dwords  cache actions  waits\n\
         \x20 pm4   {pm4_p50:>8} ns  {:>10}  {:>10}  {:>13}  {:>5}\n\
         \x20 aql   {aql_p50:>8} ns  {:>10}  {:>10}  {:>13}  {:>5}",
        pm4_cp.packets(),
        pm4_cp.pm4_dwords,
        pm4_cp.cache_actions(),
        pm4_cp.waits,
        aql_cp.packets(),
        aql_cp.pm4_dwords,
        aql_cp.cache_actions(),
        aql_cp.waits,
    );
    let ratio = |a: u64, b: u64| a as f64 / b.max(1) as f64;
    report.metric("aql_submit_p50_ns", aql_p50 as f64, "ns", None);
    report.metric("pm4_submit_p50_ns", pm4_p50 as f64, "ns", None);
    report.metric("aql_vs_pm4_submit", ratio(aql_p50, pm4_p50), "ratio", None);
    report.metric(
        "aql_vs_pm4_cp_packets",
        ratio(aql_cp.packets(), pm4_cp.packets()),
        "ratio",
        None,
    );
    report.metric(
        "aql_vs_pm4_cache_actions",
        ratio(aql_cp.cache_actions(), pm4_cp.cache_actions()),
        "ratio",
        None,
    );
    report.metric(
        "aql_cp_packets_per_replay",
        aql_cp.packets() as f64,
        "packets",
        None,
    );
    report.metric(
        "pm4_cp_packets_per_replay",
        pm4_cp.packets() as f64,
        "packets",
        None,
    );
    drop((pm4, aql, sched));
    Ok(())
}

fn replay(multi: &MultiIb<HsaBackend>) -> Result<(), String> {
    multi
        .replay()
        .and_then(|c| c.wait(WAIT))
        .map_err(|e| e.to_string())
}

/// The graph lowered one way and installed on `sched`.
fn install(
    rig: &SimRig,
    sched: &relaunch_sched::scheduler::Scheduler<HsaBackend>,
    base: u64,
    aql: bool,
) -> Result<MultiIb<HsaBackend>, String> {
    let mut g = Graph::new(GraphOptions {
        lanes: LANES,
        ..GraphOptions::default()
    });
    for lane in 0..LANES {
        let buf = g
            .buffer(&format!("c{lane}"), 64)
            .map_err(|e| e.to_string())?;
        let target = (base + 64 * lane as u64).to_le_bytes();
        let mut prev = None;
        for _ in 0..CHAIN {
            let node = KernelNode {
                kernarg: target.to_vec(),
                accesses: vec![Access::read(buf, 0, 4), Access::write(buf, 0, 4)],
                deps: prev.into_iter().collect(),
                ..KernelNode::module(1, "counter", [1, 1, 1], [1, 1, 1])
            };
            prev = Some(g.kernel(node).map_err(|e| e.to_string())?);
        }
    }
    let plan = g.instantiate().map_err(|e| e.to_string())?;
    let (descriptor, kd_address) = (rig.descriptor, rig.sym.kernel_object);
    let resolver = move |_: &KernelRef| {
        Ok::<_, String>(ResolvedKernel {
            descriptor,
            kd_address,
            kernarg_align: 8,
            unread: Default::default(),
        })
    };
    let facts = rig.device.facts();
    let mut lanes = Vec::with_capacity(plan.lane_count());
    for lane in 0..plan.lane_count() {
        let program: HsaProgram = if aql {
            let mut sink = AqlSink::new(AqlBuilder::for_target(facts), facts.family, resolver);
            plan.lower_lane(lane, &mut sink)
                .map_err(|e| e.to_string())?;
            sink.into_builder().into()
        } else {
            let b = IbBuilder::for_target(facts, EncodeOptions::default());
            let mut sink = EncoderSink::new(b, resolver);
            plan.lower_lane(lane, &mut sink)
                .map_err(|e| e.to_string())?;
            sink.into_builder().into()
        };
        lanes.push(LaneProgram {
            work: program.work(),
            program,
        });
    }
    sched.install(lanes).map_err(|e| e.to_string())
}

fn delta(
    a: &relaunch_sim::counters::CpCounts,
    b: &relaunch_sim::counters::CpCounts,
) -> relaunch_sim::counters::CpCounts {
    relaunch_sim::counters::CpCounts {
        aql_dispatch: b.aql_dispatch - a.aql_dispatch,
        aql_barrier: b.aql_barrier - a.aql_barrier,
        aql_pm4_ib: b.aql_pm4_ib - a.aql_pm4_ib,
        pm4_dwords: b.pm4_dwords - a.pm4_dwords,
        pm4_packets: b.pm4_packets - a.pm4_packets,
        dispatches: b.dispatches - a.dispatches,
        waits: b.waits - a.waits,
        l2_writeback: b.l2_writeback - a.l2_writeback,
        l2_invalidate: b.l2_invalidate - a.l2_invalidate,
        gl1_invalidate: b.gl1_invalidate - a.gl1_invalidate,
        l0_invalidate: b.l0_invalidate - a.l0_invalidate,
        k_invalidate: b.k_invalidate - a.k_invalidate,
        i_invalidate: b.i_invalidate - a.i_invalidate,
        full_flush: b.full_flush - a.full_flush,
        sdma_packets: b.sdma_packets - a.sdma_packets,
        sdma_bytes: b.sdma_bytes - a.sdma_bytes,
        ib: floor_delta(&a.ib, &b.ib),
        ib_floor: floor_delta(&a.ib_floor, &b.ib_floor),
    }
}

fn floor_delta(
    a: &relaunch_sim::ordering::FloorCounts,
    b: &relaunch_sim::ordering::FloorCounts,
) -> relaunch_sim::ordering::FloorCounts {
    relaunch_sim::ordering::FloorCounts {
        k_invalidate: b.k_invalidate - a.k_invalidate,
        l0_invalidate: b.l0_invalidate - a.l0_invalidate,
        gl1_invalidate: b.gl1_invalidate - a.gl1_invalidate,
    }
}
