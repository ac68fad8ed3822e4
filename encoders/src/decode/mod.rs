//! The decoder: dwords back into typed packets, for dumps and tests.
//! Framing and body fields are `relaunch_facts::frame` / `body`, which the
//! simulated CP reads too (it executes IBs through its own reader, not
//! this one); register names come from the same tables the encoder writes
//! with.
//!
//! Strict mode (`decode`, `Decoder`) rejects unknown opcodes, bad counts,
//! truncation, predication, and SET_SH_REG writes to registers the family
//! lacks or that the queue or CP own. Lenient mode (`decode_lenient`,
//! `dump`) never fails: it marks what it cannot decode and continues.
//! Neither panics on any input.

mod dump;

pub use dump::{dump, dump_each, dump_lenient, dump_lenient_each, DumpError};

use relaunch_device::Family;

use crate::error::DecodeError;
use crate::packet::header;
use crate::regs::{table, Register};
use relaunch_facts::frame::{check_sh_run, check_sh_window, frame};

/// One decoded packet (the typed body of `relaunch_facts::body`).
pub use relaunch_facts::body::Packet;

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
    let (opcode, body_len) = (f.layout.opcode, f.body.len());
    let packet = Packet::read(&f).ok_or(DecodeError::UnknownOpcode {
        at,
        opcode,
        header: f.header,
    })?;
    if let Packet::SetShReg { offset, values } = packet {
        if strict {
            check_sh_run(at, family, offset, values.len())?;
        } else {
            check_sh_window(at, family, offset, values.len())?;
        }
    }
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
