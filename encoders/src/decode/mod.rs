//! The decoder: dwords back into typed packets, reading the same register
//! tables and packet field declarations the encoder writes with.
//!
//! Strict mode (`decode`, `Decoder`) rejects unknown opcodes, bad counts,
//! truncation, predication, and SET_SH_REG writes to registers the family
//! lacks or that the queue or CP own: the simulated device executes IBs
//! through it. Lenient mode (`decode_lenient`, `dump`) never fails: it marks
//! what it cannot decode and continues. Neither panics on any input.

mod dump;

pub use dump::{dump, dump_each, dump_lenient, dump_lenient_each, DumpError};

use relaunch_device::Family;

use crate::error::DecodeError;
use crate::packet::{event_cntl, header, ib_control, op, release_data, wait_reg_mem, write_data};
use crate::regs::{table, Register};
use relaunch_facts::frame::{check_sh_run, check_sh_window, frame};

/// One decoded packet; slices borrow the IB's dwords.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packet<'a> {
    Nop {
        body: &'a [u32],
    },
    /// `values[i]` goes to SET_SH_REG offset `offset + i`.
    SetShReg {
        offset: u32,
        values: &'a [u32],
    },
    /// Workgroup counts and COMPUTE_DISPATCH_INITIATOR.
    DispatchDirect {
        groups: [u32; 3],
        initiator: u32,
    },
    EventWrite {
        event_type: u32,
        event_index: u32,
        /// Address dwords of the 3-dword form (timestamp/sample events).
        address: Option<u64>,
    },
    AcquireMem {
        coher_cntl: u32,
        /// COHER_SIZE with COHER_SIZE_HI's 24 bits above it.
        coher_size: u64,
        coher_base: u64,
        poll_interval: u32,
        gcr_cntl: u32,
    },
    ReleaseMem {
        /// Body dword 1: event type/index and GCR bits (`packet::release_cntl`).
        event_cntl: u32,
        /// Body dword 2: DST_SEL, INT_SEL, DATA_SEL (`packet::release_data`).
        data_cntl: u32,
        address: u64,
        data: u64,
        int_ctxid: u32,
    },
    WriteData {
        control: u32,
        address: u64,
        data: &'a [u32],
    },
    WaitRegMem {
        control: u32,
        address: u64,
        reference: u32,
        mask: u32,
        poll_interval: u32,
    },
    IndirectBuffer {
        address: u64,
        dwords: u32,
        control: u32,
    },
    CopyData {
        control: u32,
        src: u64,
        dst: u64,
    },
    /// CP DMA (`packet::dma_data`, `packet::dma_command`). `src` is the
    /// fill value in its low dword when SRC_SEL is DATA.
    DmaData {
        control: u32,
        src: u64,
        dst: u64,
        command: u32,
    },
}

impl Packet<'_> {
    /// The packet's name as in the kernel headers.
    pub fn name(&self) -> &'static str {
        match self {
            Packet::Nop { .. } => "NOP",
            Packet::SetShReg { .. } => "SET_SH_REG",
            Packet::DispatchDirect { .. } => "DISPATCH_DIRECT",
            Packet::EventWrite { .. } => "EVENT_WRITE",
            Packet::AcquireMem { .. } => "ACQUIRE_MEM",
            Packet::ReleaseMem { .. } => "RELEASE_MEM",
            Packet::WriteData { .. } => "WRITE_DATA",
            Packet::WaitRegMem { .. } => "WAIT_REG_MEM",
            Packet::IndirectBuffer { .. } => "INDIRECT_BUFFER",
            Packet::CopyData { .. } => "COPY_DATA",
            Packet::DmaData { .. } => "DMA_DATA",
        }
    }

    /// EVENT_TYPE of EVENT_WRITE / RELEASE_MEM.
    pub fn event_type(&self) -> Option<u32> {
        match self {
            Packet::EventWrite { event_type, .. } => Some(*event_type),
            Packet::ReleaseMem { event_cntl: c, .. } => Some(event_cntl::EVENT_TYPE.get(*c)),
            _ => None,
        }
    }

    /// WRITE_DATA destination select.
    pub fn write_data_dst_sel(&self) -> Option<u32> {
        match self {
            Packet::WriteData { control, .. } => Some(write_data::DST_SEL.get(*control)),
            _ => None,
        }
    }

    /// WAIT_REG_MEM compare function.
    pub fn wait_function(&self) -> Option<u32> {
        match self {
            Packet::WaitRegMem { control, .. } => Some(wait_reg_mem::FUNCTION.get(*control)),
            _ => None,
        }
    }

    /// RELEASE_MEM DATA_SEL.
    pub fn release_data_sel(&self) -> Option<u32> {
        match self {
            Packet::ReleaseMem { data_cntl, .. } => Some(release_data::DATA_SEL.get(*data_cntl)),
            _ => None,
        }
    }
}

