//! A memset span as CP DMA ops, exactly: `DMA_DATA` fills whole, aligned
//! dwords only, so a span whose start or end is not dword aligned (a
//! memset of 1- or 2-byte elements) is its aligned middle filled with the
//! replicated pattern, then its unaligned head and tail (1 to 3 bytes
//! each) copied from the middle just filled, 4 bytes further in: the
//! pattern repeats every 4 bytes, so the copied bytes are exactly the ones
//! the memset writes there, and nothing outside the span is touched. The
//! ops of one node run in order (each `DMA_DATA` has CP_SYNC), so the
//! copies read the finished fill. A span holding no whole aligned dword
//! has nothing to copy from and is refused with the reason.

use relaunch::DmaOp;

use crate::model::reason::Reason;

/// The ops setting `bytes` at `dst` to `pattern` (a little-endian dword as
/// it lies at dword-aligned addresses).
pub fn span_ops(dst: u64, bytes: u64, pattern: u32) -> Result<Vec<DmaOp>, Reason> {
    let end = dst
        .checked_add(bytes)
        .ok_or(Reason::Overflow { what: "a memset" })?;
    let (a, b) = (dst.next_multiple_of(4), end & !3);
    if a == dst && b == end {
        return Ok(vec![DmaOp::Fill {
            dst,
            pattern,
            bytes,
        }]);
    }
    if b < a + 4 {
        return Err(Reason::NoWholeDword { dst, bytes });
    }
    let mut ops = vec![DmaOp::Fill {
        dst: a,
        pattern,
        bytes: b - a,
    }];
    if a > dst {
        ops.push(DmaOp::Copy {
            dst,
            src: dst + 4,
            bytes: a - dst,
        });
    }
    if end > b {
        ops.push(DmaOp::Copy {
            dst: b,
            src: b - 4,
            bytes: end - b,
        });
    }
    Ok(ops)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the ops leave in `mem` (offset 0 at address 0x1000), run in
    /// order as the CP runs them.
    fn run(ops: &[DmaOp], mem: &mut [u8]) {
        let at = |a: u64| (a - 0x1000) as usize;
        for op in ops {
            op.check().unwrap();
            match *op {
                DmaOp::Fill {
                    dst,
                    pattern,
                    bytes,
                } => {
                    for i in 0..bytes {
                        mem[at(dst + i)] = pattern.to_le_bytes()[((dst + i) % 4) as usize];
                    }
                }
                DmaOp::Copy { dst, src, bytes } => {
                    for i in 0..bytes {
                        mem[at(dst + i)] = mem[at(src + i)];
                    }
                }
            }
        }
    }

    #[test]
    fn every_unaligned_span_is_set_exactly_and_nothing_around_it() {
        // 2-byte elements 0xBEEF: bytes EF BE from every even address.
        let pattern = 0xBEEF_BEEFu32;
        for start in 0..8u64 {
            for len in 1..40u64 {
                let (dst, mut mem) = (0x1000 + 8 + start, vec![0x11u8; 64]);
                match span_ops(dst, len, pattern) {
                    Ok(ops) => {
                        assert!(ops.len() <= 3);
                        run(&ops, &mut mem);
                        for (i, &byte) in mem.iter().enumerate() {
                            let a = 0x1000 + i as u64;
                            let want = if (dst..dst + len).contains(&a) {
                                pattern.to_le_bytes()[(a % 4) as usize]
                            } else {
                                0x11
                            };
                            assert_eq!(byte, want, "start {start} len {len} at {a:#x}");
                        }
                    }
                    Err(e) => {
                        assert!(matches!(e, Reason::NoWholeDword { .. }), "{e}");
                        assert!(dst.next_multiple_of(4) + 4 > (dst + len) & !3);
                    }
                }
            }
        }
        assert_eq!(span_ops(0x1000, 16, pattern).unwrap().len(), 1);
    }
}
