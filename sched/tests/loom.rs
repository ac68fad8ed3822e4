//! loom models of the actor protocols and of the HSA backend's
//! completion-signal ring (`signal_ring`), one per protocol, each with at most
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

/// The HSA backend's completion-signal ring (`relaunch_sched::hsa::ring`),
/// driven as the backend drives it, with loom atomics for the signals: a
/// submitting thread takes a signal under the ring's lock (armed ahead, or
/// free to arm now), records it, publishes the packet and re-arms finished
/// signals; a GPU thread runs packets in order, writes the replay's result
/// and then decrements its signal (release); a waiter polls `done` under
/// the lock as `HsaWatch::poll` does. Checked: the GPU never finds a
/// signal that is not at exactly 1 (no signal is armed by two pending
/// replays, or re-armed while its replay runs), and `done(seq)` implies
/// the replay's result is visible (acquire on the signal).
mod signal_ring {
    use std::collections::VecDeque;

    use loom::sync::atomic::{AtomicI64, AtomicU64, Ordering};
    use loom::sync::{Condvar, Mutex};
    use relaunch_sched::hsa::ring::{RingSignal, SignalRing, SIGNALS};
    use relaunch_sched::sync::{thread, Arc};

    struct ModelSignal(AtomicI64);

    impl RingSignal for ModelSignal {
        fn load(&self) -> i64 {
            self.0.load(Ordering::Acquire)
        }

        fn silent_store_relaxed(&self, value: i64) {
            self.0.store(value, Ordering::Relaxed);
        }
    }

    struct Rig {
        ring: Mutex<SignalRing<()>>,
        /// Notified when a replay is recorded (issued).
        issued: Condvar,
        signals: Vec<ModelSignal>,
        /// Packets published and not yet run: (replay, signal).
        packets: Mutex<VecDeque<(u64, usize)>>,
        published: Condvar,
        /// Replays the GPU ran (signal decremented), and its condvar.
        ran: Mutex<u64>,
        progress: Condvar,
        /// The last replay whose result the GPU wrote.
        results: AtomicU64,
    }

    /// A rig whose signals in `armed` start armed (1), the rest free (0).
    fn rig(armed: u64) -> Arc<Rig> {
        let signals = (0..SIGNALS)
            .map(|i| ModelSignal(AtomicI64::new(i64::from(armed >> i & 1 == 1))))
            .collect();
        Arc::new(Rig {
            ring: Mutex::new(SignalRing::new((), 0).with_armed(armed)),
            issued: Condvar::new(),
            signals,
            packets: Mutex::new(VecDeque::new()),
            published: Condvar::new(),
            ran: Mutex::new(0),
            progress: Condvar::new(),
            results: AtomicU64::new(0),
        })
    }

    /// Submits replays 1..=n as `HsaBackend::submit` does (no free signal:
    /// wait for the GPU to finish one, as `wait_for_room` does).
    fn submit(rig: &Rig, n: u64) {
        for seq in 1..=n {
            loop {
                let seen = *rig.ran.lock().unwrap();
                let mut ring = rig.ring.lock().unwrap();
                let Some((sig, armed)) = ring.take_signal(&rig.signals) else {
                    drop(ring);
                    let mut ran = rig.ran.lock().unwrap();
                    while *ran == seen {
                        ran = rig.progress.wait(ran).unwrap();
                    }
                    continue;
                };
                if !armed {
                    rig.signals[sig].silent_store_relaxed(1);
                }
                rig.packets.lock().unwrap().push_back((seq, sig));
                rig.published.notify_one();
                ring.record(seq, sig);
                ring.rearm_finished(&rig.signals, 2);
                rig.issued.notify_all();
                break;
            }
        }
    }

    /// Runs `n` packets in order, as the GPU does.
    fn gpu(rig: &Rig, n: u64) {
        for _ in 0..n {
            let (seq, sig) = {
                let mut packets = rig.packets.lock().unwrap();
                loop {
                    match packets.pop_front() {
                        Some(p) => break p,
                        None => packets = rig.published.wait(packets).unwrap(),
                    }
                }
            };
            rig.results.store(seq, Ordering::Relaxed);
            let before = rig.signals[sig].0.fetch_sub(1, Ordering::Release);
            assert_eq!(
                before, 1,
                "replay {seq} found its signal {sig} at {before}: armed twice or re-armed while running"
            );
            *rig.ran.lock().unwrap() += 1;
            rig.progress.notify_all();
        }
    }

    /// Polls replay `seq` as `HsaWatch::poll` does (under the ring's lock):
    /// once at any time after it was issued (done must imply its result
    /// is visible), and once after the GPU ran it (then it must be done).
    fn wait(rig: &Rig, seq: u64) {
        let poll = |must: bool| {
            let mut ring = rig.ring.lock().unwrap();
            while ring.issued() < seq {
                ring = rig.issued.wait(ring).unwrap();
            }
            let done = ring.done(&rig.signals, seq);
            assert!(done || !must, "replay {seq} ran but is not reported done");
            if done {
                ring.note_done(seq);
                assert!(
                    rig.results.load(Ordering::Relaxed) >= seq,
                    "replay {seq} reported done before its result was visible"
                );
            }
        };
        poll(false);
        let mut ran = rig.ran.lock().unwrap();
        while *ran < seq {
            ran = rig.progress.wait(ran).unwrap();
        }
        drop(ran);
        poll(true);
    }

    /// No signal armed ahead: replay 2 reuses replay 1's signal when the
    /// waiter saw it finish, else takes a free one.
    #[test]
    fn loom_signal_ring_reuses_only_finished_signals() {
        loom::model(|| {
            let rig = rig(0);
            let host = {
                let rig = Arc::clone(&rig);
                thread::spawn(move || submit(&rig, 2))
            };
            let device = {
                let rig = Arc::clone(&rig);
                thread::spawn(move || gpu(&rig, 2))
            };
            wait(&rig, 1);
            wait(&rig, 2);
            host.join().unwrap();
            device.join().unwrap();
        });
    }

    /// Two signals armed ahead: after replay 2's doorbell the signal of a
    /// finished replay 1 is re-armed, and replay 3 may take it.
    #[test]
    fn loom_signal_ring_rearms_only_finished_signals() {
        loom::model(|| {
            let rig = rig(0b110);
            let host = {
                let rig = Arc::clone(&rig);
                thread::spawn(move || submit(&rig, 3))
            };
            let device = {
                let rig = Arc::clone(&rig);
                thread::spawn(move || gpu(&rig, 3))
            };
            wait(&rig, 1);
            wait(&rig, 3);
            host.join().unwrap();
            device.join().unwrap();
        });
    }
}
