//! Checked device memory of the simulated GPU.
//!
//! Allocations are host memory and the GPU address of a byte is its host
//! address, so code written for a real device (which writes AQL packets and
//! kernargs through plain pointers) works unchanged. Every access made by the
//! simulated command processor or by a kernel twin goes through this module
//! and is checked against the live allocations: anything else is a VM fault
//! naming the address, as a real page fault would (address zero included).
//!
//! All raw-pointer access of the simulator is confined to this file. The
//! host side writes the same bytes through plain pointers (AQL packets,
//! kernargs) while the simulated CP reads them, as on hardware; the
//! publication protocol (header stored with release, loaded here with
//! acquire) is what orders those accesses.

use std::alloc::Layout;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering};

use parking_lot::{Mutex, RwLock};

/// Alignment of every allocation (one host page; AQL rings and IBs need
/// far less, but page alignment matches what a GPU allocator returns).
pub const ALLOCATION_ALIGN: usize = 4096;

/// How many recently freed ranges are remembered to explain use-after-free.
const FREED_HISTORY: usize = 256;

/// What an allocation is for; kept for messages and for the ordering model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemKind {
    /// Host-visible fine-grained memory (kernarg pool; IBs with the executable flag).
    HostFineGrained,
    /// Device-local memory (the GPU's coarse-grained pool).
    Device,
    /// Loaded code-object segments (descriptors and code).
    Code,
    /// An AQL queue's packet ring.
    QueueRing,
    /// Memory a runtime allocated or registered through the kernel-driver
    /// front (`crate::driver`): host pages the driver maps for the GPU.
    Driver,
}

impl MemKind {
    pub fn name(self) -> &'static str {
        match self {
            MemKind::HostFineGrained => "host fine-grained",
            MemKind::Device => "device",
            MemKind::Code => "code object",
            MemKind::QueueRing => "AQL ring",
            MemKind::Driver => "driver-mapped",
        }
    }
}

/// The kind of access that faulted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    Atomic,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Access::Read => "read",
            Access::Write => "write",
            Access::Atomic => "atomic",
        })
    }
}

/// Why an access was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultCause {
    /// No allocation, live or recently freed, contains the address.
    Unmapped,
    /// The address lies in an allocation that has been freed.
    Freed { base: u64, len: usize },
    /// The access starts inside an allocation but runs past its end.
    PastEnd { base: u64, len: usize },
    /// An atomic or release/acquire access at an address not aligned to its size.
    Misaligned { align: usize },
    /// Host memory the GPU agent was never given access to.
    NotGpuAccessible { base: u64 },
    /// The CP fetched an IB from memory allocated without the executable flag.
    NotExecutable { base: u64 },
    /// The queue running this work was inactivated: its work was discarded.
    QueueInactive,
}

/// A simulated GPU page fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("VM fault: {access} of {len} bytes at {addr:#x}: {}", describe_cause(.cause, *.addr))]
pub struct VmFault {
    pub addr: u64,
    pub len: usize,
    pub access: Access,
    pub cause: FaultCause,
}

fn describe_cause(cause: &FaultCause, addr: u64) -> String {
    match cause {
        FaultCause::Unmapped if addr == 0 => {
            "address zero is never mapped (a null pointer reached the GPU)".to_string()
        }
        FaultCause::Unmapped => "no live allocation contains this address".to_string(),
        FaultCause::Freed { base, len } => {
            format!("the allocation at {base:#x} ({len} bytes) was freed (use after free)")
        }
        FaultCause::PastEnd { base, len } => {
            format!("runs past the end of the allocation at {base:#x} ({len} bytes)")
        }
        FaultCause::Misaligned { align } => {
            format!("address must be {align}-byte aligned for this access")
        }
        FaultCause::NotGpuAccessible { base } => format!(
            "the allocation at {base:#x} is host memory the GPU agent was not given access to \
             (call hsa_amd_agents_allow_access for it)"
        ),
        FaultCause::NotExecutable { base } => format!(
            "the allocation at {base:#x} holds an IB but was allocated without \
             HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG"
        ),
        FaultCause::QueueInactive => "the queue running this work was inactivated (abandoned \
                                      after a timeout): its work is discarded"
            .to_string(),
    }
}

