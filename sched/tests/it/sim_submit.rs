//! Submission on the simulated gfx1100: the AQL queue's publish/ring split,
//! the fan-out ringing each queue once after publishing every lane, and
//! more replays in flight than the backend has completion signals. The
//! simulated HSA system is process-wide: tests take `common::serial()`.

#![cfg(not(loom))]

use crate::common;

use std::time::Duration;

use common::read_u32;
use relaunch_device::hsa::HsaError;
use relaunch_encoders::EncodeOptions;
use relaunch_sched::hsa::{HsaBackend, HsaQueueOptions, SIGNALS};
use relaunch_sched::scheduler::{LaneProgram, Scheduler};
use relaunch_sched::ActorOptions;
use relaunch_sim::{hsa, FaultPlan};

const WAIT: Duration = Duration::from_secs(30);

/// Segments of at most 256 dwords, so a 40-dispatch lane spans several.
fn segmented() -> EncodeOptions {
    EncodeOptions {
        max_segment_dwords: 256,
        ..EncodeOptions::default()
    }
}

fn doorbells(queue_id: u64) -> u64 {
    hsa::queue_by_id(queue_id)
        .unwrap()
        .last_doorbell()
        .map_or(0, |(_, n)| n)
}

#[test]
fn fan_out_rings_each_queue_once_per_replay_and_is_exact() {
    let _serial = common::serial();
    let sim = common::gfx1100();
    let mem = sim.device_memory(64 * 4).unwrap();
    let backends: Vec<HsaBackend> = (0..4)
        .map(|_| HsaBackend::new(&sim.rt, &sim.gpu, HsaQueueOptions::default()).unwrap())
        .collect();
    let ids: Vec<u64> = backends.iter().map(HsaBackend::queue_id).collect();
    let sched = Scheduler::new(backends, ActorOptions::default()).unwrap();
    let lanes = (0..4)
        .map(|l| LaneProgram {
            program: sim
                .counter_ib_with(mem.addr() + 64 * l, 40, segmented())
                .unwrap(),
            work: 1,
        })
        .collect();
    let multi = sched.install(lanes).unwrap();
    assert_eq!(multi.queues_used(), 4);
    let lane_queue: Vec<u64> = (0..4)
        .map(|l| ids[multi.lane(l).unwrap().actor().index()])
        .collect();
    for round in 1..=3u64 {
        let before: Vec<(u64, u64)> = lane_queue
            .iter()
            .map(|&q| {
                (
                    doorbells(q),
                    hsa::queue_by_id(q).unwrap().load_write_index(),
                )
            })
            .collect();
        multi.replay().unwrap().wait(WAIT).unwrap();
        for (l, &q) in lane_queue.iter().enumerate() {
            let queue = hsa::queue_by_id(q).unwrap();
            let packets = queue.load_write_index() - before[l].1;
            assert!(packets > 1, "lane {l} should span several segments");
            // Every segment published, one doorbell write for all of them.
            assert_eq!(doorbells(q), before[l].0 + 1, "lane {l}, round {round}");
            assert_eq!(read_u32(mem.addr() + 64 * l as u64), 40 * round as u32);
        }
    }
    let (violations, _) = sim.device.take_violations();
    assert!(violations.is_empty(), "{violations:?}");
}

#[test]
fn more_replays_in_flight_than_signals_all_complete() {
    let _serial = common::serial();
    let sim = common::gfx1100();
    let mem = sim.device_memory(64).unwrap();
    let sched = Scheduler::open_hsa(
        &sim.rt,
        &sim.gpu,
        1,
        HsaQueueOptions::default(),
        ActorOptions::default(),
    )
    .unwrap();
    let multi = sched
        .install(vec![LaneProgram {
            program: sim.counter_ib(mem.addr(), 3).unwrap(),
            work: 3,
        }])
        .unwrap();
    let ib = multi.lane(0).unwrap();
    let replays = 3 * SIGNALS + 7;
    let done: Vec<_> = (0..replays).map(|_| ib.replay().unwrap()).collect();
    for c in &done {
        c.wait(WAIT).unwrap();
        assert!(c.is_complete().unwrap());
    }
    assert_eq!(read_u32(mem.addr()), 3 * replays as u32);
    // And again one at a time, waited: the same signal is reused.
    for k in 1..=5u32 {
        ib.replay().unwrap().wait(WAIT).unwrap();
        assert_eq!(read_u32(mem.addr()), 3 * (replays as u32 + k));
    }
}

#[test]
fn published_packets_run_after_one_ring() {
    let _serial = common::serial();
    let sim = common::gfx1100();
    let mem = sim.device_memory(64).unwrap();
    let ib = sim.place(sim.counter_ib(mem.addr(), 1).unwrap()).unwrap();
    let mut queue = sim.rt.create_queue(&sim.gpu, 64).unwrap();
    let done = sim.rt.create_signal(0).unwrap();
    let plain = ib.packet(Default::default()).unwrap();
    let last = ib.packet(done.handle()).unwrap();
    let rings = doorbells(queue.id());
    done.silent_store_relaxed(1);
    let ids = [
        queue.publish(&plain).unwrap(),
        queue.publish(&plain).unwrap(),
        queue.publish(&last).unwrap(),
    ];
    assert_eq!(ids, [0, 1, 2]);
    queue.ring(ids[2]);
    queue.wait(&done, 1, WAIT).unwrap();
    assert_eq!(read_u32(mem.addr()), 3);
    assert_eq!(doorbells(queue.id()), rings + 1);
    // submit = publish + ring.
    done.silent_store_relaxed(1);
    assert_eq!(queue.submit(&last).unwrap(), 3);
    queue.wait(&done, 1, WAIT).unwrap();
    assert_eq!(read_u32(mem.addr()), 4);
    assert_eq!(doorbells(queue.id()), rings + 2);
}

