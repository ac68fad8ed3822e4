//! The process-wide replay switch (`rl_hipgraph_set_replay`) and launch
//! totals, and the execs the interposer never shadowed, as the inspection
//! API reports them (`exports/inspect.rs`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::model::launches::Launched;
use crate::model::reason::Reason;

static REPLAY: AtomicBool = AtomicBool::new(true);
static REPLAYED: AtomicU64 = AtomicU64::new(0);
static ON_HIP: AtomicU64 = AtomicU64::new(0);
static FAILED: AtomicU64 = AtomicU64::new(0);

/// Whether replay is on (`rl_hipgraph_set_replay`; on by default).
pub fn replay_enabled() -> bool {
    REPLAY.load(Ordering::Relaxed)
}

/// Turns replay on or off; returns whether it was on.
pub fn set_replay(enabled: bool) -> bool {
    REPLAY.swap(enabled, Ordering::Relaxed)
}

/// Count a launch in the process totals.
pub fn count(l: Launched) {
    let c = match l {
        Launched::Replayed(_) => &REPLAYED,
        Launched::Failed(_) => &FAILED,
        Launched::OnHip => &ON_HIP,
    };
    c.fetch_add(1, Ordering::Relaxed);
}

/// The process totals: launches replayed, on the real HIP, failed.
pub fn totals() -> [u64; 3] {
    let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
    [g(&REPLAYED), g(&ON_HIP), g(&FAILED)]
}

/// An exec the interposer never shadowed: why, and its launches (all on
/// the real HIP).
#[derive(Debug, Clone)]
pub struct OnHip {
    pub reason: Reason,
    pub launches: u64,
}
