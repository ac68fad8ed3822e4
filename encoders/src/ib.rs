//! A finished IB: segments to submit in order on one queue, the kernarg image
//! to copy to the kernarg block, and per-dispatch patch sites.

use std::ops::Range;

use relaunch_device::Family;

use crate::packet::MAX_IB_DWORDS;

/// Index of a dispatch inside one IB, in recording order.
pub type DispatchId = u32;

/// One INDIRECT_BUFFER's worth of dwords (at most 1,048,575).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub dwords: Vec<u32>,
    /// Index of the first dispatch this segment holds.
    pub first_dispatch: u32,
    pub dispatch_count: u32,
}

/// Where one dispatch's kernarg block and packets live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispatchSite {
    /// Index into `EncodedIb::segments`.
    pub segment: u32,
    /// Dword index of this dispatch's DISPATCH_DIRECT header in its segment.
    pub dispatch_dword: u32,
    /// Byte offset of the kernarg block in the image (= from the kernarg base).
    pub kernarg_offset: u32,
    pub kernarg_len: u32,
    /// Index into `EncodedIb::kernels`, or [`TRANSFER_KERNEL`] for a
    /// copy/fill node (its `dispatch_dword` is then its first DMA_DATA).
    pub kernel: u32,
}

/// `DispatchSite::kernel` of a copy/fill node (`IbBuilder::transfer`):
/// it runs no kernel.
pub const TRANSFER_KERNEL: u32 = u32::MAX;

/// A kernel referenced by the IB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelInfo {
    pub symbol: String,
    pub kd_address: u64,
}

/// Size and alignment the kernarg block must have (see `IbBuilder::kernarg_layout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernargLayout {
    pub bytes: u64,
    /// Required alignment of the block's base (a power of two, >= 16).
    pub align: u32,
    /// The block must not cross a 4 GiB boundary (see `docs/pm4.md`).
    pub within_4gib: bool,
}

/// Why a kernarg patch was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    #[error("dispatch {dispatch} does not exist; the IB has {count} dispatches")]
    NoSuchDispatch { dispatch: usize, count: usize },
    #[error("bytes {offset}..{end} are outside dispatch {dispatch}'s {len}-byte kernarg block")]
    OutOfRange {
        dispatch: usize,
        offset: usize,
        end: usize,
        len: u32,
    },
    #[error(
        "this IB was built with kernargs_immutable, so identical kernarg blocks are shared; \
         rebuild it without that option to patch kernargs"
    )]
    Shared,
}

/// The result of `IbBuilder::finish`.
#[derive(Debug, Clone)]
pub struct EncodedIb {
    pub family: Family,
    pub segments: Vec<Segment>,
    /// Bytes to copy to the kernarg block at `kernarg_base` before replay.
    pub kernarg_image: Vec<u8>,
    pub kernarg_base: u64,
    pub sites: Vec<DispatchSite>,
    pub kernels: Vec<KernelInfo>,
    /// Identical kernarg blocks were merged (patching is refused).
    pub kernargs_shared: bool,
    /// (dispatch, byte offset in the image) of each dispatch packet the
    /// builder synthesized for a kernel that reads it, in dispatch order.
    pub dispatch_packets: Vec<(DispatchId, u32)>,
}

/// The buffers of a finished IB, for another builder to record into
/// (`IbBuilder::recycle`): re-encoding a graph then writes memory the
/// process already has instead of fresh pages the OS faults in one by one.
/// Holds no content: every buffer is empty, only its capacity is kept.
#[derive(Debug, Default)]
pub struct IbStorage {
    /// One buffer per segment, in the order segments will take them.
    pub(crate) dwords: Vec<Vec<u32>>,
    pub(crate) kernargs: Vec<u8>,
    pub(crate) sites: Vec<DispatchSite>,
}

impl EncodedIb {
    /// Give up the IB, keeping its buffers' capacity for the next
    /// encoding (`IbBuilder::recycle`).
    pub fn into_storage(self) -> IbStorage {
        let mut dwords: Vec<Vec<u32>> = self.segments.into_iter().map(|s| s.dwords).collect();
        // Segments are taken from the end: the first segment's buffer last.
        dwords.reverse();
        dwords.iter_mut().for_each(Vec::clear);
        let (mut kernargs, mut sites) = (self.kernarg_image, self.sites);
        kernargs.clear();
        sites.clear();
        IbStorage {
            dwords,
            kernargs,
            sites,
        }
    }

    pub fn dispatch_count(&self) -> usize {
        self.sites.len()
    }

    /// Dwords over all segments.
    pub fn total_dwords(&self) -> usize {
        self.segments.iter().map(|s| s.dwords.len()).sum()
    }

    /// The symbol of dispatch `id`'s kernel.
    pub fn symbol(&self, id: DispatchId) -> Option<&str> {
        let site = self.sites.get(id as usize)?;
        match site.kernel {
            TRANSFER_KERNEL => Some("DMA_DATA"),
            k => Some(&self.kernels.get(k as usize)?.symbol),
        }
    }

    /// Byte range of dispatch `id`'s kernarg block in the image.
    pub fn kernarg_range(&self, id: DispatchId) -> Option<Range<usize>> {
        let s = self.sites.get(id as usize)?;
        let start = s.kernarg_offset as usize;
        Some(start..start + s.kernarg_len as usize)
    }

    /// Overwrite `bytes` at `byte_offset` inside dispatch `dispatch`'s kernarg
    /// block in the image; returns the image range changed, which the caller
    /// copies to the same offset from `kernarg_base`.
    pub fn patch_kernargs(
        &mut self,
        dispatch: usize,
        byte_offset: usize,
        bytes: &[u8],
    ) -> Result<Range<usize>, PatchError> {
        if self.kernargs_shared {
            return Err(PatchError::Shared);
        }
        let site = *self.sites.get(dispatch).ok_or(PatchError::NoSuchDispatch {
            dispatch,
            count: self.sites.len(),
        })?;
        let end = byte_offset.checked_add(bytes.len());
        match end {
            Some(end) if end <= site.kernarg_len as usize => {
                let start = site.kernarg_offset as usize + byte_offset;
                let range = start..start + bytes.len();
                self.kernarg_image[range.clone()].copy_from_slice(bytes);
                Ok(range)
            }
            _ => Err(PatchError::OutOfRange {
                dispatch,
                offset: byte_offset,
                end: end.unwrap_or(usize::MAX),
                len: site.kernarg_len,
            }),
        }
    }

    /// Byte range of dispatch `id`'s synthesized dispatch packet in the
    /// image, when its kernel reads one.
    pub fn dispatch_packet_range(&self, id: DispatchId) -> Option<Range<usize>> {
        let i = self
            .dispatch_packets
            .binary_search_by_key(&id, |&(d, _)| d)
            .ok()?;
        let start = self.dispatch_packets[i].1 as usize;
        Some(start..start + crate::dispatch_packet::DISPATCH_PACKET_BYTES)
    }

    /// True when every segment fits one INDIRECT_BUFFER.
    pub fn segments_fit(&self) -> bool {
        self.segments
            .iter()
            .all(|s| !s.dwords.is_empty() && s.dwords.len() <= MAX_IB_DWORDS as usize)
    }
}
