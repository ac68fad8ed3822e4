//! Access history per byte range of each buffer: the last writer and the
//! readers since it. The hazard sweep checks a node against it; the
//! reference graph derives its dependencies from it.

use crate::graph::Access;
use crate::intervals::IntervalMap;

/// Readers since the last write. One reader, the common case, needs no
/// allocation (segments are cloned when split).
#[derive(Debug, Clone, Default)]
enum Readers {
    #[default]
    None,
    One(u32),
    Many(Vec<u32>),
}

impl Readers {
    fn as_slice(&self) -> &[u32] {
        match self {
            Readers::None => &[],
            Readers::One(r) => std::slice::from_ref(r),
            Readers::Many(v) => v,
        }
    }

    /// Add `n`, replacing the last reader when `replace_last` says so.
    fn push(&mut self, n: u32, replace_last: impl FnOnce(u32) -> bool) {
        match self {
            Readers::None => *self = Readers::One(n),
            Readers::One(r) if *r == n => {}
            Readers::One(r) => {
                if replace_last(*r) {
                    *r = n;
                } else {
                    *self = Readers::Many(vec![*r, n]);
                }
            }
            Readers::Many(v) => match v.last() {
                Some(&r) if r == n => {}
                Some(&r) if replace_last(r) => {
                    if let Some(last) = v.last_mut() {
                        *last = n;
                    }
                }
                _ => v.push(n),
            },
        }
    }
}

#[derive(Debug, Clone, Default)]
struct History {
    writer: Option<u32>,
    readers: Readers,
}

/// Histories of every buffer, created on first use.
pub(crate) struct Histories {
    maps: Vec<Option<IntervalMap<History>>>,
}

impl Histories {
    pub(crate) fn new(buffers: usize) -> Self {
        Histories {
            maps: vec![None; buffers],
        }
    }

    /// Call `f` with every node access `a` of node `n` must follow: the
    /// last writer of its bytes and, for a write, the readers since.
    /// `size` is the buffer's size.
    pub(crate) fn must_follow(&mut self, a: &Access, size: u64, n: u32, mut f: impl FnMut(u32)) {
        let map = self.maps[a.buffer.idx()].get_or_insert_with(|| IntervalMap::new(size));
        map.visit(a.offset, a.end(), |_, _, h| {
            if let Some(w) = h.writer.filter(|&w| w != n) {
                f(w);
            }
            if a.write {
                h.readers
                    .as_slice()
                    .iter()
                    .filter(|&&r| r != n)
                    .for_each(|&r| f(r));
            }
        });
    }

    /// Record node `n`'s accesses (reads, then writes, so its own read
    /// does not outlive its write). A new reader replaces the last one
    /// when `replace_last(last)` says everything ordered after `n` is also
    /// ordered after it. Buffers never passed to `must_follow` are skipped.
    pub(crate) fn record(
        &mut self,
        accesses: &[Access],
        n: u32,
        mut replace_last: impl FnMut(u32) -> bool,
    ) {
        for a in accesses.iter().filter(|a| !a.write) {
            if let Some(map) = self.maps[a.buffer.idx()].as_mut() {
                map.update(a.offset, a.end(), |h| h.readers.push(n, &mut replace_last));
            }
        }
        for a in accesses.iter().filter(|a| a.write) {
            if let Some(map) = self.maps[a.buffer.idx()].as_mut() {
                let h = History {
                    writer: Some(n),
                    readers: Readers::None,
                };
                map.assign(a.offset, a.end(), h);
            }
        }
    }
}
