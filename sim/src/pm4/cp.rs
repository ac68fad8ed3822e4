//! The command processor's packet parser: how the simulated CP reads a
//! PM4 stream. It knows nothing of who wrote the IB (relaunch's encoder,
//! ROCr's cache flushes, HIP): headers, opcodes, body layouts and SH
//! registers come from `relaunch-facts`' tables, and it refuses only what
//! the CP could not execute (a non-type-3 header, a predicated packet, an
//! opcode or body layout the tables do not have, a register the family
//! lacks) or what the model does not cover (registers the queue or the CP
//! own). It never panics on any input.

use relaunch_facts::frame::{check_sh_run, frame};
use relaunch_facts::packet::{op, PacketLayout};
use relaunch_facts::Family;

/// Why the CP cannot read a packet: the PM4 format's framing error.
pub use relaunch_facts::frame::FrameError as ParseError;

/// One packet as the CP executes it; slices borrow the IB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpPacket<'a> {
    Nop,
    /// `values[i]` goes to SET_SH_REG offset `offset + i`.
    SetShReg {
        offset: u32,
        values: &'a [u32],
    },
    DispatchDirect {
        groups: [u32; 3],
        initiator: u32,
    },
    /// The body's first dword; `address` in the 3-dword form.
    EventWrite {
        control: u32,
        address: Option<u64>,
    },
    AcquireMem(AcquireMem),
    ReleaseMem {
        event_cntl: u32,
        data_cntl: u32,
        address: u64,
        data: u64,
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
    DmaData {
        control: u32,
        src: u64,
        dst: u64,
        command: u32,
    },
    /// A packet the tables know but the model does not execute (nested
    /// INDIRECT_BUFFER, COPY_DATA): refused by name where it is met.
    Other(&'static PacketLayout),
}

/// ACQUIRE_MEM's gfx10+ body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcquireMem {
    pub coher_cntl: u32,
    /// COHER_SIZE with COHER_SIZE_HI above it (256-byte units).
    pub coher_size: u64,
    /// COHER_BASE with COHER_BASE_HI above it (256-byte units).
    pub coher_base: u64,
    pub gcr_cntl: u32,
}

fn qword(lo: u32, hi: u32) -> u64 {
    u64::from(lo) | u64::from(hi) << 32
}

/// Reads an IB packet by packet: `(dword index, packet)`, stopping after
/// the first error.
pub struct Cp<'a> {
    ib: &'a [u32],
    at: usize,
    family: Family,
    stopped: bool,
}

impl<'a> Cp<'a> {
    pub fn new(ib: &'a [u32], family: Family) -> Self {
        Cp {
            ib,
            at: 0,
            family,
            stopped: false,
        }
    }

    fn read(&self) -> Result<(CpPacket<'a>, usize), ParseError> {
        let f = frame(self.ib, self.at)?;
        Ok((self.packet(self.at, f.layout, f.body)?, f.len()))
    }

    fn packet(
        &self,
        at: usize,
        layout: &'static PacketLayout,
        b: &'a [u32],
    ) -> Result<CpPacket<'a>, ParseError> {
        Ok(match layout.opcode {
            op::NOP => CpPacket::Nop,
            op::SET_SH_REG => {
                let (offset, values) = (b[0], &b[1..]);
                // Registers the family has, none the queue or CP owns (the
                // queue state behind them is not modelled).
                check_sh_run(at, self.family, offset, values.len())?;
                CpPacket::SetShReg { offset, values }
            }
            op::DISPATCH_DIRECT => CpPacket::DispatchDirect {
                groups: [b[0], b[1], b[2]],
                initiator: b[3],
            },
            op::EVENT_WRITE => CpPacket::EventWrite {
                control: b[0],
                address: b.get(1..3).map(|a| qword(a[0], a[1])),
            },
            // COHER_SIZE_HI and COHER_BASE_HI are 24-bit fields.
            op::ACQUIRE_MEM => CpPacket::AcquireMem(AcquireMem {
                coher_cntl: b[0],
                coher_size: qword(b[1], b[2] & 0x00FF_FFFF),
                coher_base: qword(b[3], b[4] & 0x00FF_FFFF),
                gcr_cntl: b[6],
            }),
            op::RELEASE_MEM => CpPacket::ReleaseMem {
                event_cntl: b[0],
                data_cntl: b[1],
                address: qword(b[2], b[3]),
                data: qword(b[4], b[5]),
            },
            op::WRITE_DATA => CpPacket::WriteData {
                control: b[0],
                address: qword(b[1], b[2]),
                data: &b[3..],
            },
            op::WAIT_REG_MEM => CpPacket::WaitRegMem {
                control: b[0],
                address: qword(b[1], b[2]),
                reference: b[3],
                mask: b[4],
                poll_interval: b[5],
            },
            op::DMA_DATA => CpPacket::DmaData {
                control: b[0],
                src: qword(b[1], b[2]),
                dst: qword(b[3], b[4]),
                command: b[5],
            },
            _ => CpPacket::Other(layout),
        })
    }
}

impl<'a> Iterator for Cp<'a> {
    type Item = Result<(usize, CpPacket<'a>), ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.stopped || self.at >= self.ib.len() {
            return None;
        }
        let at = self.at;
        Some(match self.read() {
            Ok((packet, n)) => {
                self.at += n;
                Ok((at, packet))
            }
            Err(e) => {
                self.stopped = true;
                Err(e)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relaunch_facts::packet::type3;

    #[test]
    fn reads_each_packet_and_stops_at_the_first_error() {
        let ib = [
            type3(op::NOP, 2, false),
            0,
            0,
            type3(op::DISPATCH_DIRECT, 4, true),
            1,
            2,
            3,
            0x45,
            type3(op::ACQUIRE_MEM, 7, false),
            0,
            0xFFFF_FFFF,
            0xFF,
            0,
            0,
            0,
            0x4381,
            type3(op::COPY_DATA, 5, false),
            0,
            0,
            0,
            0,
            0,
            0xDEAD,
        ];
        let got: Vec<_> = Cp::new(&ib, Family::Gfx10).collect();
        assert_eq!(got[0], Ok((0, CpPacket::Nop)));
        let groups = [1, 2, 3];
        assert_eq!(
            got[1],
            Ok((
                3,
                CpPacket::DispatchDirect {
                    groups,
                    initiator: 0x45
                }
            ))
        );
        let Ok((8, CpPacket::AcquireMem(a))) = got[2] else {
            panic!("{:?}", got[2]);
        };
        assert_eq!((a.coher_size, a.gcr_cntl), (0xFF_FFFF_FFFF, 0x4381));
        assert!(matches!(got[3], Ok((16, CpPacket::Other(l))) if l.name == "COPY_DATA"));
        assert!(matches!(got[4], Err(ParseError::NotType3 { at: 22, .. })));
        assert_eq!(got.len(), 5);
        // A queue-owned register in a run is refused where it is met.
        let ib = [type3(op::SET_SH_REG, 2, true), 0x218, 0];
        let e = Cp::new(&ib, Family::Gfx12).next().unwrap().unwrap_err();
        assert!(e.to_string().contains("COMPUTE_TMPRING_SIZE"), "{e}");
    }
}
