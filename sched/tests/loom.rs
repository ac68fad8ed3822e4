//! loom models of the actor protocols, one per protocol, each with at most
//! four threads (the caller(s), the actor thread(s), the test queue's
//! packet processor). Run by `scripts/test-loom` with `LOOM_MAX_PREEMPTIONS=2`:
//! bounding preemptions to 2 keeps every model to seconds on 2 cores while
//! still covering every ordering that needs at most two forced switches,
//! which is where the claim/enqueue/release races of this protocol live.
//! Compiled only under `--cfg loom` (the crate's primitives are loom's
//! then, through `relaunch_sched::sync`, and so are the counter backend's).
#![cfg(loom)]

use std::time::Duration;

use relaunch_sched::scheduler::{LaneProgram, Scheduler};
use relaunch_sched::sync::{thread, Arc};
use relaunch_sched::{Actor, ActorOptions, SchedError};
use relaunch_testsupport::counter::{
    CounterBackend, CounterDispatch, CounterMemory, CounterProgram,
};

const WAIT: Duration = Duration::from_secs(5);

fn one_add(counter: usize, value: u64) -> CounterProgram {
    CounterProgram {
        dispatches: vec![CounterDispatch::add(counter, value)],
    }
}

/// A replay sent through the mailbox (the actor is busy with a queued
/// patch) gets its ticket from the actor thread and completes.
#[test]
fn loom_mailbox_and_completion() {
    loom::model(|| {
        let mem = CounterMemory::new(1);
        let (backend, gpu) = CounterBackend::manual(Arc::clone(&mem));
        let actor = Actor::spawn(0, backend, ActorOptions::default()).unwrap();
        let ib = actor.install(one_add(0, 2)).unwrap();
        let gpu = thread::spawn(move || while gpu.step() {});
        let done = ib.replay().unwrap();
        done.wait(WAIT).unwrap();
        assert_eq!(mem.read(0), Some(2));
        drop(ib);
        drop(actor);
        gpu.join().unwrap();
        assert!(mem.violations().is_empty());
    });
}

/// replay; patch; replay without waiting: the first replay sees the old
/// kernargs, the second the new ones, and no patch lands mid-replay.
#[test]
fn loom_patch_after_replay_ordering() {
    loom::model(|| {
        let mem = CounterMemory::new(1);
        let (backend, gpu) = CounterBackend::manual(Arc::clone(&mem));
        let actor = Actor::spawn(0, backend, ActorOptions::default()).unwrap();
        let mut ib = actor.install(one_add(0, 1)).unwrap();
        let gpu = thread::spawn(move || while gpu.step() {});
        let first = ib.replay().unwrap();
        ib.patch(0, 0, &[10]).unwrap();
        let second = ib.replay().unwrap();
        first.wait(WAIT).unwrap();
        second.wait(WAIT).unwrap();
        assert_eq!(mem.read(0), Some(11));
        drop(ib);
        drop(actor);
        gpu.join().unwrap();
        assert!(mem.violations().is_empty(), "{:?}", mem.violations());
    });
}

/// The direct patch (no claim, no lock): after a waited replay the IB is
/// idle, so the patch writes the kernargs from the caller's thread while
/// another thread may hold the same actor for its own IB's replay. The
/// patch lands before the next replay and never while a replay of its IB
/// runs (the test queue records that as a violation).
#[test]
fn loom_direct_patch_beside_a_busy_actor() {
    loom::model(|| {
        let mem = CounterMemory::new(2);
        let (backend, gpu) = CounterBackend::manual(Arc::clone(&mem));
        let actor = Actor::spawn(0, backend, ActorOptions::default()).unwrap();
        let mut a = actor.install(one_add(0, 1)).unwrap();
        let b = actor.install(one_add(1, 5)).unwrap();
        let gpu = thread::spawn(move || while gpu.step() {});
        a.replay().unwrap().wait(WAIT).unwrap();
        let other = thread::spawn(move || (b.replay().unwrap(), b));
        a.patch(0, 0, &[20]).unwrap();
        let second = a.replay().unwrap();
        let (b_done, b) = other.join().unwrap();
        second.wait(WAIT).unwrap();
        b_done.wait(WAIT).unwrap();
        assert_eq!((mem.read(0), mem.read(1)), (Some(21), Some(5)));
        drop((a, b));
        drop(actor);
        gpu.join().unwrap();
        assert!(mem.violations().is_empty(), "{:?}", mem.violations());
    });
}

