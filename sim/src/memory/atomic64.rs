//! 64-bit atomics on device memory: what the command processor does to
//! a runtime's queue indices and signals (`amd_signal_t.value`).

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use super::{Access, DeviceMemory, VmFault};

impl DeviceMemory {
    pub fn load_u64_acquire(&self, addr: u64) -> Result<u64, VmFault> {
        self.aligned(addr, 8, Access::Read)?;
        let blocks = self.blocks.read();
        self.locate(&blocks, addr, 8, Access::Read)?;
        // SAFETY: 8-byte aligned, inside a live allocation (read lock held).
        let atom = unsafe { AtomicU64::from_ptr(addr as *mut u64) };
        Ok(atom.load(Ordering::Acquire))
    }

    /// Device-scope atomic add on a signed 64-bit value; returns the old value.
    pub fn atomic_add_i64(&self, addr: u64, value: i64) -> Result<i64, VmFault> {
        self.aligned(addr, 8, Access::Atomic)?;
        let blocks = self.blocks.read();
        self.locate(&blocks, addr, 8, Access::Atomic)?;
        // SAFETY: aligned, inside a live allocation (read lock held); the
        // host side updates these words atomically too.
        let atom = unsafe { AtomicI64::from_ptr(addr as *mut i64) };
        Ok(atom.fetch_add(value, Ordering::AcqRel))
    }
}
