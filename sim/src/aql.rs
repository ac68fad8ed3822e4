//! AQL packets as the simulated packet processor reads them: the 64 bytes of
//! a ring slot, parsed and checked for consistency. A body that does not
//! hang together (reserved bytes set, a PM4-IB packet whose INDIRECT_BUFFER
//! is malformed, zero dimensions) is refused: that is also how a body
//! written after its header shows up, because consumed slots are poisoned.

use relaunch_facts::packet::{ib_control, op, type3};
use relaunch_hsa_sys::{
    AMD_AQL_FORMAT_PM4_IB, HSA_PACKET_TYPE_BARRIER_AND, HSA_PACKET_TYPE_INVALID,
    HSA_PACKET_TYPE_KERNEL_DISPATCH, HSA_PACKET_TYPE_VENDOR_SPECIFIC,
};

/// Byte pattern written over a consumed slot's body (after the header is
/// set INVALID), so a producer that publishes a header before its body is
/// caught reading garbage instead of the previous packet.
pub const POISON: u8 = 0xA5;

/// Fence scope of an AQL header acquire or release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    None,
    Agent,
    System,
}

impl Scope {
    fn from_bits(bits: u16) -> Result<Self, String> {
        match bits {
            0 => Ok(Scope::None),
            1 => Ok(Scope::Agent),
            2 => Ok(Scope::System),
            other => Err(format!("fence scope {other} is reserved")),
        }
    }
}

/// The 16-bit AQL header, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub packet_type: u16,
    pub barrier: bool,
    pub acquire: Scope,
    pub release: Scope,
}

impl Header {
    pub fn parse(raw: u16) -> Result<Self, String> {
        Ok(Header {
            packet_type: raw & 0xFF,
            barrier: raw & (1 << 8) != 0,
            acquire: Scope::from_bits((raw >> 9) & 3)?,
            release: Scope::from_bits((raw >> 11) & 3)?,
        })
    }

    pub fn is_invalid(raw: u16) -> bool {
        raw & 0xFF == HSA_PACKET_TYPE_INVALID
    }
}

/// A parsed, consistent AQL packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Packet {
    KernelDispatch {
        dims: u16,
        workgroup: [u32; 3],
        grid: [u32; 3],
        private_segment_size: u32,
        group_segment_size: u32,
        kernel_object: u64,
        kernarg_address: u64,
    },
    BarrierAnd {
        deps: Vec<u64>,
    },
    Pm4Ib {
        ib_addr: u64,
        ib_dwords: u32,
    },
}

/// A parsed slot: header, body and completion signal handle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    pub header: Header,
    pub packet: Packet,
    pub completion_signal: u64,
}

fn u16_at(b: &[u8; 64], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
fn u32_at(b: &[u8; 64], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}
fn u64_at(b: &[u8; 64], o: usize) -> u64 {
    u64::from(u32_at(b, o)) | (u64::from(u32_at(b, o + 4)) << 32)
}

fn zero(b: &[u8; 64], range: std::ops::Range<usize>, what: &str) -> Result<(), String> {
    match b[range.clone()].iter().position(|&x| x != 0) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what} (byte {}) is {:#04x}, must be 0{}",
            range.start + i,
            b[range.start + i],
            if b[range.start + i] == POISON {
                " (the slot still holds the poison of a consumed packet: was the header \
                 published before the body?)"
            } else {
                ""
            }
        )),
    }
}

/// Parse and check a slot whose header is not INVALID.
pub fn parse(b: &[u8; 64]) -> Result<Slot, String> {
    let header = Header::parse(u16_at(b, 0))?;
    let completion_signal = u64_at(b, 56);
    let packet = match header.packet_type {
        HSA_PACKET_TYPE_KERNEL_DISPATCH => parse_dispatch(b)?,
        HSA_PACKET_TYPE_BARRIER_AND => {
            zero(b, 2..8, "barrier-AND reserved bytes")?;
            zero(b, 48..56, "barrier-AND reserved bytes")?;
            let deps = (0..5)
                .map(|i| u64_at(b, 8 + 8 * i))
                .filter(|&h| h != 0)
                .collect();
            Packet::BarrierAnd { deps }
        }
        // Without BARRIER the IB may overlap the packet before it: the
        // processor runs it only where that cannot matter
        // (`pm4::execute_overlapping_ib`).
        HSA_PACKET_TYPE_VENDOR_SPECIFIC => parse_pm4_ib(b)?,
        other => {
            return Err(format!(
                "AQL packet type {other} is not supported by the simulated device \
                 (kernel dispatch, barrier-AND and vendor PM4-IB are)"
            ))
        }
    };
    Ok(Slot {
        header,
        packet,
        completion_signal,
    })
}

