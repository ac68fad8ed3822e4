//! Why a module, node, graph or exec falls through to the real HIP: one
//! variant per kind of reason, holding what it names (node index, kernel
//! symbol, address, the facade's error, ...). `Display` is the text the
//! interposer logs. Reasons are kept (a module's, a graph's, an exec's)
//! and cloned into the graphs built from them, so the facade's error is
//! shared behind an `Arc`.
//!
//! A reason holds the data its text names: this module imports nothing of
//! the crate (the model's other modules, the state and the exports build
//! reasons; none is read back from here).

use std::path::PathBuf;
use std::sync::Arc;

use relaunch::extent::ExtentError;

/// The kind of a HIP graph node a reason names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    Kernel,
    Memset,
    Memcpy,
    EventRecord,
    EventWait,
}

impl std::fmt::Display for NodeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NodeKind::Kernel => "kernel",
            NodeKind::Memset => "memset",
            NodeKind::Memcpy => "memcpy",
            NodeKind::EventRecord => "event record",
            NodeKind::EventWait => "event wait",
        })
    }
}

/// Which side of a copy or fill a reason names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Source,
    Destination,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::Source => "source",
            Side::Destination => "destination",
        })
    }
}

/// A `hipMemcpyKind` as a reason names it (`kind-N` when unknown); the
/// HIP value is resolved where the copy is read (`transfers.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyKind {
    HostToHost,
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    Default,
    Unknown(i32),
}

impl std::fmt::Display for CopyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CopyKind::HostToHost => f.write_str("host-to-host"),
            CopyKind::HostToDevice => f.write_str("host-to-device"),
            CopyKind::DeviceToHost => f.write_str("device-to-host"),
            CopyKind::DeviceToDevice => f.write_str("device-to-device"),
            CopyKind::Default => f.write_str("default-kind"),
            CopyKind::Unknown(other) => write!(f, "kind-{other}"),
        }
    }
}

/// Why the image behind `hipModuleLoadData`'s pointer was not copied
/// (`image.rs`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    #[error("hipModuleLoadData was given a null image")]
    Null,
    #[error(transparent)]
    Extent(#[from] ExtentError),
}

