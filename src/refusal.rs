//! The facade's own refusals, typed: one closed enum whose variants name
//! what a caller can act on and carry its data (the lane, the kernel, the
//! sizes that disagree). `Error::Refused` carries one; [`Refusal::class`]
//! is the class C and Python report, so converting a string refusal to a
//! variant keeps its `RL_ERR_*` code and exception type. Each message says
//! what was wrong and what to do, as the string it replaces did.

use std::path::PathBuf;

use crate::error::ErrorClass;
use crate::profile::Profiling;
use crate::submission::{LaneKind, Submission};

/// A refusal of the facade itself.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    // Recording and finalizing PM4.
    /// Finalizing a builder (or a lane of a multi-IB: `lane`) that
    /// recorded nothing.
    #[error("{}", no_dispatches(*.lane))]
    NoDispatches { lane: Option<usize> },
    /// `finalize_multi` of an empty list of builders.
    #[error("finalize_multi needs at least one builder")]
    NoBuilders,
    /// A builder finalized on another GPU than the one that made it.
    #[error("the builder belongs to another GPU")]
    ForeignBuilder,
    /// A module recorded into a builder of another GPU.
    #[error("the module was loaded on another GPU than this builder's")]
    ModuleOnOtherGpu,
    /// A HIP module's kernel recorded into a PM4 builder.
    #[error(
        "the module was loaded through HIP: its kernels run on HIP streams only, not in a PM4 IB"
    )]
    HipModuleInPm4,
    /// A dispatch index past the IB's (or lane `lane`'s) `count`.
    #[error("{}", no_such_dispatch(*.lane, *.dispatch, *.count))]
    NoSuchDispatch {
        lane: Option<usize>,
        dispatch: usize,
        count: usize,
    },
    /// A lane index past a multi-IB's `lanes`.
    #[error("lane {lane} does not exist; the multi-IB has {lanes} lanes")]
    NoSuchLane { lane: usize, lanes: usize },

    // Graph authoring and launching.
    /// `kernel_named` given a module kernel.
    #[error("kernel_named takes a named kernel; use kernel() for module kernels")]
    NotANamedKernel,
    /// A node that is not in the graph.
    #[error("node {node} is not in this graph")]
    NoSuchNode { node: u32 },
    /// A node whose module the graph does not hold.
    #[error("the node's module is not in this graph")]
    NodeModuleMissing { node: u32 },
    /// A whole-block kernarg replacement of the wrong size.
    #[error(
        "node {node}: {given} kernarg bytes given; its kernarg block is {size} bytes and is \
         replaced whole (patch part of it with the offset form)"
    )]
    KernargBlockSize {
        node: u32,
        given: usize,
        size: usize,
    },
    /// A node naming a kernel only (authoring), asked to run.
    #[error(
        "kernel {name:?} is named only (authoring); record the node with a module to launch it"
    )]
    NamedOnly { name: String },
    /// A copy/fill node asked for a kernel to run.
    #[error("a transfer node runs no kernel")]
    TransferRunsNoKernel,
    /// A node's module that the graph does not hold.
    #[error("module {module} of kernel {symbol} is not known")]
    UnknownModule { module: u64, symbol: String },
    /// Stream words given after the first launch installed the IBs.
    #[error(
        "the graph's IBs are already installed; order it by stream words before its first launch"
    )]
    AlreadyInstalled,
    /// Stream order asked of a graph with a public-AQL lane.
    #[error(
        "lane {lane} runs as public AQL ({reason}); stream-ordered replay gates PM4 IBs only, \
         so this graph cannot be ordered by stream words"
    )]
    StreamOrderOfAqlLane { lane: usize, reason: String },
    /// Not one stream gate per lane.
    #[error("{gates} stream gates for a graph of {lanes} lanes (one per lane)")]
    StreamGateCount { gates: usize, lanes: usize },
    /// A launch on another GPU than the one holding the graph's IBs.
    #[error(
        "this graph's IBs are installed on {installed_on}; launch it there or instantiate again \
         for {asked}"
    )]
    InstalledElsewhere { installed_on: String, asked: String },
    /// A GPU launch of a graph of HIP modules.
    #[error(
        "this graph's modules were loaded through HIP ({device}): replay it with \
         GraphExec::launch_hip"
    )]
    LaunchOfHipModules { device: String },
    /// A launch on another GPU than a module's.
    #[error("a module of this graph was loaded on {loaded_on}, not on {asked}")]
    ModuleOnOtherDevice { loaded_on: String, asked: String },

    // Submission paths (PM4, public AQL, HIP streams).
    /// `Submission::Hip` of modules loaded through ROCr.
    #[error(
        "Submission::Hip needs the graph's modules loaded through HIP \
         (HipDevice::load_module); these were loaded on a GPU through ROCr, which runs them \
         as PM4 or public AQL"
    )]
    HipSubmissionOfRocrModules,
    /// `Submission::Pm4`/`Aql` of modules loaded through HIP.
    #[error(
        "Submission::{submission:?} needs modules loaded on a GPU through ROCr \
         (Gpu::load_module); this graph's modules were loaded through HIP, so its lanes run \
         on HIP streams (Submission::Hip or Auto)"
    )]
    RocrSubmissionOfHipModules { submission: Submission },
    /// A graph of HIP and ROCr modules.
    #[error(
        "the graph mixes {hip} module(s) loaded through HIP with {rocr} loaded on a GPU \
         through ROCr; load every module the same way"
    )]
    MixedModules { hip: usize, rocr: usize },
    /// A copy/fill node in a lane that must run as public AQL.
    #[error(
        "lane {lane} must run as public AQL ({reason}), but its node {node} is a \
         copy/fill, which runs as CP DMA_DATA on the PM4 path only; keep transfers \
         apart from such kernels (or use Submission::Pm4 without them)"
    )]
    TransferInAqlLane {
        lane: usize,
        reason: String,
        node: u32,
    },
    /// A grid HIP cannot launch (not whole workgroups).
    #[error(
        "grid {grid:?} is not a whole number of {block:?} workgroups; HIP launches whole \
         workgroups only, so this node cannot run on HIP streams"
    )]
    PartialWorkgroups { grid: [u32; 3], block: [u32; 3] },
    /// `launch_hip` of a graph with a lane not on HIP streams.
    #[error(
        "lane {lane} of this graph runs as {kind}: launch_hip replays graphs of HIP modules \
         (HipDevice::load_module); launch this one with GraphExec::launch"
    )]
    NotHipLane { lane: usize, kind: LaneKind },
    /// `launch_hip` on another HIP device than a module's.
    #[error("a module of this graph was not loaded on {device}")]
    ModuleNotOnHipDevice { device: String },
    /// `launch_hip` on another HIP device than the graph's streams.
    #[error("this graph's streams are on {device}; launch it there or instantiate again")]
    StreamsElsewhere { device: String },

    // Modules and kernels.
    /// A symbol the module does not hold; `known` lists the ones it does.
    #[error("module has no kernel {symbol:?}; it has: {}", .known.join(", "))]
    UnknownKernel { symbol: String, known: Vec<String> },
    /// A HIP function asked of a module loaded through ROCr.
    #[error("kernel {symbol} belongs to a module loaded on a GPU through ROCr, not through HIP")]
    NotAHipModule { symbol: String },
    /// A PM4 or AQL dispatch of a kernel loaded through HIP.
    #[error(
        "kernel {kernel} was loaded through HIP ({device}): it runs on HIP streams only \
         (GraphExec::launch_hip), not as PM4 or AQL dispatches"
    )]
    HipOnlyKernel { kernel: String, device: String },
    /// A code object built for another processor than the device's.
    #[error(
        "code object is for {code}, this device is {device}; build it for {processor} \
         (or pass a bundle containing that target)"
    )]
    CodeObjectTarget {
        code: String,
        device: String,
        processor: String,
    },
    /// A kernel name C cannot pass (HIP looks functions up by C string).
    #[error("kernel name {name:?} holds a NUL")]
    NulInKernelName { name: String },
    /// Kernarg bytes that are neither the whole segment nor exactly the
    /// explicit arguments.
    #[error(
        "kernel {kernel}: {given} kernarg bytes given; pass the whole {full}-byte segment \
         (hidden arguments included, see pack_kernargs) or exactly the {explicit} bytes of \
         explicit arguments (relaunch then fills the hidden ones from the launch geometry)"
    )]
    KernargSize {
        kernel: String,
        given: usize,
        full: usize,
        explicit: usize,
    },

    // Memory.
    /// An allocation of no bytes.
    #[error("allocation of 0 bytes; ask for at least 1")]
    ZeroAllocation,
    /// A copy past the end of a HIP buffer.
    #[error("{bytes} bytes at offset {offset} do not fit a {len}-byte HIP buffer")]
    HipBufferRange {
        offset: usize,
        bytes: usize,
        len: usize,
    },

    // Devices.
    /// No ROCm here and no simulator built in to fall back to.
    #[error(
        "no ROCm runtime on this machine (no HSA library, or no /dev/kfd), and this \
         relaunch was built without its simulator (cargo feature `sim`), so there \
         is no {fallback} to fall back to",
        fallback = crate::FALLBACK_SELECTOR
    )]
    NoRuntimeNoSimulator,
    /// A `sim:` selector in a build without the simulator.
    #[error(
        "{selector}: this relaunch was built without its simulator (cargo feature `sim`, \
         on by default); enable the feature to use simulated devices"
    )]
    SimulatorNotBuilt { selector: String },
    /// ROCm is installed but the user may not open `/dev/kfd`.
    #[error(
        "ROCm is installed but {path} cannot be opened ({reason}): add the user to \
         the render group (sudo usermod -aG render,video $USER, then log in again), \
         or pass --device sim:<target> to use the simulator"
    )]
    KfdDenied { path: PathBuf, reason: String },
    /// A negative device ordinal.
    #[error("device ordinal {ordinal} is negative; use 0 for the first GPU or a selector")]
    NegativeOrdinal { ordinal: i32 },
    /// A HIP device ordinal past the devices HIP sees.
    #[error("HIP device {ordinal} does not exist: HIP ({library}) sees {count} device(s)")]
    NoHipDevice {
        ordinal: i32,
        library: String,
        count: i32,
    },
    /// The simulator did not list the agent just added.
    #[error("sim:{name}: the simulator lists no such agent")]
    SimAgentMissing { name: String },
    /// A resolved device without its runtime agent (a bug).
    #[error("resolved device {device} has no runtime agent")]
    NoRuntimeAgent { device: String },
    /// A scheduler made without a queue.
    #[error("scheduler has no queue")]
    NoQueue,
    /// A runtime without a GPU timestamp frequency (no profiled replay).
    #[error(
        "the runtime reports a timestamp frequency of 0, so GPU timestamps cannot be \
         converted to time; profiled replay needs HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY"
    )]
    NoTimestampFrequency,
    /// The runtime's pool returned a hostcall buffer off 64 bytes.
    #[error(
        "the hostcall buffer at {address:#x} is not 64-byte aligned; the runtime's pool \
         allocator should never return that"
    )]
    HostcallBufferMisaligned { address: usize },
    /// The hostcall listener thread could not start.
    #[error("starting the hostcall listener thread: {0}")]
    HostcallThread(#[source] std::io::Error),

    // Replays.
    /// A replay or patch (`call`) from inside a kernel twin, which runs on
    /// the queue thread the call would wait for.
    #[error(
        "{call} called from inside a kernel twin: the twin runs on the queue thread the \
         call would wait for (it would deadlock); replay or patch after the replay \
         running the twin has finished"
    )]
    InsideTwin { call: String },
    /// A profiled replay (`call`) of an IB finalized without profiling.
    #[error(
        "{call}: this IB was finalized without profiling, so it writes no timestamps; \
         finalize it with finalize_profiled (C: rl_pm4_finalize_profiled); nothing was \
         replayed"
    )]
    NotProfiled { call: String },
    /// Per-dispatch times that were not measured: `profiling` is how the
    /// IB was finalized.
    #[error("no per-dispatch times: {}", no_dispatch_times(*.profiling))]
    NoDispatchTimes { profiling: Option<Profiling> },
    /// A profiled replay whose timestamps (of lane `lane`) run backwards.
    #[error(
        "{}the GPU timestamps are out of order (start {start}, end {end} ticks); \
         the IB's timestamp memory was written by something else during the replay",
        lane_prefix(*.lane)
    )]
    TimestampsOutOfOrder {
        lane: Option<usize>,
        start: u64,
        end: u64,
    },
    /// A profiled replay that completed without writing timestamp `mark`.
    #[error(
        "{}the replay completed but the GPU did not write its {mark} timestamp; \
         no time is reported rather than a wrong one",
        lane_prefix(*.lane)
    )]
    TimestampUnwritten {
        lane: Option<usize>,
        mark: TimestampMark,
    },
    /// Hostcall requests of a replay that could not be served, each a
    /// sentence.
    #[error("the kernels' hostcall requests could not all be served: {}", .problems.join("; "))]
    HostcallUnserved { problems: Vec<String> },

    // Catalogs.
    /// A bundle tree without the device's processor directory. `tree`:
    /// the directories it has (or why it could not be listed);
    /// `unused_generic`: a generic-target directory present but not used.
    #[error("{}", no_arch_directory(.root, .processor, .tree, .unused_generic.as_deref()))]
    NoArchDirectory {
        root: PathBuf,
        processor: String,
        tree: Result<Vec<String>, String>,
        unused_generic: Option<String>,
    },
    /// An architecture directory for another processor than the device's.
    #[error(
        "catalog {}: directory {} is for {arch}, this device is {processor}",
        .root.display(),
        .dir.display()
    )]
    ArchDirectoryMismatch {
        root: PathBuf,
        dir: PathBuf,
        arch: String,
        processor: String,
    },

    // Certification.
    /// A certification manifest field that is malformed or disagrees with
    /// the code object (`field` is a JSON path such as
    /// `inspection.kernels[0].name`, or `(document)`).
    #[error("certification manifest refused: `{field}` {why}")]
    ManifestField { field: String, why: String },
}

