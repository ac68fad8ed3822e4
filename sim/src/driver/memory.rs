//! The driver's view of a process's GPU memory: what was allocated or
//! registered, on which node, with which flags, and which ranges are
//! mapped for the GPU. A mapped range is adopted by the device's checked
//! memory (`DeviceMemory::adopt`), so the one registry of what the GPU may
//! touch stays the device's; unmapping takes it back.
//!
//! Allocations are anonymous host mappings at the address the runtime
//! sees (GPU address = host address, as everywhere in the simulator). A
//! scratch reservation is address space only (no access, no backing)
//! until the runtime maps pieces of it.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;

use super::registered::Registered;
use crate::memory::{AllocOptions, DeviceMemory, MemKind};

const PAGE: u64 = 4096;

/// What the runtime asked for (the thunk's memory flags, by meaning).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemFlags {
    pub host_access: bool,
    pub executable: bool,
    /// Address space for scratch: no backing until mapped.
    pub scratch: bool,
    pub coarse_grain: bool,
    pub read_only: bool,
    pub uncached: bool,
    /// The raw flag word, handed back in pointer queries.
    pub raw: u32,
}

/// How a range came to the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Allocated by the driver (`alloc`).
    Allocated,
    /// The process's own memory, registered (`register`).
    Registered,
}

/// A range the driver knows, as pointer queries report it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionInfo {
    pub base: u64,
    pub len: u64,
    pub node: u32,
    pub flags: MemFlags,
    pub origin: Origin,
    /// Nodes the range is mapped to (at least one piece of it).
    pub mapped_nodes: Vec<u32>,
    pub user_data: u64,
}

#[derive(Debug)]
pub(super) struct Region {
    pub(super) info: RegionInfo,
    /// Mapped pieces: start -> length (adopted by the device memory).
    pub(super) mapped: BTreeMap<u64, u64>,
}

impl Region {
    pub(super) fn new(info: RegionInfo) -> Self {
        Region {
            info,
            mapped: BTreeMap::new(),
        }
    }

    /// Note a map of `[addr, addr+len)` (`len` 0: to the end) for
    /// `nodes`; the piece's length when it is not mapped yet (the caller
    /// records it in `mapped` once the device holds it).
    pub(super) fn note_map(&mut self, addr: u64, len: u64, nodes: &[u32]) -> Option<u64> {
        for n in nodes {
            if !self.info.mapped_nodes.contains(n) {
                self.info.mapped_nodes.push(*n);
            }
        }
        if self.mapped.contains_key(&addr) {
            return None;
        }
        Some(match len {
            0 => self.info.len - (addr - self.info.base),
            _ => len,
        })
    }

    /// Forget the mapped piece starting at `addr`; its length.
    pub(super) fn forget_piece(&mut self, addr: u64) -> Option<u64> {
        let len = self.mapped.remove(&addr)?;
        if self.mapped.is_empty() {
            self.info.mapped_nodes.clear();
        }
        Some(len)
    }
}

/// Errors of the driver's memory calls (the front maps them to statuses).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DriverMemoryError {
    #[error("{0:#x} is not the start of memory this driver allocated or registered")]
    Unknown(u64),
    #[error("{addr:#x}+{len:#x} is not inside memory this driver allocated or registered")]
    Outside { addr: u64, len: u64 },
    #[error("{0:#x} overlaps memory already registered")]
    AlreadyRegistered(u64),
    #[error("the host refused {len:#x} bytes of address space: {err}")]
    Host { len: u64, err: String },
    #[error("size 0 refused")]
    Empty,
    #[error("the device memory refused the mapping: {0}")]
    Device(String),
}

/// The driver's memory book of one process.
#[derive(Debug)]
pub struct DriverMemory {
    device: Arc<DeviceMemory>,
    /// What this driver allocated (disjoint: fresh host mappings).
    regions: Mutex<BTreeMap<u64, Region>>,
    /// The process's own memory (may overlap). Lock after `regions`.
    registered: Mutex<Registered>,
}

fn round_up(len: u64) -> u64 {
    len.div_ceil(PAGE) * PAGE
}

impl DriverMemory {
    pub fn new(device: Arc<DeviceMemory>) -> Self {
        DriverMemory {
            device,
            regions: Mutex::new(BTreeMap::new()),
            registered: Mutex::new(Registered::default()),
        }
    }