/// Why something falls through to the real HIP.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Reason {
    /// A relaunch call failed (with the facade's own context, if any).
    #[error(transparent)]
    Relaunch(Arc<relaunch::Error>),
    #[error("opening the relaunch device: {0}")]
    OpenDevice(Arc<relaunch::Error>),
    #[error(
        "opening the relaunch device: RELAUNCH_DEVICE={selector} is the GPU at {}, but the \
         application's current HIP device is at {hip}",
        at.map_or_else(|| "no PCI address".to_string(), |b| b.to_string())
    )]
    DeviceMismatch {
        selector: String,
        at: Option<relaunch::Bdf>,
        hip: relaunch::Bdf,
    },
    #[error("the GPU is lost: {0}")]
    DeviceLost(Arc<relaunch::Error>),
    #[error("a replay failed: {0}")]
    ReplayFailed(Arc<relaunch::Error>),
    /// A panic inside the shadow was caught while doing this.
    #[error("{0} panicked")]
    Panicked(&'static str),

    // ---- modules and code objects ----
    #[error(transparent)]
    Image(#[from] ImageError),
    #[error(transparent)]
    Extent(#[from] ExtentError),
    #[error("{}: {source}", path.display())]
    ReadFile {
        path: PathBuf,
        source: Arc<std::io::Error>,
    },
    #[error("{}: more than {max} bytes is too large a code object", path.display())]
    FileTooLarge { path: PathBuf, max: u64 },
    #[error("__hipRegisterFatBinary was given a null wrapper")]
    NullWrapper,
    #[error("fat binary wrapper magic {magic:#x} is not HIPF ({expected:#x})")]
    WrapperMagic { magic: u32, expected: u32 },
    #[error(
        "the application took device variable {name:?} of the module (hipModuleGetGlobal), \
         which relaunch's copy would not see"
    )]
    ModuleGlobal { name: String },
    #[error(
        "the fat binary registers {what} {name:?}, which the application reaches in HIP's copy \
         of the code, not relaunch's"
    )]
    FatBinaryGlobal { what: &'static str, name: String },

    // ---- kernel launches ----
    #[error("null hipKernelNodeParams")]
    NullParams,
    #[error(
        "function {func:#x} came neither from hipModuleGetFunction nor from __hipRegisterFunction"
    )]
    UnknownFunction { func: usize },
    #[error("module has no kernel {symbol:?} in its metadata")]
    NoKernel { symbol: String },
    #[error("both kernelParams and extra are set; HIP takes one")]
    BothArgForms,
    #[error("kernelParams is null but the kernel takes arguments")]
    NullKernelParams,
    #[error("kernelParams[{index}] is null")]
    NullKernelParam { index: usize },
    #[error(transparent)]
    Extra(#[from] ExtraError),
    #[error(
        "the `extra` argument buffer holds {held} bytes; kernel {kernel}'s explicit arguments \
         take {need}"
    )]
    ShortExtraBuffer {
        held: usize,
        kernel: String,
        need: usize,
    },
    #[error("kernel {kernel}: gridDim {grid:?} * blockDim {block:?} overflows 32 bits")]
    GridOverflow {
        kernel: String,
        grid: [u32; 3],
        block: [u32; 3],
    },
    #[error("a captured launch asks for {bytes} bytes of dynamic LDS")]
    LaunchLds { bytes: usize },

    // ---- memsets and memcpys ----
    #[error(
        "a {kind} copy's {side} {addr:#x} (+{len}) is pageable host memory (not from \
         hipHostMalloc): CP DMA inside the IB cannot reach it"
    )]
    PageableHost {
        kind: CopyKind,
        side: Side,
        addr: u64,
        len: u64,
    },
    #[error(
        "a {kind} copy's {side} {addr:#x} (+{len}) is not memory this library saw allocated \
         (hipMalloc, hipMallocAsync, hipHostMalloc, hipHostRegister; pageable, or another \
         allocator): CP DMA inside the IB may not reach it"
    )]
    UnknownMemory {
        kind: CopyKind,
        side: Side,
        addr: u64,
        len: u64,
    },
    #[error(
        "a {kind} copy's {side} {addr:#x} (+{len}) is managed memory (hipMallocManaged), which \
         may migrate between host and device: CP DMA inside the IB does not follow migrations"
    )]
    ManagedMemory {
        kind: CopyKind,
        side: Side,
        addr: u64,
        len: u64,
    },
    #[error(
        "a {kind} copy's {side} {addr:#x} is hipHostRegister'ed memory the device reaches at \
         {device:#x} (hipHostGetDevicePointer), not at the host address the copy names"
    )]
    RegisteredElsewhere {
        kind: CopyKind,
        side: Side,
        addr: u64,
        device: u64,
    },
    #[error("a memset of {size}-byte elements (HIP takes 1, 2 or 4)")]
    MemsetElement { size: u32 },
    #[error("{what} overflows 64 bits")]
    Overflow { what: &'static str },
    #[error("a memset of nothing (zero width or height) is not replayed")]
    EmptyMemset,
    #[error("a memcpy of nothing (0 bytes or an empty extent) is not replayed")]
    EmptyCopy,
    #[error("a memset's pitch {pitch} is shorter than its row of {row} bytes")]
    ShortMemsetPitch { pitch: u64, row: u64 },
    #[error(
        "a memset of {row}-byte rows at {dst:#x} (pitch {pitch}) is not in whole, aligned \
         dwords; DMA_DATA fills whole dwords"
    )]
    UnalignedFill { row: u64, dst: u64, pitch: u64 },
    #[error(
        "a memset of {bytes} bytes at {dst:#x} holds no whole aligned dword: DMA_DATA fills whole \
         dwords, and the unaligned head and tail are copied from the filled ones"
    )]
    NoWholeDword { dst: u64, bytes: u64 },
    #[error(
        "a memset of {size}-byte elements at {dst:#x} (pitch {pitch}) is not aligned to its \
         elements"
    )]
    MisalignedElement { size: u32, dst: u64, pitch: u64 },
    #[error("a memcpy of unknown kind {kind}")]
    UnknownCopyKind { kind: i32 },
    #[error("a memcpy node to or from a hipArray is not replayed")]
    ArrayCopy,
    #[error("a memcpy's {side} pitch {pitch} / rows {rows} do not hold the copied extent")]
    CopyPitch { side: Side, pitch: u64, rows: u64 },
    #[error("a {kind} of {rows} rows takes more than {max} DMA_DATA packets")]
    TooManyPackets {
        kind: NodeKind,
        rows: u64,
        max: usize,
    },

    // ---- graphs ----
    #[error(
        "an edge names a node ({from:#x} -> {to:#x}) not added through a call this library follows"
    )]
    ForeignEdge { from: usize, to: usize },
    #[error("the graph's dependencies form a cycle")]
    Cycle,
    #[error("the graph has no kernel, memset or memcpy nodes")]
    NoWork,
    #[error("a host node (a host callback inside the graph) is not replayed")]
    HostNode,
    #[error("a child graph this library did not see being built")]
    UnseenChild,
    #[error("the graph was not built through calls the interposer follows")]
    UnseenGraph,
    #[error("a child graph is not replayable: {0}")]
    Child(Box<Reason>),
    #[error(
        "an event wait node waits for event {event:#x}, which no node of the graph records \
         (recorded outside the graph or by an earlier launch): not replayed"
    )]
    WaitUnrecorded { event: usize },
    #[error(
        "event {event:#x} is recorded by {records} nodes of the graph; which one a wait sees is \
         not modelled"
    )]
    RecordedTwice { event: usize, records: usize },
    #[error(
        "an event wait node on {event:#x} comes before the node recording it (it waits for an \
         earlier record): not replayed"
    )]
    WaitBeforeRecord { event: usize },
    #[error(
        "the real graph has {nodes} nodes and {edges} edges, the shadow {shadow_nodes} and \
         {shadow_edges}: something was added through a call this library does not intercept"
    )]
    CountMismatch {
        nodes: usize,
        edges: usize,
        shadow_nodes: usize,
        shadow_edges: usize,
    },
    #[error("{function} is not loaded")]
    RealMissing { function: &'static str },
    #[error("{function} failed with {status}")]
    RealFailed { function: &'static str, status: i32 },
    #[error("an internal invariant broke: {0}")]
    Internal(&'static str),

    // ---- stream capture ----
    #[error(
        "captured into an existing graph (hipStreamBeginCaptureToGraph), which is not followed"
    )]
    CaptureToGraph,
    #[error("the real HIP reports capture status {status} while the shadow is capturing")]
    CaptureStatus { status: i32 },
    #[error(
        "a kernel was launched on stream {stream:#x}, which the real HIP reports as capturing but \
         which did not begin a capture here (joined through events): cross-stream capture is not \
         followed"
    )]
    CrossStream { stream: usize },

    // ---- changes behind the builders' backs ----
    #[error("a node was changed with {call}, which the interposer does not follow")]
    NodeChanged { call: &'static str },
    #[error("a {kind} node was changed ({call}), which is not followed")]
    KindChanged { kind: NodeKind, call: &'static str },
    #[error("a {kind} node of the exec was changed ({call}), which is not followed")]
    ExecNodeChanged { kind: NodeKind, call: &'static str },
    #[error("a kernel node attribute ({attr}) was set; attributes are not replayed")]
    Attribute { attr: i32 },
    #[error("a node was {} in the exec", if *enabled { "re-enabled" } else { "disabled" })]
    NodeEnabled { enabled: bool },
    #[error(
        "{reason} (node {node:#x}, a node of no graph built through the interposer: possibly of \
         this captured graph)"
    )]
    PossiblyCaptured { reason: Box<Reason>, node: usize },

    // ---- execs: patches and updates ----
    #[error("node {node:#x} is not a node of this exec")]
    NotExecNode { node: usize },
    #[error(
        "a patch changed the node's kernel (to {symbol}); only kernarg and geometry changes are \
         replayed"
    )]
    PatchChangesKernel { symbol: String },
    #[error("rebuilding the exec for a new geometry: {0}")]
    Rebuild(Box<Reason>),
    #[error("{context}: {reason}")]
    Context {
        context: &'static str,
        reason: Box<Reason>,
    },
    #[error("hipGraphExecUpdate from a graph the interposer did not see")]
    UpdateFromUnseen,
    #[error("the update's graph is not replayable: {0}")]
    UpdateGraph(Box<Reason>),
    #[error(
        "the update's graph has another topology ({nodes} nodes, {edges} edges; the exec has \
         {exec_nodes} and {exec_edges})"
    )]
    UpdateTopology {
        nodes: usize,
        edges: usize,
        exec_nodes: usize,
        exec_edges: usize,
    },
    #[error(
        "the update changes memset/memcpy node {node}; copies and fills are fixed in the \
         retained IB"
    )]
    UpdateChangesTransfer { node: usize },
    #[error("the update turns kernel node {node} into a memset/memcpy node")]
    UpdateKernelToTransfer { node: usize },
    #[error(
        "the update changes node {node}'s kernel; only kernarg and geometry changes are replayed"
    )]
    UpdateChangesKernel { node: usize },
    #[error("node {node} of the exec is unknown")]
    UnknownExecNode { node: usize },
    #[error("node {node} of the update: {reason}")]
    UpdateNode { node: usize, reason: Box<Reason> },

    // ---- stream-ordered launches ----
    #[error("the real HIP has no {function}, which stream-ordered replays need")]
    NoStreamOp { function: &'static str },
    #[error("hipHostMalloc of {bytes} bytes for the stream words failed ({status})")]
    StreamWords { bytes: usize, status: i32 },
}

