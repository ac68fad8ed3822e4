//! The counted dword writer: space is reserved for a known number of dwords,
//! then exactly that many are written (checked in debug builds). One
//! reservation grows the buffer at most once, so packets are written without
//! per-dword capacity checks.

/// Copies `repeat_tail` writes per block (64 x 18 dwords = 4.5 KiB, well inside
/// L1; measured faster than larger blocks).
const RUN_BLOCK: usize = 64;

/// An append-only dword buffer.
#[derive(Debug, Default, Clone)]
pub struct DwordWriter {
    buf: Vec<u32>,
}

impl DwordWriter {
    pub fn new() -> Self {
        DwordWriter { buf: Vec::new() }
    }

    pub fn with_capacity(dwords: usize) -> Self {
        DwordWriter {
            buf: Vec::with_capacity(dwords),
        }
    }

    /// A writer appending to `dwords`.
    pub fn from_vec(dwords: Vec<u32>) -> Self {
        DwordWriter { buf: dwords }
    }

    /// Make room for `total` dwords in all without reallocating.
    pub fn reserve_total(&mut self, total: usize) {
        self.buf.reserve(total.saturating_sub(self.buf.len()));
    }

    /// Dwords written so far.
    #[inline]
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Append a whole packet of compile-time length (the count is the array's
    /// length, so nothing can be left unwritten).
    #[inline(always)]
    pub fn put<const N: usize>(&mut self, words: &[u32; N]) {
        self.buf.extend_from_slice(words);
    }

    /// Append `words` (of a length known only at run time).
    #[inline]
    pub fn put_slice(&mut self, words: &[u32]) {
        self.buf.extend_from_slice(words);
    }

    /// Append the first `len` of `words` (`len <= N`). The copy is of all
    /// `N`, a fixed size the compiler writes as a few vector moves where a
    /// variable-length one is a library call; the rest is dropped again.
    #[inline(always)]
    pub fn put_prefix<const N: usize>(&mut self, words: &[u32; N], len: usize) {
        debug_assert!(len <= N);
        let end = self.buf.len() + len;
        self.buf.extend_from_slice(words);
        self.buf.truncate(end);
    }

    /// Grow the buffer, whose last `period` dwords are copy 0 of a pattern,
    /// by further copies until the copies take `total` dwords (the last one
    /// cut short where `total` ends). In copy `c` (copy 0 included), dword
    /// `at` of each `(at, first)` in `patches` gets `first + c * step`
    /// (wrapping) where the copy holds it: a cycle of packets that differ
    /// only in a few values that advance together, written in one pass.
    pub fn repeat_tail(&mut self, period: usize, total: usize, patches: &[(u32, u32)], step: u32) {
        assert!(
            period > 0 && period <= self.buf.len() && total >= period,
            "repeat_tail: {period} dwords of pattern, {} written, {total} wanted",
            self.buf.len()
        );
        debug_assert!(patches.iter().all(|&(at, _)| (at as usize) < period));
        let start = self.buf.len() - period;
        let end = start + total;
        self.buf.reserve(end - self.buf.len());
        // The first block of copies is built by doubling; later blocks copy
        // it whole (bulk copies from a block that stays in cache), and each
        // block gets its values while it is still in cache itself. Copies
        // are cut only at `end`, so every copy but the last is whole.
        let block = period * RUN_BLOCK;
        // Copies before `copy` have their values.
        let mut copy = 0;
        loop {
            let len = self.buf.len();
            let copies = (len - start).div_ceil(period);
            let written = &mut self.buf[start..len];
            for &(at, first) in patches {
                // Value by value down the copies written since (strided
                // stores into a block still in cache); a cut copy may not
                // hold this one.
                let mut value = first.wrapping_add((copy as u32).wrapping_mul(step));
                let from = copy * period + at as usize;
                for d in written
                    .get_mut(from..)
                    .into_iter()
                    .flat_map(|w| w.iter_mut().step_by(period))
                {
                    *d = value;
                    value = value.wrapping_add(step);
                }
            }
            copy = copies;
            if len == end {
                return;
            }
            let have = len - start;
            let more = if have < block {
                have.min(block - have)
            } else {
                block
            };
            self.buf
                .extend_from_within(start..start + more.min(end - len));
        }
    }

    /// Reserve room for exactly `n` dwords; the returned scope must write `n`.
    #[inline]
    pub fn reserve(&mut self, n: usize) -> Reserved<'_> {
        self.buf.reserve(n);
        #[cfg(debug_assertions)]
        let end = self.buf.len() + n;
        Reserved {
            buf: &mut self.buf,
            #[cfg(debug_assertions)]
            end,
        }
    }

