//! Emitters for each type-3 packet relaunch writes, through the counted
//! writer. Field placement uses the declarations in `packet` and `regs`.

use crate::packet::{event_cntl, op, type3, MAX_IB_DWORDS};
use crate::writer::DwordWriter;

/// SET_SH_REG header + offset + values, for `values.len()` consecutive
/// registers starting at SET_SH_REG `offset`.
#[inline]
pub fn set_sh_reg(w: &mut DwordWriter, offset: u16, values: &[u32]) {
    debug_assert!(!values.is_empty());
    let mut r = w.reserve(2 + values.len());
    r.extend(&[
        type3(op::SET_SH_REG, 1 + values.len() as u32, true),
        offset as u32,
    ]);
    r.extend(values);
}

/// DISPATCH_DIRECT with workgroup counts and the initiator.
#[inline(always)]
pub fn dispatch_direct(w: &mut DwordWriter, groups: [u32; 3], initiator: u32) {
    w.put(&[
        type3(op::DISPATCH_DIRECT, 4, true),
        groups[0],
        groups[1],
        groups[2],
        initiator,
    ]);
}

/// The words of a plain EVENT_WRITE.
pub const fn event_write_words(event_type: u32, event_index: u32) -> [u32; 2] {
    [
        type3(op::EVENT_WRITE, 1, false),
        event_cntl::EVENT_TYPE.place(event_type) | event_cntl::EVENT_INDEX.place(event_index),
    ]
}

/// The words of an ACQUIRE_MEM over the whole address space: COHER_CNTL 0,
/// COHER_SIZE all ones with COHER_SIZE_HI's 24 bits (the whole range), base 0,
/// poll interval 10 as the kernel driver's own mem sync uses.
pub const fn acquire_mem_all_words(gcr_cntl: u32) -> [u32; 8] {
    [
        type3(op::ACQUIRE_MEM, 7, false),
        0,
        0xFFFF_FFFF,
        0x00FF_FFFF,
        0,
        0,
        0x0000_000A,
        gcr_cntl,
    ]
}

/// EVENT_WRITE of a plain event (2 dwords).
#[inline]
pub fn event_write(w: &mut DwordWriter, event_type: u32, event_index: u32) {
    w.put(&event_write_words(event_type, event_index));
}

/// ACQUIRE_MEM over the whole address space with `gcr_cntl` (8 dwords).
#[inline]
pub fn acquire_mem_all(w: &mut DwordWriter, gcr_cntl: u32) {
    w.put(&acquire_mem_all_words(gcr_cntl));
}

/// RELEASE_MEM (8 dwords): `event_cntl` is body dword 1 (event + GCR bits),
/// `data_cntl` dword 2 (DST_SEL, INT_SEL, DATA_SEL).
pub fn release_mem(w: &mut DwordWriter, event_cntl: u32, data_cntl: u32, address: u64, data: u64) {
    let mut r = w.reserve(8);
    r.push(type3(op::RELEASE_MEM, 7, false));
    r.extend(&[
        event_cntl,
        data_cntl,
        address as u32,
        (address >> 32) as u32,
        data as u32,
        (data >> 32) as u32,
        0,
    ]);
}

/// WRITE_DATA of `data` to `address` with control dword `control`.
pub fn write_data(w: &mut DwordWriter, control: u32, address: u64, data: &[u32]) {
    let mut r = w.reserve(4 + data.len());
    r.push(type3(op::WRITE_DATA, 3 + data.len() as u32, false));
    r.extend(&[control, address as u32, (address >> 32) as u32]);
    r.extend(data);
}

/// WAIT_REG_MEM (7 dwords).
pub fn wait_reg_mem(
    w: &mut DwordWriter,
    control: u32,
    address: u64,
    reference: u32,
    mask: u32,
    poll_interval: u32,
) {
    let mut r = w.reserve(7);
    r.push(type3(op::WAIT_REG_MEM, 6, false));
    r.extend(&[
        control,
        address as u32,
        (address >> 32) as u32,
        reference,
        mask,
        poll_interval,
    ]);
}

/// COPY_DATA (6 dwords).
pub fn copy_data(w: &mut DwordWriter, control: u32, src: u64, dst: u64) {
    let mut r = w.reserve(6);
    r.push(type3(op::COPY_DATA, 5, false));
    r.extend(&[
        control,
        src as u32,
        (src >> 32) as u32,
        dst as u32,
        (dst >> 32) as u32,
    ]);
}

/// INDIRECT_BUFFER control dword (IB_SIZE, VALID; cache policy LRU).
pub use crate::packet::ib_control_word;

/// DMA_DATA (7 dwords): CONTROL, source (or fill data), destination,
/// COMMAND | BYTE_COUNT (`packet::dma_data`, `packet::dma_command`).
pub fn dma_data(w: &mut DwordWriter, control: u32, src: u64, dst: u64, command: u32) {
    let mut r = w.reserve(7);
    r.push(type3(op::DMA_DATA, 6, false));
    r.extend(&[
        control,
        src as u32,
        (src >> 32) as u32,
        dst as u32,
        (dst >> 32) as u32,
        command,
    ]);
}

/// INDIRECT_BUFFER to `address` (4-byte aligned) of `dwords` dwords.
pub fn indirect_buffer(w: &mut DwordWriter, address: u64, dwords: u32) {
    debug_assert!(address % 4 == 0 && (1..=MAX_IB_DWORDS).contains(&dwords));
    let mut r = w.reserve(4);
    r.push(type3(op::INDIRECT_BUFFER, 3, false));
    r.extend(&[
        address as u32,
        (address >> 32) as u32,
        ib_control_word(dwords),
    ]);
}

/// NOP with `body` (1..=0x4000) ignored dwords after its header.
pub fn nop(w: &mut DwordWriter, body: usize) {
    let mut r = w.reserve(1 + body);
    r.push(type3(op::NOP, body as u32, false));
    for _ in 0..body {
        r.push(0);
    }
}
