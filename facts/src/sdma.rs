//! SDMA (system DMA, the copy engine) packet facts: opcodes, sub-opcodes
//! and body sizes of the packets a runtime writes to a user-mode SDMA
//! ring, and how the engine of each family reads byte counts.
//!
//! Facts from the public packet descriptions (the Linux amdgpu
//! `sdma_v5_0_sdma_pkt_open.h` / `navi10_sdma_pkt_open.h` headers and
//! ROCr's `sdma_registers.h`, which name the same fields). Every packet
//! starts with a header dword: opcode in bits 7:0, sub-opcode in 15:8.

use crate::family::Family;
use crate::field::Field;

/// Opcodes (header bits 7:0).
pub mod op {
    pub const NOP: u8 = 0;
    pub const COPY: u8 = 1;
    pub const FENCE: u8 = 5;
    pub const TRAP: u8 = 6;
    pub const POLL_REGMEM: u8 = 8;
    pub const ATOMIC: u8 = 10;
    pub const CONST_FILL: u8 = 11;
    pub const TIMESTAMP: u8 = 13;
    pub const GCR: u8 = 17;
}

/// Sub-opcodes (header bits 15:8) of the opcodes that have several.
pub mod sub_op {
    pub const COPY_LINEAR: u8 = 0;
    pub const COPY_LINEAR_RECT: u8 = 4;
    pub const TIMESTAMP_GET_GLOBAL: u8 = 2;
    pub const GCR_USER: u8 = 1;
}

/// Whole-packet sizes in dwords (header included).
pub mod dwords {
    pub const COPY_LINEAR: usize = 7;
    pub const COPY_LINEAR_RECT: usize = 13;
    pub const CONST_FILL: usize = 5;
    pub const FENCE: usize = 4;
    pub const TRAP: usize = 2;
    pub const POLL_REGMEM: usize = 6;
    pub const ATOMIC: usize = 8;
    pub const TIMESTAMP: usize = 3;
    pub const GCR: usize = 5;
}

const fn f(name: &'static str, lo: u8, hi: u8) -> Field {
    Field::new(name, lo, hi)
}

/// NOP header: dwords of body that follow (0: the NOP is the header).
pub const NOP_COUNT: Field = f("COUNT", 16, 29);
/// COPY_LINEAR dword 1: the byte count (see [`count_bias`]).
pub const COPY_COUNT: Field = f("COUNT", 0, 21);
/// COPY_LINEAR dword 2: byte swaps (0: none).
pub const COPY_DST_SWAP: Field = f("DST_SWAP", 16, 17);
pub const COPY_SRC_SWAP: Field = f("SRC_SWAP", 24, 25);
/// COPY_LINEAR_RECT header: log2 of the element size in bytes.
pub const RECT_ELEMENT: Field = f("ELEMENT", 29, 31);
/// RECT offsets (x and y in one dword, z beside the pitch).
pub const RECT_OFFSET_X: Field = f("OFFSET_X", 0, 13);
pub const RECT_OFFSET_Y: Field = f("OFFSET_Y", 16, 29);
pub const RECT_OFFSET_Z: Field = f("OFFSET_Z", 0, 10);
/// Pitch and slice pitch in elements, minus one.
pub const RECT_PITCH: Field = f("PITCH", 13, 31);
pub const RECT_SLICE_PITCH: Field = f("SLICE_PITCH", 0, 27);
/// The rectangle's extent in elements, minus one.
pub const RECT_X: Field = f("RECT_X", 0, 13);
pub const RECT_Y: Field = f("RECT_Y", 16, 29);
pub const RECT_Z: Field = f("RECT_Z", 0, 10);
pub const RECT_DST_SWAP: Field = f("DST_SWAP", 16, 17);
pub const RECT_SRC_SWAP: Field = f("SRC_SWAP", 24, 25);
/// CONST_FILL header: log2 of the fill element (2: dwords); dword 4 count.
pub const FILL_SIZE: Field = f("FILLSIZE", 30, 31);
pub const FILL_SWAP: Field = f("SW", 16, 17);
pub const FILL_COUNT: Field = f("COUNT", 0, 21);
/// POLL_REGMEM header: compare function, memory (1) or register (0)
/// poll, and the HDP flush form.
pub const POLL_FUNC: Field = f("FUNC", 28, 30);
pub const POLL_MEM: Field = f("MEM_POLL", 31, 31);
pub const POLL_HDP_FLUSH: Field = f("HDP_FLUSH", 26, 26);
/// POLL_REGMEM dword 5: the retry interval and count (0xFFF: forever).
pub const POLL_INTERVAL: Field = f("INTERVAL", 0, 15);
pub const POLL_RETRY: Field = f("RETRY_COUNT", 16, 27);
/// ATOMIC header: the operation (the TC atomic opcodes).
pub const ATOMIC_OPERATION: Field = f("OPERATION", 25, 31);
pub const ATOMIC_LOOP: Field = f("LOOP", 16, 16);
/// TRAP dword 1: the interrupt context (the runtime puts the event id).
pub const TRAP_INT_CTX: Field = f("INT_CTX", 0, 27);