/// Errors of allocation and free (not faults: the caller asked for something wrong).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemoryError {
    #[error("allocation of 0 bytes refused: ask for at least one byte")]
    ZeroSize,
    #[error(
        "allocation of {requested} bytes refused: the simulated device has {available} of \
         {limit} bytes left (free memory or raise SimConfig::memory_limit)"
    )]
    OutOfMemory {
        requested: usize,
        available: usize,
        limit: usize,
    },
    #[error("host allocator could not provide {0} bytes")]
    HostAllocFailed(usize),
    #[error(
        "free of {0:#x}: not the base address of a live allocation (double free or wrong pointer)"
    )]
    NotAllocated(u64),
    #[error("range at {0:#x} overlaps memory the device already checks")]
    Overlap(u64),
}

/// A live allocation as seen by callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocationInfo {
    pub base: u64,
    pub len: usize,
    pub kind: MemKind,
}

/// Allocation counters, for leak tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryStats {
    pub live_allocations: usize,
    pub live_bytes: usize,
    pub total_allocations: u64,
}

struct Block {
    ptr: NonNull<u8>,
    /// `Some`: this module allocated the bytes and frees them; `None`:
    /// pages owned by someone else (the driver front's mappings), only
    /// checked here.
    layout: Option<Layout>,
    len: usize,
    kind: MemKind,
    opts: AllocOptions,
}

/// GPU-side properties of an allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocOptions {
    /// The GPU may access it (host pools start hidden until allow-access).
    pub gpu_visible: bool,
    /// The CP may fetch IBs from it.
    pub executable: bool,
}

impl Default for AllocOptions {
    fn default() -> Self {
        AllocOptions {
            gpu_visible: true,
            executable: true,
        }
    }
}

// SAFETY: a Block owns its host allocation exclusively; the pointer is only
// dereferenced through DeviceMemory's checked accessors under its lock.
unsafe impl Send for Block {}
// SAFETY: as above; shared access goes through atomics or the map lock.
unsafe impl Sync for Block {}

/// The allocation map: base address to block.
type Map = BTreeMap<u64, Block>;

/// The simulated device's memory: an ordered map of live allocations.
pub struct DeviceMemory {
    blocks: RwLock<BTreeMap<u64, Block>>,
    freed: Mutex<VecDeque<(u64, usize)>>,
    limit: usize,
    stats: Mutex<MemoryStats>,
}

impl fmt::Debug for DeviceMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceMemory")
            .field("limit", &self.limit)
            .field("stats", &self.stats())
            .finish()
    }
}

impl DeviceMemory {
    /// Memory that refuses to hold more than `limit` bytes at once.
    pub fn new(limit: usize) -> Self {
        hint::new_map();
        DeviceMemory {
            blocks: RwLock::new(BTreeMap::new()),
            freed: Mutex::new(VecDeque::new()),
            limit,
            stats: Mutex::new(MemoryStats::default()),
        }
    }

    /// Allocate `len` zeroed bytes, 4 KiB aligned, visible to the GPU and
    /// executable; returns the GPU (= host) address.
    pub fn allocate(&self, len: usize, kind: MemKind) -> Result<u64, MemoryError> {
        self.allocate_with(len, kind, AllocOptions::default())
    }

