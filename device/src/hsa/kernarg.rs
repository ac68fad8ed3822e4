//! Kernarg arena: one kernarg-pool allocation, sub-allocated into aligned
//! blocks and freed as a whole, instead of one pool granule per dispatch.

use super::agent::AgentInfo;
use super::memory::{AllocFlags, Allocation};
use super::runtime::Runtime;
use super::HsaError;

/// Minimum kernarg block alignment (the HSA kernarg segment's).
pub const KERNARG_MIN_ALIGN: usize = 16;
/// Largest alignment accepted for a block: larger is a caller bug.
pub const KERNARG_MAX_ALIGN: usize = 4096;

/// A block inside an arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernargBlock {
    /// Offset from the arena's start.
    pub offset: usize,
    pub len: usize,
    /// GPU address (what goes into the kernarg pointer user SGPRs).
    pub addr: u64,
}

/// Where the next block of `len` bytes aligned to `align` goes, given the
/// arena's base address, bytes used and capacity. Pure, so it is tested
/// without a runtime. `align` is raised to at least 16.
pub fn place_block(
    base: u64,
    used: usize,
    capacity: usize,
    len: usize,
    align: usize,
) -> Result<KernargBlock, HsaError> {
    if len == 0 {
        return Err(HsaError::Invalid {
            what: "kernarg block size",
            problem: "0 bytes requested; a kernel without arguments needs no block".to_string(),
        });
    }
    if !align.is_power_of_two() || align > KERNARG_MAX_ALIGN {
        return Err(HsaError::Invalid {
            what: "kernarg alignment",
            problem: format!("{align} is not a power of two up to {KERNARG_MAX_ALIGN}"),
        });
    }
    let align = align.max(KERNARG_MIN_ALIGN);
    let full = || HsaError::ArenaFull {
        requested: len,
        align,
        used,
        capacity,
    };
    let cursor = base.checked_add(used as u64).ok_or_else(full)?;
    let aligned = cursor
        .checked_next_multiple_of(align as u64)
        .ok_or_else(full)?;
    let offset = usize::try_from(aligned - base).map_err(|_| full())?;
    let end = offset.checked_add(len).ok_or_else(full)?;
    if end > capacity {
        return Err(full());
    }
    Ok(KernargBlock {
        offset,
        len,
        addr: aligned,
    })
}

/// One kernarg-pool allocation handed out in aligned blocks.
#[derive(Debug)]
pub struct KernargArena {
    memory: Allocation,
    used: usize,
}

impl KernargArena {
    /// Allocates `capacity` bytes from the CPU kernarg pool and lets `gpus`
    /// read them.
    pub fn new(runtime: &Runtime, capacity: usize, gpus: &[&AgentInfo]) -> Result<Self, HsaError> {
        let pool = runtime.kernarg_pool()?;
        let memory = runtime.allocate(&pool, capacity, AllocFlags::default())?;
        memory.allow_access(gpus)?;
        Ok(Self { memory, used: 0 })
    }

    /// Reserves `len` bytes aligned to `max(16, align)`.
    pub fn alloc(&mut self, len: usize, align: usize) -> Result<KernargBlock, HsaError> {
        let block = place_block(self.memory.addr(), self.used, self.memory.len(), len, align)?;
        self.used = block.offset + block.len;
        Ok(block)
    }

    /// Writes `bytes` at `offset` inside `block`.
    pub fn write(
        &mut self,
        block: &KernargBlock,
        offset: usize,
        bytes: &[u8],
    ) -> Result<(), HsaError> {
        check_in_block(block, offset, bytes.len())?;
        self.memory.write(block.offset + offset, bytes)
    }

    /// Reads `out.len()` bytes at `offset` inside `block`.
    pub fn read(
        &self,
        block: &KernargBlock,
        offset: usize,
        out: &mut [u8],
    ) -> Result<(), HsaError> {
        check_in_block(block, offset, out.len())?;
        self.memory.read(block.offset + offset, out)
    }

    /// Forgets every block (their memory is reused by later `alloc`s).
    pub fn reset(&mut self) {
        self.used = 0;
    }

    pub fn used(&self) -> usize {
        self.used
    }
    pub fn capacity(&self) -> usize {
        self.memory.len()
    }
    pub fn base_addr(&self) -> u64 {
        self.memory.addr()
    }
}

fn check_in_block(block: &KernargBlock, offset: usize, len: usize) -> Result<(), HsaError> {
    match offset.checked_add(len) {
        Some(end) if end <= block.len => Ok(()),
        _ => Err(HsaError::OutOfBounds {
            target: "kernarg block",
            offset,
            len,
            size: block.len,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_to_at_least_16_and_packed() {
        let base = 0x7f00_0000_1000;
        let a = place_block(base, 0, 4096, 8, 4).unwrap();
        assert_eq!((a.offset, a.addr), (0, base));
        let b = place_block(base, a.offset + a.len, 4096, 24, 8).unwrap();
        assert_eq!(b.offset, 16);
        let c = place_block(base, b.offset + b.len, 4096, 4, 64).unwrap();
        assert_eq!(c.offset, 64);
        assert_eq!(c.addr % 64, 0);
    }

    #[test]
    fn alignment_is_absolute_even_for_an_odd_base() {
        let block = place_block(0x1008, 0, 256, 4, 16).unwrap();
        assert_eq!(block.addr, 0x1010);
        assert_eq!(block.offset, 8);
    }

    #[test]
    fn a_block_that_does_not_fit_is_arena_full() {
        let err = place_block(0x1000, 100, 128, 32, 16).unwrap_err();
        assert_eq!(
            err,
            HsaError::ArenaFull {
                requested: 32,
                align: 16,
                used: 100,
                capacity: 128
            }
        );
        assert!(err
            .to_string()
            .starts_with("kernarg arena exhausted: 32 bytes aligned to 16"));
        // Exactly filling the arena is fine.
        assert_eq!(place_block(0x1000, 96, 128, 32, 16).unwrap().offset, 96);
    }

    #[test]
    fn bad_sizes_and_alignments_are_refused() {
        assert!(matches!(
            place_block(0x1000, 0, 128, 0, 16),
            Err(HsaError::Invalid {
                what: "kernarg block size",
                ..
            })
        ));
        for align in [3, 0, 8192] {
            let err = place_block(0x1000, 0, 128, 8, align).unwrap_err();
            assert!(
                err.to_string().contains("is not a power of two up to 4096"),
                "{err}"
            );
        }
        assert!(matches!(
            place_block(u64::MAX - 4, 0, usize::MAX, 8, 16),
            Err(HsaError::ArenaFull { .. })
        ));
    }

    #[test]
    fn block_bounds_are_checked() {
        let block = KernargBlock {
            offset: 32,
            len: 16,
            addr: 0,
        };
        assert!(check_in_block(&block, 8, 8).is_ok());
        assert_eq!(
            check_in_block(&block, 12, 8).unwrap_err().to_string(),
            "access of 8 bytes at offset 12 is outside the 16-byte kernarg block"
        );
        assert!(check_in_block(&block, usize::MAX, 2).is_err());
    }
}