/// ATOMIC operations (the TC atomic opcode numbering).
pub mod atomic_op {
    /// 64-bit add, no return (ROCr's completion-signal decrement adds -1).
    pub const ADD64: u32 = 47;
}

/// POLL_REGMEM compare functions.
pub mod poll_func {
    pub const ALWAYS: u32 = 0;
    pub const LESS: u32 = 1;
    pub const LESS_EQUAL: u32 = 2;
    pub const EQUAL: u32 = 3;
    pub const NOT_EQUAL: u32 = 4;
    pub const GREATER_EQUAL: u32 = 5;
    pub const GREATER: u32 = 6;
}

/// GCR dword 2 control bits (the GL2/GL1/GLV/GLK/GLM actions).
pub mod gcr {
    pub const GLM_WB: u32 = 1 << 20;
    pub const GLM_INV: u32 = 1 << 21;
    pub const GLK_WB: u32 = 1 << 22;
    pub const GLK_INV: u32 = 1 << 23;
    pub const GLV_INV: u32 = 1 << 24;
    pub const GL1_INV: u32 = 1 << 25;
    pub const GL2_INV: u32 = 1 << 30;
    pub const GL2_WB: u32 = 1 << 31;
}

/// The SDMA engine generation of a family's GPUs (SDMA 5.x on RDNA1/2,
/// 6.0 on RDNA3, 7.0 on RDNA4).
pub const fn engine_version(family: Family) -> u32 {
    family.facts().sdma_engine
}

/// What a byte-count field holds relative to the bytes moved: SDMA 4 and
/// later count "bytes minus one" (ROCr's `SizeToCountOffset` of -1 for
/// them); the older engines counted bytes.
pub const fn count_bias(family: Family) -> u64 {
    match engine_version(family) {
        0..=3 => 0,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_modelled_family_counts_bytes_minus_one() {
        for family in Family::ALL {
            assert_eq!(count_bias(family), 1, "{family}");
        }
    }

    #[test]
    fn fields_decode_the_documented_bits() {
        // ROCr's DW-fill header: op 11, fillsize 2.
        let fill = 11 | (2 << 30);
        assert_eq!(FILL_SIZE.get(fill), 2);
        // Its poll: op 8, func 3 (equal), memory poll.
        let poll = 8 | (3 << 28) | (1 << 31);
        assert_eq!(POLL_FUNC.get(poll), poll_func::EQUAL);
        assert_eq!(POLL_MEM.get(poll), 1);
        // Its signal decrement: op 10, operation 47.
        assert_eq!(ATOMIC_OPERATION.get(10 | (47 << 25)), atomic_op::ADD64);
    }
}
