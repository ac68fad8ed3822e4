//! Memory pools and allocations: the CPU agent's kernarg and fine-grained
//! host pools (IBs and kernargs live there), the GPU's device pool, and an
//! RAII allocation that frees itself and bounds-checks host access.

use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::Arc;

use relaunch_hsa_sys as sys;

use super::agent::{AgentInfo, DeviceKind};
use super::runtime::{Runtime, RuntimeInner};
use super::HsaError;

/// One AMD memory pool of one agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolInfo {
    pub handle: sys::MemoryPool,
    pub owner: sys::Agent,
    /// `hsa_amd_segment_t`.
    pub segment: u32,
    /// `HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_*` bits (global segment only).
    pub global_flags: u32,
    pub size: usize,
    pub alloc_allowed: bool,
    pub granule: usize,
    pub alignment: usize,
    /// Owned by a CPU agent: host memory the host may read and write.
    pub host_accessible: bool,
}

impl PoolInfo {
    pub fn is_global(&self) -> bool {
        self.segment == sys::HSA_AMD_SEGMENT_GLOBAL
    }
    pub fn is_kernarg(&self) -> bool {
        self.is_global()
            && self.global_flags & sys::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT != 0
    }
    pub fn is_fine_grained(&self) -> bool {
        self.is_global()
            && self.global_flags & sys::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED != 0
    }
    pub fn is_coarse_grained(&self) -> bool {
        self.is_global()
            && self.global_flags & sys::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED != 0
    }
}

/// Options of one allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AllocFlags {
    /// The CP may fetch from it: required for PM4 indirect buffers.
    pub executable: bool,
}

const MAX_POOLS: usize = 256;