/// Two threads replay different IBs on one actor at once: whichever finds
/// it idle submits inline, the other queues; both run exactly once.
#[test]
fn loom_concurrent_replays_on_one_actor() {
    loom::model(|| {
        let mem = CounterMemory::new(2);
        let (backend, gpu) = CounterBackend::manual(Arc::clone(&mem));
        let actor = Actor::spawn(0, backend, ActorOptions::default()).unwrap();
        let a = actor.install(one_add(0, 1)).unwrap();
        let b = actor.install(one_add(1, 5)).unwrap();
        let gpu = thread::spawn(move || while gpu.step() {});
        let other = thread::spawn(move || {
            b.replay().unwrap().wait(WAIT).unwrap();
            b
        });
        a.replay().unwrap().wait(WAIT).unwrap();
        let b = other.join().unwrap();
        assert_eq!((mem.read(0), mem.read(1)), (Some(1), Some(5)));
        drop((a, b));
        drop(actor);
        gpu.join().unwrap();
        assert!(mem.violations().is_empty(), "{:?}", mem.violations());
    });
}

/// Shutdown from another thread while a replay runs and a patch waits for
/// it: the replay completes, the patch and the IB's release wait for it
/// (no violation), and later operations are refused.
#[test]
fn loom_shutdown_while_operations_pend() {
    loom::model(|| {
        let mem = CounterMemory::new(1);
        let (backend, gpu) = CounterBackend::manual(Arc::clone(&mem));
        let actor = Actor::spawn(0, backend, ActorOptions::default()).unwrap();
        let mut ib = actor.install(one_add(0, 3)).unwrap();
        let running = ib.replay().unwrap();
        ib.patch(0, 0, &[4]).unwrap();
        let stopper = {
            let actor = actor.clone();
            thread::spawn(move || actor.shutdown())
        };
        let gpu = thread::spawn(move || while gpu.step() {});
        running.wait(WAIT).unwrap();
        assert_eq!(mem.read(0), Some(3));
        stopper.join().unwrap();
        assert!(matches!(ib.replay(), Err(SchedError::Stopped { actor: 0 })));
        drop(ib);
        drop(actor);
        gpu.join().unwrap();
        assert!(mem.violations().is_empty(), "{:?}", mem.violations());
    });
}

/// A fan-out over two actors publishes both lanes, then rings both: each
/// lane runs exactly once per replay, and a patch sent between two
/// fan-outs lands after the first and before the second. The caller runs
/// both test queues' processors itself after the sends (a processor per
/// queue would make six threads; loom allows five): `step` takes only
/// what was published, so the queued patch and the second replay of a
/// busy actor still race the caller through that actor's thread.
#[test]
fn loom_fanout_publish_then_ring() {
    loom::model(|| {
        let mem = CounterMemory::new(2);
        let (b0, g0) = CounterBackend::manual(Arc::clone(&mem));
        let (b1, g1) = CounterBackend::manual(Arc::clone(&mem));
        let sched = Scheduler::new(vec![b0, b1], ActorOptions::default()).unwrap();
        let lanes = vec![
            LaneProgram {
                program: one_add(0, 1),
                work: 1,
            },
            LaneProgram {
                program: one_add(1, 2),
                work: 1,
            },
        ];
        let mut multi = sched.install(lanes).unwrap();
        assert_eq!(multi.queues_used(), 2);
        let first = multi.replay().unwrap();
        multi.set_kernargs(1, 0, 0, &[5]).unwrap();
        let second = multi.replay().unwrap();
        for _ in 0..2 {
            assert!(g0.step());
            assert!(g1.step());
        }
        first.wait(WAIT).unwrap();
        second.wait(WAIT).unwrap();
        assert_eq!((mem.read(0), mem.read(1)), (Some(2), Some(7)));
        drop(multi);
        drop(sched);
        assert!(mem.violations().is_empty(), "{:?}", mem.violations());
    });
}

/// Two installs race a shutdown: one may claim the idle actor while the
/// other queues behind it, and the shutdown may come before, between or
/// after them. Each install either succeeds or is refused as `Stopped`;
/// none waits forever, and the actor thread ends.
#[test]
fn loom_installs_racing_shutdown() {
    loom::model(|| {
        let mem = CounterMemory::new(2);
        let (backend, _gpu) = CounterBackend::manual(Arc::clone(&mem));
        let actor = Actor::spawn(0, backend, ActorOptions::default()).unwrap();
        let installers: Vec<_> = (0..2)
            .map(|counter| {
                let actor = actor.clone();
                thread::spawn(move || match actor.install(one_add(counter, 1)) {
                    Ok(ib) => drop(ib),
                    Err(SchedError::Stopped { actor: 0 }) => {}
                    Err(err) => panic!("install failed: {err}"),
                })
            })
            .collect();
        actor.shutdown();
        for installer in installers {
            installer.join().unwrap();
        }
        drop(actor);
        assert!(mem.violations().is_empty(), "{:?}", mem.violations());
    });
}
