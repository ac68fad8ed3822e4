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