#[test]
fn a_full_ring_is_refused_not_overwritten() {
    let _serial = common::serial();
    let sim = common::gfx1100();
    let mem = sim.device_memory(64).unwrap();
    let ib = sim.place(sim.counter_ib(mem.addr(), 1).unwrap()).unwrap();
    let mut queue = sim.rt.create_queue(&sim.gpu, 64).unwrap();
    // The processor stops at the first packet: nothing is consumed.
    hsa::queue_by_id(queue.id()).unwrap().inject(FaultPlan {
        hang_at: Some(0),
        ..FaultPlan::default()
    });
    let packet = ib.packet(Default::default()).unwrap();
    for expect in 0..64 {
        assert_eq!(queue.publish(&packet).unwrap(), expect);
    }
    match queue.publish(&packet) {
        Err(HsaError::QueueFull {
            in_flight, size, ..
        }) => assert_eq!((in_flight, size), (64, 64)),
        other => panic!("expected QueueFull, got {other:?}"),
    }
    assert_eq!(queue.indices().1, 64, "the refused packet reserved no slot");
    assert_eq!(read_u32(mem.addr()), 0);
}

/// Teardown with a replay still running (a hung packet): the queue is
/// destroyed before its signals, and the one signal the running packet
/// may still decrement is leaked, never destroyed; the other 63 go.
#[test]
fn teardown_leaks_only_the_signal_a_running_packet_may_decrement() {
    let _serial = common::serial();
    let sim = common::gfx1100();
    let mem = sim.device_memory(64).unwrap();
    let live_before = hsa::signals().live();
    let backend = HsaBackend::new(&sim.rt, &sim.gpu, HsaQueueOptions::default()).unwrap();
    let queue = hsa::queue_by_id(backend.queue_id()).unwrap();
    let opts = ActorOptions {
        drain_timeout: Duration::from_millis(200),
        ..ActorOptions::default()
    };
    let sched = Scheduler::new(vec![backend], opts).unwrap();
    let lanes = vec![LaneProgram {
        work: 1,
        program: sim.counter_ib(mem.addr(), 1).unwrap(),
    }];
    let multi = sched.install(lanes).unwrap();
    // Two doorbell signals are the queue's own; +SIGNALS completion signals.
    assert_eq!(hsa::signals().live(), live_before + SIGNALS + 1);
    queue.inject(FaultPlan {
        hang_at: Some(queue.load_write_index()),
        ..FaultPlan::default()
    });
    let replay = multi.replay().unwrap();
    assert!(
        replay.wait(Duration::from_millis(100)).is_err(),
        "the packet hangs"
    );
    drop(replay);
    drop(multi);
    drop(sched);
    drop(queue);
    // The queue (and its doorbell) went; 63 signals were destroyed, the one
    // armed by the hung replay is leaked.
    assert_eq!(hsa::signals().live(), live_before + 1);
}

/// Issue 30, finding 5: an IB dropped while its replay hangs outlives the
/// drain wait, so its memory is set aside rather than freed under the
/// running packet. Once that replay is abandoned (its queue inactivated:
/// nothing on it runs), tearing down frees the IB and every signal instead
/// of leaking them for ever.
#[test]
fn an_ib_set_aside_for_a_hung_replay_is_freed_once_the_replay_is_abandoned() {
    let _serial = common::serial();
    let sim = common::gfx1100();
    let mem = sim.device_memory(64).unwrap();
    let live_before = hsa::signals().live();
    let allocations_before = hsa::memory().stats().live_allocations;
    let backend = HsaBackend::new(&sim.rt, &sim.gpu, HsaQueueOptions::default()).unwrap();
    let queue = hsa::queue_by_id(backend.queue_id()).unwrap();
    let opts = ActorOptions {
        drain_timeout: Duration::from_millis(100),
        ..ActorOptions::default()
    };
    let sched = Scheduler::new(vec![backend], opts).unwrap();
    let lanes = vec![LaneProgram {
        work: 1,
        program: sim.counter_ib(mem.addr(), 1).unwrap(),
    }];
    let multi = sched.install(lanes).unwrap();
    queue.inject(FaultPlan {
        hang_at: Some(queue.load_write_index()),
        ..FaultPlan::default()
    });
    let replay = multi.replay().unwrap();
    // The uninstall waits out the 100 ms drain; the IB is set aside.
    drop(multi);
    // Abandoned (the timeout contract) well after that: the queue is
    // inactivated. (Abandoned sooner, the uninstall frees the IB itself.)
    let err = replay
        .wait_or_abandon(Duration::from_millis(1500))
        .unwrap_err();
    assert!(err.to_string().contains("abandoned"), "{err}");
    drop(replay);
    drop(sched);
    drop(queue);
    assert_eq!(
        hsa::memory().stats().live_allocations,
        allocations_before,
        "the set-aside IB's memory was not freed"
    );
    assert_eq!(hsa::signals().live(), live_before, "signals leaked");
}
