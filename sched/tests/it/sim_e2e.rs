//! The scheduler on the simulated gfx1100 through relaunch-device's HSA
//! runtime (the code that runs on hardware): four independent counter
//! lanes on the automatic width (2 queues), every counter exact, no
//! ordering violation; a queue error in one lane is named and the next
//! replay succeeds (a VM fault loses the GPU instead: sim_device_lost.rs). The simulated HSA system is process-wide: tests take `common::serial()`.

#![cfg(not(loom))]

use crate::common;

use std::time::Duration;

use common::{read_u32, Kind, SimGpu, KINDS};
use relaunch_device::hsa::Allocation;
use relaunch_lanes::encode_lanes;
use relaunch_sched::hsa::{HsaBackend, HsaProgram, HsaQueueOptions};
use relaunch_sched::scheduler::{LaneProgram, MultiIb, Scheduler};
use relaunch_sched::{queue_count, ActorOptions, QueuePolicy, SchedError};
use relaunch_sim::{hsa, FaultPlan};

const WAIT: Duration = Duration::from_secs(30);
const LANES: usize = 4;
const DISPATCHES: usize = 1000;

struct Setup {
    // Declared first: the actors go before the memory they use.
    multi: MultiIb<HsaBackend>,
    sched: Scheduler<HsaBackend>,
    counters: Allocation,
    queue_ids: Vec<u64>,
    sim: SimGpu,
}

fn counter_at(setup: &Setup, lane: usize) -> u32 {
    read_u32(setup.counters.addr() + 64 * lane as u64)
}

fn setup(kind: Kind) -> Setup {
    let sim = common::gfx1100();
    let rt = &sim.rt;
    let counters = sim.device_memory(64 * LANES).unwrap();
    let queues = queue_count(&sim.gpu.name, QueuePolicy::Auto, LANES);
    assert_eq!(queues, 2);
    let backends: Vec<HsaBackend> = (0..queues)
        .map(|_| HsaBackend::new(rt, &sim.gpu, HsaQueueOptions::default()).unwrap())
        .collect();
    let queue_ids = backends.iter().map(HsaBackend::queue_id).collect();
    let sched = Scheduler::new(backends, ActorOptions::default()).unwrap();
    let base = counters.addr();
    let programs = encode_lanes(LANES, |lane| {
        common::counter_lane(&sim, base + 64 * lane as u64, DISPATCHES, kind)
    })
    .unwrap();
    let lanes: Vec<LaneProgram<HsaProgram>> = programs
        .into_iter()
        .map(|program| LaneProgram {
            work: program.work(),
            program,
        })
        .collect();
    let multi = sched.install(lanes).unwrap();
    Setup {
        multi,
        sched,
        counters,
        queue_ids,
        sim,
    }
}

#[test]
fn four_counter_lanes_on_two_queues_are_exact() {
    for kind in KINDS {
        four_counter_lanes_on_two_queues_are_exact_with(kind);
    }
}

fn four_counter_lanes_on_two_queues_are_exact_with(kind: Kind) {
    let _serial = common::serial();
    let mut s = setup(kind);
    assert_eq!((s.multi.lane_count(), s.multi.queues_used()), (4, 2));
    assert_eq!(s.sched.queue_count(), 2);
    for round in 1..=3u32 {
        s.multi.replay().unwrap().wait(WAIT).unwrap();
        for lane in 0..LANES {
            assert_eq!(
                counter_at(&s, lane),
                round * DISPATCHES as u32,
                "lane {lane}"
            );
        }
    }
    // Retarget lane 2's first dispatch at lane 0's counter, unwaited.
    let c = s.multi.replay().unwrap();
    let lane0 = s.counters.addr().to_le_bytes();
    s.multi.set_kernargs(2, 0, 0, &lane0).unwrap();
    c.wait(WAIT).unwrap();
    s.multi
        .lane(0)
        .unwrap()
        .replay()
        .unwrap()
        .wait(WAIT)
        .unwrap();
    s.multi
        .lane(2)
        .unwrap()
        .replay()
        .unwrap()
        .wait(WAIT)
        .unwrap();
    assert_eq!(counter_at(&s, 0), 4000 + 1000 + 1);
    assert_eq!(counter_at(&s, 2), 4000 + 999);
    let (violations, _) = s.sim.device.take_violations();
    assert!(violations.is_empty(), "{violations:?}");
}

#[test]
fn a_fault_in_one_lane_is_named_and_the_next_replay_succeeds() {
    for kind in KINDS {
        a_fault_in_one_lane_is_named_and_the_next_replay_succeeds_with(kind);
    }
}

