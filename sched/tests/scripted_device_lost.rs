//! The scripted-runtime half of #14's fault check (the simulator half is
//! `sim_device_lost.rs`): the scheduler over the HSA backend over a
//! scripted HSA table that behaves like ROCr (relaunch-device's
//! `scripted/mod.rs` with its packet processor on and two GPUs). A
//! VM fault reaches only the system event handlers, never a queue
//! callback, and a fault no handler takes is where ROCr would `abort()`:
//! the table records it and this test fails on it. A wild address in one
//! lane of a 4-lane replay: the process lives, the error names the address,
//! the lane and its IB, every later replay on that GPU fails with
//! device-lost within 1 s, and the second GPU replays correctly.
//! Its own binary: the table and the record of lost GPUs are process-wide.

#![cfg(not(loom))]

#[path = "support/lost.rs"]
mod lost;

#[path = "../../device/tests/scripted/mod.rs"]
mod scripted;

use std::time::{Duration, Instant};

use relaunch_device::hsa::{AgentInfo, AllocFlags, Allocation, Runtime};
use relaunch_device::Family;
use relaunch_encoders::{EncodeOptions, KernelCode};
use relaunch_lanes::encode_lanes;
use relaunch_sched::hsa::{HsaBackend, HsaQueueOptions};
use relaunch_sched::scheduler::{LaneProgram, MultiIb, Scheduler};
use relaunch_sched::ActorOptions;
use relaunch_testsupport::rig::{counter_ib, ONE_ITEM};
use scripted::{open, setup, with, GPU, GPU2, KERNEL_OBJECT};

const LANES: usize = 4;
const DISPATCHES: usize = 16;
const WAIT: Duration = Duration::from_secs(30);
/// Outside every allocation of the table.
const WILD: u64 = 0xdead_0000_1000;

struct Lanes {
    multi: MultiIb<HsaBackend>,
    _sched: Scheduler<HsaBackend>,
    counters: Allocation,
}

/// Four labelled lanes of `counter` dispatches on two queues of `gpu`,
/// lane `l` counting into word `16 * l` of `counters`.
fn four_lanes(rt: &Runtime, gpu: &AgentInfo) -> Lanes {
    let pool = rt.device_pool(gpu).unwrap();
    let counters = rt
        .allocate(&pool, 64 * LANES, AllocFlags::default())
        .unwrap();
    let backends = (0..2)
        .map(|_| HsaBackend::new(rt, gpu, HsaQueueOptions::default()).unwrap())
        .collect();
    let sched = Scheduler::new(backends, ActorOptions::default()).unwrap();
    // The table's kernel object with its code 256 bytes after it (the
    // PGM address must be 256-byte aligned); nothing runs that code.
    let mut descriptor = relaunch_testsupport::counter_descriptor();
    descriptor.kernel_code_entry_byte_offset = 0x100;
    let code = KernelCode {
        symbol: "counter",
        family: Family::Gfx12,
        descriptor,
        kd_address: KERNEL_OBJECT,
        unread: Default::default(),
    };
    let base = counters.addr();
    let builders = encode_lanes(LANES, |lane| {
        let target = base + 64 * lane as u64;
        let mut b = counter_ib(
            &code,
            &ONE_ITEM,
            target,
            DISPATCHES,
            EncodeOptions::default(),
        )?;
        b.set_label(format!("counter{lane}"));
        Ok::<_, relaunch_testsupport::rig::RigError>(b)
    })
    .unwrap();
    let lanes = builders.into_iter().map(LaneProgram::of).collect();
    let multi = sched.install(lanes).unwrap();
    Lanes {
        multi,
        _sched: sched,
        counters,
    }
}

fn counter(lanes: &Lanes, lane: usize) -> u32 {
    let mut word = [0u8; 4];
    lanes.counters.read(64 * lane, &mut word).unwrap();
    u32::from_le_bytes(word)
}

/// No fault went unhandled (where ROCr would have aborted the process).
fn assert_not_aborted() {
    let aborted = with(|s| s.aborted.clone());
    assert!(aborted.is_empty(), "ROCr would have aborted: {aborted:?}");
}

#[test]
fn a_wild_address_loses_only_its_gpu_through_a_rocr_like_runtime() {
    let _serial = setup(false);
    with(|s| {
        s.second_gpu = true;
        s.execute = true;
    });
    let rt = open().unwrap();
    let gpus: Vec<AgentInfo> = rt.gpus().cloned().collect();
    assert_eq!(
        gpus.iter().map(|g| g.handle).collect::<Vec<_>>(),
        [GPU, GPU2]
    );
    assert_eq!(with(|s| s.event_handlers.len()), 1, "one handler");

    let mut a = four_lanes(&rt, &gpus[0]);
    a.multi.replay().unwrap().wait(WAIT).unwrap();
    for lane in 0..LANES {
        assert_eq!(counter(&a, lane), DISPATCHES as u32, "lane {lane}");
    }

    // Lane 1's first dispatch now increments a wild address.
    let faulty = 1;
    a.multi
        .set_kernargs(faulty, 0, 0, &WILD.to_le_bytes())
        .unwrap();
    let started = Instant::now();
    let err = a.multi.replay().unwrap().wait(WAIT).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "took {:?}",
        started.elapsed()
    );
    assert_not_aborted();
    assert!(err.is_device_lost(), "{err}");
    assert_eq!(with(|s| s.faulted.clone()), [GPU.handle]);
    assert_eq!(rt.device_lost(&gpus[0]).unwrap().address, WILD);
    let named = err
        .of_lane(faulty)
        .unwrap_or_else(|| panic!("lane {faulty} not named: {err}"));
    let text = named.to_string();
    eprintln!("lane error: {text}");
    let actor = a.multi.lane(faulty).unwrap().actor().index();
    assert!(
        text.starts_with(&format!(
            "lane {faulty} (queue actor {actor}, IB \"counter{faulty}\"): "
        )),
        "{text}"
    );
    assert!(text.contains(&format!("{WILD:#x}")), "{text}");
    assert!(text.contains("lost"), "{text}");
    // The lanes on the other queue ran before the fault; the faulty lane
    // stopped at its first dispatch.
    assert_eq!(counter(&a, faulty), DISPATCHES as u32);

    // Every later replay on that GPU fails with device-lost, at once.
    lost::later_replays_fail_at_once(&a.multi, WILD, WAIT);

    // The second GPU in the same process is unaffected.
    let b = four_lanes(&rt, &gpus[1]);
    for round in 1..=2u32 {
        b.multi.replay().unwrap().wait(WAIT).unwrap();
        for lane in 0..LANES {
            assert_eq!(counter(&b, lane), round * DISPATCHES as u32, "lane {lane}");
        }
    }
    assert!(rt.device_lost(&gpus[1]).is_none());
    assert_eq!(with(|s| s.faulted.clone()), [GPU.handle]);
    assert_not_aborted();
    drop((a, b));
}
