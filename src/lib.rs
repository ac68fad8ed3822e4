//! relaunch: record a fixed sequence of AMD GPU kernel dispatches once,
//! encode it as retained PM4 indirect buffers, and replay it with one AQL
//! packet per hardware queue.
//!
//! This crate is the Rust API and the CLI. [`Gpu`] opens a device by a
//! stable selector (or `sim:<target>`), loads [`Module`]s (by hand, or by
//! toc key from a verified per-architecture bundle tree: [`Catalog`]), records direct
//! PM4 with [`Pm4Builder`] and installs it as a retained [`Pm4Ib`] (or a
//! [`Pm4MultiIb`] over several queues). The pieces live in their own
//! crates: [`device`] (code objects, the HSA seam, identity), [`encoders`]
//! (PM4), [`lanes`] (the graph), [`sched`] (queue actors), [`sim`] (the
//! simulated device, only reached through `sim:` selectors).

mod catalog;
mod devices;
mod error;
mod fallback;
mod gpu;
mod graph;
mod keepalive;
mod kernargs;
pub mod manifest;
mod module;
mod pm4;
mod settle;

pub use catalog::Catalog;
pub use devices::{host_devices, HostDevices, ListedDevice};
pub use error::{Error, ErrorClass, Result};
pub use gpu::{runtime_agent_facts, DeviceBuffer, Gpu, DEVICE_ENV, FALLBACK_SELECTOR};
pub use graph::{
    default_options as default_graph_options, Graph, GraphExec, LaunchInFlight, NodeSpec,
};
pub use kernargs::explicit_kernarg_size;
pub use manifest::SchedulerProfile;
pub use module::{LoadOptions, LoadedKernel, Module, CERTIFY_ENV};
pub use pm4::{refuse_inside_twin, Pm4Builder, Pm4Ib, Pm4MultiIb, Replay, REPLAY_TIMEOUT};
pub use relaunch_device::codeobj::certify::{Certificate, ReadCache};
pub use relaunch_encoders::kernarg_pack::{pack as pack_kernargs, Geometry};
pub use relaunch_sched::ib_dump::dump_ibs_to;
pub use relaunch_sched::QueuePolicy;

pub use relaunch_device as device;
pub use relaunch_encoders as encoders;
pub use relaunch_lanes as lanes;
pub use relaunch_sched as sched;
pub use relaunch_sim as sim;