/// A timestamp of a profiled IB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimestampMark {
    IbStart,
    IbEnd,
    DispatchStart(usize),
    DispatchEnd(usize),
}

impl std::fmt::Display for TimestampMark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TimestampMark::IbStart => f.write_str("IB start"),
            TimestampMark::IbEnd => f.write_str("IB end"),
            TimestampMark::DispatchStart(d) => write!(f, "start of dispatch {d}"),
            TimestampMark::DispatchEnd(d) => write!(f, "end of dispatch {d}"),
        }
    }
}

impl Refusal {
    /// The class the front ends report (C `RL_ERR_*`, Python exception).
    pub fn class(&self) -> ErrorClass {
        use Refusal as R;
        match self {
            R::NoDispatches { .. }
            | R::NoBuilders
            | R::NamedOnly { .. }
            | R::TransferRunsNoKernel
            | R::UnknownModule { .. }
            | R::StreamOrderOfAqlLane { .. }
            | R::HipSubmissionOfRocrModules
            | R::RocrSubmissionOfHipModules { .. }
            | R::MixedModules { .. }
            | R::TransferInAqlLane { .. }
            | R::PartialWorkgroups { .. }
            | R::HipOnlyKernel { .. } => ErrorClass::Compile,
            R::ForeignBuilder
            | R::ModuleOnOtherGpu
            | R::HipModuleInPm4
            | R::NoSuchDispatch { .. }
            | R::NoSuchLane { .. }
            | R::NoSuchNode { .. }
            | R::NodeModuleMissing { .. }
            | R::AlreadyInstalled
            | R::StreamGateCount { .. }
            | R::InstalledElsewhere { .. }
            | R::LaunchOfHipModules { .. }
            | R::ModuleOnOtherDevice { .. }
            | R::NotHipLane { .. }
            | R::ModuleNotOnHipDevice { .. }
            | R::StreamsElsewhere { .. }
            | R::NotAHipModule { .. } => ErrorClass::Handle,
            R::NotANamedKernel
            | R::KernargBlockSize { .. }
            | R::UnknownKernel { .. }
            | R::CodeObjectTarget { .. }
            | R::NulInKernelName { .. }
            | R::KernargSize { .. }
            | R::ZeroAllocation
            | R::HipBufferRange { .. }
            | R::NoArchDirectory { .. }
            | R::ArchDirectoryMismatch { .. } => ErrorClass::Record,
            R::NoRuntimeNoSimulator
            | R::SimulatorNotBuilt { .. }
            | R::KfdDenied { .. }
            | R::NegativeOrdinal { .. }
            | R::NoHipDevice { .. }
            | R::SimAgentMissing { .. }
            | R::NoQueue
            | R::NoTimestampFrequency
            | R::HostcallBufferMisaligned { .. }
            | R::HostcallThread(_) => ErrorClass::Device,
            R::InsideTwin { .. }
            | R::NotProfiled { .. }
            | R::NoDispatchTimes { .. }
            | R::TimestampsOutOfOrder { .. }
            | R::TimestampUnwritten { .. }
            | R::HostcallUnserved { .. } => ErrorClass::Replay,
            R::NoRuntimeAgent { .. } => ErrorClass::Internal,
            R::ManifestField { .. } => ErrorClass::Certification,
        }
    }
}

