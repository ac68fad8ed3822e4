//! The body fields of each packet the layout table knows, read into one
//! typed [`Packet`]: where each value sits is a fact of the format
//! (`nvd.h`), read the same way by the encoders' decoder (dumps) and the
//! simulated CP (execution), which add their own rules on top.

use crate::frame::Frame;
use crate::packet::{event_cntl, ib_control, op, release_data, wait_reg_mem, write_data};

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

impl<'a> Packet<'a> {
    /// The typed packet of a framed one (`None` for a layout row without
    /// fields here, which a new table row would add).
    pub fn read(f: &Frame<'a>) -> Option<Packet<'a>> {
        let b = f.body;
        Some(match f.layout.opcode {
            op::NOP => Packet::Nop { body: b },
            op::SET_SH_REG => Packet::SetShReg {
                offset: b[0],
                values: &b[1..],
            },
            op::DISPATCH_DIRECT => Packet::DispatchDirect {
                groups: [b[0], b[1], b[2]],
                initiator: b[3],
            },
            op::EVENT_WRITE => Packet::EventWrite {
                event_type: event_cntl::EVENT_TYPE.get(b[0]),
                event_index: event_cntl::EVENT_INDEX.get(b[0]),
                address: (b.len() == 3).then(|| u64_of(b[1], b[2])),
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
            _ => return None,
        })
    }

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

fn u64_of(lo: u32, hi: u32) -> u64 {
    u64::from(lo) | u64::from(hi) << 32
}