fn parse_dispatch(b: &[u8; 64]) -> Result<Packet, String> {
    let setup = u16_at(b, 2);
    let dims = setup & 3;
    if !(1..=3).contains(&dims) || setup & !3 != 0 {
        return Err(format!(
            "kernel dispatch setup {setup:#x}: dimensions must be 1..3"
        ));
    }
    zero(b, 10..12, "kernel dispatch reserved0")?;
    zero(b, 48..56, "kernel dispatch reserved2")?;
    let workgroup = [
        u32::from(u16_at(b, 4)),
        u32::from(u16_at(b, 6)),
        u32::from(u16_at(b, 8)),
    ];
    let grid = [u32_at(b, 12), u32_at(b, 16), u32_at(b, 20)];
    for d in 0..3 {
        let used = d < dims as usize;
        if used && (workgroup[d] == 0 || grid[d] == 0) {
            return Err(format!(
                "kernel dispatch dimension {d}: workgroup {} and grid {} must be non-zero",
                workgroup[d], grid[d]
            ));
        }
        if !used && (workgroup[d] != 1 || grid[d] != 1) {
            return Err(format!(
                "kernel dispatch dimension {d} is unused (setup says {dims}) but has \
                 workgroup {} grid {}, expected 1 and 1",
                workgroup[d], grid[d]
            ));
        }
    }
    let kernel_object = u64_at(b, 32);
    if kernel_object == 0 {
        return Err("kernel dispatch kernel_object is 0".to_string());
    }
    Ok(Packet::KernelDispatch {
        dims,
        workgroup,
        grid,
        private_segment_size: u32_at(b, 24),
        group_segment_size: u32_at(b, 28),
        kernel_object,
        kernarg_address: u64_at(b, 40),
    })
}