unsafe extern "C" fn collect_pool(pool: sys::MemoryPool, data: *mut c_void) -> sys::Status {
    // SAFETY: `data` is the `&mut Vec<MemoryPool>` owned by `list_pools`,
    // live and unaliased for the whole walk.
    let list = unsafe { &mut *data.cast::<Vec<sys::MemoryPool>>() };
    if list.len() >= MAX_POOLS {
        return sys::HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    list.push(pool);
    sys::HSA_STATUS_SUCCESS
}

/// Raw `hsa_amd_memory_pool_get_info` into `T`.
///
/// # Safety
/// `T` must be the type the runtime writes for `attribute`.
unsafe fn pool_info<T: Copy>(
    inner: &RuntimeInner,
    pool: sys::MemoryPool,
    attribute: sys::MemoryPoolInfo,
    call: &'static str,
    init: T,
) -> Result<T, HsaError> {
    let mut value = init;
    // SAFETY: pool from this runtime's walk; `T` matches per the caller.
    let status = unsafe {
        (inner.api().amd_memory_pool_get_info)(
            pool,
            attribute,
            (&mut value as *mut T).cast::<c_void>(),
        )
    };
    inner.check(call, status)?;
    Ok(value)
}

impl Runtime {
    /// Every memory pool of `agent`, with its properties.
    pub fn pools(&self, agent: &AgentInfo) -> Result<Vec<PoolInfo>, HsaError> {
        let inner = &*self.inner;
        let mut handles: Vec<sys::MemoryPool> = Vec::new();
        // SAFETY: agent from this runtime; callback does not unwind; `handles`
        // outlives the call.
        let status = unsafe {
            (inner.api().amd_agent_iterate_memory_pools)(
                agent.handle,
                collect_pool,
                (&mut handles as *mut Vec<sys::MemoryPool>).cast(),
            )
        };
        inner.check("hsa_amd_agent_iterate_memory_pools", status)?;
        handles
            .into_iter()
            .map(|handle| {
                // SAFETY (all below): types as documented in hsa_ext_amd.h:
                // segment and flags are u32 enums, sizes are size_t, the
                // allowed flag is a C bool (one byte).
                let segment = unsafe {
                    pool_info(
                        inner,
                        handle,
                        sys::HSA_AMD_MEMORY_POOL_INFO_SEGMENT,
                        "pool SEGMENT",
                        0u32,
                    )
                }?;
                let global_flags = if segment == sys::HSA_AMD_SEGMENT_GLOBAL {
                    unsafe {
                        pool_info(
                            inner,
                            handle,
                            sys::HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
                            "pool GLOBAL_FLAGS",
                            0u32,
                        )
                    }?
                } else {
                    0
                };
                let size = unsafe {
                    pool_info(
                        inner,
                        handle,
                        sys::HSA_AMD_MEMORY_POOL_INFO_SIZE,
                        "pool SIZE",
                        0usize,
                    )
                }?;
                let alloc_allowed = unsafe {
                    pool_info(
                        inner,
                        handle,
                        sys::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
                        "pool RUNTIME_ALLOC_ALLOWED",
                        0u8,
                    )
                }? != 0;
                let (granule, alignment) = if alloc_allowed {
                    (
                        unsafe {
                            pool_info(
                                inner,
                                handle,
                                sys::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE,
                                "pool GRANULE",
                                0usize,
                            )
                        }?,
                        unsafe {
                            pool_info(
                                inner,
                                handle,
                                sys::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT,
                                "pool ALIGNMENT",
                                0usize,
                            )
                        }?,
                    )
                } else {
                    (0, 0)
                };
                Ok(PoolInfo {
                    handle,
                    owner: agent.handle,
                    segment,
                    global_flags,
                    size,
                    alloc_allowed,
                    granule,
                    alignment,
                    host_accessible: agent.kind == DeviceKind::Cpu,
                })
            })
            .collect()
    }

    fn find_pool(
        &self,
        agent: &AgentInfo,
        wanted: &'static str,
        pick: impl Fn(&PoolInfo) -> bool,
    ) -> Result<PoolInfo, HsaError> {
        self.pools(agent)?
            .into_iter()
            .find(|p| p.alloc_allowed && pick(p))
            .ok_or_else(|| HsaError::NoPool {
                agent: agent.name.clone(),
                wanted,
            })
    }

    /// The CPU agent's kernarg pool (global, KERNARG_INIT): kernargs and IBs.
    pub fn kernarg_pool(&self) -> Result<PoolInfo, HsaError> {
        let cpu = self.cpu()?;
        self.find_pool(cpu, "kernarg (global, KERNARG_INIT)", PoolInfo::is_kernarg)
    }

    /// The CPU agent's fine-grained host pool.
    pub fn host_fine_grained_pool(&self) -> Result<PoolInfo, HsaError> {
        let cpu = self.cpu()?;
        self.find_pool(cpu, "fine-grained host", PoolInfo::is_fine_grained)
    }

    /// `gpu`'s device-local pool (global, coarse-grained VRAM).
    pub fn device_pool(&self, gpu: &AgentInfo) -> Result<PoolInfo, HsaError> {
        self.find_pool(
            gpu,
            "device-local (global, coarse-grained)",
            PoolInfo::is_coarse_grained,
        )
    }

    /// Allocates `len` bytes from `pool`.
    pub fn allocate(
        &self,
        pool: &PoolInfo,
        len: usize,
        flags: AllocFlags,
    ) -> Result<Allocation, HsaError> {
        if len == 0 {
            return Err(HsaError::Invalid {
                what: "allocation size",
                problem: "0 bytes requested; ask for at least one byte".to_string(),
            });
        }
        if !pool.alloc_allowed {
            return Err(HsaError::Invalid {
                what: "memory pool",
                problem: "the runtime does not allow allocations from this pool".to_string(),
            });
        }
        let with_flag = flags.executable && self.inner.exec_flag.ask();
        let raw_flags = if with_flag {
            sys::HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG
        } else {
            sys::HSA_AMD_MEMORY_POOL_STANDARD_FLAG
        };
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: pool from this runtime; `ptr` is a valid out-pointer.
        let mut status = unsafe {
            (self.inner.api().amd_memory_pool_allocate)(pool.handle, len, raw_flags, &mut ptr)
        };
        if with_flag && status == sys::HSA_STATUS_ERROR_INVALID_ARGUMENT {
            // A runtime that predates the flag; its thunk maps every
            // allocation executable (see `ib_memory`).
            if self.inner.exec_flag.refused() {
                tracing::info!(
                    origin = %self.inner.hsa.origin,
                    "the runtime predates HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG; IBs go to \
                     ordinary allocations, which its thunk maps executable"
                );
            }
            // SAFETY: as above.
            status = unsafe {
                (self.inner.api().amd_memory_pool_allocate)(
                    pool.handle,
                    len,
                    sys::HSA_AMD_MEMORY_POOL_STANDARD_FLAG,
                    &mut ptr,
                )
            };
        }
        self.inner.check("hsa_amd_memory_pool_allocate", status)?;
        let ptr = NonNull::new(ptr.cast::<u8>()).ok_or_else(|| HsaError::Call {
            call: "hsa_amd_memory_pool_allocate",
            status,
            message: "success with a null pointer".to_string(),
        })?;
        Ok(Allocation {
            inner: Arc::clone(&self.inner),
            ptr,
            len,
            host_accessible: pool.host_accessible,
        })
    }
}

/// Memory from a pool, freed on drop. Keeps the runtime alive.
#[derive(Debug)]
pub struct Allocation {
    inner: Arc<RuntimeInner>,
    ptr: NonNull<u8>,
    len: usize,
    host_accessible: bool,
}

// SAFETY: the allocation is plain process memory owned by this value; host
// writes need `&mut self`, reads `&self`, so Rust's aliasing rules hold for
// host access. (The GPU writing it concurrently is ordered by HSA signals.)
unsafe impl Send for Allocation {}
// SAFETY: as above; `&self` methods only read.
unsafe impl Sync for Allocation {}

impl Allocation {
    /// GPU (and, for host pools, CPU) virtual address.
    pub fn addr(&self) -> u64 {
        self.ptr.as_ptr() as u64
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn host_accessible(&self) -> bool {
        self.host_accessible
    }

    fn host_range(&self, offset: usize, len: usize) -> Result<*mut u8, HsaError> {
        if !self.host_accessible {
            return Err(HsaError::NotHostAccessible { addr: self.addr() });
        }
        match offset.checked_add(len) {
            Some(end) if end <= self.len => {
                // SAFETY: offset + len <= self.len, inside the allocation.
                Ok(unsafe { self.ptr.as_ptr().add(offset) })
            }
            _ => Err(HsaError::OutOfBounds {
                target: "allocation",
                offset,
                len,
                size: self.len,
            }),
        }
    }

    /// The host address of `offset..offset + len` (host pools only), for
    /// writers that order their accesses themselves (e.g. kernarg patches
    /// kept apart from replays by the scheduler's protocol). Dereferencing
    /// it is the caller's `unsafe`: the allocation must still be alive and
    /// no other access may overlap.
    pub fn host_ptr(&self, offset: usize, len: usize) -> Result<*mut u8, HsaError> {
        self.host_range(offset, len)
    }

    /// Bounds check of `offset..offset + len`, for any pool.
    fn range(&self, offset: usize, len: usize) -> Result<*mut u8, HsaError> {
        match offset.checked_add(len) {
            // SAFETY: offset + len <= self.len, inside the allocation.
            Some(end) if end <= self.len => Ok(unsafe { self.ptr.as_ptr().add(offset) }),
            _ => Err(HsaError::OutOfBounds {
                target: "allocation",
                offset,
                len,
                size: self.len,
            }),
        }
    }

    /// `hsa_memory_copy` (the runtime's own copy: a blit for device-local
    /// memory), returning when the copy is done.
    fn runtime_copy(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<(), HsaError> {
        if len == 0 {
            return Ok(());
        }
        // SAFETY: one side is inside this live allocation (bounds checked
        // by the caller), the other is a host buffer of `len` bytes the
        // caller borrows for the duration of this synchronous call.
        let status = unsafe {
            (self.inner.api().memory_copy)(dst.cast::<c_void>(), src.cast::<c_void>(), len)
        };
        self.inner.check("hsa_memory_copy", status)
    }

    /// Copies `bytes` to `offset`: a plain store for host pools, the
    /// runtime's copy (`hsa_memory_copy`) for device-local memory.
    pub fn write(&mut self, offset: usize, bytes: &[u8]) -> Result<(), HsaError> {
        if !self.host_accessible {
            let dst = self.range(offset, bytes.len())?;
            return self.runtime_copy(dst, bytes.as_ptr(), bytes.len());
        }
        let dst = self.host_range(offset, bytes.len())?;
        // SAFETY: `dst..dst+len` is inside this host allocation (checked) and
        // cannot overlap `bytes`, which Rust owns elsewhere.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len()) };
        Ok(())
    }

    /// Copies from `offset` into `out`: a plain load for host pools, the
    /// runtime's copy (`hsa_memory_copy`) for device-local memory.
    pub fn read(&self, offset: usize, out: &mut [u8]) -> Result<(), HsaError> {
        if !self.host_accessible {
            let src = self.range(offset, out.len())?;
            return self.runtime_copy(out.as_mut_ptr(), src, out.len());
        }
        let src = self.host_range(offset, out.len())?;
        // SAFETY: `src..src+len` is inside this host allocation (checked).
        unsafe { std::ptr::copy_nonoverlapping(src, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    /// Zero-fills the whole allocation on the device side
    /// (`hsa_amd_memory_fill`), which also reaches device-local memory the
    /// host cannot write.
    pub fn fill_zero(&mut self) -> Result<(), HsaError> {
        let dwords = self.len / 4;
        if dwords > 0 {
            // SAFETY: live allocation of this runtime; the fill covers whole
            // dwords inside it (len / 4), and pool allocations are aligned.
            let status = unsafe {
                (self.inner.api().amd_memory_fill)(self.ptr.as_ptr().cast::<c_void>(), 0, dwords)
            };
            self.inner.check("hsa_amd_memory_fill", status)?;
        }
        let tail = self.len % 4;
        if tail != 0 {
            // The device fill covers whole dwords; the last 1-3 bytes go
            // through `write` (a store, or the runtime's copy).
            let start = self.len - tail;
            self.write(start, &[0; 3][..tail])?;
        }
        Ok(())
    }

    /// Lets `agents` access this memory (`hsa_amd_agents_allow_access`).
    pub fn allow_access(&self, agents: &[&AgentInfo]) -> Result<(), HsaError> {
        if agents.is_empty() {
            return Ok(());
        }
        let handles: Vec<sys::Agent> = agents.iter().map(|a| a.handle).collect();
        // SAFETY: live allocation of this runtime; `handles` outlives the call;
        // flags must be null.
        let status = unsafe {
            (self.inner.api().amd_agents_allow_access)(
                handles.len() as u32,
                handles.as_ptr(),
                std::ptr::null(),
                self.ptr.as_ptr().cast::<c_void>(),
            )
        };
        self.inner.check("hsa_amd_agents_allow_access", status)
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        // SAFETY: the pointer came from hsa_amd_memory_pool_allocate of this
        // runtime, which is still initialised (we hold its Arc).
        let status = unsafe { (self.inner.api().amd_memory_pool_free)(self.ptr.as_ptr().cast()) };
        if status != sys::HSA_STATUS_SUCCESS {
            tracing::warn!(
                addr = self.addr(),
                "hsa_amd_memory_pool_free failed: {}",
                self.inner.describe(status)
            );
        }
    }
}
