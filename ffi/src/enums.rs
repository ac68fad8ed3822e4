//! The seed header's enums as C parameter types. Each enum crosses the
//! boundary as its 32-bit value wrapped in a transparent `*Arg` type,
//! which cbindgen prints under the enum's own name (see `cbindgen.toml`
//! `[export.rename]`): C and C++ callers see `RlMode mode` exactly as the
//! seed header declares it, while a value outside the enum (any `int` a
//! C caller passes) reaches Rust intact and is refused by value instead
//! of being undefined behaviour in a Rust enum.

/// Graph tuning modes for `rl_graph_new_tuned`, as the seed names them
/// (`RlModeLatency`.. are the same values under relaunch's names).
#[repr(u32)]
pub enum RlMode {
    /// One serial lane per replay, finished as soon as possible.
    Latency = 0,
    /// Independent lanes overlap (up to `lanes` queues).
    Overlap = 1,
    /// The whole graph overlaps, bounded by `max_in_flight` replays.
    Throughput = 2,
}

/// An `RlMode` value as passed from C (printed as `RlMode`).
#[repr(transparent)]
#[derive(Clone, Copy, Debug)]
pub struct RlModeArg(pub u32);

/// An `RlQueuePolicy` value as passed from C (printed as `RlQueuePolicy`).
#[repr(transparent)]
#[derive(Clone, Copy, Debug)]
pub struct RlQueuePolicyArg(pub u32);
