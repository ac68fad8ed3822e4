//! The kernarg image: every dispatch's kernarg block, laid out as it will sit
//! at the kernarg base. Blocks start at max(16, requested) alignment and are
//! padded to 16 bytes; with immutable kernargs identical blocks are shared.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use crate::error::EncodeError;

/// Kernarg blocks are aligned to at least this (PM4.md: max(16, metadata)).
pub const MIN_KERNARG_ALIGN: u32 = 16;

/// The kernarg bytes of one IB under construction.
#[derive(Debug, Default)]
pub(crate) struct KernargImage {
    bytes: Vec<u8>,
    /// Largest block alignment used: the base must honour it.
    align: u32,
    immutable: bool,
    last_block: Option<(u32, u32)>,
    dedupe: HashMap<u64, u32>,
}

impl KernargImage {
    pub fn new(immutable: bool) -> Self {
        KernargImage {
            align: MIN_KERNARG_ALIGN,
            immutable,
            ..Default::default()
        }
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn align(&self) -> u32 {
        self.align
    }

    /// True when identical blocks are shared (`kernargs_immutable`).
    pub fn immutable(&self) -> bool {
        self.immutable
    }

    /// Append a block at the next 16-byte boundary, where the image already
    /// ends: `place` for a mutable image and an alignment of at most 16, with
    /// nothing to look up and nothing to fail (the caller checked the image
    /// stays below 4 GiB). Returns the block's offset.
    #[inline(always)]
    pub fn push_fresh(&mut self, kernarg: &[u8]) -> u32 {
        debug_assert!(!self.immutable && self.bytes.len() % MIN_KERNARG_ALIGN as usize == 0);
        let o = self.bytes.len() as u32;
        if !kernarg.is_empty() {
            push_block(&mut self.bytes, kernarg);
        }
        o
    }

    /// Record into `bytes` (empty, kept for its capacity) from now on;
    /// only before the first block.
    pub fn adopt(&mut self, bytes: Vec<u8>) {
        debug_assert!(self.bytes.is_empty() && bytes.is_empty());
        self.bytes = bytes;
    }

    pub fn reserve(&mut self, bytes: usize) {
        self.bytes.reserve(bytes);
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Offset and length of the block holding `kernarg`.
    #[inline]
    pub fn place(&mut self, kernarg: &[u8], align: u32) -> Result<(u32, u32), EncodeError> {
        if kernarg.is_empty() {
            return Ok((self.bytes.len() as u32, 0));
        }
        let len = kernarg.len() as u32;
        let align = align.max(MIN_KERNARG_ALIGN);
        let mut hash = 0;
        if self.immutable {
            if let Some((o, l)) = self.last_block {
                if l == len
                    && o & (align - 1) == 0
                    && &self.bytes[o as usize..(o + l) as usize] == kernarg
                {
                    return Ok((o, l));
                }
            }
            let mut h = std::collections::hash_map::DefaultHasher::new();
            kernarg.hash(&mut h);
            hash = h.finish();
            if let Some(&o) = self.dedupe.get(&hash) {
                let range = o as usize..o as usize + kernarg.len();
                if o & (align - 1) == 0 && self.bytes.get(range) == Some(kernarg) {
                    self.last_block = Some((o, len));
                    return Ok((o, len));
                }
            }
        }
        // align is a power of two: round up with a mask, not a division.
        let start = (self.bytes.len() as u64 + align as u64 - 1) & !(align as u64 - 1);
        let end = start + kernarg.len() as u64;
        if end > u32::MAX as u64 {
            return Err(EncodeError::KernargImageTooLarge);
        }
        if start as usize > self.bytes.len() {
            self.bytes.resize(start as usize, 0);
        }
        push_block(&mut self.bytes, kernarg);
        self.align = self.align.max(align);
        let o = start as u32;
        self.last_block = Some((o, len));
        if self.immutable {
            self.dedupe.entry(hash).or_insert(o);
        }
        Ok((o, len))
    }
}

/// Append `bytes` and zero-pad the image to a multiple of 16 bytes, so the
/// next block needs no padding at the usual 16-byte alignment. Small blocks
/// are written with fixed-size copies, which compile to a few stores where a
/// variable-length copy is a library call; this runs once per dispatch.
/// Nothing is assembled on the stack first, and the caller's bytes are
/// read 8 at a time: a wider load spanning the caller's last stores into
/// its block (a pointer or an index written over a copied template) waits
/// for them to reach the cache instead of being forwarded.
#[inline(always)]
fn push_block(image: &mut Vec<u8>, bytes: &[u8]) {
    let (at, len) = (image.len(), bytes.len());
    if let Ok(b) = <[u8; 8]>::try_from(bytes) {
        // One 16-byte append built in a register: byte-wise stores would make
        // the compiler reload the vector's length after each (a byte store
        // may alias it).
        let chunk = (u64::from_le_bytes(b) as u128).to_le_bytes();
        image.extend_from_slice(&chunk);
    } else if let (Some(tail), true) = (bytes.last_chunk::<8>(), (16..=32).contains(&len)) {
        // 16..=32 bytes: 32 zeros, then the 8-byte pieces over them in
        // place (the last one ending at the block's end, overlapping when
        // the length is not a multiple of 8); the padding stays zero.
        image.extend_from_slice(&[0u8; 32]);
        let block = &mut image[at..at + 32];
        for (to, from) in block.chunks_exact_mut(8).zip(bytes.chunks_exact(8)) {
            to.copy_from_slice(from);
        }
        block[len - 8..len].copy_from_slice(tail);
        image.truncate(at + len.div_ceil(16) * 16);
    } else {
        image.extend_from_slice(bytes);
        let padded = (image.len() + 15) & !15;
        image.resize(padded, 0);
    }
}