fn a_fault_in_one_lane_is_named_and_the_next_replay_succeeds_with(kind: Kind) {
    let _serial = common::serial();
    let s = setup(kind);
    s.multi.replay().unwrap().wait(WAIT).unwrap();
    let faulty_lane = 1;
    let actor = s.multi.lane(faulty_lane).unwrap().actor().index();
    let queue = hsa::queue_by_id(s.queue_ids[actor]).unwrap();
    // A queue-level error (not a VM fault, which loses the whole GPU: see
    // sim_device_lost.rs) kills only that queue; the actor replaces it.
    queue.inject(FaultPlan {
        error_at: Some(queue.load_write_index()),
        ..FaultPlan::default()
    });
    let err = s.multi.replay().unwrap().wait(WAIT).unwrap_err();
    let failures = match &err {
        SchedError::Lanes { failures } => failures.clone(),
        other => vec![other.clone()],
    };
    assert_eq!(failures[0].lane(), Some(faulty_lane), "{err}");
    let text = failures[0].to_string();
    // The IB is named too (its label, else its id on the actor).
    let ib = s.multi.lane(1).unwrap().name().to_string();
    assert!(ib.starts_with("IB "), "{ib}");
    assert!(
        text.starts_with(&format!("lane 1 (queue actor 1, {ib}): ")),
        "{text}"
    );
    assert!(
        text.contains("injected queue error") || text.contains("HSA_STATUS_ERROR"),
        "{text}"
    );
    // A lane queued behind the fault on the same queue never ran, unless
    // its submit came after the fault was seen (then it went to the
    // replacement queue and ran): both are correct, so count per lane.
    let mut failed = [false; LANES];
    for f in &failures {
        failed[f.lane().unwrap()] = true;
    }
    for f in &failures[1..] {
        assert!(f.to_string().contains("never ran"), "{f}");
        assert_eq!(
            s.multi.lane(f.lane().unwrap()).unwrap().actor().index(),
            actor
        );
    }
    s.multi.replay().unwrap().wait(WAIT).unwrap();
    for (lane, &failed) in failed.iter().enumerate() {
        let runs = if failed { 2 } else { 3 };
        assert_eq!(
            counter_at(&s, lane),
            runs * DISPATCHES as u32,
            "lane {lane}"
        );
    }
    let (violations, _) = s.sim.device.take_violations();
    assert!(violations.is_empty(), "{violations:?}");
}

#[test]
fn a_graph_lowered_in_parallel_replays_exactly_on_two_queues() {
    use relaunch_encoders::EncodeOptions;
    use relaunch_lanes::lower_plan;
    use relaunch_lanes::{Access, Graph, GraphOptions, KernelNode, KernelRef, ResolvedKernel};

    let _serial = common::serial();
    let sim = common::gfx1100();
    let rt = &sim.rt;
    let counters = sim.device_memory(64 * LANES).unwrap();
    // Four independent chains of 10 counter nodes, each on its own buffer.
    let mut g = Graph::new(GraphOptions {
        lanes: LANES,
        ..GraphOptions::default()
    });
    for lane in 0..LANES {
        let buf = g.buffer(&format!("counter{lane}"), 64).unwrap();
        let target = (counters.addr() + 64 * lane as u64).to_le_bytes();
        let mut prev = None;
        for _ in 0..10 {
            let node = KernelNode {
                kernarg: target.to_vec(),
                accesses: vec![Access::read(buf, 0, 4), Access::write(buf, 0, 4)],
                deps: prev.into_iter().collect(),
                ..KernelNode::module(7, "counter", [1, 1, 1], [1, 1, 1])
            };
            prev = Some(g.kernel(node).unwrap());
        }
    }
    let plan = g.instantiate().unwrap();
    assert_eq!(plan.lane_count(), LANES);
    let (descriptor, kd_address) = (sim.descriptor, sim.sym.kernel_object);
    let facts = *sim.device.facts();
    let builder = |_| {
        Ok(relaunch_encoders::IbBuilder::for_target(
            &facts,
            EncodeOptions::default(),
        ))
    };
    let lanes = lower_plan(&plan, builder, |_| {
        move |kernel: &KernelRef| match kernel {
            KernelRef::Module { symbol, .. } if symbol == "counter" => Ok(ResolvedKernel {
                descriptor,
                kd_address,
                kernarg_align: 8,
                unread: Default::default(),
            }),
            other => Err(format!("no kernel {}", other.display_name())),
        }
    })
    .unwrap()
    .into_iter()
    .map(LaneProgram::of)
    .collect();
    let queues = queue_count(&sim.gpu.name, QueuePolicy::Auto, plan.lane_count());
    let sched = Scheduler::open_hsa(
        rt,
        &sim.gpu,
        queues,
        HsaQueueOptions::default(),
        ActorOptions::default(),
    )
    .unwrap();
    let multi = sched.install(lanes).unwrap();
    assert_eq!(multi.queues_used(), 2);
    for round in 1..=2 {
        multi.replay().unwrap().wait(WAIT).unwrap();
        for lane in 0..LANES {
            assert_eq!(
                read_u32(counters.addr() + 64 * lane as u64),
                10 * round,
                "lane {lane}"
            );
        }
    }
    let (violations, _) = sim.device.take_violations();
    assert!(violations.is_empty(), "{violations:?}");
    drop((multi, sched));
}