fn parse_pm4_ib(b: &[u8; 64]) -> Result<Packet, String> {
    let format = b[2];
    if format != AMD_AQL_FORMAT_PM4_IB {
        return Err(format!(
            "vendor packet format {format} is not PM4_IB ({AMD_AQL_FORMAT_PM4_IB})"
        ));
    }
    zero(b, 3..4, "vendor header reserved byte")?;
    let ib_header = u32_at(b, 4);
    let want = type3(op::INDIRECT_BUFFER, 3, false);
    if ib_header != want {
        return Err(format!(
            "PM4-IB packet dword 1 is {ib_header:#010x}, expected the INDIRECT_BUFFER \
             header {want:#010x}"
        ));
    }
    let lo = u32_at(b, 8);
    let hi = u32_at(b, 12);
    let control = u32_at(b, 16);
    if lo & 3 != 0 {
        return Err(format!("PM4-IB address low {lo:#x} is not 4-byte aligned"));
    }
    if ib_control::VALID.get(control) == 0 {
        return Err(format!(
            "PM4-IB control {control:#010x} lacks the VALID bit"
        ));
    }
    crate::pm4::check_ib_control(control)?;
    let ib_dwords = ib_control::IB_SIZE.get(control);
    if ib_dwords == 0 {
        return Err("PM4-IB size is 0 dwords".to_string());
    }
    let remain = u32_at(b, 20);
    if remain != relaunch_facts::aql::DW_COUNT_REMAIN {
        return Err(format!(
            "PM4-IB dw_count_remain is {remain}, expected {}",
            relaunch_facts::aql::DW_COUNT_REMAIN
        ));
    }
    zero(b, 24..56, "PM4-IB reserved dwords")?;
    Ok(Packet::Pm4Ib {
        ib_addr: u64::from(lo) | (u64::from(hi) << 32),
        ib_dwords,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pm4_slot(addr: u64, dwords: u32) -> [u8; 64] {
        let mut b = [0u8; 64];
        let header: u16 = HSA_PACKET_TYPE_VENDOR_SPECIFIC | (1 << 8) | (2 << 9) | (2 << 11);
        b[0..2].copy_from_slice(&header.to_le_bytes());
        b[2] = AMD_AQL_FORMAT_PM4_IB;
        b[4..8].copy_from_slice(&0xC002_3F00u32.to_le_bytes());
        b[8..12].copy_from_slice(&(addr as u32).to_le_bytes());
        b[12..16].copy_from_slice(&((addr >> 32) as u32).to_le_bytes());
        b[16..20].copy_from_slice(&(dwords | (1 << 23)).to_le_bytes());
        b[20..24].copy_from_slice(&10u32.to_le_bytes());
        b[56..64].copy_from_slice(&7u64.to_le_bytes());
        b
    }

    #[test]
    fn parses_a_pm4_ib_packet() {
        let s = parse(&pm4_slot(0x7f00_1234_5000, 42)).unwrap();
        assert_eq!(
            s.packet,
            Packet::Pm4Ib {
                ib_addr: 0x7f00_1234_5000,
                ib_dwords: 42
            }
        );
        assert_eq!(s.completion_signal, 7);
        assert!(s.header.barrier);
        assert_eq!(
            (s.header.acquire, s.header.release),
            (Scope::System, Scope::System)
        );
    }

    #[test]
    fn poisoned_body_names_the_publication_bug() {
        let mut b = [POISON; 64];
        b[..4].copy_from_slice(&pm4_slot(0x1000, 4)[..4]);
        let err = parse(&b).unwrap_err();
        assert!(err.contains("INDIRECT_BUFFER"), "{err}");
        let mut b = pm4_slot(0x1000, 4);
        b[30] = POISON;
        let err = parse(&b).unwrap_err();
        assert!(err.contains("header published before the body"), "{err}");
    }

    #[test]
    fn refuses_malformed_ib_fields() {
        let mut b = pm4_slot(0x1000, 4);
        b[16..20].copy_from_slice(&4u32.to_le_bytes());
        assert!(parse(&b).unwrap_err().contains("VALID"));
        let mut b = pm4_slot(0x1002, 4);
        assert!(parse(&b).unwrap_err().contains("aligned"));
        b = pm4_slot(0x1000, 4);
        b[20] = 9;
        assert!(parse(&b).unwrap_err().contains("dw_count_remain"));
        b = pm4_slot(0x1000, 4);
        b[2] = 2;
        assert!(parse(&b).unwrap_err().contains("format"));
        // Without BARRIER it parses; the processor decides what may overlap.
        b = pm4_slot(0x1000, 4);
        b[1] &= !1;
        assert!(!parse(&b).unwrap().header.barrier);
    }

    #[test]
    fn parses_and_checks_kernel_dispatch() {
        let mut b = [0u8; 64];
        b[0..2].copy_from_slice(&(HSA_PACKET_TYPE_KERNEL_DISPATCH | (2 << 9)).to_le_bytes());
        b[2..4].copy_from_slice(&1u16.to_le_bytes());
        b[4..6].copy_from_slice(&64u16.to_le_bytes());
        b[6..8].copy_from_slice(&1u16.to_le_bytes());
        b[8..10].copy_from_slice(&1u16.to_le_bytes());
        b[12..16].copy_from_slice(&256u32.to_le_bytes());
        b[16..20].copy_from_slice(&1u32.to_le_bytes());
        b[20..24].copy_from_slice(&1u32.to_le_bytes());
        b[32..40].copy_from_slice(&0x5000u64.to_le_bytes());
        b[40..48].copy_from_slice(&0x6000u64.to_le_bytes());
        let s = parse(&b).unwrap();
        assert!(matches!(
            s.packet,
            Packet::KernelDispatch {
                dims: 1,
                workgroup: [64, 1, 1],
                grid: [256, 1, 1],
                kernel_object: 0x5000,
                kernarg_address: 0x6000,
                ..
            }
        ));
        b[16..20].copy_from_slice(&2u32.to_le_bytes());
        assert!(parse(&b).unwrap_err().contains("unused"));
        b[0] = 9;
        assert!(parse(&b).unwrap_err().contains("not supported"));
    }
}
