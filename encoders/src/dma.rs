//! Copies and fills inside an IB, as CP DMA (`DMA_DATA`): what a graph's
//! memcpy and memset nodes become (why this and not copy kernels:
//! `docs/pm4.md`). Every transfer goes through L2 on both sides, with
//! CP_SYNC set so the CP starts nothing after the packet before the
//! transfer finished; the boundaries before and after it come from the
//! node's declared accesses, as for a dispatch.

use crate::emit;
use crate::error::EncodeError;
use crate::packet::{dma_command, dma_data};
use crate::writer::DwordWriter;

/// Most bytes one DMA_DATA moves here: BYTE_COUNT is 26 bits on gfx10+;
/// a power of two keeps every chunk of a fill dword-sized.
pub const MAX_DMA_CHUNK: u64 = 1 << 25;
/// Dwords of one DMA_DATA packet.
pub const DMA_DATA_DWORDS: usize = 7;
/// Highest GPU virtual address bit + 1 on these families (48-bit VA).
const VA_BITS: u32 = 48;
/// Most DMA_DATA packets one transfer node may take (a bound on IB growth:
/// a 2-D/3-D copy of many short rows is one op per row).
pub const MAX_DMA_PACKETS_PER_NODE: usize = 1 << 16;

/// One linear transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DmaOp {
    /// `bytes` from `src` to `dst` (any alignment; the ranges must not
    /// overlap).
    Copy { dst: u64, src: u64, bytes: u64 },
    /// `bytes` at `dst` filled with the little-endian dword `pattern`;
    /// `dst` and `bytes` are multiples of 4 (DMA_DATA fills whole dwords).
    Fill { dst: u64, pattern: u32, bytes: u64 },
}

impl DmaOp {
    /// Destination address and length.
    pub fn dst(&self) -> (u64, u64) {
        match *self {
            DmaOp::Copy { dst, bytes, .. } | DmaOp::Fill { dst, bytes, .. } => (dst, bytes),
        }
    }

    /// Source address and length, for a copy.
    pub fn src(&self) -> Option<(u64, u64)> {
        match *self {
            DmaOp::Copy { src, bytes, .. } => Some((src, bytes)),
            DmaOp::Fill { .. } => None,
        }
    }

    /// Packets `emit` writes for this op.
    pub fn packets(&self) -> usize {
        self.dst().1.div_ceil(MAX_DMA_CHUNK) as usize
    }

    /// Refuses what one DMA_DATA chain cannot express, naming why.
    pub fn check(&self) -> Result<(), EncodeError> {
        let bad = |why: String| Err(EncodeError::BadTransfer { op: *self, why });
        let (dst, bytes) = self.dst();
        if bytes == 0 {
            return bad("it moves no bytes".into());
        }
        let in_va = |addr: u64| {
            addr != 0
                && addr
                    .checked_add(bytes)
                    .is_some_and(|end| end <= 1u64 << VA_BITS)
        };
        if !in_va(dst) {
            return bad(format!(
                "destination {dst:#x}+{bytes} is not a {VA_BITS}-bit GPU address range"
            ));
        }
        match *self {
            DmaOp::Copy { src, .. } => {
                if !in_va(src) {
                    return bad(format!(
                        "source {src:#x}+{bytes} is not a {VA_BITS}-bit GPU address range"
                    ));
                }
                if src < dst + bytes && dst < src + bytes {
                    return bad(
                        "source and destination overlap (CP DMA order is not defined for that)"
                            .into(),
                    );
                }
            }
            DmaOp::Fill { .. } => {
                if dst % 4 != 0 || bytes % 4 != 0 {
                    return bad(
                        "a fill writes whole dwords: its destination and length must be multiples of 4"
                            .into(),
                    );
                }
            }
        }
        Ok(())
    }
}

/// The CONTROL dword relaunch writes: ME engine, L2 on both sides (DATA as
/// the source of a fill), LRU cache policies, CP_SYNC.
pub const fn control_word(fill: bool) -> u32 {
    let src = if fill {
        dma_data::SRC_SEL_DATA
    } else {
        dma_data::SEL_L2
    };
    dma_data::DST_SEL.place(dma_data::SEL_L2)
        | dma_data::SRC_SEL.place(src)
        | dma_data::CP_SYNC.place(1)
}

/// Writes `op` (already `check`ed) as DMA_DATA packets of at most
/// [`MAX_DMA_CHUNK`] bytes each.
pub fn emit(w: &mut DwordWriter, op: &DmaOp) {
    for chunk in op.chunks() {
        emit_chunk(w, &chunk);
    }
}

