//! AQL packet images: the three packet kinds relaunch submits, serialised to
//! the 16 little-endian dwords the packet processor reads. Dword 0 (header |
//! setup/format << 16) is published last by the queue.

use relaunch_facts::aql;
use relaunch_hsa_sys as sys;

use super::HsaError;

/// Dwords 14 and 15 of every AQL packet: its completion signal handle
/// (HSA: `completion_signal` at byte offset 56 in all packet formats).
pub const AQL_COMPLETION_SIGNAL_WORD: usize = 14;

/// A packet to submit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AqlPacket {
    KernelDispatch(sys::KernelDispatchPacket),
    BarrierAnd(sys::BarrierAndPacket),
    Pm4Ib(sys::AmdPm4IbPacket),
}

/// Builds the vendor packet running the IB of `dwords` dwords at `ib_addr`
/// (the layout is the facts crate's one builder, [`relaunch_facts::aql`]),
/// with system-scope acquire and release fences.
pub fn pm4_ib_packet(
    ib_addr: u64,
    dwords: u32,
    completion: sys::Signal,
) -> Result<sys::AmdPm4IbPacket, HsaError> {
    let pm4_ib = aql::indirect_buffer_command(ib_addr, u64::from(dwords)).map_err(|e| match e {
        aql::IbError::Address { address } => HsaError::Invalid {
            what: "indirect buffer address",
            problem: format!("{address:#x} is not a non-zero, 4-byte aligned address"),
        },
        aql::IbError::Size { dwords } => HsaError::Invalid {
            what: "indirect buffer size",
            problem: format!(
                "{dwords} dwords; an IB holds 1..={} dwords, split it",
                relaunch_facts::packet::MAX_IB_DWORDS
            ),
        },
    })?;
    Ok(sys::AmdPm4IbPacket {
        header: sys::AmdVendorPacketHeader {
            header: aql::SYSTEM_HEADER,
            amd_format: aql::AMD_FORMAT_PM4_IB as u8,
            reserved: 0,
        },
        pm4_ib,
        dw_count_remain: aql::DW_COUNT_REMAIN,
        reserved: [0; 8],
        completion_signal: completion,
    })
}

fn lo(v: u64) -> u32 {
    v as u32
}
fn hi(v: u64) -> u32 {
    (v >> 32) as u32
}
fn pair(low: u16, high: u16) -> u32 {
    low as u32 | (high as u32) << 16
}

impl AqlPacket {
    /// The packet as 16 dwords; dword 0 is the header word.
    pub fn words(&self) -> [u32; 16] {
        match self {
            AqlPacket::KernelDispatch(p) => [
                pair(p.header, p.setup),
                pair(p.workgroup_size_x, p.workgroup_size_y),
                pair(p.workgroup_size_z, p.reserved0),
                p.grid_size_x,
                p.grid_size_y,
                p.grid_size_z,
                p.private_segment_size,
                p.group_segment_size,
                lo(p.kernel_object),
                hi(p.kernel_object),
                lo(p.kernarg_address),
                hi(p.kernarg_address),
                lo(p.reserved2),
                hi(p.reserved2),
                lo(p.completion_signal.handle),
                hi(p.completion_signal.handle),
            ],
            AqlPacket::BarrierAnd(p) => {
                let mut w = [0u32; 16];
                w[0] = pair(p.header, p.reserved0);
                w[1] = p.reserved1;
                for (i, dep) in p.dep_signal.iter().enumerate() {
                    w[2 + 2 * i] = lo(dep.handle);
                    w[3 + 2 * i] = hi(dep.handle);
                }
                w[12] = lo(p.reserved2);
                w[13] = hi(p.reserved2);
                w[14] = lo(p.completion_signal.handle);
                w[15] = hi(p.completion_signal.handle);
                w
            }
            AqlPacket::Pm4Ib(p) => {
                let mut w = [0u32; 16];
                w[0] = pair(
                    p.header.header,
                    p.header.amd_format as u16 | (p.header.reserved as u16) << 8,
                );
                w[1..5].copy_from_slice(&p.pm4_ib);
                w[5] = p.dw_count_remain;
                w[6..14].copy_from_slice(&p.reserved);
                w[14] = lo(p.completion_signal.handle);
                w[15] = hi(p.completion_signal.handle);
                w
            }
        }
    }

