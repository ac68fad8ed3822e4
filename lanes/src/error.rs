//! Errors: `RecordError` while authoring, `CompileError` at instantiate,
//! `LowerError` while lowering a lane into a sink.

use std::fmt;

use thiserror::Error;

/// A graph-authoring call was refused; the graph is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RecordError {
    #[error("unknown buffer handle {buffer}: the graph has {count} buffer(s); use a handle returned by buffer()")]
    UnknownBuffer { buffer: u32, count: usize },
    #[error("unknown node handle {node}: the graph has {count} node(s); use a handle returned by kernel()")]
    UnknownNode { node: u32, count: usize },
    #[error("transfer node refused: {why}")]
    BadTransfer { why: String },
    #[error("buffer {label:?} has size 0: declare at least one byte")]
    ZeroSizeBuffer { label: String },
    #[error("{what} is empty: give it a name")]
    EmptyName { what: &'static str },
    #[error("{what} is {len} bytes long, more than the limit of {limit}")]
    NameTooLong {
        what: &'static str,
        len: usize,
        limit: usize,
    },
    #[error("kernel {kernel:?}: zero in grid {grid:?} or block {block:?}; every dimension must be at least 1 work-item")]
    ZeroGeometry {
        kernel: String,
        grid: [u32; 3],
        block: [u32; 3],
    },
    #[error(
        "kernel {kernel:?}: grid {grid:?} has more work-items than the {} one dispatch may have",
        relaunch_encoders::dispatch::MAX_GRID_WORK_ITEMS
    )]
    GridTooLarge { kernel: String, grid: [u32; 3] },
    #[error("kernel {kernel:?}: block {block:?} has {items} work-items, more than the 1024 a workgroup can hold")]
    BlockTooLarge {
        kernel: String,
        block: [u32; 3],
        items: u64,
    },
    #[error("kernel {kernel:?}: {bytes} bytes of dynamic group memory exceed the 65536 a workgroup can have")]
    GroupMemoryTooLarge { kernel: String, bytes: u32 },
    #[error("kernel {kernel:?}: kernarg block of {len} bytes exceeds the 65536-byte limit")]
    KernargTooLarge { kernel: String, len: usize },
    #[error("kernel {kernel:?}: access to buffer {buffer:?} at offset {offset} has length 0; declare the bytes it touches")]
    ZeroLengthAccess {
        kernel: String,
        buffer: String,
        offset: u64,
    },
    #[error("kernel {kernel:?}: access to buffer {buffer:?} at offset {offset} with length {len} overflows a 64-bit address")]
    AccessOverflow {
        kernel: String,
        buffer: String,
        offset: u64,
        len: u64,
    },
    #[error("kernel {kernel:?}: access [{offset}, {offset}+{len}) is outside buffer {buffer:?} of {size} bytes")]
    AccessOutOfBounds {
        kernel: String,
        buffer: String,
        offset: u64,
        len: u64,
        size: u64,
    },
    #[error("dependency {from_name:?} (node {from}) -> {to_name:?} (node {to}) would close a cycle; it was not added")]
    Cycle {
        from: u32,
        from_name: String,
        to: u32,
        to_name: String,
    },
    #[error("too many {what}: the limit is {limit}")]
    TooMany { what: &'static str, limit: usize },
}

/// Kind of an unordered conflicting pair, named from the first node's view
/// (the one added first) to the second's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HazardKind {
    /// The first node writes bytes the second reads.
    Raw,
    /// The first node reads bytes the second writes.
    War,
    /// Both write the same bytes.
    Waw,
}

impl HazardKind {
    pub fn name(self) -> &'static str {
        match self {
            HazardKind::Raw => "RAW",
            HazardKind::War => "WAR",
            HazardKind::Waw => "WAW",
        }
    }
}

impl fmt::Display for HazardKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Two nodes with conflicting accesses and no dependency path between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hazard {
    pub kind: HazardKind,
    pub buffer: u32,
    pub buffer_label: String,
    /// Overlapping byte range `[start, end)`.
    pub range: (u64, u64),
    pub first: u32,
    pub first_name: String,
    pub second: u32,
    pub second_name: String,
}

impl fmt::Display for Hazard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what_first, what_second) = match self.kind {
            HazardKind::Raw => ("writes", "reads"),
            HazardKind::War => ("reads", "writes"),
            HazardKind::Waw => ("writes", "writes"),
        };
        write!(
            f,
            "{} on buffer {:?} [{}, {}): {:?} (node {}) {} and {:?} (node {}) {}",
            self.kind,
            self.buffer_label,
            self.range.0,
            self.range.1,
            self.first_name,
            self.first,
            what_first,
            self.second_name,
            self.second,
            what_second
        )
    }
}

/// Most hazards listed in one error; a graph with more says so.
pub const MAX_REPORTED_HAZARDS: usize = 256;

/// `instantiate` refused the graph.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CompileError {
    #[error("the graph has no nodes: add at least one kernel before instantiating")]
    Empty,
    #[error("invalid graph options: {0}")]
    Options(String),
    #[error("{}", hazards_message(.hazards, *.truncated))]
    Hazards {
        hazards: Vec<Hazard>,
        /// The listing stopped early (at `MAX_REPORTED_HAZARDS` entries or
        /// its work budget); more hazards may exist.
        truncated: bool,
    },
}

fn hazards_message(hazards: &[Hazard], truncated: bool) -> String {
    let mut out = format!(
        "{}{} unordered hazard(s): ",
        if truncated { "at least " } else { "" },
        hazards.len()
    );
    for (i, hazard) in hazards.iter().enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        out.push_str(&hazard.to_string());
    }
    if truncated {
        out.push_str("; (listing stopped early, more may exist)");
    }
    out.push_str(". Add a dependency between each pair or make their accesses disjoint.");
    out
}

/// Lowering a lane failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LowerError<E: fmt::Display> {
    #[error("no lane {lane}: the plan has {count} lane(s)")]
    NoSuchLane { lane: usize, count: usize },
    #[error("lane sink failed: {0}")]
    Sink(E),
}

/// A kernarg patch on the plan was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PatchError {
    #[error("unknown node handle {node}: the plan has {count} node(s)")]
    UnknownNode { node: u32, count: usize },
    #[error("patch of {len} bytes at offset {offset} does not fit node {node}'s kernarg block of {size} bytes")]
    OutOfBounds {
        node: u32,
        offset: usize,
        len: usize,
        size: usize,
    },
}
