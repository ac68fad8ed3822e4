//! SDMA packets as the simulated copy engine reads them from a ring: the
//! header's opcode decides the length, the body is decoded into what the
//! engine does. A packet the model does not know, or a form of a known one
//! it does not execute (byte swaps, register polls, other atomics), is
//! refused by name, never skipped: skipping would complete a copy that did
//! not happen.

use relaunch_facts::sdma::{self as f, dwords, op, sub_op};
use relaunch_facts::Family;

/// One decoded packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SdmaPacket {
    /// Padding (ROCr fills the ring's tail with zero dwords).
    Nop,
    /// Copy `bytes` bytes from `src` to `dst`.
    CopyLinear { src: u64, dst: u64, bytes: u64 },
    /// Copy a sub-window of a pitched 3-D array.
    CopyRect(Rect),
    /// Write `value` (an element of `1 << log2_size` bytes) `count` times.
    Fill {
        dst: u64,
        value: u32,
        log2_size: u32,
        count: u64,
    },
    /// Write the 32-bit `data` to `addr` once everything before is done.
    Fence { addr: u64, data: u32 },
    /// Raise an interrupt with this context (the runtime's event id).
    Trap { context: u32 },
    /// Wait until `(mem[addr] & mask) func value` holds.
    Poll {
        addr: u64,
        value: u32,
        mask: u32,
        func: u32,
    },
    /// Atomically add `value` to the 64-bit word at `addr`.
    AtomicAdd64 { addr: u64, value: i64 },
    /// Write the global timestamp (64 bits) to `addr`.
    Timestamp { addr: u64 },
    /// Cache write-backs / invalidations (dword 2's control bits).
    Gcr { control: u32 },
}

/// A COPY_LINEAR_RECT body. Offsets, extents and pitches in elements of
/// `1 << element` bytes; extents and pitches as the packet holds them
/// (minus one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    pub element: u32,
    pub src: Side,
    pub dst: Side,
    pub extent: [u32; 3],
}

/// One side of a rectangle copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Side {
    pub base: u64,
    pub offset: [u32; 3],
    pub pitch: u32,
    pub slice_pitch: u32,
}

impl Rect {
    /// Byte address of element (x, y, z) of the window on `side`.
    pub fn address(&self, side: &Side, x: u64, y: u64, z: u64) -> u64 {
        let e = u64::from(self.element);
        let row = u64::from(side.pitch) + 1;
        let slice = u64::from(side.slice_pitch) + 1;
        let ex = u64::from(side.offset[0]) + x;
        let ey = u64::from(side.offset[1]) + y;
        let ez = u64::from(side.offset[2]) + z;
        side.base
            .wrapping_add((ex + ey * row) << e)
            .wrapping_add((ez * slice) << e)
    }
}

/// Packet length in dwords from its header, or why it is refused.
pub fn length(header: u32) -> Result<usize, String> {
    let opcode = header as u8;
    let sub = (header >> 8) as u8;
    Ok(match (opcode, sub) {
        (op::NOP, _) => 1 + f::NOP_COUNT.get(header) as usize,
        (op::COPY, sub_op::COPY_LINEAR) => dwords::COPY_LINEAR,
        (op::COPY, sub_op::COPY_LINEAR_RECT) => dwords::COPY_LINEAR_RECT,
        (op::COPY, other) => {
            return Err(format!(
                "COPY sub-opcode {other} (only LINEAR and LINEAR_RECT are modelled)"
            ))
        }
        (op::CONST_FILL, _) => dwords::CONST_FILL,
        (op::FENCE, _) => dwords::FENCE,
        (op::TRAP, _) => dwords::TRAP,
        (op::POLL_REGMEM, _) => dwords::POLL_REGMEM,
        (op::ATOMIC, _) => dwords::ATOMIC,
        (op::TIMESTAMP, _) => dwords::TIMESTAMP,
        (op::GCR, _) => dwords::GCR,
        (other, _) => return Err(format!("opcode {other} is not modelled")),
    })
}

fn addr(lo: u32, hi: u32) -> u64 {
    u64::from(lo) | (u64::from(hi) << 32)
}