fn no_dispatches(lane: Option<usize>) -> String {
    match lane {
        None => "the builder has no dispatches".to_string(),
        Some(lane) => format!("lane {lane} has no dispatches"),
    }
}

fn no_such_dispatch(lane: Option<usize>, dispatch: usize, count: usize) -> String {
    match lane {
        None => format!("dispatch {dispatch} does not exist; the IB has {count} dispatches"),
        Some(lane) => {
            format!("dispatch {dispatch} does not exist; lane {lane} has {count} dispatches")
        }
    }
}

fn lane_prefix(lane: Option<usize>) -> String {
    lane.map_or_else(String::new, |l| format!("lane {l}: "))
}

fn no_dispatch_times(profiling: Option<Profiling>) -> &'static str {
    match profiling {
        None | Some(Profiling::Span) => {
            "this IB was not finalized with per-dispatch profiling (Profiling::Dispatches; C: \
             rl_pm4_finalize_profiled_dispatches)"
        }
        Some(Profiling::Dispatches) => {
            "no profiled replay has completed yet; call replay_profiled (C: \
             rl_pm4_replay_profiled) first"
        }
    }
}

fn no_arch_directory(
    root: &std::path::Path,
    processor: &str,
    tree: &Result<Vec<String>, String>,
    unused_generic: Option<&str>,
) -> String {
    let have = match tree {
        Ok(arches) => relaunch_device::bundle::tree::name_list(arches.iter().map(String::as_str)),
        Err(e) => format!("unreadable: {e}"),
    };
    let mut msg = format!(
        "catalog {}: no {processor} directory (this device is {processor}; relaunch loads only \
         the exact processor's code, no sibling fallback); the tree has: [{have}]",
        root.display()
    );
    if let Some(generic) = unused_generic {
        msg.push_str(&format!(
            "; {generic} is present but not used: the catalog does not search \
             generic-target directories yet (a generic code object loads with \
             Gpu::load_module)"
        ));
    }
    msg.push_str(&format!(
        "; pack one with: relaunch bundle pack --arch {processor} ..."
    ));
    msg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    /// Each variant keeps the class its string refusal had, so the C
    /// `RL_ERR_*` code and the Python exception did not change.
    #[test]
    fn the_class_follows_the_variant_through_context() {
        let cases = [
            (Refusal::NoDispatches { lane: None }, ErrorClass::Compile),
            (Refusal::ForeignBuilder, ErrorClass::Handle),
            (Refusal::ZeroAllocation, ErrorClass::Record),
            (Refusal::NegativeOrdinal { ordinal: -1 }, ErrorClass::Device),
            (
                Refusal::InsideTwin {
                    call: "Pm4Ib replay".into(),
                },
                ErrorClass::Replay,
            ),
            (
                Refusal::ManifestField {
                    field: "arch".into(),
                    why: "is missing".into(),
                },
                ErrorClass::Certification,
            ),
            (
                Refusal::NoRuntimeAgent {
                    device: "gfx1201".into(),
                },
                ErrorClass::Internal,
            ),
        ];
        for (refusal, class) in cases {
            let err = Error::from(refusal).context("outer");
            assert_eq!(err.class(), class, "{err}");
            assert!(err.refusal().is_some(), "{err:?}");
        }
    }

    #[test]
    fn messages_read_as_the_strings_they_replace() {
        let lane = Refusal::NoSuchDispatch {
            lane: Some(2),
            dispatch: 5,
            count: 3,
        };
        assert_eq!(
            lane.to_string(),
            "dispatch 5 does not exist; lane 2 has 3 dispatches"
        );
        let mark = Refusal::TimestampUnwritten {
            lane: Some(1),
            mark: TimestampMark::DispatchEnd(4),
        };
        assert!(
            mark.to_string()
                .starts_with("lane 1: the replay completed but the GPU did not write its end of dispatch 4 timestamp"),
            "{mark}"
        );
        let field = Refusal::ManifestField {
            field: "arch".into(),
            why: "is not a string".into(),
        };
        assert_eq!(
            field.to_string(),
            "certification manifest refused: `arch` is not a string"
        );
    }

    /// Without the simulator a `sim:` selector is refused naming the
    /// feature (this runs in a `--no-default-features` build).
    #[cfg(not(feature = "sim"))]
    #[test]
    fn a_sim_selector_without_the_simulator_names_the_feature() {
        let err = crate::Gpu::open("sim:gfx1201").unwrap_err();
        assert_eq!(err.class(), ErrorClass::Device);
        match err.refusal() {
            Some(Refusal::SimulatorNotBuilt { selector }) => assert_eq!(selector, "sim:gfx1201"),
            other => panic!("not SimulatorNotBuilt: {other:?} ({err})"),
        }
        assert!(err.message().contains("cargo feature `sim`"), "{err}");
    }
}