    /// [`DeviceMemory::allocate`] with explicit GPU-side options.
    pub fn allocate_with(
        &self,
        len: usize,
        kind: MemKind,
        opts: AllocOptions,
    ) -> Result<u64, MemoryError> {
        if len == 0 {
            return Err(MemoryError::ZeroSize);
        }
        // Reserve the bytes first so concurrent allocations cannot overshoot.
        {
            let mut stats = self.stats.lock();
            let available = self.limit.saturating_sub(stats.live_bytes);
            if len > available {
                return Err(MemoryError::OutOfMemory {
                    requested: len,
                    available,
                    limit: self.limit,
                });
            }
            stats.live_bytes += len;
        }
        let unreserve = |e: MemoryError| {
            self.stats.lock().live_bytes -= len;
            e
        };
        // Whole pages: no other host object shares a page with device
        // memory, so a process registering its own pages (which the driver
        // maps page by page) never takes in the device's.
        let layout = len
            .checked_next_multiple_of(ALLOCATION_ALIGN)
            .and_then(|padded| Layout::from_size_align(padded, ALLOCATION_ALIGN).ok())
            .ok_or_else(|| unreserve(MemoryError::HostAllocFailed(len)))?;
        // SAFETY: the layout has a non-zero size (checked above).
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or_else(|| unreserve(MemoryError::HostAllocFailed(len)))?;
        let base = ptr.as_ptr() as u64;
        self.blocks_write().insert(
            base,
            Block {
                ptr,
                layout: Some(layout),
                len,
                kind,
                opts,
            },
        );
        // A reused address is live again: forget its freed record.
        self.freed
            .lock()
            .retain(|&(b, l)| !(base < b + l as u64 && b < base + len as u64));
        let mut stats = self.stats.lock();
        stats.live_allocations += 1;
        stats.total_allocations += 1;
        tracing::trace!(base, len, kind = kind.name(), "sim allocate");
        Ok(base)
    }

    /// Free the allocation whose base address is `addr`.
    pub fn free(&self, addr: u64) -> Result<AllocationInfo, MemoryError> {
        let block = {
            let mut blocks = self.blocks_write();
            match blocks.get(&addr) {
                Some(b) if b.layout.is_some() => blocks.remove(&addr),
                _ => None,
            }
        }
        .ok_or(MemoryError::NotAllocated(addr))?;
        if let Some(layout) = block.layout {
            // SAFETY: the block came from alloc_zeroed with this layout and
            // was removed from the map under the write lock, so no checked
            // access is using it any more.
            unsafe { std::alloc::dealloc(block.ptr.as_ptr(), layout) };
        }
        self.forget(addr, block.len);
        Ok(AllocationInfo {
            base: addr,
            len: block.len,
            kind: block.kind,
        })
    }

    /// Remember a freed owned range and update the counters.
    fn forget(&self, addr: u64, len: usize) {
        remember_freed(&mut self.freed.lock(), addr, len);
        let mut stats = self.stats.lock();
        stats.live_allocations -= 1;
        stats.live_bytes -= len;
        tracing::trace!(base = addr, len, "sim free");
    }

    /// Let the GPU access the allocation containing `addr`; false when none does.
    pub fn allow_gpu_access(&self, addr: u64) -> bool {
        let mut blocks = self.blocks_write();
        match blocks.range_mut(..=addr).next_back() {
            Some((&base, block)) if addr < base + block.len as u64 => {
                block.opts.gpu_visible = true;
                true
            }
            _ => false,
        }
    }

    /// Current allocation counters.
    pub fn stats(&self) -> MemoryStats {
        *self.stats.lock()
    }

    /// The live allocation containing `addr`, if any.
    pub fn allocation_of(&self, addr: u64) -> Option<AllocationInfo> {
        let blocks = self.blocks.read();
        let (&base, block) = blocks.range(..=addr).next_back()?;
        (addr < base + block.len as u64).then_some(AllocationInfo {
            base,
            len: block.len,
            kind: block.kind,
        })
    }

    /// Check that `[addr, addr+len)` lies in one live allocation.
    pub fn check(&self, addr: u64, len: usize, access: Access) -> Result<AllocationInfo, VmFault> {
        let blocks = self.blocks.read();
        self.locate(&blocks, addr, len, access)
    }

