//! What the instruction interpreter adds to device memory: per-lane
//! gathers and scatters under one lock, read-modify-write atomics of any
//! operation, and the snapshots the interpreter/twin cross-check restores.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::{Access, DeviceMemory, Map, VmFault};

impl DeviceMemory {
    /// Per-lane reads of `elem` bytes at `addrs[l]` for every lane `l` set in
    /// `mask`, into `out[l * elem..]`, under one lock (the interpreter's
    /// vector loads). Stops at the first lane that faults.
    pub fn gather(
        &self,
        addrs: &[u64],
        mask: u64,
        elem: usize,
        out: &mut [u8],
    ) -> Result<(), VmFault> {
        self.gather_in(None, addrs, mask, elem, out)
    }

    pub(super) fn gather_in(
        &self,
        held: Option<&Map>,
        addrs: &[u64],
        mask: u64,
        elem: usize,
        out: &mut [u8],
    ) -> Result<(), VmFault> {
        self.lanes(held, addrs, mask, elem, Access::Read, |l, addr| {
            // SAFETY: [addr, addr+elem) was located inside a live allocation
            // held alive by the read lock; out is a distinct host buffer of
            // at least addrs.len() * elem bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(addr as *const u8, out[l * elem..].as_mut_ptr(), elem)
            }
        })
    }

    /// Per-lane writes of `elem` bytes from `src[l * elem..]` to `addrs[l]`
    /// for every lane set in `mask`, under one lock, in lane order.
    pub fn scatter(
        &self,
        addrs: &[u64],
        mask: u64,
        elem: usize,
        src: &[u8],
    ) -> Result<(), VmFault> {
        self.scatter_in(None, addrs, mask, elem, src)
    }

    pub(super) fn scatter_in(
        &self,
        held: Option<&Map>,
        addrs: &[u64],
        mask: u64,
        elem: usize,
        src: &[u8],
    ) -> Result<(), VmFault> {
        self.lanes(held, addrs, mask, elem, Access::Write, |l, addr| {
            // SAFETY: the destination was located inside a live allocation
            // held alive by the read lock; src is a distinct host buffer.
            unsafe {
                std::ptr::copy_nonoverlapping(src[l * elem..].as_ptr(), addr as *mut u8, elem)
            }
        })
    }

    /// [`DeviceMemory::gather`] of one u32 per lane straight into `out`
    /// (lanes not in `mask` keep their value).
    pub fn gather_u32(&self, addrs: &[u64], mask: u64, out: &mut [u32]) -> Result<(), VmFault> {
        self.gather_u32_in(None, addrs, mask, out)
    }

    pub(super) fn gather_u32_in(
        &self,
        held: Option<&Map>,
        addrs: &[u64],
        mask: u64,
        out: &mut [u32],
    ) -> Result<(), VmFault> {
        self.lanes(held, addrs, mask, 4, Access::Read, |l, addr| {
            // SAFETY: [addr, addr+4) was located inside a live allocation
            // held alive by the read lock; the read may be unaligned.
            out[l] = unsafe { std::ptr::read_unaligned(addr as *const u32) }
        })
    }

    /// [`DeviceMemory::scatter`] of one u32 per lane from `src`.
    pub fn scatter_u32(&self, addrs: &[u64], mask: u64, src: &[u32]) -> Result<(), VmFault> {
        self.scatter_u32_in(None, addrs, mask, src)
    }

    pub(super) fn scatter_u32_in(
        &self,
        held: Option<&Map>,
        addrs: &[u64],
        mask: u64,
        src: &[u32],
    ) -> Result<(), VmFault> {
        self.lanes(held, addrs, mask, 4, Access::Write, |l, addr| {
            // SAFETY: [addr, addr+4) was located inside a live allocation
            // held alive by the read lock; the write may be unaligned.
            unsafe { std::ptr::write_unaligned(addr as *mut u32, src[l]) }
        })
    }

    /// `out.len()` dwords from `addr` straight into `out` (the
    /// interpreter's scalar loads into SGPRs), under one lock.
    pub fn read_u32s(&self, addr: u64, out: &mut [u32]) -> Result<(), VmFault> {
        self.read_u32s_in(&self.blocks.read(), addr, out)
    }

    #[inline]
    pub(super) fn read_u32s_in(
        &self,
        blocks: &Map,
        addr: u64,
        out: &mut [u32],
    ) -> Result<(), VmFault> {
        self.locate_hinted(blocks, addr, 4 * out.len(), Access::Read)?;
        for (i, o) in out.iter_mut().enumerate() {
            // SAFETY: [addr, addr + 4 * out.len()) was located inside a
            // live allocation held alive by the read lock; may be unaligned.
            *o = unsafe { std::ptr::read_unaligned((addr + 4 * i as u64) as *const u32) };
        }
        Ok(())
    }

    /// Whichever map the caller holds: its own read lock's, or a pin's.
    #[inline]
    fn lanes(
        &self,
        held: Option<&Map>,
        addrs: &[u64],
        mask: u64,
        elem: usize,
        access: Access,
        mut f: impl FnMut(usize, u64),
    ) -> Result<(), VmFault> {
        let guard;
        let blocks = match held {
            Some(b) => b,
            None => {
                guard = self.blocks.read();
                &*guard
            }
        };
        let n = addrs.len().min(64);
        let mask = mask & (u64::MAX >> (64 - n.max(1)));
        if n == 0 || mask == 0 {
            return Ok(());
        }
        // Every live lane inside one allocation (a coalesced or clustered
        // access to one buffer): one check covers them all. Otherwise lane
        // by lane below, which names the first lane that faults.
        let (lo, hi) = live_bounds(&addrs[..n], mask);
        if let Some(end) = hi.checked_add(elem as u64) {
            if self
                .locate_hinted(blocks, lo, (end - lo) as usize, access)
                .is_ok()
            {
                if mask == u64::MAX >> (64 - n) {
                    // Every lane: a plain pass, no bit walk.
                    for (l, &a) in addrs[..n].iter().enumerate() {
                        f(l, a);
                    }
                    return Ok(());
                }
                for l in crate::lanemask::set_lanes(mask) {
                    f(l, addrs[l]);
                }
                return Ok(());
            }
        }
        // The last allocation found: lanes mostly hit the same one.
        let mut hit: Option<(u64, u64)> = None;
        for (l, &addr) in addrs.iter().enumerate() {
            if mask >> l & 1 == 0 {
                continue;
            }
            let end = addr.checked_add(elem as u64);
            let inside = matches!((hit, end), (Some((b, e)), Some(x)) if addr >= b && x <= e);
            if !inside {
                hit = Some(self.locate_hinted(blocks, addr, elem, access)?);
            }
            f(l, addr);
        }
        Ok(())
    }

    /// Device-scope atomic read-modify-write of a u32 (the interpreter's
    /// global atomics): `f` computes the new value from the old one, which
    /// is returned.
    pub fn atomic_rmw_u32(&self, addr: u64, f: impl FnMut(u32) -> u32) -> Result<u32, VmFault> {
        self.atomic_rmw_u32_in(&self.blocks.read(), addr, f)
    }

    pub(super) fn atomic_rmw_u32_in(
        &self,
        blocks: &Map,
        addr: u64,
        mut f: impl FnMut(u32) -> u32,
    ) -> Result<u32, VmFault> {
        self.aligned(addr, 4, Access::Atomic)?;
        self.locate(blocks, addr, 4, Access::Atomic)?;
        // SAFETY: 4-byte aligned, inside a live allocation kept alive by the
        // read lock; all concurrent simulator access to it is atomic too.
        let atom = unsafe { AtomicU32::from_ptr(addr as *mut u32) };
        let old = atom.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| Some(f(v)));
        Ok(old.unwrap_or_else(|v| v))
    }

    /// [`DeviceMemory::atomic_rmw_u32`] for a u64.
    pub fn atomic_rmw_u64(&self, addr: u64, f: impl FnMut(u64) -> u64) -> Result<u64, VmFault> {
        self.atomic_rmw_u64_in(&self.blocks.read(), addr, f)
    }

    pub(super) fn atomic_rmw_u64_in(
        &self,
        blocks: &Map,
        addr: u64,
        mut f: impl FnMut(u64) -> u64,
    ) -> Result<u64, VmFault> {
        self.aligned(addr, 8, Access::Atomic)?;
        self.locate(blocks, addr, 8, Access::Atomic)?;
        // SAFETY: 8-byte aligned, inside a live allocation kept alive by the
        // read lock; all concurrent simulator access to it is atomic too.
        let atom = unsafe { AtomicU64::from_ptr(addr as *mut u64) };
        let old = atom.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| Some(f(v)));
        Ok(old.unwrap_or_else(|v| v))
    }

    /// Copies of every GPU-visible allocation (base, bytes): what the
    /// interpreter/twin cross-check restores between its two runs.
    pub fn snapshot(&self) -> Vec<(u64, Vec<u8>)> {
        let blocks = self.blocks.read();
        blocks
            .iter()
            .filter(|(_, b)| b.opts.gpu_visible)
            .map(|(&base, b)| {
                let mut out = vec![0u8; b.len];
                // SAFETY: the block is live (read lock held) and b.len long.
                unsafe {
                    std::ptr::copy_nonoverlapping(base as *const u8, out.as_mut_ptr(), b.len)
                };
                (base, out)
            })
            .collect()
    }

    /// Write a [`DeviceMemory::snapshot`] back into the allocations that are
    /// still live with the same size; returns how many were restored.
    pub fn restore(&self, snap: &[(u64, Vec<u8>)]) -> usize {
        let blocks = self.blocks.read();
        let mut n = 0;
        for (base, bytes) in snap {
            if let Some(b) = blocks.get(base) {
                if b.len == bytes.len() {
                    // SAFETY: the block is live (read lock held) and exactly
                    // bytes.len() long; the source is a host vector.
                    unsafe {
                        std::ptr::copy_nonoverlapping(bytes.as_ptr(), *base as *mut u8, bytes.len())
                    };
                    n += 1;
                }
            }
        }
        n
    }
}

/// The lowest and highest address of the live lanes (`mask` non-zero).
#[inline]
fn live_bounds(addrs: &[u64], mask: u64) -> (u64, u64) {
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    if mask == u64::MAX >> (64 - addrs.len()) {
        // Every lane: a plain pass the compiler can unroll.
        for &a in addrs {
            lo = lo.min(a);
            hi = hi.max(a);
        }
    } else {
        for l in crate::lanemask::set_lanes(mask) {
            let a = addrs[l];
            lo = lo.min(a);
            hi = hi.max(a);
        }
    }
    (lo, hi)
}
