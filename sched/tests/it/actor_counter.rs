//! Actor and scheduler protocols on the in-memory counter backend: results
//! exact, ordering kept, no violation recorded by the test device.

#![cfg(not(loom))]

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use relaunch_sched::scheduler::{LaneProgram, Scheduler};
use relaunch_sched::{Actor, ActorOptions, SchedError};
use relaunch_testsupport::counter::{
    CounterBackend, CounterDispatch, CounterMemory, CounterProgram, FaultInjector,
};

const WAIT: Duration = Duration::from_secs(10);

fn program(counter: usize, values: &[u64]) -> CounterProgram {
    CounterProgram {
        dispatches: values
            .iter()
            .map(|&v| CounterDispatch::add(counter, v))
            .collect(),
    }
}

#[test]
fn replay_runs_the_ib_and_patches_change_the_next_replay() {
    let mem = CounterMemory::new(1);
    let actor = Actor::spawn(
        0,
        CounterBackend::new(Arc::clone(&mem)).unwrap(),
        ActorOptions::default(),
    )
    .unwrap();
    let mut ib = actor.install(program(0, &[2, 3])).unwrap();
    assert_eq!(ib.dispatch_count(), 2);
    ib.replay().unwrap().wait(WAIT).unwrap();
    assert_eq!(mem.read(0), Some(5));
    ib.patch(1, 0, &10u64.to_le_bytes()).unwrap();
    ib.replay().unwrap().wait(WAIT).unwrap();
    assert_eq!(mem.read(0), Some(17));
    // Patch only the low byte of dispatch 0: 2 -> 7.
    ib.patch(0, 0, &[7]).unwrap();
    ib.replay().unwrap().wait(WAIT).unwrap();
    assert_eq!(mem.read(0), Some(34));
    assert!(mem.violations().is_empty(), "{:?}", mem.violations());
}

#[test]
fn a_patch_sent_after_a_replay_lands_after_it_without_blocking() {
    let mem = CounterMemory::new(1);
    let (backend, gpu) = CounterBackend::manual(Arc::clone(&mem));
    let actor = Actor::spawn(0, backend, ActorOptions::default()).unwrap();
    let mut ib = actor.install(program(0, &[1])).unwrap();
    // The GPU has not run anything yet: the first replay stays in flight.
    let first = ib.replay().unwrap();
    ib.patch(0, 0, &100u64.to_le_bytes()).unwrap(); // returns at once
    let second = ib.replay().unwrap();
    assert!(!first.is_complete().unwrap());
    assert!(
        second.ticket().is_none(),
        "the second replay queues behind the patch"
    );
    assert_eq!(mem.read(0), Some(0));
    let driver = thread::spawn(move || {
        assert!(gpu.step());
        assert!(gpu.step());
        gpu
    });
    first.wait(WAIT).unwrap();
    second.wait(WAIT).unwrap();
    assert_eq!(mem.read(0), Some(101), "first replay saw 1, the second 100");
    assert!(mem.violations().is_empty(), "{:?}", mem.violations());
    let gpu = driver.join().unwrap();
    drop(ib);
    actor.shutdown();
    assert!(!gpu.step(), "shutdown destroyed the queue");
}

#[test]
fn four_threads_patch_and_replay_ten_thousand_rounds_each_exactly() {
    const THREADS: usize = 4;
    const ROUNDS: u64 = 10_000;
    let mem = CounterMemory::new(THREADS);
    let backends = (0..2)
        .map(|_| CounterBackend::new(Arc::clone(&mem)).unwrap())
        .collect();
    let sched = Arc::new(Scheduler::new(backends, ActorOptions::default()).unwrap());
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let sched = Arc::clone(&sched);
            let mem = Arc::clone(&mem);
            thread::spawn(move || {
                let mut multi = sched
                    .install(vec![LaneProgram {
                        program: program(t, &[0]),
                        work: 1,
                    }])
                    .unwrap();
                let mut expected = 0u64;
                for round in 1..=ROUNDS {
                    let value = round * (t as u64 + 1);
                    multi.set_kernargs(0, 0, 0, &value.to_le_bytes()).unwrap();
                    multi.replay().unwrap().wait(WAIT).unwrap();
                    expected += value;
                    assert_eq!(mem.read(t), Some(expected), "thread {t} round {round}");
                }
                multi.queues_used()
            })
        })
        .collect();
    for w in workers {
        assert_eq!(w.join().unwrap(), 1);
    }
    assert!(mem.violations().is_empty(), "{:?}", mem.violations());
}