    fn locate(
        &self,
        blocks: &BTreeMap<u64, Block>,
        addr: u64,
        len: usize,
        access: Access,
    ) -> Result<AllocationInfo, VmFault> {
        let fault = |cause| VmFault {
            addr,
            len,
            access,
            cause,
        };
        if thread_inactivated() {
            return Err(fault(FaultCause::QueueInactive));
        }
        if let Some((&base, block)) = blocks.range(..=addr).next_back() {
            let end = base + block.len as u64;
            if addr < end {
                if !block.opts.gpu_visible {
                    return Err(fault(FaultCause::NotGpuAccessible { base }));
                }
                let want_end = addr.checked_add(len as u64);
                return match want_end {
                    Some(e) if e <= end => Ok(AllocationInfo {
                        base,
                        len: block.len,
                        kind: block.kind,
                    }),
                    _ => Err(fault(FaultCause::PastEnd {
                        base,
                        len: block.len,
                    })),
                };
            }
        }
        let freed = self.freed.lock();
        let hit = freed
            .iter()
            .rev()
            .find(|&&(b, l)| addr >= b && addr < b + l as u64);
        Err(fault(match hit {
            Some(&(base, len)) => FaultCause::Freed { base, len },
            None => FaultCause::Unmapped,
        }))
    }

    /// Copy device bytes at `addr` into `dst`.
    pub fn read(&self, addr: u64, dst: &mut [u8]) -> Result<(), VmFault> {
        self.read_in(&self.blocks.read(), addr, dst)
    }

