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
        if self.dispatch_count() >= u32::MAX as usize - 1 {
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

#[cfg(test)]
mod tests {
    use relaunch_device::Family;

    use crate::boundary::BoundaryKind;
    use crate::decode::{decode, Packet};
    use crate::dma::{DmaOp, MAX_DMA_CHUNK};
    use crate::ib::TRANSFER_KERNEL;
    use crate::{EncodeOptions, IbBuilder};

    #[test]
    fn a_long_transfer_continues_in_order_across_segments() {
        let opts = EncodeOptions {
            max_segment_dwords: 256,
            ..EncodeOptions::default()
        };
        let mut b = IbBuilder::new(Family::Gfx12, opts);
        let fill = DmaOp::Fill {
            dst: 0x1000_0000,
            pattern: 7,
            bytes: 4,
        };
        assert_eq!(b.transfer(&[fill]).unwrap(), 0);
        b.boundary(BoundaryKind::Rmw);
        let copy = DmaOp::Copy {
            dst: 0x4000_0000_0000,
            src: 0x2000_0000_0000,
            bytes: 60 * MAX_DMA_CHUNK,
        };
        assert_eq!(b.transfer(&[copy]).unwrap(), 1);
        let ib = b.finish(0x10_0000).unwrap();
        assert!(ib.segments.len() > 1);
        assert!(ib.segments.iter().all(|s| s.dwords.len() <= 256));
        assert_eq!(ib.sites.len(), 2);
        assert!(ib
            .sites
            .iter()
            .all(|s| s.kernel == TRANSFER_KERNEL && s.kernarg_len == 0));
        assert_eq!(ib.symbol(1), Some("DMA_DATA"));
        let mut next_dst = 0x4000_0000_0000u64;
        let mut fills = 0;
        for seg in &ib.segments {
            for p in decode(&seg.dwords, Family::Gfx12).unwrap() {
                if let Packet::DmaData { dst, command, .. } = p {
                    if dst == 0x1000_0000 {
                        fills += 1;
                        continue;
                    }
                    assert_eq!(dst, next_dst, "chunks in order");
                    next_dst += u64::from(command & 0x03FF_FFFF);
                }
            }
        }
        assert_eq!(fills, 1);
        assert_eq!(next_dst, 0x4000_0000_0000 + 60 * MAX_DMA_CHUNK);
        // The RMW boundary between the two nodes was written once.
        let flushes = ib.segments[0]
            .dwords
            .iter()
            .filter(|&&d| d == 0x0000_0407)
            .count();
        assert!(flushes >= 1);
        let mut b = IbBuilder::new(Family::Gfx12, EncodeOptions::default());
        assert!(b.transfer(&[]).is_err());
        let bad = DmaOp::Fill {
            dst: 0x1001,
            pattern: 0,
            bytes: 4,
        };
        assert!(b.transfer(&[bad]).is_err());
        assert_eq!(b.dispatch_count(), 0, "a refused transfer records nothing");
    }
}
