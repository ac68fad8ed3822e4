//! AQL packet layouts relaunch writes: the vendor-specific packet that runs
//! one PM4 IB on a public ROCr AQL queue (layout of
//! `hsa_ext_amd_aql_pm4_packet_t`, see PM4.md "Submitting an IB") and the
//! standard KERNEL_DISPATCH packet of the public-AQL path (`hsa.h`): built
//! here once, for the device's queues and the tests alike.
//! The header word is kept apart: the submitter writes the body, then
//! publishes the header with release ordering, then rings the doorbell.

use crate::packet::{ib_control_word, op, type3, MAX_IB_DWORDS};

/// AQL packet type VENDOR_SPECIFIC (`hsa_packet_type_t`).
pub const PACKET_TYPE_VENDOR_SPECIFIC: u16 = 0;
/// Position of the AQL header's BARRIER bit (`HSA_PACKET_HEADER_BARRIER`).
pub const HEADER_BARRIER_BIT: u16 = 8;
/// AQL header BARRIER bit.
pub const HEADER_BARRIER: u16 = 1 << HEADER_BARRIER_BIT;
/// AQL header acquire fence scope shift (2 bits).
pub const HEADER_ACQUIRE_SCOPE_SHIFT: u16 = 9;
/// AQL header release fence scope shift (2 bits).
pub const HEADER_RELEASE_SCOPE_SHIFT: u16 = 11;
/// AMD vendor packet format PM4_IB (bytes 2-3).
pub const AMD_FORMAT_PM4_IB: u16 = 1;
/// `dw_count_remain` value for a PM4-IB packet (dwords after the 4-dword
/// PM4 command).
pub const DW_COUNT_REMAIN: u32 = 10;

/// HSA fence scope for the header's acquire and release fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FenceScope {
    None = 0,
    Agent = 1,
    System = 2,
}

/// The 16-bit AQL header of a PM4-IB packet: VENDOR_SPECIFIC with BARRIER
/// set (the IB starts after all earlier packets finish).
pub const fn header(acquire: FenceScope, release: FenceScope) -> u16 {
    PACKET_TYPE_VENDOR_SPECIFIC
        | HEADER_BARRIER
        | (acquire as u16) << HEADER_ACQUIRE_SCOPE_SHIFT
        | (release as u16) << HEADER_RELEASE_SCOPE_SHIFT
}

/// The header relaunch submits with: system-scope acquire and release.
pub const SYSTEM_HEADER: u16 = header(FenceScope::System, FenceScope::System);

/// AQL packet type KERNEL_DISPATCH (HSA `hsa_packet_type_t`).
pub const PACKET_TYPE_KERNEL_DISPATCH: u16 = 2;

/// The 16-bit AQL header of a KERNEL_DISPATCH packet: BARRIER (the packet
/// starts only after every earlier packet on the queue completed), the
/// acquire fence applied before it runs and the release fence after.
pub const fn dispatch_header(barrier: bool, acquire: FenceScope, release: FenceScope) -> u16 {
    PACKET_TYPE_KERNEL_DISPATCH
        | if barrier { HEADER_BARRIER } else { 0 }
        | (acquire as u16) << HEADER_ACQUIRE_SCOPE_SHIFT
        | (release as u16) << HEADER_RELEASE_SCOPE_SHIFT
}

/// The fields of one `hsa_kernel_dispatch_packet_t` (HSA spec 2.9.6,
/// `hsa.h`), everything but the header and the completion signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KernelDispatch {
    /// 1..=3: the dimensions used (SETUP bits [1:0]).
    pub dims: u16,
    pub workgroup_size: [u16; 3],
    pub grid_size: [u32; 3],
    /// Bytes of private (scratch) memory per work-item.
    pub private_segment_size: u32,
    /// Bytes of group (LDS) memory per workgroup: static + dynamic.
    pub group_segment_size: u32,
    /// GPU address of the kernel descriptor (`NAME.kd`).
    pub kernel_object: u64,
    pub kernarg_address: u64,
}

impl KernelDispatch {
    /// The packet as the 16 little-endian dwords of its ring slot, with
    /// `header` in dword 0 (low half; SETUP in the high half) and
    /// `completion_signal` in dwords 14-15.
    pub fn words(&self, header: u16, completion_signal: u64) -> [u32; 16] {
        let pair = |lo: u16, hi: u16| u32::from(lo) | u32::from(hi) << 16;
        let w = self.workgroup_size;
        [
            pair(header, self.dims),
            pair(w[0], w[1]),
            pair(w[2], 0),
            self.grid_size[0],
            self.grid_size[1],
            self.grid_size[2],
            self.private_segment_size,
            self.group_segment_size,
            self.kernel_object as u32,
            (self.kernel_object >> 32) as u32,
            self.kernarg_address as u32,
            (self.kernarg_address >> 32) as u32,
            0,
            0,
            completion_signal as u32,
            (completion_signal >> 32) as u32,
        ]
    }
}

/// An IB the packet cannot point at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IbError {
    #[error("indirect buffer address {address:#x} is not a non-zero, 4-byte aligned address")]
    Address { address: u64 },
    #[error(
        "indirect buffer of {dwords} dwords; an IB holds 1..={MAX_IB_DWORDS} dwords, split it"
    )]
    Size { dwords: u64 },
}

