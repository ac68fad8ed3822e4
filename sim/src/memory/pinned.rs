//! A thread's hold on the allocation map across many accesses (the
//! interpreter's worker for one workgroup): the map's shared lock taken
//! once instead of once per access, so neither a lock word's atomics nor
//! its cache line moving between cores cost per instruction. The holder
//! lets waiting allocations and frees through every so often
//! ([`Pinned::yield_to_writers`]) and drops the lock around calls out of
//! the simulator ([`Pinned::unlocked`]).

use std::marker::PhantomData;

use parking_lot::lock_api::{RawRwLock as _, RawRwLockFair as _, RawRwLockRecursive as _};

use super::{DeviceMemory, Map, VmFault};

/// Holds `mem`'s allocation map read-locked while it lives.
pub struct Pinned<'a> {
    mem: &'a DeviceMemory,
    /// The lock is this thread's: not to be used or released elsewhere.
    _thread: PhantomData<*const ()>,
}

impl DeviceMemory {
    /// Read-lock the allocation map until the returned value is dropped.
    /// Recursive: a thread already reading does not wait behind a writer.
    pub fn pin(&self) -> Pinned<'_> {
        // SAFETY: released exactly once, by Pinned's drop (`unlocked`
        // releases and re-takes it in pairs).
        unsafe { self.blocks.raw().lock_shared_recursive() };
        Pinned {
            mem: self,
            _thread: PhantomData,
        }
    }
}

impl Pinned<'_> {
    /// The map, read-locked by this pin.
    fn map(&self) -> &Map {
        // SAFETY: this thread holds the map's shared lock for as long as
        // `self` lives outside `unlocked` (which takes `&self` and hands
        // no map out), so no writer can change or free it meanwhile.
        unsafe { &*self.mem.blocks.data_ptr() }
    }

    /// Let a waiting allocation or free through, if there is one (the
    /// interpreter calls it every few thousand instructions, so a host
    /// thread never waits long behind a running kernel).
    pub fn yield_to_writers(&self) {
        // SAFETY: this thread holds the shared lock (see `map`).
        unsafe { self.mem.blocks.raw().bump_shared() }
    }

    /// Run `f` with the lock released (a call out of the simulator, which
    /// may allocate or wait for a thread that does), then take it again.
    pub fn unlocked<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Relock<'b>(&'b DeviceMemory);
        impl Drop for Relock<'_> {
            fn drop(&mut self) {
                // SAFETY: re-takes the lock `unlocked` released, even if
                // `f` panicked, so Pinned's drop releases a held lock.
                unsafe { self.0.blocks.raw().lock_shared_recursive() }
            }
        }
        // SAFETY: this thread holds the shared lock (see `map`); Relock
        // takes it again before `self` can be used or dropped.
        unsafe { self.mem.blocks.raw().unlock_shared() };
        let _relock = Relock(self.mem);
        f()
    }

    /// [`DeviceMemory::gather`] under the pin.
    pub fn gather(
        &self,
        addrs: &[u64],
        mask: u64,
        elem: usize,
        out: &mut [u8],
    ) -> Result<(), VmFault> {
        self.mem.gather_in(Some(self.map()), addrs, mask, elem, out)
    }

    /// [`DeviceMemory::scatter`] under the pin.
    pub fn scatter(
        &self,
        addrs: &[u64],
        mask: u64,
        elem: usize,
        src: &[u8],
    ) -> Result<(), VmFault> {
        self.mem
            .scatter_in(Some(self.map()), addrs, mask, elem, src)
    }

    /// [`DeviceMemory::gather_u32`] under the pin.
    pub fn gather_u32(&self, addrs: &[u64], mask: u64, out: &mut [u32]) -> Result<(), VmFault> {
        self.mem.gather_u32_in(Some(self.map()), addrs, mask, out)
    }

    /// [`DeviceMemory::scatter_u32`] under the pin.
    pub fn scatter_u32(&self, addrs: &[u64], mask: u64, src: &[u32]) -> Result<(), VmFault> {
        self.mem.scatter_u32_in(Some(self.map()), addrs, mask, src)
    }

    /// [`DeviceMemory::read`] under the pin.
    pub fn read(&self, addr: u64, dst: &mut [u8]) -> Result<(), VmFault> {
        self.mem.read_in(self.map(), addr, dst)
    }

    /// [`DeviceMemory::read_u32s`] under the pin.
    #[inline]
    pub fn read_u32s(&self, addr: u64, out: &mut [u32]) -> Result<(), VmFault> {
        self.mem.read_u32s_in(self.map(), addr, out)
    }

    /// [`DeviceMemory::atomic_rmw_u32`] under the pin.
    pub fn atomic_rmw_u32(&self, addr: u64, f: impl FnMut(u32) -> u32) -> Result<u32, VmFault> {
        self.mem.atomic_rmw_u32_in(self.map(), addr, f)
    }

    /// [`DeviceMemory::atomic_rmw_u64`] under the pin.
    pub fn atomic_rmw_u64(&self, addr: u64, f: impl FnMut(u64) -> u64) -> Result<u64, VmFault> {
        self.mem.atomic_rmw_u64_in(self.map(), addr, f)
    }
}

impl Drop for Pinned<'_> {
    fn drop(&mut self) {
        // SAFETY: the shared lock `pin` took (held again after any
        // `unlocked`), released once.
        unsafe { self.mem.blocks.raw().unlock_shared() }
    }
}
