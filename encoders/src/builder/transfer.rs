//! Copies and fills recorded between dispatches (`IbBuilder::transfer`):
//! each transfer node is one site in dispatch order, so node positions in a
//! lane and dispatch ids stay the same numbers, with an empty kernarg block.

use super::IbBuilder;
use crate::boundary::EPILOGUE_DWORDS;
use crate::dma::{self, DmaOp, DMA_DATA_DWORDS, MAX_DMA_PACKETS_PER_NODE};
use crate::error::EncodeError;
use crate::ib::{DispatchId, DispatchSite, TRANSFER_KERNEL};

/// Room one boundary before a transfer may take (an RMW boundary).
const BOUNDARY_DWORDS: usize = 10;

impl IbBuilder {
    /// Record a copy/fill node: `ops` in order as DMA_DATA packets (with
    /// CP_SYNC), after the pending boundary like a dispatch. The node gets
    /// the next dispatch id; its kernarg block is empty (nothing to patch).
    pub fn transfer(&mut self, ops: &[DmaOp]) -> Result<DispatchId, EncodeError> {
        if ops.is_empty() {
            return Err(EncodeError::TransferTooLong {
                packets: 0,
                max: MAX_DMA_PACKETS_PER_NODE,
            });
        }
        let mut packets = 0usize;
        for op in ops {
            op.check()?;
            packets = packets.saturating_add(op.packets());
        }
        if packets > MAX_DMA_PACKETS_PER_NODE {
            return Err(EncodeError::TransferTooLong {
                packets,
                max: MAX_DMA_PACKETS_PER_NODE,
            });
        }
        if self.sites.len() >= u32::MAX as usize - 1 {
            return Err(EncodeError::TooManyDispatches { max: u32::MAX - 1 });
        }
        self.end_repeat();
        let id = self.sites.len() as u32;
        let room = |b: &Self| b.w.len() + BOUNDARY_DWORDS + DMA_DATA_DWORDS + EPILOGUE_DWORDS;
        if room(self) > self.limit {
            self.close_segment();
        }
        if let Some(b) = self.pending.take() {
            if id > 0 {
                b.emit(&mut self.w);
            }
        }
        // The site is counted in the segment its first packet is in.
        self.sites.push(DispatchSite {
            segment: self.segments.len() as u32,
            dispatch_dword: self.w.len() as u32,
            kernarg_offset: 0,
            kernarg_len: 0,
            kernel: TRANSFER_KERNEL,
        });
        let mut first = true;
        for op in ops {
            for chunk in op.chunks() {
                // A long transfer may continue in the next segment: the CP
                // runs segments in order, so its packets stay in order.
                if !first && room(self) > self.limit {
                    self.close_segment();
                }
                first = false;
                dma::emit_chunk(&mut self.w, &chunk);
            }
        }
        Ok(id)
    }
}