/// The registers a SET_SH_REG run writes, resolved against `family`'s
/// table (`None` where the family has no register at that offset).
pub fn sh_registers<'t>(
    family: Family,
    offset: u32,
    values: &[u32],
) -> impl Iterator<Item = (u32, Option<&'t Register>, u32)> + '_ {
    let t = table(family);
    values
        .iter()
        .enumerate()
        .map(move |(i, v)| (offset + i as u32, t.get(offset + i as u32), *v))
}

fn u64_of(lo: u32, hi: u32) -> u64 {
    lo as u64 | (hi as u64) << 32
}

/// Decode the packet at `at`; returns it and its total dword count. Register
/// checks run only when `strict`.
fn decode_at(
    dwords: &[u32],
    at: usize,
    family: Family,
    strict: bool,
) -> Result<(Packet<'_>, usize), DecodeError> {
    // Header, body count and opcode by the shared framing (facts' layouts).
    let f = frame(dwords, at)?;
    let (opcode, b, body_len) = (f.layout.opcode, f.body, f.body.len());
    let packet = match opcode {
        op::NOP => Packet::Nop { body: b },
        op::SET_SH_REG => {
            let offset = b[0];
            let values = &b[1..];
            if strict {
                check_sh_run(at, family, offset, values.len())?;
            } else {
                check_sh_window(at, family, offset, values.len())?;
            }
            Packet::SetShReg { offset, values }
        }
        op::DISPATCH_DIRECT => Packet::DispatchDirect {
            groups: [b[0], b[1], b[2]],
            initiator: b[3],
        },
        op::EVENT_WRITE => Packet::EventWrite {
            event_type: event_cntl::EVENT_TYPE.get(b[0]),
            event_index: event_cntl::EVENT_INDEX.get(b[0]),
            address: (body_len == 3).then(|| u64_of(b[1], b[2])),
        },
        op::ACQUIRE_MEM => Packet::AcquireMem {
            coher_cntl: b[0],
            coher_size: u64_of(b[1], b[2] & 0x00FF_FFFF),
            coher_base: u64_of(b[3], b[4] & 0x00FF_FFFF),
            poll_interval: b[5] & 0xFFFF,
            gcr_cntl: b[6],
        },
        op::RELEASE_MEM => Packet::ReleaseMem {
            event_cntl: b[0],
            data_cntl: b[1],
            address: u64_of(b[2], b[3]),
            data: u64_of(b[4], b[5]),
            int_ctxid: b[6],
        },
        op::WRITE_DATA => Packet::WriteData {
            control: b[0],
            address: u64_of(b[1], b[2]),
            data: &b[3..],
        },
        op::WAIT_REG_MEM => Packet::WaitRegMem {
            control: b[0],
            address: u64_of(b[1], b[2]),
            reference: b[3],
            mask: b[4],
            poll_interval: b[5],
        },
        op::INDIRECT_BUFFER => Packet::IndirectBuffer {
            address: u64_of(b[0], b[1]),
            dwords: ib_control::IB_SIZE.get(b[2]),
            control: b[2],
        },
        op::COPY_DATA => Packet::CopyData {
            control: b[0],
            src: u64_of(b[1], b[2]),
            dst: u64_of(b[3], b[4]),
        },
        op::DMA_DATA => Packet::DmaData {
            control: b[0],
            src: u64_of(b[1], b[2]),
            dst: u64_of(b[3], b[4]),
            command: b[5],
        },
        // A layout row the decoder has no fields for yet.
        _ => {
            return Err(DecodeError::UnknownOpcode {
                at,
                opcode,
                header: f.header,
            })
        }
    };
    Ok((packet, 1 + body_len))
}

/// Strict iterator over `(dword index, packet)`; stops after the first error.
pub struct Decoder<'a> {
    dwords: &'a [u32],
    at: usize,
    family: Family,
    failed: bool,
}