    /// Allocate `len` bytes (rounded up to pages) for `node`.
    pub fn alloc(&self, node: u32, len: u64, flags: MemFlags) -> Result<u64, DriverMemoryError> {
        if len == 0 {
            return Err(DriverMemoryError::Empty);
        }
        let len = round_up(len);
        let base = host_map(len, flags.scratch)?;
        self.regions.lock().insert(
            base,
            Region::new(RegionInfo {
                base,
                len,
                node,
                flags,
                origin: Origin::Allocated,
                mapped_nodes: Vec::new(),
                user_data: 0,
            }),
        );
        Ok(base)
    }

    /// Record the process's own memory `[addr, addr+len)` for mapping.
    /// Registrations may overlap one another and repeat (as the kernel
    /// driver's user-pointer objects do), not memory this driver allocated.
    pub fn register(&self, addr: u64, len: u64, flags: MemFlags) -> Result<(), DriverMemoryError> {
        if len == 0 {
            return Err(DriverMemoryError::Empty);
        }
        let regions = self.regions.lock();
        let end = addr
            .checked_add(len)
            .ok_or(DriverMemoryError::Outside { addr, len })?;
        if regions
            .range(..end)
            .next_back()
            .is_some_and(|(&b, r)| b + r.info.len > addr)
        {
            return Err(DriverMemoryError::AlreadyRegistered(addr));
        }
        self.registered.lock().register(addr, len, flags);
        Ok(())
    }

    /// Free an allocation or forget a registration (unmapping what is mapped).
    pub fn release(&self, addr: u64) -> Result<(), DriverMemoryError> {
        let mut regions = self.regions.lock();
        let Some(region) = regions.remove(&addr) else {
            return match self.registered.lock().release(&self.device, addr) {
                true => Ok(()),
                false => Err(DriverMemoryError::Unknown(addr)),
            };
        };
        drop(regions);
        for &start in region.mapped.keys() {
            let _ = self.device.release(start);
        }
        if region.info.origin == Origin::Allocated {
            host_unmap(region.info.base, region.info.len);
        }
        Ok(())
    }

    /// Map `[addr, addr+len)` (inside one known range) for `nodes`.
    pub fn map(&self, addr: u64, len: u64, nodes: &[u32]) -> Result<(), DriverMemoryError> {
        let mut regions = self.regions.lock();
        let Some(base) = find(&regions, addr, len.max(1)) else {
            let mut registered = self.registered.lock();
            return registered
                .map(&self.device, addr, len, nodes)
                .unwrap_or(Err(DriverMemoryError::Outside { addr, len }));
        };
        let region = regions.get_mut(&base).expect("found above");
        let Some(len) = region.note_map(addr, len, nodes) else {
            return Ok(());
        };
        if region.info.flags.scratch {
            host_commit(addr, len)?;
        }
        let opts = AllocOptions {
            gpu_visible: true,
            executable: region.info.flags.executable,
        };
        // SAFETY: the range lies inside a host mapping this driver created
        // (or the process registered), readable and writable (scratch was
        // committed above), and stays mapped until `unmap`/`release`
        // releases it from the device memory first.
        unsafe { self.device.adopt(addr, len as usize, MemKind::Driver, opts) }
            .map_err(|e| DriverMemoryError::Device(e.to_string()))?;
        region.mapped.insert(addr, len);
        Ok(())
    }

    /// Unmap the mapped piece starting at `addr` from every node.
    pub fn unmap(&self, addr: u64) -> Result<(), DriverMemoryError> {
        let mut regions = self.regions.lock();
        let Some(base) = find(&regions, addr, 1) else {
            let mut registered = self.registered.lock();
            return registered
                .unmap(&self.device, addr)
                .unwrap_or(Err(DriverMemoryError::Unknown(addr)));
        };
        let region = regions.get_mut(&base).expect("found above");
        let len = region
            .forget_piece(addr)
            .ok_or(DriverMemoryError::Unknown(addr))?;
        let _ = self.device.release(addr);
        if region.info.flags.scratch {
            host_decommit(addr, len);
        }
        Ok(())
    }

    /// What the driver knows of the range containing `addr`.
    pub fn query(&self, addr: u64) -> Option<RegionInfo> {
        let regions = self.regions.lock();
        match find(&regions, addr, 1) {
            Some(base) => Some(regions[&base].info.clone()),
            None => self.registered.lock().query(addr),
        }
    }

