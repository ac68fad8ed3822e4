//! The command processor's packet parser: how the simulated CP reads a
//! PM4 stream. It knows nothing of who wrote the IB (relaunch's encoder,
//! ROCr's cache flushes, HIP): headers, opcodes, body layouts and SH
//! registers come from `relaunch-facts`' tables, and it refuses only what
//! the CP could not execute (a non-type-3 header, a predicated packet, an
//! opcode or body layout the tables do not have, a register the family
//! lacks) or what the model does not cover (registers the queue or the CP
//! own). It never panics on any input.

use relaunch_facts::packet::{header, op, packet_layout, PacketLayout};
use relaunch_facts::regs::{table, SH_REG_END, SH_REG_START};
use relaunch_facts::Family;

/// Why the CP cannot read the packet at `at` (a dword index in the IB).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("dword {at}: packet needs {need} dwords but only {have} remain (truncated IB)")]
    Truncated { at: usize, need: usize, have: usize },
    #[error("dword {at}: header {header:#010x} is a type-{kind} packet; a compute queue's IB holds type-3 packets")]
    NotType3 { at: usize, header: u32, kind: u32 },
    #[error("dword {at}: unknown type-3 opcode {opcode:#04x} (header {header:#010x})")]
    UnknownOpcode { at: usize, opcode: u8, header: u32 },
    #[error("dword {at}: {packet} with {body} body dwords; expected {expected}")]
    BadCount {
        at: usize,
        packet: &'static str,
        body: usize,
        expected: &'static str,
    },
    #[error("dword {at}: SET_SH_REG to offset {offset:#x}, a register {family} does not have")]
    UnknownRegister {
        at: usize,
        offset: u32,
        family: Family,
    },
    #[error(
        "dword {at}: SET_SH_REG writes {name} ({offset:#x}), which is {class}: the queue's \
         state behind it is not modelled, so an IB must not write it"
    )]
    ForbiddenRegister {
        at: usize,
        offset: u32,
        name: &'static str,
        class: &'static str,
    },
    #[error("dword {at}: predicated packet (header {header:#010x}); predication is not modelled")]
    Predicated { at: usize, header: u32 },
}

impl ParseError {
    /// The dword the bad packet starts at.
    pub fn at(&self) -> usize {
        match self {
            ParseError::Truncated { at, .. }
            | ParseError::NotType3 { at, .. }
            | ParseError::UnknownOpcode { at, .. }
            | ParseError::BadCount { at, .. }
            | ParseError::UnknownRegister { at, .. }
            | ParseError::ForbiddenRegister { at, .. }
            | ParseError::Predicated { at, .. } => *at,
        }
    }
}

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
        let at = self.at;
        let word = self.ib[at];
        let kind = header::TYPE.get(word);
        if kind != 3 {
            return Err(ParseError::NotType3 {
                at,
                header: word,
                kind,
            });
        }
        if header::PREDICATE.get(word) != 0 {
            return Err(ParseError::Predicated { at, header: word });
        }
        let len = header::COUNT.get(word) as usize + 1;
        let rest = self.ib.len() - at - 1;
        if len > rest {
            return Err(ParseError::Truncated {
                at,
                need: len + 1,
                have: rest + 1,
            });
        }
        let opcode = header::OPCODE.get(word) as u8;
        let layout = packet_layout(opcode).ok_or(ParseError::UnknownOpcode {
            at,
            opcode,
            header: word,
        })?;
        if !layout.body.allows(len) {
            return Err(ParseError::BadCount {
                at,
                packet: layout.name,
                body: len,
                expected: layout.expected,
            });
        }
        let body: &'a [u32] = &self.ib[at + 1..at + 1 + len];
        Ok((self.packet(at, layout, body)?, 1 + len))
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
                self.registers(at, offset, values.len())?;
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

    /// Every register of a SET_SH_REG run must exist on the family and be
    /// one the model lets an IB program.
    fn registers(&self, at: usize, offset: u32, n: usize) -> Result<(), ParseError> {
        let window = SH_REG_END - SH_REG_START;
        let regs = table(self.family);
        for i in 0..n as u64 {
            let o = u64::from(offset) + i;
            let reg = (o < u64::from(window))
                .then(|| regs.get(o as u32))
                .flatten();
            let Some(reg) = reg else {
                return Err(ParseError::UnknownRegister {
                    at,
                    offset: o.min(u64::from(u32::MAX)) as u32,
                    family: self.family,
                });
            };
            if reg.class.forbidden() {
                return Err(ParseError::ForbiddenRegister {
                    at,
                    offset: o as u32,
                    name: reg.name,
                    class: reg.class.name(),
                });
            }
        }
        Ok(())
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
    fn reads_packets_by_the_facts_layouts_and_never_panics() {
        let ib = [
            type3(op::NOP, 2, false),
            0,
            0,
            type3(op::DISPATCH_DIRECT, 4, true),
            1,
            2,
            3,
            0x45,
        ];
        let got: Vec<_> = Cp::new(&ib, Family::Gfx10).map(|r| r.unwrap()).collect();
        assert_eq!(got[0], (0, CpPacket::Nop));
        assert_eq!(
            got[1],
            (
                3,
                CpPacket::DispatchDirect {
                    groups: [1, 2, 3],
                    initiator: 0x45
                }
            )
        );
        let bad = [type3(op::DISPATCH_DIRECT, 3, true), 1, 1, 1];
        let e = Cp::new(&bad, Family::Gfx11).next().unwrap().unwrap_err();
        assert!(e.to_string().contains("expected 4"), "{e}");
        let e = Cp::new(&[type3(0x7F, 1, false), 0], Family::Gfx12)
            .next()
            .unwrap()
            .unwrap_err();
        assert!(matches!(e, ParseError::UnknownOpcode { opcode: 0x7F, .. }));
        let e = Cp::new(&[0x8000_0000], Family::Gfx12)
            .next()
            .unwrap()
            .unwrap_err();
        assert!(matches!(e, ParseError::NotType3 { kind: 2, .. }), "{e}");
        for w in [0u32, u32::MAX, 0xC3FF_7602, 0xC000_7602] {
            for n in 0..4 {
                let ib = vec![w; n];
                let _ = Cp::new(&ib, Family::Gfx10).count();
            }
        }
        // A SET_SH_REG run past the window is an unknown register, not a panic.
        let ib = [type3(op::SET_SH_REG, 3, true), 0x3FF, 1, 2];
        let e = Cp::new(&ib, Family::Gfx10).next().unwrap().unwrap_err();
        assert!(matches!(e, ParseError::UnknownRegister { .. }), "{e}");
    }
}
