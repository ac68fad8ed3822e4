//! Four threads, each with its own IB on one shared scheduler over the
//! simulated gfx1100, patch a kernarg and replay 10,000 times each; every
//! result is exact and the simulator reports no ordering violation.

#![cfg(not(loom))]

use crate::common;

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use common::read_u32;
use relaunch_sched::hsa::{HsaBackend, HsaQueueOptions};
use relaunch_sched::scheduler::{LaneProgram, Scheduler};
use relaunch_sched::ActorOptions;

const THREADS: usize = 4;
const ROUNDS: u32 = 10_000;
/// Counters per thread: each round retargets the dispatch at the next one.
const SLOTS: u64 = 4;

#[test]
fn four_threads_patch_and_replay_ten_thousand_rounds_on_the_simulator() {
    let _serial = common::serial();
    let sim = Arc::new(common::gfx1100());
    let counters = sim.device_memory(THREADS * SLOTS as usize * 64).unwrap();
    let base = counters.addr();
    let backends: Vec<HsaBackend> = (0..2)
        .map(|_| HsaBackend::new(&sim.rt, &sim.gpu, HsaQueueOptions::default()).unwrap())
        .collect();
    let sched = Arc::new(Scheduler::new(backends, ActorOptions::default()).unwrap());
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (sim, sched) = (Arc::clone(&sim), Arc::clone(&sched));
            thread::spawn(move || {
                let slot = |i: u64| base + 64 * (t as u64 * SLOTS + i);
                let ib = sim.counter_ib(slot(0), 1).unwrap();
                let mut multi = sched
                    .install(vec![LaneProgram {
                        program: ib,
                        work: 1,
                    }])
                    .unwrap();
                for round in 0..ROUNDS {
                    let i = u64::from(round) % SLOTS;
                    multi.set_kernargs(0, 0, 0, &slot(i).to_le_bytes()).unwrap();
                    multi
                        .replay()
                        .unwrap()
                        .wait(Duration::from_secs(30))
                        .unwrap();
                    let expected = round / SLOTS as u32 + 1;
                    assert_eq!(read_u32(slot(i)), expected, "thread {t} round {round}");
                }
                multi.lane(0).unwrap().actor().index()
            })
        })
        .collect();
    let mut actors: Vec<usize> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    actors.sort_unstable();
    assert_eq!(actors, vec![0, 0, 1, 1], "installs spread over both queues");
    let (violations, _) = sim.device.take_violations();
    assert!(violations.is_empty(), "{violations:?}");
    drop(sched);
    drop(counters);
}
