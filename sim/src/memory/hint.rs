//! The last allocation each thread's checked accesses hit, so the
//! interpreter's stream of accesses to a few buffers skips the map walk:
//! valid while no allocation map changed since (a generation every change
//! bumps under the map's write lock; readers compare it under the read
//! lock, so a hint can never outlive its allocation).

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::RwLockWriteGuard;

use super::{Access, Block, DeviceMemory, VmFault};
use std::collections::BTreeMap;

/// Bumped by every change of any device's allocation map (and by every
/// new device, whose address may be a dropped one's).
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// One thread's last hits: which memory, at which generation, and the
/// last few blocks (a kernel streams through a few buffers in turn).
#[derive(Clone, Copy)]
struct Hints {
    mem: usize,
    generation: u64,
    blocks: [(u64, u64); WAYS],
    /// The entry the next miss replaces.
    next: usize,
}

const WAYS: usize = 4;
/// An entry no access lies in.
const EMPTY: (u64, u64) = (u64::MAX, 0);

thread_local! {
    static HINTS: Cell<Hints> = const {
        Cell::new(Hints { mem: 0, generation: u64::MAX, blocks: [EMPTY; WAYS], next: 0 })
    };
}

/// A new device's memory makes every earlier hint stale.
pub(super) fn new_map() {
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

impl DeviceMemory {
    /// The allocation map for changing: every thread's hint goes stale.
    pub(super) fn blocks_write(&self) -> RwLockWriteGuard<'_, BTreeMap<u64, Block>> {
        let guard = self.blocks.write();
        // Under the write lock: a reader holding the read lock afterwards
        // sees the new value.
        GENERATION.fetch_add(1, Ordering::Relaxed);
        guard
    }

    /// [`DeviceMemory::locate`] through this thread's hint: the block
    /// `[addr, addr + len)` lies in, as (base, end). `blocks` must be the
    /// read-locked map.
    #[inline]
    pub(super) fn locate_hinted(
        &self,
        blocks: &BTreeMap<u64, Block>,
        addr: u64,
        len: usize,
        access: Access,
    ) -> Result<(u64, u64), VmFault> {
        let me = self as *const DeviceMemory as usize;
        let generation = GENERATION.load(Ordering::Relaxed);
        let mut h = HINTS.with(Cell::get);
        if h.mem == me && h.generation == generation && !super::thread_inactivated() {
            if let Some(e) = addr.checked_add(len as u64) {
                for &(base, end) in &h.blocks {
                    if addr >= base && e <= end {
                        return Ok((base, end));
                    }
                }
            }
        }
        let info = self.locate(blocks, addr, len, access)?;
        let (base, end) = (info.base, info.base + info.len as u64);
        if h.mem != me || h.generation != generation {
            h = Hints {
                mem: me,
                generation,
                blocks: [EMPTY; WAYS],
                next: 0,
            };
        }
        h.blocks[h.next] = (base, end);
        h.next = (h.next + 1) % WAYS;
        HINTS.with(|c| c.set(h));
        Ok((base, end))
    }
}
