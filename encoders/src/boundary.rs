//! Boundary kinds between dispatches in one IB (see `docs/pm4.md`).

use std::fmt;

/// What a boundary guarantees to the dispatches after it. Ordered from
/// cheapest to strongest where a stronger one also satisfies weaker needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BoundaryKind {
    /// Wait for earlier dispatches to finish (CS_PARTIAL_FLUSH); no data
    /// written before is read after it (write-after-read, write-after-write).
    Wait,
    /// Wait, then invalidate V$ and GL1 so vector-memory reads see earlier
    /// writes; for consumers certified to read mutable data only via VMEM.
    RmwVmem,
    /// Wait, then invalidate K$, V$ and GL1: any read-after-write.
    Rmw,
}

impl BoundaryKind {
    /// Short name used in dumps, DOT output and the fingerprint.
    pub fn name(self) -> &'static str {
        match self {
            BoundaryKind::Wait => "wait",
            BoundaryKind::RmwVmem => "rmw_vmem",
            BoundaryKind::Rmw => "rmw",
        }
    }

    /// True when a boundary of kind `self` also satisfies a need for `need`.
    pub fn covers(self, need: BoundaryKind) -> bool {
        self >= need
    }
}

impl fmt::Display for BoundaryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::BoundaryKind::*;

    #[test]
    fn stronger_boundaries_cover_weaker_needs() {
        assert!(Rmw.covers(RmwVmem) && Rmw.covers(Wait) && RmwVmem.covers(Wait));
        assert!(!Wait.covers(Rmw) && !RmwVmem.covers(Rmw));
    }
}
