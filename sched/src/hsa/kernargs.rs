//! The kernarg block of an IB installed on an HSA queue, shared by the
//! installed IB (patches the actor runs) and its handle's writer (direct
//! patches): host memory the GPU reads, plus each dispatch's place in it.

use std::sync::Arc;

use relaunch_device::hsa::Allocation;

use crate::backend::KernargWriter;

/// Where one dispatch's block sits: byte offset from the block base, length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Site {
    pub(crate) offset: u32,
    pub(crate) len: u32,
}

/// A view of one IB's kernarg memory; clones share it. The memory is freed
/// when the last clone goes, so a writer outliving its IB (uninstalled, or
/// the actor shut down) writes memory nothing reads, never freed memory.
#[derive(Debug, Clone)]
pub struct KernargBlock {
    /// `None` when the IB has no kernarg bytes at all.
    mem: Option<Arc<Allocation>>,
    /// Host address of the block (inside `mem`); null without memory.
    base: *mut u8,
    /// Bytes from `base` to the end of `mem`.
    room: usize,
    sites: Arc<[Site]>,
    /// False when identical blocks were merged (kernargs_immutable).
    patchable: bool,
}

// SAFETY: `base` points into `mem`, which every clone keeps alive. Writes
// go through `write`, whose contract (one writer at a time, no replay
// running) the scheduler's protocol upholds; reads of the host pointer
// never happen here.
unsafe impl Send for KernargBlock {}
// SAFETY: as above; `&self` methods do not touch the memory.
unsafe impl Sync for KernargBlock {}

impl KernargBlock {
    /// `mem` holds the block at byte `offset`; `sites` are in dispatch order.
    pub(crate) fn new(
        mem: Option<(Allocation, usize)>,
        sites: Vec<Site>,
        patchable: bool,
    ) -> Result<Self, relaunch_device::hsa::HsaError> {
        let (mem, base, room) = match mem {
            Some((mem, offset)) => {
                let room = mem.len().saturating_sub(offset);
                let base = mem.host_ptr(offset, room)?;
                (Some(Arc::new(mem)), base, room)
            }
            None => (None, std::ptr::null_mut(), 0),
        };
        // Every site must lie inside the memory: `write` relies on it.
        if let Some(bad) = sites
            .iter()
            .find(|s| s.offset as usize + s.len as usize > room)
        {
            return Err(relaunch_device::hsa::HsaError::OutOfBounds {
                target: "kernarg block",
                offset: bad.offset as usize,
                len: bad.len as usize,
                size: room,
            });
        }
        Ok(KernargBlock {
            mem,
            base,
            room,
            sites: sites.into(),
            patchable,
        })
    }

    pub(crate) fn sites(&self) -> &[Site] {
        &self.sites
    }

    pub(crate) fn patchable(&self) -> bool {
        self.patchable
    }

    /// Device bytes this block keeps alive.
    pub(crate) fn device_bytes(&self) -> usize {
        self.mem.as_ref().map_or(0, |m| m.len())
    }

    /// Writes `bytes` at `offset` of `dispatch`'s block; `Err(())` (nothing
    /// written) when out of range or not patchable.
    ///
    /// # Safety
    /// No other access to this block's memory (another `write`, or the GPU
    /// running a replay of the IB) may happen at the same time.
    #[inline]
    pub(crate) unsafe fn write_exclusive(
        &self,
        dispatch: usize,
        offset: usize,
        bytes: &[u8],
    ) -> Result<(), ()> {
        let site = match self.sites.get(dispatch) {
            Some(site) if self.patchable => *site,
            _ => return Err(()),
        };
        match offset.checked_add(bytes.len()) {
            Some(end) if end <= site.len as usize => {}
            _ => return Err(()),
        }
        if bytes.is_empty() {
            return Ok(());
        }
        let at = site.offset as usize + offset;
        debug_assert!(at + bytes.len() <= self.room);
        // SAFETY: `at + len <= site.offset + site.len <= room` (checked in
        // `new` and above), so the range is inside the live allocation;
        // exclusivity is the caller's contract; `bytes` is Rust-owned
        // memory elsewhere, so the ranges do not overlap.
        unsafe {
            let dst = self.base.add(at);
            // The common patch sizes as single stores (no memcpy call).
            match bytes.len() {
                4 => dst
                    .cast::<[u8; 4]>()
                    .write_unaligned(bytes.try_into().unwrap_or([0; 4])),
                8 => dst
                    .cast::<[u8; 8]>()
                    .write_unaligned(bytes.try_into().unwrap_or([0; 8])),
                n => std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, n),
            }
        }
        Ok(())
    }
}

impl KernargWriter for KernargBlock {
    #[inline]
    fn write(&mut self, dispatch: usize, offset: usize, bytes: &[u8]) -> Result<(), ()> {
        // SAFETY: the handle calls this through `&mut` only when its IB's
        // track shows nothing queued and no replay running (see `track`),
        // and queued patches on the actor thread run only while the track
        // counts them, so no access overlaps.
        unsafe { self.write_exclusive(dispatch, offset, bytes) }
    }
}