#[test]
fn concurrent_unwaited_replays_from_two_threads_all_run() {
    let mem = CounterMemory::new(2);
    let actor = Actor::spawn(
        0,
        CounterBackend::new(Arc::clone(&mem)).unwrap(),
        ActorOptions::default(),
    )
    .unwrap();
    let ibs = Arc::new([
        actor.install(program(0, &[1])).unwrap(),
        actor.install(program(1, &[3])).unwrap(),
    ]);
    let threads: Vec<_> = (0..2)
        .map(|i| {
            let ibs = Arc::clone(&ibs);
            thread::spawn(move || {
                let mut last = None;
                for _ in 0..2000 {
                    last = Some(ibs[i].replay().unwrap());
                }
                last.unwrap().wait(WAIT).unwrap();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(mem.read(0), Some(2000));
    assert_eq!(mem.read(1), Some(6000));
    assert!(mem.violations().is_empty(), "{:?}", mem.violations());
}

fn four_lanes(mem: &Arc<CounterMemory>) -> (Scheduler<CounterBackend>, Vec<FaultInjector>) {
    let backends: Vec<CounterBackend> = (0..2)
        .map(|_| CounterBackend::new(Arc::clone(mem)).unwrap())
        .collect();
    let injectors = backends.iter().map(CounterBackend::injector).collect();
    (
        Scheduler::new(backends, ActorOptions::default()).unwrap(),
        injectors,
    )
}

#[test]
fn a_fault_in_one_lane_names_it_and_the_next_replay_succeeds() {
    let mem = CounterMemory::new(4);
    let (sched, injectors) = four_lanes(&mem);
    let lanes = (0..4)
        .map(|l| LaneProgram {
            program: program(l, &[1, 1]),
            work: 2,
        })
        .collect();
    let multi = sched.install(lanes).unwrap();
    assert_eq!((multi.lane_count(), multi.queues_used()), (4, 2));
    multi.replay().unwrap().wait(WAIT).unwrap();
    // Lanes 0 and 2 share actor 0, 1 and 3 actor 1 (equal work, round-robin).
    assert_eq!(multi.lane(3).unwrap().actor().index(), 1);
    injectors[1].fail_next(1);
    let err = multi.replay().unwrap().wait(WAIT).unwrap_err();
    // Lane 1 faulted. Lane 3 shares its queue: if its submit came before
    // the fault it never ran; if after, it went to the replacement queue.
    let failures = match &err {
        SchedError::Lanes { failures } => failures.clone(),
        other => vec![other.clone()],
    };
    assert_eq!(failures[0].lane(), Some(1), "{err}");
    let text = failures[0].to_string();
    // The IB is named too (its label, else its id on the actor).
    let ib = multi.lane(1).unwrap().name().to_string();
    assert!(ib.starts_with("IB "), "{ib}");
    assert!(
        text.starts_with(&format!("lane 1 (queue actor 1, {ib}): ")),
        "{text}"
    );
    assert!(text.contains("injected fault"), "{text}");
    let mut runs = [3u64; 4];
    for f in &failures {
        runs[f.lane().unwrap()] = 2;
    }
    for f in &failures[1..] {
        assert_eq!(f.lane(), Some(3), "{err}");
        assert!(f.to_string().contains("never ran: replay"), "{f}");
    }
    multi.replay().unwrap().wait(WAIT).unwrap();
    let counts: Vec<u64> = (0..4).map(|c| mem.read(c).unwrap()).collect();
    // Two dispatches of +1 per run.
    assert_eq!(counts, runs.map(|r| 2 * r).to_vec());
    assert!(mem.violations().is_empty(), "{:?}", mem.violations());
}

#[test]
fn a_real_vm_fault_is_reported_with_its_lane_and_address() {
    let mem = CounterMemory::new(4);
    let (sched, _) = four_lanes(&mem);
    let mut lanes: Vec<_> = (0..4)
        .map(|l| LaneProgram {
            program: program(l, &[1]),
            work: 1,
        })
        .collect();
    lanes[2].program = program(9, &[1]);
    let multi = sched.install(lanes).unwrap();
    let err = multi.replay().unwrap().wait(WAIT).unwrap_err();
    assert_eq!(err.lane(), Some(2), "{err}");
    assert!(
        err.to_string()
            .contains("wrote counter 9, outside the 4 counters"),
        "{err}"
    );
}

#[test]
fn operations_after_shutdown_are_refused_and_pending_work_finishes() {
    let mem = CounterMemory::new(1);
    let (backend, gpu) = CounterBackend::manual(Arc::clone(&mem));
    let actor = Actor::spawn(3, backend, ActorOptions::default()).unwrap();
    let mut ib = actor.install(program(0, &[5])).unwrap();
    let done = ib.replay().unwrap();
    ib.patch(0, 0, &7u64.to_le_bytes()).unwrap();
    let queued = ib.replay().unwrap();
    let driver = thread::spawn(move || while gpu.step() {});
    actor.shutdown();
    done.wait(WAIT).unwrap();
    queued.wait(WAIT).unwrap();
    assert_eq!(mem.read(0), Some(12));
    let err = ib.replay().unwrap_err();
    assert!(matches!(err, SchedError::Stopped { actor: 3 }), "{err}");
    assert!(err.to_string().contains("queue actor 3 has shut down"));
    drop(ib);
    drop(actor);
    driver.join().unwrap();
    assert!(mem.violations().is_empty(), "{:?}", mem.violations());
}

#[test]
fn bad_patches_and_foreign_handles_are_refused_with_reasons() {
    let mem = CounterMemory::new(1);
    let actor = Actor::spawn(
        0,
        CounterBackend::new(Arc::clone(&mem)).unwrap(),
        ActorOptions::default(),
    )
    .unwrap();
    let mut ib = actor.install(program(0, &[1, 2])).unwrap();
    let err = ib.patch(2, 0, &[1]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "kernarg patch of dispatch 2 refused: dispatch 2 does not exist; the IB has 2 dispatches"
    );
    let err = ib.patch(0, 4, &[0; 8]).unwrap_err();
    assert!(
        err.to_string().contains("8 bytes at offset 4 do not fit"),
        "{err}"
    );
    let sched = Scheduler::<CounterBackend>::new(Vec::new(), ActorOptions::default());
    assert!(sched.is_err());
}

#[test]
fn a_queued_patch_that_cannot_land_is_reported_by_the_next_replay() {
    let mem = CounterMemory::new(1);
    let (backend, gpu) = CounterBackend::manual(Arc::clone(&mem));
    let opts = ActorOptions {
        drain_timeout: Duration::from_millis(50),
        ..ActorOptions::default()
    };
    let actor = Actor::spawn(5, backend, opts).unwrap();
    let mut ib = actor.install(program(0, &[1])).unwrap();
    let running = ib.replay().unwrap();
    // The GPU is stalled: the queued patch gives up after 50 ms.
    ib.patch(0, 0, &[9]).unwrap();
    let refused = ib.replay().unwrap();
    let err = refused.wait(WAIT).unwrap_err();
    assert!(
        matches!(
            err,
            SchedError::PatchNotApplied {
                actor: 5,
                dispatch: 0,
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("was not applied: timed out"),
        "{err}"
    );
    // The stalled replay still finishes with the old kernargs, and a fresh
    // patch after it lands.
    let driver = thread::spawn(move || while gpu.step() {});
    running.wait(WAIT).unwrap();
    ib.patch(0, 0, &[9]).unwrap();
    ib.replay().unwrap().wait(WAIT).unwrap();
    assert_eq!(mem.read(0), Some(10));
    assert!(mem.violations().is_empty(), "{:?}", mem.violations());
    drop(ib);
    drop(actor);
    driver.join().unwrap();
}

#[test]
fn a_fan_out_publishes_on_idle_actors_and_queues_behind_busy_ones() {
    let mem = CounterMemory::new(4);
    let (b0, g0) = CounterBackend::manual(Arc::clone(&mem));
    let (b1, g1) = CounterBackend::manual(Arc::clone(&mem));
    let sched = Scheduler::new(vec![b0, b1], ActorOptions::default()).unwrap();
    let lanes = (0..4)
        .map(|l| LaneProgram {
            program: program(l, &[1]),
            work: 1,
        })
        .collect();
    let mut multi = sched.install(lanes).unwrap();
    let actors: Vec<usize> = (0..4)
        .map(|l| multi.lane(l).unwrap().actor().index())
        .collect();
    assert_eq!(actors, vec![0, 1, 0, 1], "two lanes share each actor");
    // Both actors idle: every lane is published, nothing has run yet.
    let first = multi.replay().unwrap();
    assert!(!first.is_complete().unwrap());
    // A patch of lane 1 while its replay is in flight goes to actor 1's
    // thread; the next fan-out must queue lanes 1 and 3 behind it.
    multi.set_kernargs(1, 0, 0, &[10]).unwrap();
    let second = multi.replay().unwrap();
    let driver = thread::spawn(move || {
        for _ in 0..2 {
            assert!(g0.step());
            assert!(g0.step());
            assert!(g1.step());
            assert!(g1.step());
        }
        (g0, g1)
    });
    first.wait(WAIT).unwrap();
    second.wait(WAIT).unwrap();
    let _gpus = driver.join().unwrap();
    let counts: Vec<Option<u64>> = (0..4).map(|c| mem.read(c)).collect();
    assert_eq!(counts, vec![Some(2), Some(11), Some(2), Some(2)]);
    assert!(mem.violations().is_empty(), "{:?}", mem.violations());
}