/// Why an `extra` argument list (`HIP_LAUNCH_PARAM_*`) was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtraError {
    #[error("the `extra` list lacks HIP_LAUNCH_PARAM_BUFFER_POINTER or _BUFFER_SIZE")]
    Incomplete,
    #[error("the `extra` argument buffer claims {size} bytes")]
    Oversized { size: usize },
    #[error("the `extra` argument buffer is null")]
    NullBuffer,
    #[error("the `extra` list's buffer size pointer is null")]
    NullSizePointer,
    #[error("the `extra` list holds an unknown key {key:#x}")]
    UnknownKey { key: usize },
    #[error("the `extra` list has no HIP_LAUNCH_PARAM_END within {keys} keys")]
    NoEnd { keys: usize },
}

impl From<relaunch::Error> for Reason {
    /// A lost GPU is said so (the exec's graphs are HIP's from then on);
    /// any other failure is relaunch's error as it is.
    fn from(e: relaunch::Error) -> Self {
        match e.class() {
            relaunch::ErrorClass::DeviceLost => Reason::DeviceLost(Arc::new(e)),
            _ => Reason::Relaunch(Arc::new(e)),
        }
    }
}

impl From<relaunch::CodeObjectError> for Reason {
    fn from(e: relaunch::CodeObjectError) -> Self {
        relaunch::Error::from(e).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_names_the_data_it_holds() {
        let magic = Reason::WrapperMagic {
            magic: 0x1234,
            expected: 0x4849_5046,
        };
        assert_eq!(
            magic.to_string(),
            "fat binary wrapper magic 0x1234 is not HIPF (0x48495046)"
        );
        let copy = Reason::PageableHost {
            kind: CopyKind::HostToDevice,
            side: Side::Source,
            addr: 0x1000,
            len: 16,
        };
        assert!(copy
            .to_string()
            .starts_with("a host-to-device copy's source 0x1000 (+16)"));
        assert_eq!(CopyKind::Unknown(9).to_string(), "kind-9");
        assert_eq!(
            Reason::from(ImageError::Null).to_string(),
            "hipModuleLoadData was given a null image"
        );
    }
}
