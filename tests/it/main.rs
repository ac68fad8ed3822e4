//! The facade's integration tests, one binary: each links the whole facade,
//! so one link instead of one per file (CI builds on 2 cores). A test that
//! changes process-wide state other tests see (environment variables, the
//! simulator's set of boards, its process-wide GPU clock, its live
//! allocation count) stays a binary of its own: `deny_open.rs`,
//! `sim_identity.rs`, `profiled_replay.rs` (spans read the shared clock),
//! `transfer_nodes.rs` (strict-mode failures on several simulated GPUs at
//! once), `timeout_contract.rs` (counts live allocations), `graph_faults.rs`
//! (a lost board stays lost; a hung twin is registered process-wide). New
//! test files go here as modules.

mod catalog;
mod certify_asm;
mod demo_kernels;
mod examples;
mod facade;
mod fn_pointers;
mod generic_code;
mod graph_launch;
mod keepalive;
mod pm4_scratch;
mod printf_aql;
mod public_aql;
mod refusals;
