//! The command line's integration tests, one binary (one link): the
//! `relaunch` subcommands run as a user runs them (`common::relaunch`),
//! on the simulated device and, for `sim-rocm`, under the real ROCm user
//! space over it. `reference_settings.rs` is a binary of its own (it sets
//! the environment).

mod common;

mod bundle_cli;
mod certify_cli;
mod cli_devices;
mod cli_limits;
mod closed_pipe;
mod default_device;
mod demo_bundle;
mod demo_cli;
mod dump_ib_cli;
mod first_contact;
mod hip_dispatch_packet;
mod inspect_cli;
mod selftest_cli;
mod sim_rocm;