    pub fn set_user_data(&self, addr: u64, data: u64) -> Result<(), DriverMemoryError> {
        let mut regions = self.regions.lock();
        match find(&regions, addr, 1) {
            Some(base) => regions.get_mut(&base).expect("found above").info.user_data = data,
            None if self.registered.lock().set_user_data(addr, data) => {}
            None => return Err(DriverMemoryError::Unknown(addr)),
        }
        Ok(())
    }

    /// Free everything (the process closed the driver).
    pub fn release_all(&self) {
        let bases: Vec<u64> = self.regions.lock().keys().copied().collect();
        for b in bases {
            let _ = self.release(b);
        }
        self.registered.lock().release_all(&self.device);
    }
}

/// The range whose `[base, base+len)` holds `[addr, addr+len)`.
fn find(regions: &BTreeMap<u64, Region>, addr: u64, len: u64) -> Option<u64> {
    let (&base, r) = regions.range(..=addr).next_back()?;
    (addr.checked_add(len)? <= base + r.info.len).then_some(base)
}

fn host_map(len: u64, reserve_only: bool) -> Result<u64, DriverMemoryError> {
    let prot = if reserve_only {
        libc::PROT_NONE
    } else {
        libc::PROT_READ | libc::PROT_WRITE
    };
    let mut flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
    if reserve_only {
        flags |= libc::MAP_NORESERVE;
    }
    // SAFETY: an anonymous mapping at an address the kernel chooses; it
    // touches no existing memory.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), len as usize, prot, flags, -1, 0) };
    if p == libc::MAP_FAILED {
        return Err(DriverMemoryError::Host {
            len,
            err: std::io::Error::last_os_error().to_string(),
        });
    }
    Ok(p as u64)
}

fn host_unmap(base: u64, len: u64) {
    // SAFETY: `base`/`len` are a mapping `host_map` created, no longer in
    // the device memory (released before), so nothing checked reads it.
    unsafe { libc::munmap(base as *mut libc::c_void, len as usize) };
}

fn host_commit(addr: u64, len: u64) -> Result<(), DriverMemoryError> {
    // SAFETY: the range lies inside a reservation `host_map` created.
    let rc = unsafe {
        libc::mprotect(
            addr as *mut libc::c_void,
            round_up(len) as usize,
            libc::PROT_READ | libc::PROT_WRITE,
        )
    };
    if rc != 0 {
        return Err(DriverMemoryError::Host {
            len,
            err: std::io::Error::last_os_error().to_string(),
        });
    }
    Ok(())
}

fn host_decommit(addr: u64, len: u64) {
    let len = round_up(len) as usize;
    // SAFETY: inside a reservation `host_map` created, already released
    // from the device memory; its pages are dropped and made inaccessible.
    unsafe {
        libc::madvise(addr as *mut libc::c_void, len, libc::MADV_DONTNEED);
        libc::mprotect(addr as *mut libc::c_void, len, libc::PROT_NONE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Access;

    #[test]
    fn mapped_ranges_are_what_the_device_checks() {
        let dev = Arc::new(DeviceMemory::new(1 << 20));
        let mem = DriverMemory::new(Arc::clone(&dev));
        let a = mem.alloc(1, 5000, MemFlags::default()).unwrap();
        assert!(
            dev.check(a, 4, Access::Read).is_err(),
            "unmapped is a fault"
        );
        mem.map(a, 8192, &[1]).unwrap();
        dev.check(a + 8188, 4, Access::Read).unwrap();
        assert_eq!(mem.query(a + 100).unwrap().mapped_nodes, vec![1]);
        mem.unmap(a).unwrap();
        assert!(dev.check(a, 4, Access::Read).is_err());
        mem.release(a).unwrap();
        assert!(mem.query(a).is_none());
    }

    #[test]
    fn scratch_is_address_space_until_mapped() {
        let dev = Arc::new(DeviceMemory::new(1 << 20));
        let mem = DriverMemory::new(Arc::clone(&dev));
        let flags = MemFlags {
            scratch: true,
            ..MemFlags::default()
        };
        let s = mem.alloc(1, 1 << 32, flags).unwrap();
        mem.map(s + (1 << 20), 1 << 16, &[1]).unwrap();
        dev.write(s + (1 << 20), &[1, 2, 3]).unwrap();
        assert!(dev.check(s, 4, Access::Read).is_err());
        mem.unmap(s + (1 << 20)).unwrap();
        mem.release(s).unwrap();
        assert_eq!(dev.stats().live_allocations, 0);
    }
}
