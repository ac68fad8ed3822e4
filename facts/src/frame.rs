//! Framing a PM4 stream as the command processor does: the type-3 header,
//! the body layout from [`crate::packet::PACKETS`], and SET_SH_REG runs
//! against the family's register table. Both readers of PM4 (the encoders'
//! decoder for dumps, the simulated CP for execution) frame packets here
//! and then read the body fields they need, so the rules of the format
//! live once. Never panics on any input.

use crate::family::Family;
use crate::packet::{header, packet_layout, PacketLayout};
use crate::regs::{table, SH_REG_END, SH_REG_START};

/// Why the packet at `at` (a dword index) cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("dword {at}: packet needs {need} dwords but only {have} remain (truncated IB)")]
    Truncated { at: usize, need: usize, have: usize },
    #[error("dword {at}: header {header:#010x} is a type-{kind} packet; compute IBs hold type-3 packets")]
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
        "dword {at}: SET_SH_REG writes {name} ({offset:#x}), which is {class}: the queue or the \
         CP owns it, so an IB must never write it"
    )]
    ForbiddenRegister {
        at: usize,
        offset: u32,
        name: &'static str,
        class: &'static str,
    },
    #[error("dword {at}: predicated packet (header {header:#010x}); predication is not used on compute IBs")]
    Predicated { at: usize, header: u32 },
}

impl FrameError {
    /// The dword the packet starts at.
    pub fn at(&self) -> usize {
        match self {
            FrameError::Truncated { at, .. }
            | FrameError::NotType3 { at, .. }
            | FrameError::UnknownOpcode { at, .. }
            | FrameError::BadCount { at, .. }
            | FrameError::UnknownRegister { at, .. }
            | FrameError::ForbiddenRegister { at, .. }
            | FrameError::Predicated { at, .. } => *at,
        }
    }
}

/// One framed packet: its layout and body (after the header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    pub header: u32,
    pub layout: &'static PacketLayout,
    pub body: &'a [u32],
}

impl Frame<'_> {
    /// Dwords the packet takes, header included.
    pub fn len(&self) -> usize {
        1 + self.body.len()
    }

    /// Never true: a packet has at least its header.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// Frames the packet at `at` (`at < dwords.len()`): a type-3 header
/// without predication, its whole body present, a known opcode, a body
/// count its layout allows.
pub fn frame(dwords: &[u32], at: usize) -> Result<Frame<'_>, FrameError> {
    let word = dwords[at];
    let kind = header::TYPE.get(word);
    if kind != 3 {
        return Err(FrameError::NotType3 {
            at,
            header: word,
            kind,
        });
    }
    if header::PREDICATE.get(word) != 0 {
        return Err(FrameError::Predicated { at, header: word });
    }
    let len = header::COUNT.get(word) as usize + 1;
    let rest = dwords.len() - at - 1;
    if len > rest {
        return Err(FrameError::Truncated {
            at,
            need: len + 1,
            have: rest + 1,
        });
    }
    let opcode = header::OPCODE.get(word) as u8;
    let layout = packet_layout(opcode).ok_or(FrameError::UnknownOpcode {
        at,
        opcode,
        header: word,
    })?;
    if !layout.body.allows(len) {
        return Err(FrameError::BadCount {
            at,
            packet: layout.name,
            body: len,
            expected: layout.expected,
        });
    }
    Ok(Frame {
        header: word,
        layout,
        body: &dwords[at + 1..at + 1 + len],
    })
}

/// A SET_SH_REG run of `n` registers from `offset` must stay inside the SH
/// window (a format rule, checked by every reader).
pub fn check_sh_window(at: usize, family: Family, offset: u32, n: usize) -> Result<(), FrameError> {
    let window = u64::from(SH_REG_END - SH_REG_START);
    if u64::from(offset) + n as u64 > window {
        return Err(FrameError::UnknownRegister {
            at,
            offset: offset.max(SH_REG_END - SH_REG_START),
            family,
        });
    }
    Ok(())
}

/// Every register of a SET_SH_REG run exists on `family` and is not one
/// the queue or the CP owns.
pub fn check_sh_run(at: usize, family: Family, offset: u32, n: usize) -> Result<(), FrameError> {
    check_sh_window(at, family, offset, n)?;
    let regs = table(family);
    for o in offset..offset + n as u32 {
        let reg = regs.get(o).ok_or(FrameError::UnknownRegister {
            at,
            offset: o,
            family,
        })?;
        if reg.class.forbidden() {
            return Err(FrameError::ForbiddenRegister {
                at,
                offset: o,
                name: reg.name,
                class: reg.class.name(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{op, type3};

    #[test]
    fn frames_by_the_layout_table_and_never_panics() {
        let ib = [type3(op::DISPATCH_DIRECT, 4, true), 1, 2, 3, 0x45];
        let f = frame(&ib, 0).unwrap();
        assert_eq!((f.layout.name, f.len()), ("DISPATCH_DIRECT", 5));
        let e = frame(&[type3(op::DISPATCH_DIRECT, 3, true), 1, 1, 1], 0).unwrap_err();
        assert!(e.to_string().contains("expected 4"), "{e}");
        assert!(matches!(
            frame(&[type3(0x7F, 1, false), 0], 0),
            Err(FrameError::UnknownOpcode { opcode: 0x7F, .. })
        ));
        assert!(matches!(
            frame(&[0x8000_0000], 0),
            Err(FrameError::NotType3 { kind: 2, .. })
        ));
        for w in [0u32, u32::MAX, 0xC3FF_7602, 0xC000_7602] {
            for n in 1..4 {
                let _ = frame(&vec![w; n], 0);
            }
        }
        assert!(check_sh_run(0, Family::Gfx10, 0x3FF, 2).is_err());
        let e = check_sh_run(0, Family::Gfx12, 0x216, 1).unwrap_err();
        assert!(
            e.to_string().contains("COMPUTE_STATIC_THREAD_MGMT_SE0"),
            "{e}"
        );
        // The scratch ring is the IB's to program for its dispatches.
        assert!(check_sh_run(0, Family::Gfx12, 0x218, 1).is_ok());
        assert!(check_sh_run(0, Family::Gfx11, 0x240, 16).is_ok());
    }
}
