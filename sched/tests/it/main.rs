//! The scheduler's integration tests, one binary (one link). Tests on the
//! simulated device take `common::serial()`: the simulated HSA system is
//! process-wide. Binaries of their own: `sim_device_lost.rs` (it replaces
//! the simulator's process-wide abort hook) and `loom.rs` (`--cfg loom`).

mod common;

mod actor_counter;
mod sim_e2e;
mod sim_stress;
mod sim_submit;
