//! Shared setup of the simulated-device tests: the simulator's rig
//! (`relaunch_testsupport::rig`) on gfx1100 with the `counter` fixture loaded.

#![allow(dead_code)]

pub use relaunch_testsupport::rig::HsaRig as SimGpu;

/// `sim:gfx1100` through relaunch-device's HSA runtime, `counter` loaded.
pub fn gfx1100() -> SimGpu {
    SimGpu::counter("gfx1100").unwrap()
}

pub fn read_u32(addr: u64) -> u32 {
    relaunch_testsupport::rig::read_u32(addr).unwrap()
}
