//! A simulated board's UUID and PCI address when its config gives none.
//!
//! They follow from what identifies the board, its reported name (target,
//! or `listed_as`) and which board of that name it is (the 2nd gfx1100),
//! never from its position in `RELAUNCH_SIM_TARGETS`: a `uuid:` or `bdf:`
//! deny entry keeps naming the same board when the list is reordered or
//! boards of other names are added. The PCI domain spells the processor
//! (`gfx1100` is domain `1100`, `gfx90a` `090a`), the bus is `e0` plus the
//! occurrence: `1100:e1:00.0` is the 2nd gfx1100.

use crate::device::SimPci;

/// (UUID, PCI address) of every board of a list of reported names, in
/// order: what a front other than the simulated HSA table (the thunk) reports.
pub fn for_boards(names: &[&str]) -> Vec<(String, SimPci)> {
    (0..names.len())
        .map(|i| {
            let k = occurrence(names, i);
            (uuid(names[i], k), pci(names[i], k))
        })
        .collect()
}

/// Which board of its name the board at `index` of `names` is (0-based).
pub(super) fn occurrence(names: &[&str], index: usize) -> usize {
    names[..index]
        .iter()
        .filter(|n| **n == names[index])
        .count()
}

/// `GPU-<16 hex>`, stable per (name, occurrence): an anchor that is not a
/// real GPU's.
pub(super) fn uuid(name: &str, occurrence: usize) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let occurrence = (occurrence as u64).to_le_bytes();
    for b in name.bytes().chain([0]).chain(occurrence) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("GPU-{h:016x}")
}

/// Domain from the processor's digits, bus `e0 + occurrence`.
pub(super) fn pci(name: &str, occurrence: usize) -> SimPci {
    let digits = name.strip_prefix("gfx").unwrap_or(name);
    SimPci {
        // Processor names are gfx + at most 4 hex digits; anything else
        // (never a simulated name) shares domain ffff.
        domain: u32::from_str_radix(digits, 16)
            .ok()
            .filter(|d| *d <= 0xffff)
            .unwrap_or(0xffff),
        bus: 0xe0u8.wrapping_add(occurrence as u8),
        device: 0,
        function: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anchors(list: &[&str]) -> Vec<(String, SimPci)> {
        for_boards(list)
    }

    #[test]
    fn reordering_the_list_keeps_each_boards_anchors() {
        let a = anchors(&["gfx1100", "gfx1030", "gfx1100"]);
        let b = anchors(&["gfx1100", "gfx1100", "gfx1030", "gfx1201"]);
        // The 2nd gfx1100 and the gfx1030 are the same boards in both.
        assert_eq!(a[2], b[1]);
        assert_eq!(a[1], b[2]);
        assert_eq!(a[0], b[0]);
        assert_eq!(
            (b[1].1.domain, b[1].1.bus, a[1].1.domain),
            (0x1100, 0xe1, 0x1030)
        );
        // Within one list no two boards share an anchor.
        for (i, x) in b.iter().enumerate() {
            for y in &b[i + 1..] {
                assert!(x.0 != y.0 && x.1 != y.1, "{x:?} {y:?}");
            }
        }
        assert_eq!(pci("gfx90a", 0).domain, 0x90a);
    }
}
