//! The crate's error types: what was wrong and what to do about it.

use crate::verdict::Refusal;
use relaunch_device::Family;

/// Why a dispatch, boundary or finish was refused by the encoder.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error(
        "kernel {symbol} cannot run on the direct PM4 path: {}; \
         launch it through a regular AQL dispatch instead",
        join(.reasons)
    )]
    Refused {
        symbol: String,
        reasons: Vec<Refusal>,
    },
    #[error(
        "kernel {symbol} was built for {kernel} but this IB encodes for {builder}; \
         load the code object built for the device's target"
    )]
    FamilyMismatch {
        symbol: String,
        kernel: Family,
        builder: Family,
    },
    #[error("kernel {symbol}: grid {grid:?} / block {block:?} has a zero dimension; every dimension must be at least 1")]
    ZeroDimension {
        symbol: String,
        grid: [u32; 3],
        block: [u32; 3],
    },
    #[error(
        "kernel {symbol}: grid {grid} work-items on axis {axis} is not a whole multiple of block {block}; \
         partial workgroups are not supported, round the grid up and bounds-check in the kernel"
    )]
    NonIntegralGrid {
        symbol: String,
        axis: char,
        grid: u32,
        block: u32,
    },
    #[error(
        "kernel {symbol}: grid {grid:?} has more work-items than the {} one dispatch may have",
        crate::dispatch::MAX_GRID_WORK_ITEMS
    )]
    GridTooLarge { symbol: String, grid: [u32; 3] },
    #[error("kernel {symbol}: block of {work_items} work-items exceeds the limit of {limit}")]
    BlockTooLarge {
        symbol: String,
        work_items: u64,
        limit: u32,
    },
    #[error(
        "kernel {symbol}: {bytes} bytes of LDS (static + dynamic group segment) exceed the {limit} bytes \
         one workgroup may use"
    )]
    LdsTooLarge {
        symbol: String,
        bytes: u64,
        limit: u32,
    },
    #[error(
        "kernel {symbol}: code entry {entry:#x} is not 256-byte aligned; \
         COMPUTE_PGM_LO cannot address it (is kd_address the descriptor's GPU address?)"
    )]
    MisalignedCodeEntry { symbol: String, entry: u64 },
    #[error("kernel {symbol}: code entry {entry:#x} is beyond the 48-bit address COMPUTE_PGM_HI can hold")]
    CodeEntryOutOfRange { symbol: String, entry: u64 },
    #[error(
        "recycle: this builder has already recorded {dispatches} dispatches; recycle a finished \
         IB's storage into a builder before its first dispatch"
    )]
    RecycleAfterRecording { dispatches: usize },
    #[error("kernel {symbol}: kernarg alignment {align} is not a power of two up to 4096")]
    BadKernargAlign { symbol: String, align: u32 },
    #[error(
        "kernel {symbol}: its descriptor says the kernarg segment is {need} bytes but only {got} \
         were given; pass the whole segment, hidden arguments included"
    )]
    KernargTooShort {
        symbol: String,
        need: u32,
        got: usize,
    },
    #[error(
        "kernel {symbol} takes no kernarg pointer, yet {got} kernarg bytes were given; \
         pass an empty kernarg slice"
    )]
    KernargUnused { symbol: String, got: usize },
    #[error(
        "kernel {symbol}: its template was interned for {template}-byte kernarg blocks, yet \
         {got} bytes were given; intern a template for this length"
    )]
    KernargLengthMismatch {
        symbol: String,
        template: usize,
        got: usize,
    },
    #[error(
        "the template id was interned by another IbBuilder; ids are valid only with the \
         builder that made them"
    )]
    ForeignTemplate,
    #[error("the kernarg image would exceed 4 GiB; split the work over several IBs")]
    KernargImageTooLarge,
    #[error("an IB holds at most {max} dispatches")]
    TooManyDispatches { max: u32 },
    #[error(
        "kernarg base {base:#x} is not aligned to {align} bytes, as kernarg_layout() requires"
    )]
    MisalignedKernargBase { base: u64, align: u32 },
    #[error(
        "kernarg block [{base:#x}, +{bytes:#x}) crosses a 4 GiB boundary; the encoder programs only \
         the low pointer dword after the first dispatch, so allocate the block inside one 4 GiB window"
    )]
    KernargCrosses4GiB { base: u64, bytes: u64 },
    #[error("no dispatches were recorded; an IB needs at least one dispatch")]
    Empty,
    #[error(
        "a transfer node ({ops} copy/fill ops) runs as CP DMA_DATA, which only the PM4 path \
         has; the public-AQL path has no copy kernel yet, so keep transfers in PM4 lanes"
    )]
    AqlTransfer { ops: usize },
    #[error("transfer {op:?} cannot be a DMA_DATA: {why}")]
    BadTransfer { op: crate::dma::DmaOp, why: String },
    #[error("a transfer node takes {packets} DMA_DATA packets; at most {max} are allowed (split the transfer or use fewer, longer rows)")]
    TransferTooLong { packets: usize, max: usize },
    #[error(
        "stream-order {what} word at {address:#x}: it must be a non-zero, 4-byte aligned \
         address below 2^48"
    )]
    BadStreamWord { what: &'static str, address: u64 },
    #[error(
        "timestamp slots at {address:#x}: a profiled IB needs a nonzero, 8-byte aligned address \
         for its timestamp memory"
    )]
    BadTimestampSlots { address: u64 },
    #[error(
        "segment {segment} would hold {dwords} dwords with its timestamps, over the \
         INDIRECT_BUFFER limit of {max}; record the IB with a smaller max_segment_dwords \
         (or fewer dispatches) to profile it"
    )]
    ProfiledSegmentTooLong {
        segment: usize,
        dwords: usize,
        max: u32,
    },
    #[error("scratch for the IB's kernels: {reason}")]
    Scratch { reason: String },
    #[error(
        "the IB has kernels with scratch (private segment), so it needs a scratch backing: \
         finish it with finish_with_scratch (the queue's installer allocates one from \
         IbBuilder::scratch_need)"
    )]
    ScratchNotProvided,
}

impl EncodeError {
    /// True when what the PM4 path cannot honour is the kernel's own
    /// contract (its verdict: scratch, hostcall, user SGPRs, ...; its
    /// family; where its code sits; the LDS it needs) rather than the
    /// arguments of one launch. The reference C ABI reports those as
    /// compile refusals (its guide: "PM4 compilation rejects the kernel").
    pub fn refuses_kernel(&self) -> bool {
        matches!(
            self,
            EncodeError::Refused { .. }
                | EncodeError::FamilyMismatch { .. }
                | EncodeError::LdsTooLarge { .. }
                | EncodeError::MisalignedCodeEntry { .. }
                | EncodeError::CodeEntryOutOfRange { .. }
        )
    }
}

/// Refusal reasons as one line, comma-separated (messages and the facade's
/// typed `RefusedKernel` reason).
pub fn join(reasons: &[Refusal]) -> String {
    let v: Vec<String> = reasons.iter().map(|r| r.to_string()).collect();
    v.join(", ")
}

/// Why a packet cannot be decoded: the framing error of the PM4 format,
/// shared with the simulated CP (`relaunch_facts::frame`).
pub use relaunch_facts::frame::FrameError as DecodeError;