    /// The dwords written.
    pub fn as_slice(&self) -> &[u32] {
        &self.buf
    }

    /// Mutable access for patching already-written dwords in place.
    pub fn as_mut_slice(&mut self) -> &mut [u32] {
        &mut self.buf
    }

    /// Take the dwords, leaving the writer empty.
    pub fn take(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.buf)
    }

    pub fn into_vec(self) -> Vec<u32> {
        self.buf
    }
}

/// A reservation of a fixed number of dwords.
pub struct Reserved<'a> {
    buf: &'a mut Vec<u32>,
    #[cfg(debug_assertions)]
    end: usize,
}

impl Reserved<'_> {
    /// Append one dword.
    #[inline]
    pub fn push(&mut self, dword: u32) {
        #[cfg(debug_assertions)]
        assert!(
            self.buf.len() < self.end,
            "PM4 writer: more dwords written than reserved"
        );
        self.buf.push(dword);
    }

    /// Append several dwords.
    #[inline]
    pub fn extend(&mut self, dwords: &[u32]) {
        #[cfg(debug_assertions)]
        assert!(
            self.buf.len() + dwords.len() <= self.end,
            "PM4 writer: more dwords written than reserved"
        );
        self.buf.extend_from_slice(dwords);
    }

    /// Index the next dword will be written at.
    #[inline]
    pub fn position(&self) -> usize {
        self.buf.len()
    }
}

#[cfg(debug_assertions)]
impl Drop for Reserved<'_> {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            assert_eq!(
                self.buf.len(),
                self.end,
                "PM4 writer: fewer dwords written than reserved"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_what_was_reserved() {
        let mut w = DwordWriter::new();
        {
            let mut r = w.reserve(3);
            r.push(1);
            r.extend(&[2, 3]);
        }
        assert_eq!(w.as_slice(), &[1, 2, 3]);
    }

    #[test]
    fn runs_repeat_a_template_with_one_changing_dword() {
        // Counts below, at and across the block size; the value wraps.
        for (len, count) in [(3usize, 3usize), (8, 256), (10, 600), (18, 1000)] {
            let template: Vec<u32> = (100..100 + len as u32).collect();
            let mut w = DwordWriter::new();
            w.put(&[7]);
            w.put_slice(&template);
            w.repeat_tail(len, count * len, &[(1, u32::MAX - 15)], 16);
            assert_eq!(w.len(), 1 + count * len, "{len}");
            assert_eq!(w.as_slice()[0], 7);
            for (i, copy) in w.as_slice()[1..].chunks(len).enumerate() {
                let mut want = template.clone();
                want[1] = (u32::MAX - 15).wrapping_add(16 * i as u32);
                assert_eq!(copy, want, "{len} copy {i}");
            }
        }
        let mut w = DwordWriter::new();
        w.put_slice(&[1, 2]);
        w.repeat_tail(2, 4, &[], 1);
        assert_eq!(w.as_slice(), [1, 2, 1, 2], "no values: copies only");
    }

    #[test]
    fn cycles_repeat_a_pattern_with_values_advancing_together() {
        // A 5-dword pattern with two values, cut inside the last copy,
        // below, at and across the block size.
        for copies in [1usize, 3, 64, 65, 200] {
            let mut w = DwordWriter::new();
            w.put(&[9, 10, 11, 12, 13]);
            let total = if copies == 1 { 5 } else { 5 * copies - 2 };
            w.repeat_tail(5, total, &[(1, 100), (4, 200)], 7);
            assert_eq!(w.len(), total);
            for (c, copy) in w.as_slice().chunks(5).enumerate() {
                let add = 7 * c as u32;
                let want = [9, 100 + add, 11, 12, 200 + add];
                assert_eq!(copy, &want[..copy.len()], "{copies} copy {c}");
            }
        }
    }

    #[test]
    fn prefixes_keep_only_their_length() {
        let mut w = DwordWriter::new();
        w.put_prefix(&[1, 2, 3, 4], 2);
        w.put_prefix(&[5, 6, 7, 8], 4);
        w.put_prefix(&[9, 9, 9, 9], 0);
        assert_eq!(w.as_slice(), [1, 2, 5, 6, 7, 8]);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "fewer dwords written than reserved")]
    fn short_write_is_caught_in_debug() {
        let mut w = DwordWriter::new();
        let mut r = w.reserve(2);
        r.push(1);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "more dwords written than reserved")]
    fn long_write_is_caught_in_debug() {
        let mut w = DwordWriter::new();
        let mut r = w.reserve(1);
        r.push(1);
        r.push(2);
    }
}
