//! Shared setup of the simulated-device tests: the simulator's rig
//! (`relaunch_testsupport::rig`) on gfx1100 with the `counter` fixture
//! loaded, and the lock every test on it takes.

use std::sync::{Mutex, MutexGuard};

pub use relaunch_testsupport::rig::HsaRig as SimGpu;

/// `sim:gfx1100` through relaunch-device's HSA runtime, `counter` loaded.
pub fn gfx1100() -> SimGpu {
    SimGpu::counter("gfx1100").unwrap()
}

pub fn read_u32(addr: u64) -> u32 {
    relaunch_testsupport::rig::read_u32(addr).unwrap()
}

/// The simulated HSA system is process-wide (its signal count, queues and
/// boards), and every simulated-device test of this binary shares it, so
/// they run one at a time (a test that panicked leaves it usable).
pub fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// How a test's lanes are submitted: retained PM4 IBs, or public-AQL
/// kernel-dispatch packets. Tests of the replay contract run with both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Pm4,
    Aql,
}

pub const KINDS: [Kind; 2] = [Kind::Pm4, Kind::Aql];

/// `n` one-item counter dispatches at `target`, an RMW boundary after each.
pub fn counter_lane(
    sim: &SimGpu,
    target: u64,
    n: usize,
    kind: Kind,
) -> Result<relaunch_sched::hsa::HsaProgram, String> {
    match kind {
        Kind::Pm4 => sim.counter_ib(target, n).map(Into::into),
        Kind::Aql => sim.counter_aql(target, n).map(Into::into),
    }
    .map_err(|e| e.to_string())
}
