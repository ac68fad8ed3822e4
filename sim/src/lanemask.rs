//! Walking the lanes an EXEC-style mask enables.

/// The lanes set in `mask`, lowest first. Each step costs one set bit, so
/// a thin mask (a one-lane tail) costs its lanes, not the wave's width.
#[inline(always)]
pub(crate) fn set_lanes(mask: u64) -> SetLanes {
    SetLanes(mask)
}

pub(crate) struct SetLanes(u64);

impl Iterator for SetLanes {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let l = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(l)
    }
}

#[cfg(test)]
mod tests {
    use super::set_lanes;

    #[test]
    fn yields_each_set_bit_lowest_first() {
        assert_eq!(set_lanes(0).count(), 0);
        assert_eq!(set_lanes(0b1010_0001).collect::<Vec<_>>(), vec![0, 5, 7]);
        assert_eq!(set_lanes(1 << 63).collect::<Vec<_>>(), vec![63]);
        assert_eq!(set_lanes(u64::MAX).count(), 64);
    }
}
