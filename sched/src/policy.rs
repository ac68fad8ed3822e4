//! How many hardware queues a multi-lane IB uses on a device: a pure
//! function of the GPU target's facts row, the policy and the plan's
//! independent width.

use relaunch_facts::target::GfxTarget;
use relaunch_facts::TargetFacts;

use crate::error::SchedError;

/// The caller's choice of queue count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueuePolicy {
    /// Per target, from its facts row (`auto_queue_width`: 2 on gfx1100
    /// and gfx12xx, 4 on other gfx11xx, 1 on gfx10xx); 1 on a target
    /// without a row.
    #[default]
    Auto,
    /// Exactly this many (1-4), still capped by the independent width.
    Fixed(u8),
}

/// Most queues any policy asks for.
pub const MAX_QUEUES: usize = 4;

impl QueuePolicy {
    /// From the C ABI's `RlQueueAuto=0, RlQueueOne..RlQueueFour=1..4`.
    pub fn from_u32(value: u32) -> Result<Self, SchedError> {
        match value {
            0 => Ok(QueuePolicy::Auto),
            1..=4 => Ok(QueuePolicy::Fixed(value as u8)),
            _ => Err(SchedError::BadPolicy { value }),
        }
    }

    pub fn as_u32(self) -> u32 {
        match self {
            QueuePolicy::Auto => 0,
            QueuePolicy::Fixed(n) => n as u32,
        }
    }
}

/// The automatic width for a target such as `gfx1100` or `gfx1201:xnack-`
/// (a full `amdgcn-amd-amdhsa--` id works too): its facts row's
/// `auto_queue_width` (why those numbers: see the row), 1 when the name
/// does not parse or has no row.
pub fn auto_width(target: &str) -> usize {
    let row = GfxTarget::parse(target).ok().and_then(|t| t.facts().ok());
    auto_width_of(row)
}

/// [`auto_width`] for a facts row already looked up (`None`: unknown).
pub fn auto_width_of(target: Option<&TargetFacts>) -> usize {
    target.map_or(1, |row| {
        usize::from(row.auto_queue_width).clamp(1, MAX_QUEUES)
    })
}

/// Queues to use: the policy's count, never more than `independent_width`
/// (lanes that can run at once) and never fewer than 1.
pub fn queue_count(target: &str, policy: QueuePolicy, independent_width: usize) -> usize {
    let auto = || auto_width(target);
    count(auto, policy, independent_width)
}

/// [`queue_count`] for a facts row already looked up.
pub fn queue_count_of(
    target: Option<&TargetFacts>,
    policy: QueuePolicy,
    independent_width: usize,
) -> usize {
    count(|| auto_width_of(target), policy, independent_width)
}

fn count(auto: impl FnOnce() -> usize, policy: QueuePolicy, independent_width: usize) -> usize {
    let wanted = match policy {
        QueuePolicy::Auto => auto(),
        QueuePolicy::Fixed(n) => (n as usize).clamp(1, MAX_QUEUES),
    };
    wanted.min(independent_width).max(1)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn auto_follows_the_target_table() {
        for (target, width) in [
            ("gfx1100", 2),
            ("gfx1100:xnack-", 2),
            ("amdgcn-amd-amdhsa--gfx1100", 2),
            ("gfx1101", 4),
            ("gfx1102", 4),
            ("gfx1151", 4),
            ("gfx1200", 2),
            ("gfx1201", 2),
            ("gfx1030", 1),
            ("gfx1010", 1),
            ("gfx90a", 1),
            ("", 1),
            ("nonsense", 1),
        ] {
            assert_eq!(auto_width(target), width, "{target}");
            assert_eq!(queue_count(target, QueuePolicy::Auto, 8), width, "{target}");
        }
    }

    #[test]
    fn width_caps_and_overrides() {
        assert_eq!(queue_count("gfx1101", QueuePolicy::Auto, 3), 3);
        assert_eq!(queue_count("gfx1100", QueuePolicy::Auto, 1), 1);
        assert_eq!(queue_count("gfx1100", QueuePolicy::Auto, 0), 1);
        assert_eq!(queue_count("gfx1030", QueuePolicy::Fixed(4), 8), 4);
        assert_eq!(queue_count("gfx1030", QueuePolicy::Fixed(4), 2), 2);
        assert_eq!(queue_count("gfx1201", QueuePolicy::Fixed(1), 8), 1);
        assert_eq!(queue_count("gfx1201", QueuePolicy::Fixed(9), 8), 4);
    }

    #[test]
    fn policy_values_round_trip_and_bad_ones_are_refused() {
        for v in 0..=4 {
            assert_eq!(QueuePolicy::from_u32(v).unwrap().as_u32(), v);
        }
        let err = QueuePolicy::from_u32(5).unwrap_err();
        assert_eq!(
            err.to_string(),
            "queue policy 5 is not 0 (auto) or an explicit count 1-4"
        );
    }
}