/// Decode the `dw` dwords of one packet ([`length`] of them) for an engine
/// of `family`.
pub fn parse(dw: &[u32], family: Family) -> Result<SdmaPacket, String> {
    let h = dw[0];
    let opcode = h as u8;
    let sub = (h >> 8) as u8;
    let bias = f::count_bias(family);
    let packet = match opcode {
        op::NOP => SdmaPacket::Nop,
        op::COPY if sub == sub_op::COPY_LINEAR => {
            if f::COPY_DST_SWAP.get(dw[2]) != 0 || f::COPY_SRC_SWAP.get(dw[2]) != 0 {
                return Err("COPY_LINEAR with byte swapping is not modelled".into());
            }
            SdmaPacket::CopyLinear {
                bytes: u64::from(f::COPY_COUNT.get(dw[1])) + bias,
                src: addr(dw[3], dw[4]),
                dst: addr(dw[5], dw[6]),
            }
        }
        op::COPY => {
            if f::RECT_DST_SWAP.get(dw[12]) != 0 || f::RECT_SRC_SWAP.get(dw[12]) != 0 {
                return Err("COPY_LINEAR_RECT with byte swapping is not modelled".into());
            }
            let side = |base: u64, p1: u32, p2: u32, p3: u32| Side {
                base,
                offset: [
                    f::RECT_OFFSET_X.get(p1),
                    f::RECT_OFFSET_Y.get(p1),
                    f::RECT_OFFSET_Z.get(p2),
                ],
                pitch: f::RECT_PITCH.get(p2),
                slice_pitch: f::RECT_SLICE_PITCH.get(p3),
            };
            SdmaPacket::CopyRect(Rect {
                element: f::RECT_ELEMENT.get(h),
                src: side(addr(dw[1], dw[2]), dw[3], dw[4], dw[5]),
                dst: side(addr(dw[6], dw[7]), dw[8], dw[9], dw[10]),
                extent: [
                    f::RECT_X.get(dw[11]),
                    f::RECT_Y.get(dw[11]),
                    f::RECT_Z.get(dw[12]),
                ],
            })
        }
        op::CONST_FILL => {
            if f::FILL_SWAP.get(h) != 0 {
                return Err("CONST_FILL with byte swapping is not modelled".into());
            }
            let log2_size = f::FILL_SIZE.get(h);
            // The count is in bytes (minus the bias): whole elements.
            let bytes = u64::from(f::FILL_COUNT.get(dw[4])) + bias;
            SdmaPacket::Fill {
                dst: addr(dw[1], dw[2]),
                value: dw[3],
                log2_size,
                count: bytes.div_ceil(1 << log2_size),
            }
        }
        op::FENCE => SdmaPacket::Fence {
            addr: addr(dw[1], dw[2]),
            data: dw[3],
        },
        op::TRAP => SdmaPacket::Trap {
            context: f::TRAP_INT_CTX.get(dw[1]),
        },
        op::POLL_REGMEM => {
            if f::POLL_HDP_FLUSH.get(h) != 0 || f::POLL_MEM.get(h) == 0 {
                return Err(
                    "POLL_REGMEM on a register (or the HDP flush form) is not modelled: \
                     the simulated GPU has no registers a ring can poll"
                        .into(),
                );
            }
            // ROCr polls forever; a finite retry count ends in a timeout
            // interrupt whose handling the model does not know.
            if f::POLL_RETRY.get(dw[5]) != f::POLL_RETRY.max() {
                return Err(format!(
                    "POLL_REGMEM with a finite retry count ({}) is not modelled",
                    f::POLL_RETRY.get(dw[5])
                ));
            }
            let func = f::POLL_FUNC.get(h);
            if func > f::poll_func::GREATER {
                return Err(format!("POLL_REGMEM compare function {func} is reserved"));
            }
            SdmaPacket::Poll {
                addr: addr(dw[1], dw[2]),
                value: dw[3],
                mask: dw[4],
                func,
            }
        }
        op::ATOMIC => {
            let operation = f::ATOMIC_OPERATION.get(h);
            if operation != f::atomic_op::ADD64 || f::ATOMIC_LOOP.get(h) != 0 {
                return Err(format!(
                    "ATOMIC operation {operation} (loop {}) is not modelled: only the \
                     64-bit add runtimes use to decrement signals",
                    f::ATOMIC_LOOP.get(h)
                ));
            }
            SdmaPacket::AtomicAdd64 {
                addr: addr(dw[1], dw[2]),
                value: addr(dw[3], dw[4]) as i64,
            }
        }
        op::TIMESTAMP if sub == sub_op::TIMESTAMP_GET_GLOBAL => SdmaPacket::Timestamp {
            addr: addr(dw[1], dw[2]),
        },
        op::TIMESTAMP => {
            return Err(format!(
                "TIMESTAMP sub-opcode {sub} is not modelled (only GET_GLOBAL)"
            ))
        }
        op::GCR if sub == sub_op::GCR_USER => SdmaPacket::Gcr { control: dw[2] },
        op::GCR => return Err(format!("GCR sub-opcode {sub} is not modelled")),
        other => return Err(format!("opcode {other} is not modelled")),
    };
    Ok(packet)
}

