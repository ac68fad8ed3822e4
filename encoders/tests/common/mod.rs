//! Shared fixtures: synthetic descriptors shaped like real kernels, and a
//! register-state replayer over decoded packets.
#![allow(dead_code)]

use relaunch_device::codeobj::KernelDescriptor;
use relaunch_device::Family;
use relaunch_encoders::decode::Decoder;
use relaunch_encoders::{EncodedIb, KernelCode, Packet};
use relaunch_facts::descriptor::{properties as p, rsrc2};

/// A kernarg-pointer-only kernel (like the counter kernel): 2 user SGPRs.
pub fn counter_kd(wave32: bool) -> KernelDescriptor {
    let mut kd = relaunch_testsupport::counter_descriptor();
    if !wave32 {
        kd.kernel_code_properties &= !p::WAVEFRONT_SIZE32;
    }
    kd
}

/// A gfx10/11 kernel that also asks for the private segment buffer (6 SGPRs).
pub fn psb_kd() -> KernelDescriptor {
    let mut kd = counter_kd(true);
    kd.kernel_code_properties |= p::PRIVATE_SEGMENT_BUFFER;
    kd.compute_pgm_rsrc2 = 0x80 | (6 << rsrc2::USER_SGPR_SHIFT);
    kd
}

/// A kernarg-pointer-only kernel as clang-19 builds it for gfx1100/gfx1102:
/// RSRC2 declares 15 user SGPRs (2 + 13 padding) so that with TGID_X they
/// total 16.
pub fn padded_kd() -> KernelDescriptor {
    let mut kd = counter_kd(true);
    kd.compute_pgm_rsrc2 = 0x80 | (15 << rsrc2::USER_SGPR_SHIFT);
    kd
}

pub fn code<'a>(
    symbol: &'a str,
    family: Family,
    kd: KernelDescriptor,
    kd_address: u64,
) -> KernelCode<'a> {
    KernelCode {
        symbol,
        family,
        descriptor: kd,
        kd_address,
        unread: Default::default(),
    }
}

/// What a DISPATCH_DIRECT saw: the SH registers at that point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub groups: [u32; 3],
    pub initiator: u32,
    pub regs: Vec<Option<u32>>,
}

impl Seen {
    pub fn reg(&self, offset: u32) -> u32 {
        self.regs[(offset - 0x200) as usize].expect("register never written in this segment")
    }
}

/// Decode every segment strictly (state starts unknown in each) and return
/// what each dispatch saw.
pub fn replay(ib: &EncodedIb) -> Vec<Seen> {
    let mut out = Vec::new();
    for seg in &ib.segments {
        let mut regs = vec![None; 0x50];
        for item in Decoder::new(&seg.dwords, ib.family) {
            let (_, packet) = item.expect("encoder output decodes strictly");
            match packet {
                Packet::SetShReg { offset, values } => {
                    for (i, v) in values.iter().enumerate() {
                        regs[(offset - 0x200) as usize + i] = Some(*v);
                    }
                }
                Packet::DispatchDirect { groups, initiator } => out.push(Seen {
                    groups,
                    initiator,
                    regs: regs.clone(),
                }),
                _ => {}
            }
        }
    }
    out
}
