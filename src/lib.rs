//! relaunch: record a fixed sequence of AMD GPU kernel dispatches once,
//! encode it as retained PM4 indirect buffers, and replay it with one AQL
//! packet per hardware queue.
//!
//! This crate is the Rust API (the `relaunch` command line is the
//! `relaunch-cli` crate, `cli/`). [`Gpu`] opens a device by a
//! stable selector (or `sim:<target>`), loads [`Module`]s (by hand, or by
//! toc key from a verified per-architecture bundle tree: [`Catalog`]), records direct
//! PM4 with [`Pm4Builder`] and installs it as a retained [`Pm4Ib`] (or a
//! [`Pm4MultiIb`] over several queues). The pieces live in their own
//! crates (`relaunch-device`: code objects, the HSA seam, identity;
//! `relaunch-encoders`: PM4; `relaunch-lanes`: the graph; `relaunch-sched`:
//! queue actors; `relaunch-sim`: the simulated device, only reached through
//! `sim:` selectors and only with the cargo feature `sim`, on by default:
//! an engine that wants only the HSA path sets `default-features = false`
//! and links no simulator); this crate is the boundary the front ends use. It
//! re-exports a curated set of their types (graph authoring, code objects,
//! stream words, bundles, twins), not the crates, and its [`Error`] keeps
//! their typed errors, with [`Error::class`] the class C and Python report.
//! A graph lane with a kernel the PM4 path refuses runs as public-AQL
//! dispatches (`submission`), HIP device printf kernels included: the
//! GPU's hostcall service (`hostcall`) serves them, printing to stdout as
//! HIP does (the one thing relaunch prints) or into a [`PrintfCapture`].

mod catalog;
mod devices;
mod error;
mod fallback;
mod gpu;
mod graph;
mod hip_streams;
mod hostcall;
mod keepalive;
mod kernargs;
pub mod manifest;
mod module;
mod pm4;
mod profile;
mod refusal;
mod settle;
mod simulated;
mod submission;

pub use catalog::Catalog;
pub use devices::{host_devices, HostDevices, ListedDevice};
pub use error::{panic_message, Error, ErrorClass, LaneLoweringError, Result};
pub use gpu::{runtime_agent_facts, DeviceBuffer, Gpu, DEVICE_ENV, FALLBACK_SELECTOR};
pub use graph::{
    default_options as default_graph_options, Graph, GraphExec, LaunchInFlight, NodeSpec,
};
pub use hip_streams::{HipBuffer, HipDevice, HipError, REAL_HIP_ENV};
pub use hostcall::{PrintfCapture, PrintfOutput, Stream as PrintfStream};
pub use kernargs::explicit_kernarg_size;
pub use manifest::SchedulerProfile;
pub use module::{LoadOptions, LoadedKernel, Module, CERTIFY_ENV};
pub use pm4::{refuse_inside_twin, Pm4Builder, Pm4Ib, Pm4MultiIb, Replay, REPLAY_TIMEOUT};
pub use profile::{DispatchTime, LaneTimes, Profiling, ReplayTimes};
pub use refusal::{Refusal, TimestampMark};
pub use relaunch_sched::ib_dump::dump_ibs_to;
pub use relaunch_sched::QueuePolicy;
pub use submission::{LaneKind, LaneSubmission, Submission};

// The curated API of the crates underneath: what a front end (the CLI,
// the C ABI, Python, the HIP interposer) needs to record graphs and load
// code, and no more. Front ends use these paths, never the crates.

// Graph authoring: buffers, nodes, their accesses and dependencies.
pub use relaunch_lanes::graph::MAX_ACCESSES_PER_NODE;
pub use relaunch_lanes::{
    Access, Boundary, BoundaryKind, BoundaryReason, BufferId, GraphOptions, KernelNode, KernelRef,
    MockEvent, MockRecorder, Mode, NodeId, Order, Plan,
};
// The typed refusals inside [`Error`] (hazards stay a list).
pub use relaunch_lanes::{CompileError, Hazard, HazardKind, RecordError};

// Code objects: reading them, their kernels, certification.
pub use relaunch_device::codeobj::args::ArgFill;
pub use relaunch_device::codeobj::certify::{certify, Certificate, ReadCache};
pub use relaunch_device::codeobj::{CodeObject, CodeObjectError, KernelInfo};
// Whether the direct PM4 path runs a kernel, and packing its kernargs.
pub use relaunch_device::identity::Bdf;
pub use relaunch_device::{Family, GfxTarget};
pub use relaunch_encoders::kernarg_pack::{pack as pack_kernargs, Geometry};
pub use relaunch_encoders::verdict::kernel_verdict;
pub use relaunch_encoders::{Pm4Verdict, Verdict};
// Copies and fills a graph runs inside the IB (CP DMA).
pub use relaunch_encoders::dma::{DmaOp, MAX_DMA_PACKETS_PER_NODE};

// Ordering an IB with another queue's work through a gate word per lane.
pub use relaunch_encoders::StreamWords;
pub mod stream_order {
    //! The gate word of [`crate::StreamWords`]: closed, or a launch's
    //! sequence number.
    pub use relaunch_encoders::stream_order::GATE_CLOSED;
}

pub mod extent {
    //! How long a code object or offload bundle behind a bare pointer is
    //! (HIP passes no size), within one set of limits.
    pub use relaunch_device::codeobj::extent::{
        bundle_extent, elf_extent, is_bundle, ExtentError, Read, BUNDLE_MAGIC, MAX_BUNDLE_BYTES,
        MAX_BUNDLE_ENTRIES, MAX_BUNDLE_ID_BYTES, MAX_ELF_BYTES,
    };
}

pub mod bundle {
    //! Per-architecture bundle trees ([`crate::Catalog`] reads them) and
    //! packing one.
    pub use relaunch_device::bundle::{pack, ArchDir, BundleError, Compression};
}

pub mod migration {
    //! The reference system's environment variables: which relaunch
    //! honours under its own name ([`REFERENCE_VARS`]), reading a setting
    //! that may still carry the reference name ([`setting`]), and the
    //! one-time warnings about the rest ([`check_environment`]).
    pub use relaunch_device::migration::{
        check_environment, reference_for, setting, ReferenceVar, REFERENCE_PREFIX, REFERENCE_VARS,
    };
}

#[cfg(feature = "sim")]
pub mod twins {
    //! Host-side twins of simulated kernels (the simulator runs them in
    //! place of a kernel's machine code), and which of the two runs
    //! (`KernelMode`, from `RELAUNCH_SIM_KERNELS`).
    pub use relaunch_sim::isa::KernelMode;
    pub use relaunch_sim::twins::{inside_twin, register_twin, KernelFault, Workgroup};
}
