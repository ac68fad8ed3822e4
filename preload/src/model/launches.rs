//! Where a `hipGraphLaunch` went, and one exec's launches each way (what
//! the inspection API reports, `exports/inspect.rs`).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::hip::HipError;

/// Where one `hipGraphLaunch` went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launched {
    /// relaunch replayed it (the status returned).
    Replayed(HipError),
    /// A replay was attempted and failed (the status returned).
    Failed(HipError),
    /// The real `hipGraphLaunch` ran it.
    OnHip,
}

/// One shadowed exec's launches, each way.
#[derive(Debug, Default)]
pub struct LaunchCounts {
    replayed: AtomicU64,
    failed: AtomicU64,
    on_hip: AtomicU64,
}

impl LaunchCounts {
    pub fn count(&self, l: Launched) {
        let c = match l {
            Launched::Replayed(_) => &self.replayed,
            Launched::Failed(_) => &self.failed,
            Launched::OnHip => &self.on_hip,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// Launches replayed, failed and on the real HIP.
    pub fn get(&self) -> [u64; 3] {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        [g(&self.replayed), g(&self.failed), g(&self.on_hip)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launches_are_counted_each_way() {
        let c = LaunchCounts::default();
        c.count(Launched::Replayed(0));
        c.count(Launched::Replayed(0));
        c.count(Launched::Failed(719));
        c.count(Launched::OnHip);
        assert_eq!(c.get(), [2, 1, 1]);
    }
}
