//! relaunch-kfd: `libhsakmt.so.1` over the simulated GPU (see README.md).
//!
//! Owns: the thunk's C ABI (`hsaKmt*`, unversioned: see build.rs) as ROCr
//! 5.2.3 imports it, translated to the driver model in
//! `relaunch_sim::driver`; the topology it reports; the `/dev/kfd` open
//! that ROCm tools check before initialising.
//! Refuses: what the model does not have (SVM, IPC, GWS, graphics
//! interop, queue types other than AQL and SDMA) with NOT_SUPPORTED,
//! which ROCr handles.
//! Must not import: relaunch's encoders, lanes, sched or front ends.

pub mod abi;
mod exports;
pub mod process;
pub mod topology;