impl<'a> Decoder<'a> {
    pub fn new(dwords: &'a [u32], family: Family) -> Self {
        Decoder {
            dwords,
            at: 0,
            family,
            failed: false,
        }
    }
}

impl<'a> Iterator for Decoder<'a> {
    type Item = Result<(usize, Packet<'a>), DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.at >= self.dwords.len() {
            return None;
        }
        let at = self.at;
        match decode_at(self.dwords, at, self.family, true) {
            Ok((p, n)) => {
                self.at += n;
                Some(Ok((at, p)))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// Decode a whole IB strictly.
pub fn decode(dwords: &[u32], family: Family) -> Result<Vec<Packet<'_>>, DecodeError> {
    Decoder::new(dwords, family)
        .map(|r| r.map(|(_, p)| p))
        .collect()
}

/// One entry of a lenient decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry<'a> {
    Packet {
        at: usize,
        packet: Packet<'a>,
    },
    /// A type-3 header with an opcode relaunch does not know; skipped by count.
    Unknown {
        at: usize,
        header: u32,
        opcode: u8,
        dwords: usize,
    },
    /// Something that could not be decoded; `skip` dwords were skipped (0 = stop).
    Bad {
        at: usize,
        error: DecodeError,
        skip: usize,
    },
}

/// Decode without failing: unknown opcodes are skipped by their count, other
/// problems are recorded and decoding resumes where it safely can.
pub fn decode_lenient(dwords: &[u32], family: Family) -> Vec<Entry<'_>> {
    LenientDecoder::new(dwords, family).collect()
}

/// `decode_lenient` one entry at a time (dumps of large IBs stream).
pub struct LenientDecoder<'a> {
    dwords: &'a [u32],
    at: usize,
    family: Family,
    stopped: bool,
}

impl<'a> LenientDecoder<'a> {
    pub fn new(dwords: &'a [u32], family: Family) -> Self {
        LenientDecoder {
            dwords,
            at: 0,
            family,
            stopped: false,
        }
    }
}

impl<'a> Iterator for LenientDecoder<'a> {
    type Item = Entry<'a>;

    fn next(&mut self) -> Option<Entry<'a>> {
        let (dwords, at) = (self.dwords, self.at);
        if self.stopped || at >= dwords.len() {
            return None;
        }
        let (entry, n) = match decode_at(dwords, at, self.family, false) {
            Ok((packet, n)) => (Entry::Packet { at, packet }, n),
            Err(DecodeError::UnknownOpcode {
                opcode, header: h, ..
            }) => {
                let n = (1 + header::COUNT.get(h) as usize + 1).min(dwords.len() - at);
                let entry = Entry::Unknown {
                    at,
                    header: h,
                    opcode,
                    dwords: n,
                };
                (entry, n)
            }
            Err(error @ DecodeError::Truncated { .. }) => {
                self.stopped = true;
                (Entry::Bad { at, error, skip: 0 }, 0)
            }
            Err(error @ (DecodeError::BadCount { .. } | DecodeError::UnknownRegister { .. })) => {
                let n = (1 + header::COUNT.get(dwords[at]) as usize + 1).min(dwords.len() - at);
                (Entry::Bad { at, error, skip: n }, n)
            }
            Err(error) => (Entry::Bad { at, error, skip: 1 }, 1),
        };
        self.at += n;
        Some(entry)
    }
}

#[cfg(test)]
mod tests;