/// Whether a poll's condition holds for the word `seen`.
pub fn poll_holds(func: u32, seen: u32, mask: u32, value: u32) -> bool {
    use relaunch_facts::sdma::poll_func as pf;
    let v = seen & mask;
    match func {
        pf::ALWAYS => true,
        pf::LESS => v < value,
        pf::LESS_EQUAL => v <= value,
        pf::EQUAL => v == value,
        pf::NOT_EQUAL => v != value,
        pf::GREATER_EQUAL => v >= value,
        pf::GREATER => v > value,
        // `parse` refuses the reserved codes.
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: Family = Family::Gfx10;

    #[test]
    fn rocr_copy_counts_bytes_minus_one() {
        // What ROCr's BuildCopyCommand writes for 4096 bytes.
        let dw = [1, 4095, 0, 0x1000, 0x7f00, 0x2000, 0x7f00];
        assert_eq!(length(dw[0]), Ok(7));
        assert_eq!(
            parse(&dw, G),
            Ok(SdmaPacket::CopyLinear {
                src: 0x7f00_0000_1000,
                dst: 0x7f00_0000_2000,
                bytes: 4096
            })
        );
    }

    #[test]
    fn rocr_dword_fill_covers_every_dword() {
        // BuildFillCommand for 16 dwords: (16 - 1) * 4 = 60.
        let dw = [11 | (2 << 30), 0x3000, 0, 0xdead_beef, 60];
        assert_eq!(
            parse(&dw, G),
            Ok(SdmaPacket::Fill {
                dst: 0x3000,
                value: 0xdead_beef,
                log2_size: 2,
                count: 16
            })
        );
    }

    #[test]
    fn the_decrement_is_an_add_of_minus_one() {
        let dw = [10 | (47 << 25), 0x40, 0, u32::MAX, u32::MAX, 0, 0, 0];
        assert_eq!(
            parse(&dw, G),
            Ok(SdmaPacket::AtomicAdd64 {
                addr: 0x40,
                value: -1
            })
        );
    }

    #[test]
    fn unknown_and_unmodelled_forms_are_refused_by_name() {
        assert!(length(3).unwrap_err().contains("opcode 3"));
        let reg_poll = [8, 0, 0, 0, 0, 0xfff << 16];
        assert!(parse(&reg_poll, G).unwrap_err().contains("register"));
        let swap = [1, 3, 1 << 16, 0, 0, 0, 0];
        assert!(parse(&swap, G).unwrap_err().contains("swapping"));
        let cmpswap = [10 | (40 << 25), 0, 0, 0, 0, 0, 0, 0];
        assert!(parse(&cmpswap, G).unwrap_err().contains("operation 40"));
    }

    #[test]
    fn zero_padding_is_one_dword_nops() {
        assert_eq!(length(0), Ok(1));
        assert_eq!(length(5 << 16), Ok(6));
    }

    #[test]
    fn rect_addresses_follow_pitch_and_slice() {
        let side = Side {
            base: 0x1000,
            offset: [1, 2, 3],
            pitch: 15,
            slice_pitch: 255,
        };
        let r = Rect {
            element: 2,
            src: side,
            dst: side,
            extent: [0; 3],
        };
        // element (1+0, 2+1, 3+0) of 4 bytes, rows of 16, slices of 256.
        assert_eq!(
            r.address(&side, 0, 1, 0),
            0x1000 + ((1 + 3 * 16 + 3 * 256) << 2)
        );
    }
}
