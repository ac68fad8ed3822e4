//! The command processor's packet parser: how the simulated CP reads a
//! PM4 stream. It knows nothing of who wrote the IB (relaunch's encoder,
//! ROCr's cache flushes, HIP): headers, opcodes, body layouts and SH
//! registers come from `relaunch-facts`' tables, and it refuses only what
//! the CP could not execute (a non-type-3 header, a predicated packet, an
//! opcode or body layout the tables do not have, a register the family
//! lacks) or what the model does not cover (registers the queue or the CP
//! own). It never panics on any input.

use relaunch_facts::body::Packet;
use relaunch_facts::frame::{check_sh_run, frame};
use relaunch_facts::Family;

/// Why the CP cannot read a packet: the PM4 format's framing error.
pub use relaunch_facts::frame::FrameError as ParseError;

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

    /// Frame the packet (facts' layouts), read its body, and check a
    /// SET_SH_REG run: registers the family has, none the queue or CP owns
    /// (the queue state behind them is not modelled).
    fn read(&self) -> Result<(Packet<'a>, usize), ParseError> {
        let at = self.at;
        let f = frame(self.ib, at)?;
        let packet = Packet::read(&f).ok_or(ParseError::UnknownOpcode {
            at,
            opcode: f.layout.opcode,
            header: f.header,
        })?;
        if let Packet::SetShReg { offset, values } = packet {
            check_sh_run(at, self.family, offset, values.len())?;
        }
        Ok((packet, f.len()))
    }
}

impl<'a> Iterator for Cp<'a> {
    type Item = Result<(usize, Packet<'a>), ParseError>;

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
    use relaunch_facts::packet::{op, type3};

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
        assert_eq!(got[0], Ok((0, Packet::Nop { body: &ib[1..3] })));
        let groups = [1, 2, 3];
        let dispatch = Packet::DispatchDirect {
            groups,
            initiator: 0x45,
        };
        assert_eq!(got[1], Ok((3, dispatch)));
        let Ok((
            8,
            Packet::AcquireMem {
                coher_size,
                gcr_cntl,
                ..
            },
        )) = got[2]
        else {
            panic!("{:?}", got[2]);
        };
        assert_eq!((coher_size, gcr_cntl), (0xFF_FFFF_FFFF, 0x4381));
        assert!(matches!(got[3], Ok((16, Packet::CopyData { .. }))));
        assert!(matches!(got[4], Err(ParseError::NotType3 { at: 22, .. })));
        assert_eq!(got.len(), 5);
        // A queue-owned register in a run is refused where it is met.
        let ib = [type3(op::SET_SH_REG, 2, true), 0x216, 0];
        let e = Cp::new(&ib, Family::Gfx12).next().unwrap().unwrap_err();
        assert!(
            e.to_string().contains("COMPUTE_STATIC_THREAD_MGMT_SE0"),
            "{e}"
        );
    }
}