/// Writes one chunk (at most [`MAX_DMA_CHUNK`] bytes) as one DMA_DATA.
pub fn emit_chunk(w: &mut DwordWriter, chunk: &DmaOp) {
    debug_assert!(chunk.dst().1 <= MAX_DMA_CHUNK);
    let command = dma_command::BYTE_COUNT.place(chunk.dst().1 as u32);
    match *chunk {
        DmaOp::Copy { dst, src, .. } => emit::dma_data(w, control_word(false), src, dst, command),
        DmaOp::Fill { dst, pattern, .. } => {
            emit::dma_data(w, control_word(true), u64::from(pattern), dst, command)
        }
    }
}

impl DmaOp {
    /// The op cut into pieces of at most [`MAX_DMA_CHUNK`] bytes, in order.
    pub fn chunks(&self) -> impl Iterator<Item = DmaOp> + '_ {
        let (_, bytes) = self.dst();
        (0..bytes.div_ceil(MAX_DMA_CHUNK)).map(move |i| {
            let at = i * MAX_DMA_CHUNK;
            let n = (bytes - at).min(MAX_DMA_CHUNK);
            match *self {
                DmaOp::Copy { dst, src, .. } => DmaOp::Copy {
                    dst: dst + at,
                    src: src + at,
                    bytes: n,
                },
                DmaOp::Fill { dst, pattern, .. } => DmaOp::Fill {
                    dst: dst + at,
                    pattern,
                    bytes: n,
                },
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{decode, Packet};
    use relaunch_device::Family;

    #[test]
    fn a_copy_is_one_dma_data_through_l2_with_cp_sync() {
        let mut w = DwordWriter::new();
        let op = DmaOp::Copy {
            dst: 0x2000,
            src: 0x1000,
            bytes: 100,
        };
        op.check().unwrap();
        emit(&mut w, &op);
        let words = w.take();
        assert_eq!(words, [0xC005_5000, 0xE030_0000, 0x1000, 0, 0x2000, 0, 100]);
        let packets = decode(&words, Family::Gfx11).unwrap();
        assert_eq!(
            packets[0],
            Packet::DmaData {
                control: 0xE030_0000,
                src: 0x1000,
                dst: 0x2000,
                command: 100
            }
        );
    }

    #[test]
    fn large_transfers_split_into_chunks() {
        let mut w = DwordWriter::new();
        let op = DmaOp::Fill {
            dst: 0x10_0000,
            pattern: 0xABAB_ABAB,
            bytes: 2 * MAX_DMA_CHUNK + 8,
        };
        op.check().unwrap();
        assert_eq!(op.packets(), 3);
        emit(&mut w, &op);
        let words = w.take();
        assert_eq!(words.len(), 3 * DMA_DATA_DWORDS);
        assert_eq!(words[1], 0xC030_0000);
        assert_eq!(words[2], 0xABAB_ABAB);
        assert_eq!(words[6], MAX_DMA_CHUNK as u32);
        assert_eq!(words[14 + 4], 0x10_0000 + 2 * MAX_DMA_CHUNK as u32);
        assert_eq!(words[14 + 6], 8);
    }

    #[test]
    fn malformed_transfers_are_refused_with_the_reason() {
        let cases = [
            (
                DmaOp::Copy {
                    dst: 0x2000,
                    src: 0x1000,
                    bytes: 0,
                },
                "no bytes",
            ),
            (
                DmaOp::Copy {
                    dst: 0x1010,
                    src: 0x1000,
                    bytes: 32,
                },
                "overlap",
            ),
            (
                DmaOp::Copy {
                    dst: 0,
                    src: 0x1000,
                    bytes: 4,
                },
                "destination",
            ),
            (
                DmaOp::Copy {
                    dst: 0x1000,
                    src: 1 << 48,
                    bytes: 4,
                },
                "source",
            ),
            (
                DmaOp::Fill {
                    dst: 0x1002,
                    pattern: 0,
                    bytes: 4,
                },
                "multiples of 4",
            ),
            (
                DmaOp::Fill {
                    dst: 0x1000,
                    pattern: 0,
                    bytes: 6,
                },
                "multiples of 4",
            ),
        ];
        for (op, why) in cases {
            let e = op.check().unwrap_err().to_string();
            assert!(e.contains(why), "{op:?}: {e}");
        }
    }
}
