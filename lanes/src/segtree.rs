//! Access state over one buffer's elementary byte intervals, with range
//! updates and range summaries in O(log n): the hazard sweep and the
//! boundary sweep ask "what is the latest / earliest writer, the latest
//! reader, over this range?" without visiting every segment (a node that
//! reads a whole buffer written slice by slice would otherwise cost one
//! step per slice, quadratic over a chain).
//!
//! Leaves are the intervals between consecutive access endpoints of the
//! buffer (`Coords`). Each leaf holds a writer key and a reader value
//! (0 = none); keys are positions + 1 in the caller's order, so larger
//! means later. A writer also carries an `aux` value (the hazard sweep's
//! level + 1).

/// The sorted distinct endpoints of every access to one buffer, plus 0
/// and the buffer size: leaf `i` is `[points[i], points[i + 1])`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Coords {
    points: Vec<u64>,
}

impl Coords {
    pub(crate) fn new(mut points: Vec<u64>) -> Self {
        points.sort_unstable();
        points.dedup();
        Coords { points }
    }

    pub(crate) fn leaves(&self) -> usize {
        self.points.len().saturating_sub(1)
    }

    /// The leaf starting at byte `x` (an endpoint of some access).
    pub(crate) fn leaf(&self, x: u64) -> usize {
        match self.points.binary_search(&x) {
            Ok(i) => i,
            Err(_) => invariant_broken("an access endpoint missing from its buffer's coordinates"),
        }
    }

    /// First byte of leaf `i`.
    pub(crate) fn start(&self, i: usize) -> u64 {
        self.points[i]
    }
}

#[cold]
#[track_caller]
fn invariant_broken(what: &str) -> ! {
    panic!("relaunch-lanes invariant broken: {what}")
}

/// What a range holds: latest and earliest writer key (0 and `u32::MAX`
/// when no byte has one), largest writer aux, latest reader value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Summary {
    pub(crate) wmax: u32,
    pub(crate) wmin: u32,
    pub(crate) waux: u32,
    pub(crate) rmax: u32,
}

const EMPTY: Summary = Summary {
    wmax: 0,
    wmin: u32::MAX,
    waux: 0,
    rmax: 0,
};

impl Summary {
    fn join(a: Summary, b: Summary) -> Summary {
        Summary {
            wmax: a.wmax.max(b.wmax),
            wmin: a.wmin.min(b.wmin),
            waux: a.waux.max(b.waux),
            rmax: a.rmax.max(b.rmax),
        }
    }
}

/// A pending update of a whole subtree: an optional write (writer key,
/// aux; it clears the readers), then a reader value to max in.
#[derive(Debug, Clone, Copy, Default)]
struct Tag {
    write: Option<(u32, u32)>,
    read: u32,
}

#[derive(Debug, Clone)]
pub(crate) struct AccessTree {
    leaves: usize,
    sum: Vec<Summary>,
    tag: Vec<Tag>,
}

impl AccessTree {
    pub(crate) fn new(leaves: usize) -> Self {
        let size = 4 * leaves.max(1);
        AccessTree {
            leaves: leaves.max(1),
            sum: vec![EMPTY; size],
            tag: vec![Tag::default(); size],
        }
    }

    /// Back to no writers and no readers.
    pub(crate) fn clear(&mut self) {
        self.sum.fill(EMPTY);
        self.tag.fill(Tag::default());
    }

    fn apply(&mut self, i: usize, t: Tag) {
        if let Some((key, aux)) = t.write {
            self.sum[i] = Summary {
                wmax: key,
                wmin: key,
                waux: aux,
                rmax: 0,
            };
            self.tag[i] = Tag {
                write: t.write,
                read: 0,
            };
        }
        if t.read != 0 {
            self.sum[i].rmax = self.sum[i].rmax.max(t.read);
            self.tag[i].read = self.tag[i].read.max(t.read);
        }
    }

    fn push(&mut self, i: usize) {
        let t = std::mem::take(&mut self.tag[i]);
        if t.write.is_some() || t.read != 0 {
            self.apply(2 * i, t);
            self.apply(2 * i + 1, t);
        }
    }

    fn update(&mut self, i: usize, nl: usize, nr: usize, l: usize, r: usize, t: Tag) {
        if r <= nl || nr <= l {
            return;
        }
        if l <= nl && nr <= r {
            self.apply(i, t);
            return;
        }
        self.push(i);
        let mid = (nl + nr) / 2;
        self.update(2 * i, nl, mid, l, r, t);
        self.update(2 * i + 1, mid, nr, l, r, t);
        self.sum[i] = Summary::join(self.sum[2 * i], self.sum[2 * i + 1]);
    }