/// The packet's 4-dword PM4 command: INDIRECT_BUFFER to `ib_address` of
/// `ib_dwords` dwords, checked.
pub fn indirect_buffer_command(ib_address: u64, ib_dwords: u64) -> Result<[u32; 4], IbError> {
    if ib_address % 4 != 0 || ib_address == 0 {
        return Err(IbError::Address {
            address: ib_address,
        });
    }
    if ib_dwords == 0 || ib_dwords > u64::from(MAX_IB_DWORDS) {
        return Err(IbError::Size { dwords: ib_dwords });
    }
    Ok([
        type3(op::INDIRECT_BUFFER, 3, false),
        ib_address as u32,
        (ib_address >> 32) as u32,
        ib_control_word(ib_dwords as u32),
    ])
}

/// A PM4-IB AQL packet: the 32-bit header word (AQL header | format << 16)
/// to publish last, and bytes 4..64 to write first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pm4IbPacket {
    pub header_word: u32,
    pub body: [u8; 60],
}

impl Pm4IbPacket {
    /// Build the packet for an IB at `ib_address` of `ib_dwords` dwords.
    pub fn new(
        ib_address: u64,
        ib_dwords: usize,
        completion_signal: u64,
        acquire: FenceScope,
        release: FenceScope,
    ) -> Result<Self, IbError> {
        let command = indirect_buffer_command(ib_address, ib_dwords as u64)?;
        let mut body = [0u8; 60];
        for (i, w) in command.iter().chain(&[DW_COUNT_REMAIN]).enumerate() {
            body[i * 4..i * 4 + 4].copy_from_slice(&w.to_le_bytes());
        }
        body[52..60].copy_from_slice(&completion_signal.to_le_bytes());
        Ok(Pm4IbPacket {
            header_word: header(acquire, release) as u32 | (AMD_FORMAT_PM4_IB as u32) << 16,
            body,
        })
    }

    /// The whole 64-byte packet as it sits in the ring once published.
    pub fn to_bytes(&self) -> [u8; 64] {
        let mut out = [0u8; 64];
        out[..4].copy_from_slice(&self.header_word.to_le_bytes());
        out[4..].copy_from_slice(&self.body);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_packet() {
        let p = Pm4IbPacket::new(
            0x0000_7F12_3456_7800,
            0x1234,
            0xDEAD_BEEF_0000_1000,
            FenceScope::System,
            FenceScope::System,
        )
        .unwrap();
        // VENDOR_SPECIFIC, BARRIER, acquire/release system; format 1.
        assert_eq!(p.header_word, 0x0001_1500);
        assert_eq!(SYSTEM_HEADER, 0x1500);
        let b = p.to_bytes();
        let dw = |i: usize| u32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().unwrap());
        assert_eq!(
            (0..16).map(dw).collect::<Vec<_>>(),
            [
                0x0001_1500,
                0xC002_3F00,
                0x3456_7800,
                0x0000_7F12,
                0x0080_1234,
                10,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0x0000_1000,
                0xDEAD_BEEF
            ]
        );
    }

    #[test]
    fn kernel_dispatch_words_follow_hsa_h() {
        let d = KernelDispatch {
            dims: 2,
            workgroup_size: [64, 2, 1],
            grid_size: [1024, 8, 1],
            private_segment_size: 16,
            group_segment_size: 512,
            kernel_object: 0x1122_3344_5566_7788,
            kernarg_address: 0x99AA_BBCC_DDEE_FF00,
        };
        let h = dispatch_header(true, FenceScope::Agent, FenceScope::System);
        assert_eq!(h, 2 | 1 << 8 | 1 << 9 | 2 << 11);
        let w = d.words(h, 0xDEAD_BEEF_0000_1000);
        assert_eq!(w[0], u32::from(h) | 2 << 16);
        assert_eq!(&w[1..8], &[64 | 2 << 16, 1, 1024, 8, 1, 16, 512]);
        assert_eq!(
            &w[8..12],
            &[0x5566_7788, 0x1122_3344, 0xDDEE_FF00, 0x99AA_BBCC]
        );
        assert_eq!(&w[12..], &[0, 0, 0x0000_1000, 0xDEAD_BEEF]);
        assert_eq!(
            dispatch_header(false, FenceScope::None, FenceScope::None),
            2
        );
    }

    #[test]
    fn refuses_bad_ib() {
        let s = FenceScope::System;
        let err = Pm4IbPacket::new(0x1002, 4, 0, s, s).unwrap_err();
        assert!(err.to_string().contains("4-byte aligned"), "{err}");
        assert!(matches!(
            Pm4IbPacket::new(0, 4, 0, s, s),
            Err(IbError::Address { address: 0 })
        ));
        assert!(matches!(
            Pm4IbPacket::new(0x1000, 0, 0, s, s),
            Err(IbError::Size { dwords: 0 })
        ));
        let err = Pm4IbPacket::new(0x1000, 1 << 20, 0, s, s).unwrap_err();
        assert_eq!(err, IbError::Size { dwords: 1048576 });
        assert!(err.to_string().contains("1..=1048575 dwords"), "{err}");
        assert!(indirect_buffer_command(0x1000, u64::from(MAX_IB_DWORDS)).is_ok());
    }
}