    /// The completion signal the packet will decrement.
    pub fn completion_signal(&self) -> sys::Signal {
        match self {
            AqlPacket::KernelDispatch(p) => p.completion_signal,
            AqlPacket::BarrierAnd(p) => p.completion_signal,
            AqlPacket::Pm4Ib(p) => p.completion_signal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words must equal the repr(C) struct's bytes (little-endian).
    fn struct_words<T: Copy>(value: &T) -> [u32; 16] {
        assert_eq!(std::mem::size_of::<T>(), 64);
        let mut bytes = [0u8; 64];
        // SAFETY: T is a 64-byte repr(C) packet without padding (checked
        // against the C headers by hsa-sys's layout test); copying its bytes
        // is a plain read.
        unsafe {
            std::ptr::copy_nonoverlapping((value as *const T).cast::<u8>(), bytes.as_mut_ptr(), 64)
        };
        let mut words = [0u32; 16];
        for (i, w) in words.iter_mut().enumerate() {
            *w = u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap());
        }
        words
    }

    #[test]
    fn pm4_ib_packet_matches_the_documented_layout() {
        let p = pm4_ib_packet(
            0x0000_7f12_3456_7800,
            300,
            sys::Signal {
                handle: 0xAABB_CCDD_0011_2233,
            },
        )
        .unwrap();
        let w = AqlPacket::Pm4Ib(p).words();
        // header: vendor type 0, barrier bit 8, acquire/release system (2).
        assert_eq!(w[0] & 0xFFFF, (1 << 8) | (2 << 9) | (2 << 11));
        assert_eq!(w[0] >> 16, 1, "AMD format PM4_IB");
        assert_eq!(
            &w[1..5],
            &[0xC002_3F00, 0x3456_7800, 0x7f12, 300 | (1 << 23)]
        );
        assert_eq!(w[5], 10);
        assert!(w[6..14].iter().all(|&x| x == 0));
        assert_eq!((w[14], w[15]), (0x0011_2233, 0xAABB_CCDD));
        assert_eq!(
            (
                w[AQL_COMPLETION_SIGNAL_WORD],
                w[AQL_COMPLETION_SIGNAL_WORD + 1]
            ),
            (0x0011_2233, 0xAABB_CCDD)
        );
        assert_eq!(w, struct_words(&p));
    }

    #[test]
    fn dispatch_and_barrier_words_match_struct_bytes() {
        let d = sys::KernelDispatchPacket {
            header: 0x1502,
            setup: 3,
            workgroup_size_x: 64,
            workgroup_size_y: 2,
            workgroup_size_z: 1,
            grid_size_x: 1024,
            grid_size_y: 2,
            grid_size_z: 1,
            private_segment_size: 0,
            group_segment_size: 512,
            kernel_object: 0x1122_3344_5566_7788,
            kernarg_address: 0x99AA_BBCC_DDEE_FF00,
            completion_signal: sys::Signal { handle: 7 },
            ..Default::default()
        };
        assert_eq!(AqlPacket::KernelDispatch(d).words(), struct_words(&d));
        let b = sys::BarrierAndPacket {
            header: 0x0303,
            dep_signal: [1, 2, 3, 4, 5].map(|h| sys::Signal {
                handle: h << 33 | h,
            }),
            completion_signal: sys::Signal { handle: 9 },
            ..Default::default()
        };
        assert_eq!(AqlPacket::BarrierAnd(b).words(), struct_words(&b));
    }

    #[test]
    fn bad_ibs_are_refused() {
        let s = sys::Signal::default();
        assert!(pm4_ib_packet(0x1002, 4, s)
            .unwrap_err()
            .to_string()
            .contains("4-byte aligned"));
        assert!(pm4_ib_packet(0, 4, s).is_err());
        assert!(pm4_ib_packet(0x1000, 0, s).is_err());
        let max = relaunch_facts::packet::MAX_IB_DWORDS;
        let err = pm4_ib_packet(0x1000, max + 1, s).unwrap_err();
        assert!(err.to_string().contains("1..=1048575 dwords"), "{err}");
        assert!(pm4_ib_packet(0x1000, max, s).is_ok());
    }
}