    fn read_in(&self, blocks: &Map, addr: u64, dst: &mut [u8]) -> Result<(), VmFault> {
        self.locate_hinted(blocks, addr, dst.len(), Access::Read)?;
        // SAFETY: [addr, addr+len) lies inside a live allocation, which cannot
        // be freed while we hold the read lock; dst is a distinct host buffer.
        unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    /// Copy `src` into device memory at `addr`.
    pub fn write(&self, addr: u64, src: &[u8]) -> Result<(), VmFault> {
        let blocks = self.blocks.read();
        self.locate_hinted(&blocks, addr, src.len(), Access::Write)?;
        // SAFETY: the destination range is inside a live allocation held
        // alive by the read lock; src is a distinct host buffer.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), addr as *mut u8, src.len()) };
        Ok(())
    }

    /// Read `len` bytes into a new vector (for IBs and kernargs, bounded by the allocation).
    pub fn read_vec(&self, addr: u64, len: usize) -> Result<Vec<u8>, VmFault> {
        let blocks = self.blocks.read();
        self.locate(&blocks, addr, len, Access::Read)?;
        let mut out = vec![0u8; len];
        // SAFETY: checked range inside a live allocation (read lock held).
        unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, out.as_mut_ptr(), len) };
        Ok(out)
    }

    /// Fetch an IB: `count` dwords from memory allocated executable.
    pub fn fetch_ib(&self, addr: u64, count: usize) -> Result<Vec<u32>, VmFault> {
        let info = self.check(addr, count.saturating_mul(4), Access::Read)?;
        let executable = self
            .blocks
            .read()
            .get(&info.base)
            .is_some_and(|b| b.opts.executable);
        if !executable {
            return Err(VmFault {
                addr,
                len: count.saturating_mul(4),
                access: Access::Read,
                cause: FaultCause::NotExecutable { base: info.base },
            });
        }
        self.read_dwords(addr, count)
    }

    /// Read `count` little-endian dwords (an IB) at `addr`.
    pub fn read_dwords(&self, addr: u64, count: usize) -> Result<Vec<u32>, VmFault> {
        let bytes = self.read_vec(addr, count.saturating_mul(4))?;
        Ok(bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    pub fn read_u32(&self, addr: u64) -> Result<u32, VmFault> {
        let mut b = [0u8; 4];
        self.read(addr, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    pub fn read_u64(&self, addr: u64) -> Result<u64, VmFault> {
        let mut b = [0u8; 8];
        self.read(addr, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    pub fn write_u32(&self, addr: u64, value: u32) -> Result<(), VmFault> {
        self.write(addr, &value.to_le_bytes())
    }

    pub fn write_u64(&self, addr: u64, value: u64) -> Result<(), VmFault> {
        self.write(addr, &value.to_le_bytes())
    }

    fn aligned(&self, addr: u64, align: usize, access: Access) -> Result<(), VmFault> {
        if addr % align as u64 != 0 {
            return Err(VmFault {
                addr,
                len: align,
                access,
                cause: FaultCause::Misaligned { align },
            });
        }
        Ok(())
    }

    /// Device-scope atomic add; returns the old value.
    pub fn atomic_add_u32(&self, addr: u64, value: u32) -> Result<u32, VmFault> {
        self.aligned(addr, 4, Access::Atomic)?;
        let blocks = self.blocks.read();
        self.locate(&blocks, addr, 4, Access::Atomic)?;
        // SAFETY: 4-byte aligned, inside a live allocation kept alive by the
        // read lock; all concurrent simulator access to it is atomic too.
        let atom = unsafe { AtomicU32::from_ptr(addr as *mut u32) };
        Ok(atom.fetch_add(value, Ordering::AcqRel))
    }

    /// Load with acquire ordering (AQL packet headers, signal values).
    pub fn load_u16_acquire(&self, addr: u64) -> Result<u16, VmFault> {
        self.aligned(addr, 2, Access::Read)?;
        let blocks = self.blocks.read();
        self.locate(&blocks, addr, 2, Access::Read)?;
        // SAFETY: aligned, inside a live allocation (read lock held).
        let atom = unsafe { AtomicU16::from_ptr(addr as *mut u16) };
        Ok(atom.load(Ordering::Acquire))
    }

    pub fn load_u32_acquire(&self, addr: u64) -> Result<u32, VmFault> {
        self.aligned(addr, 4, Access::Read)?;
        let blocks = self.blocks.read();
        self.locate(&blocks, addr, 4, Access::Read)?;
        // SAFETY: aligned, inside a live allocation (read lock held).
        let atom = unsafe { AtomicU32::from_ptr(addr as *mut u32) };
        Ok(atom.load(Ordering::Acquire))
    }

    /// Store with release ordering (the CP invalidating a consumed AQL slot).
    pub fn store_u32_release(&self, addr: u64, value: u32) -> Result<(), VmFault> {
        self.aligned(addr, 4, Access::Write)?;
        let blocks = self.blocks.read();
        self.locate(&blocks, addr, 4, Access::Write)?;
        // SAFETY: aligned, inside a live allocation (read lock held).
        let atom = unsafe { AtomicU32::from_ptr(addr as *mut u32) };
        atom.store(value, Ordering::Release);
        Ok(())
    }

    pub fn store_u64_release(&self, addr: u64, value: u64) -> Result<(), VmFault> {
        self.aligned(addr, 8, Access::Write)?;
        let blocks = self.blocks.read();
        self.locate(&blocks, addr, 8, Access::Write)?;
        // SAFETY: aligned, inside a live allocation (read lock held).
        let atom = unsafe { AtomicU64::from_ptr(addr as *mut u64) };
        atom.store(value, Ordering::Release);
        Ok(())
    }
}

/// Keep `[addr, addr+len)` in the bounded history of freed ranges (what
/// names a later access there as a use after free).
fn remember_freed(freed: &mut VecDeque<(u64, usize)>, addr: u64, len: usize) {
    if freed.len() == FREED_HISTORY {
        freed.pop_front();
    }
    freed.push_back((addr, len));
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        let blocks = std::mem::take(self.blocks.get_mut());
        for (_, block) in blocks {
            if let Some(layout) = block.layout {
                // SAFETY: every owned block came from alloc_zeroed with its
                // layout and we have exclusive access during drop.
                unsafe { std::alloc::dealloc(block.ptr.as_ptr(), layout) };
            }
        }
    }
}

mod adopted;
mod atomic64;
mod hint;
mod inactivation;
pub use inactivation::bind_inactivation;
use inactivation::thread_inactivated;
pub(crate) use inactivation::{bound_inactivation, BindInactivation};
mod pinned;
pub use pinned::Pinned;
mod lanes;
#[cfg(test)]
mod tests;