    /// Leaves `[l, r)` are written by `key` (with `aux`); readers cleared.
    pub(crate) fn write(&mut self, l: usize, r: usize, key: u32, aux: u32) {
        let t = Tag {
            write: Some((key, aux)),
            read: 0,
        };
        self.update(1, 0, self.leaves, l, r, t);
    }

    /// Leaves `[l, r)` are read by `value` (kept as a maximum).
    pub(crate) fn read(&mut self, l: usize, r: usize, value: u32) {
        let t = Tag {
            write: None,
            read: value,
        };
        self.update(1, 0, self.leaves, l, r, t);
    }

    fn query_at(&mut self, i: usize, nl: usize, nr: usize, l: usize, r: usize) -> Summary {
        if r <= nl || nr <= l {
            return EMPTY;
        }
        if l <= nl && nr <= r {
            return self.sum[i];
        }
        self.push(i);
        let mid = (nl + nr) / 2;
        Summary::join(
            self.query_at(2 * i, nl, mid, l, r),
            self.query_at(2 * i + 1, mid, nr, l, r),
        )
    }

    pub(crate) fn query(&mut self, l: usize, r: usize) -> Summary {
        self.query_at(1, 0, self.leaves, l, r)
    }

    #[allow(clippy::too_many_arguments)]
    fn outside_at(
        &mut self,
        i: usize,
        nl: usize,
        nr: usize,
        l: usize,
        r: usize,
        band: (u32, u32),
        out: &mut Vec<u32>,
    ) {
        let s = self.sum[i];
        if r <= nl || nr <= l || s.wmax == 0 || (s.wmin >= band.0 && s.wmax < band.1) {
            return;
        }
        if s.wmin == s.wmax && l <= nl && nr <= r {
            // One writer for every written byte here.
            out.push(s.wmax);
            return;
        }
        self.push(i);
        let mid = (nl + nr) / 2;
        self.outside_at(2 * i, nl, mid, l, r, band, out);
        self.outside_at(2 * i + 1, mid, nr, l, r, band, out);
    }

    /// Push every writer key in leaves `[l, r)` outside `[band.0,
    /// band.1)` onto `out` (possibly repeated).
    pub(crate) fn writers_outside(
        &mut self,
        l: usize,
        r: usize,
        band: (u32, u32),
        out: &mut Vec<u32>,
    ) {
        self.outside_at(1, 0, self.leaves, l, r, band, out);
    }

    #[allow(clippy::too_many_arguments)]
    fn first_at(
        &mut self,
        i: usize,
        nl: usize,
        nr: usize,
        l: usize,
        r: usize,
        value: u32,
        reader: bool,
    ) -> Option<usize> {
        let s = self.sum[i];
        let top = if reader { s.rmax } else { s.wmax };
        if r <= nl || nr <= l || top < value {
            return None;
        }
        if nr - nl == 1 {
            return Some(nl);
        }
        self.push(i);
        let mid = (nl + nr) / 2;
        self.first_at(2 * i, nl, mid, l, r, value, reader)
            .or_else(|| self.first_at(2 * i + 1, mid, nr, l, r, value, reader))
    }

    /// The first leaf in `[l, r)` whose writer key (or reader value, with
    /// `reader`) is at least `value`.
    pub(crate) fn first(&mut self, l: usize, r: usize, value: u32, reader: bool) -> Option<usize> {
        self.first_at(1, 0, self.leaves, l, r, value, reader)
    }
}

#[cfg(test)]
mod tests {
    use super::AccessTree;

    #[test]
    fn summaries_follow_writes_and_reads() {
        let mut t = AccessTree::new(8);
        t.write(0, 4, 3, 10);
        t.write(2, 6, 5, 1);
        t.read(1, 3, 7);
        let s = t.query(0, 8);
        assert_eq!((s.wmax, s.wmin, s.waux, s.rmax), (5, 3, 10, 7));
        let s = t.query(3, 8);
        assert_eq!((s.wmax, s.wmin, s.rmax), (5, 5, 0));
        assert_eq!(t.first(0, 8, 5, false), Some(2));
        assert_eq!(t.first(0, 8, 7, true), Some(1));
        let mut out = Vec::new();
        t.writers_outside(0, 8, (4, 6), &mut out);
        assert_eq!(out, vec![3]);
        t.write(0, 8, 9, 0);
        assert_eq!(t.query(0, 8).rmax, 0);
    }
}
