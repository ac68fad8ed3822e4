//! A GPU memory fault as ROCr reports it, end to end on the simulator: a
//! wild address in one lane of a 4-lane replay reaches relaunch through the
//! system event handler (not a queue callback; with no handler the
//! simulator would abort the process, as ROCr does). The process lives,
//! the error names the address and the lane, every later replay on that
//! GPU fails with device-lost within 1 s, and a second simulated GPU in the
//! same process replays correctly. Each board here is this file's own
//! (distinct UUID and PCI address), so no other test shares a lost GPU.

#![cfg(not(loom))]

#[path = "support/lost.rs"]
mod lost;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use relaunch_device::hsa::Allocation;
use relaunch_lanes::encode_lanes;
use relaunch_sched::hsa::{HsaBackend, HsaProgram, HsaQueueOptions};
use relaunch_sched::scheduler::{LaneProgram, MultiIb, Scheduler};
use relaunch_sched::ActorOptions;
use relaunch_sim::{SimConfig, SimPci};
use relaunch_testsupport::rig::{read_u32, HsaRig};

const LANES: usize = 4;
const DISPATCHES: usize = 64;
const WAIT: Duration = Duration::from_secs(30);
/// Far from anything the simulator maps.
const WILD: u64 = 0x7ead_beef_0000;

static ABORTED: AtomicBool = AtomicBool::new(false);

fn board(bus: u8) -> SimConfig {
    let mut cfg = SimConfig::new("gfx1100");
    cfg.uuid = Some(format!("GPU-{bus:02x}fa017fa017fa01"));
    cfg.pci = Some(SimPci {
        domain: 0,
        bus,
        device: 0,
        function: 0,
    });
    cfg
}

struct Lanes {
    multi: MultiIb<HsaBackend>,
    _sched: Scheduler<HsaBackend>,
    counters: Allocation,
    rig: HsaRig,
}

/// PM4 IBs (`false`) or public-AQL packets (`true`).
fn four_lanes(rig: HsaRig, aql: bool) -> Lanes {
    let counters = rig.device_memory(64 * LANES).unwrap();
    let backends = (0..2)
        .map(|_| HsaBackend::new(&rig.rt, &rig.gpu, HsaQueueOptions::default()).unwrap())
        .collect();
    let sched = Scheduler::new(backends, ActorOptions::default()).unwrap();
    let base = counters.addr();
    let programs = encode_lanes(LANES, |lane| {
        let target = base + 64 * lane as u64;
        if aql {
            rig.counter_aql(target, DISPATCHES).map(HsaProgram::from)
        } else {
            rig.counter_ib(target, DISPATCHES).map(HsaProgram::from)
        }
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
    Lanes {
        multi,
        _sched: sched,
        counters,
        rig,
    }
}

#[test]
fn a_wild_address_loses_only_its_gpu_and_the_process_lives() {
    // An unhandled fault would abort the process; record it instead so the
    // test fails by name.
    relaunch_sim::fault::set_abort_hook(Some(Arc::new(|_| ABORTED.store(true, Ordering::SeqCst))));
    // The same contract for PM4 lanes and public-AQL lanes, each on boards
    // of its own (a lost board stays lost).
    wild_address_loses_its_gpu(false, 0xf0);
    wild_address_loses_its_gpu(true, 0xf2);
}

fn wild_address_loses_its_gpu(aql: bool, bus: u8) {
    let a = four_lanes(
        HsaRig::open_board(board(bus), "counter", "counter").unwrap(),
        aql,
    );
    a.multi.replay().unwrap().wait(WAIT).unwrap();

    // Lane 1's first dispatch now increments a wild address.
    let faulty = 1;
    let mut a = a;
    a.multi
        .set_kernargs(faulty, 0, 0, &WILD.to_le_bytes())
        .unwrap();
    let started = Instant::now();
    let err = a.multi.replay().unwrap().wait(WAIT).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert!(err.is_device_lost(), "{err}");
    assert!(
        !ABORTED.load(Ordering::SeqCst),
        "the fault reached the abort path"
    );
    assert!(a.rig.device.is_lost());
    let named = err
        .of_lane(faulty)
        .unwrap_or_else(|| panic!("lane {faulty} not named: {err}"));
    let text = named.to_string();
    eprintln!("lane error: {text}");
    assert!(text.starts_with(&format!("lane {faulty} ")), "{text}");
    assert!(text.contains(&format!("{WILD:#x}")), "{text}");
    assert!(text.contains("lost"), "{text}");

    // Every later replay fails with device-lost, at once.
    lost::later_replays_fail_at_once(&a.multi, WILD, WAIT);

    // A second GPU in the same process is unaffected.
    let b = four_lanes(
        HsaRig::open_board(board(bus + 1), "counter", "counter").unwrap(),
        aql,
    );
    for round in 1..=2u32 {
        b.multi.replay().unwrap().wait(WAIT).unwrap();
        for lane in 0..LANES {
            assert_eq!(
                read_u32(b.counters.addr() + 64 * lane as u64).unwrap(),
                round * DISPATCHES as u32
            );
        }
    }
    assert!(!b.rig.device.is_lost());
    // The lanes of A that ran before the fault kept their results. A PM4
    // lane is one packet, which the simulator runs whole; a public-AQL lane
    // is one packet per dispatch, and the stop may land between them (on
    // hardware either may be cut short: what a lost GPU wrote is undefined).
    let lane0 = read_u32(a.counters.addr()).unwrap();
    if aql {
        let d = DISPATCHES as u32;
        assert!((d..=2 * d).contains(&lane0), "{lane0}");
    } else {
        assert_eq!(lane0 % DISPATCHES as u32, 0);
    }
}
