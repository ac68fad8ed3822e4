//! Pages the device checks but does not own: what a runtime allocated or
//! registered through the kernel-driver front (`crate::driver`) lives in
//! host mappings that front creates and removes; the device only judges
//! GPU accesses to them, with the permissions the driver's mapping gives.

use std::ptr::NonNull;

use super::{
    remember_freed, AllocOptions, AllocationInfo, Block, DeviceMemory, MemKind, MemoryError,
};

impl DeviceMemory {
    /// Check host pages someone else owns (`addr`, `len` bytes, which stay
    /// valid until [`DeviceMemory::release`]): from now on GPU accesses
    /// inside them are checked like any allocation, with `opts` saying
    /// whether the GPU may touch or fetch IBs from them. Overlapping a
    /// live range is refused. Not counted against the memory limit (the
    /// owner accounts for its pages).
    ///
    /// # Safety
    /// `[addr, addr+len)` must be readable and writable host memory that
    /// stays mapped until `release(addr)` returns.
    pub unsafe fn adopt(
        &self,
        addr: u64,
        len: usize,
        kind: MemKind,
        opts: AllocOptions,
    ) -> Result<(), MemoryError> {
        // SAFETY: the caller's promise, for the one range added.
        unsafe { self.replace_adopted(&[], &[(addr, len, opts)], kind) }
    }

    /// Stop checking pages adopted at `addr` (their owner unmaps them
    /// next); later GPU accesses there fault as a use after free.
    pub fn release(&self, addr: u64) -> Result<AllocationInfo, MemoryError> {
        let block = {
            let mut blocks = self.blocks_write();
            match blocks.get(&addr) {
                Some(b) if b.layout.is_none() => blocks.remove(&addr),
                _ => None,
            }
        }
        .ok_or(MemoryError::NotAllocated(addr))?;
        remember_freed(&mut self.freed.lock(), addr, block.len);
        self.stats.lock().live_allocations -= 1;
        Ok(AllocationInfo {
            base: addr,
            len: block.len,
            kind: block.kind,
        })
    }

    /// Change what the GPU may do with the range starting at `addr`
    /// (the driver mapping or unmapping it); false when none starts there.
    pub fn set_options(&self, addr: u64, opts: AllocOptions) -> bool {
        match self.blocks_write().get_mut(&addr) {
            Some(block) => {
                block.opts = opts;
                true
            }
            None => false,
        }
    }

    /// Replace adopted ranges in one step: release the ranges starting at
    /// `remove` and adopt `add`, with no moment in which a GPU access to a
    /// page present before and after sees it missing (the driver front
    /// merges and splits registered host ranges this way). On an error
    /// nothing changed.
    ///
    /// # Safety
    /// As [`DeviceMemory::adopt`], for every range of `add`.
    pub unsafe fn replace_adopted(
        &self,
        remove: &[u64],
        add: &[(u64, usize, AllocOptions)],
        kind: MemKind,
    ) -> Result<(), MemoryError> {
        let mut blocks = self.blocks_write();
        if let Some(&missing) = remove
            .iter()
            .find(|a| blocks.get(a).is_none_or(|b| b.layout.is_some()))
        {
            return Err(MemoryError::NotAllocated(missing));
        }
        for (i, &(addr, len, _)) in add.iter().enumerate() {
            if len == 0 || addr == 0 {
                return Err(MemoryError::ZeroSize);
            }
            let end = addr
                .checked_add(len as u64)
                .ok_or(MemoryError::Overlap(addr))?;
            // Blocks are disjoint: the last one kept that starts before
            // `end` is the only one that can reach into the range.
            let kept_clash = blocks
                .range(..end)
                .rev()
                .find(|(b, _)| !remove.contains(b))
                .is_some_and(|(&b, blk)| b + blk.len as u64 > addr);
            let add_clash = add[..i]
                .iter()
                .any(|&(a, n, _)| a < end && addr < a + n as u64);
            if kept_clash || add_clash {
                return Err(MemoryError::Overlap(addr));
            }
        }
        let removed: Vec<(u64, usize)> = remove
            .iter()
            .map(|a| (*a, blocks.remove(a).expect("checked above").len))
            .collect();
        for &(addr, len, opts) in add {
            let ptr = NonNull::new(addr as *mut u8).expect("checked above");
            let block = Block {
                ptr,
                layout: None,
                len,
                kind,
                opts,
            };
            blocks.insert(addr, block);
        }
        drop(blocks);
        let mut freed = self.freed.lock();
        for &(a, l) in &removed {
            remember_freed(&mut freed, a, l);
        }
        freed.retain(|&(b, l)| {
            !add.iter()
                .any(|&(a, n, _)| a < b + l as u64 && b < a + n as u64)
        });
        drop(freed);
        let mut stats = self.stats.lock();
        stats.live_allocations = stats.live_allocations + add.len() - removed.len();
        stats.total_allocations += add.len() as u64;
        Ok(())
    }
}
