//! AQL packets (64 bytes each) and the header bit positions from `hsa.h`,
//! plus the AMD vendor-specific PM4 indirect-buffer packet. The values the
//! PM4-IB packet shares with relaunch's encoders are declared once, in
//! `relaunch_facts::aql`, and given their C names here (`tests/layout.rs`
//! checks them against the C headers).

use relaunch_facts::aql as facts;

use crate::handles::Signal;

/// `hsa_packet_type_t`.
pub const HSA_PACKET_TYPE_VENDOR_SPECIFIC: u16 = facts::PACKET_TYPE_VENDOR_SPECIFIC;
pub const HSA_PACKET_TYPE_INVALID: u16 = 1;
pub const HSA_PACKET_TYPE_KERNEL_DISPATCH: u16 = facts::PACKET_TYPE_KERNEL_DISPATCH;
pub const HSA_PACKET_TYPE_BARRIER_AND: u16 = 3;
pub const HSA_PACKET_TYPE_AGENT_DISPATCH: u16 = 4;
pub const HSA_PACKET_TYPE_BARRIER_OR: u16 = 5;

/// `hsa_fence_scope_t`.
pub const HSA_FENCE_SCOPE_NONE: u16 = 0;
pub const HSA_FENCE_SCOPE_AGENT: u16 = 1;
pub const HSA_FENCE_SCOPE_SYSTEM: u16 = 2;

/// `hsa_packet_header_t`: bit offsets inside the 16-bit header.
pub const HSA_PACKET_HEADER_TYPE: u16 = 0;
pub const HSA_PACKET_HEADER_BARRIER: u16 = facts::HEADER_BARRIER_BIT;
pub const HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE: u16 = facts::HEADER_ACQUIRE_SCOPE_SHIFT;
pub const HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE: u16 = facts::HEADER_RELEASE_SCOPE_SHIFT;
/// `hsa_packet_header_width_t`: widths of those fields in bits.
pub const HSA_PACKET_HEADER_WIDTH_TYPE: u16 = 8;
pub const HSA_PACKET_HEADER_WIDTH_BARRIER: u16 = 1;
pub const HSA_PACKET_HEADER_WIDTH_SCACQUIRE_FENCE_SCOPE: u16 = 2;
pub const HSA_PACKET_HEADER_WIDTH_SCRELEASE_FENCE_SCOPE: u16 = 2;

/// `hsa_kernel_dispatch_packet_setup_t` / its width.
pub const HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS: u16 = 0;
pub const HSA_KERNEL_DISPATCH_PACKET_SETUP_WIDTH_DIMENSIONS: u16 = 2;

/// AMD vendor packet format carried in bits 16..24 of the first dword of a
/// vendor-specific packet: a PM4 indirect buffer. ROCr's internal
/// `AMD_AQL_FORMAT_PM4_IB`; the Debian header does not declare it.
pub const AMD_AQL_FORMAT_PM4_IB: u8 = facts::AMD_FORMAT_PM4_IB as u8;
/// `HSA_AMD_PACKET_TYPE_BARRIER_VALUE` (hsa_ext_amd.h), for completeness of
/// the vendor format byte.
pub const HSA_AMD_PACKET_TYPE_BARRIER_VALUE: u8 = 2;

/// Size of every AQL packet in bytes.
pub const AQL_PACKET_BYTES: usize = 64;

/// Builds a 16-bit AQL header from its fields.
pub const fn packet_header(packet_type: u16, barrier: bool, acquire: u16, release: u16) -> u16 {
    (packet_type << HSA_PACKET_HEADER_TYPE)
        | ((barrier as u16) << HSA_PACKET_HEADER_BARRIER)
        | (acquire << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE)
        | (release << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE)
}

/// `hsa_kernel_dispatch_packet_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelDispatchPacket {
    pub header: u16,
    pub setup: u16,
    pub workgroup_size_x: u16,
    pub workgroup_size_y: u16,
    pub workgroup_size_z: u16,
    pub reserved0: u16,
    pub grid_size_x: u32,
    pub grid_size_y: u32,
    pub grid_size_z: u32,
    pub private_segment_size: u32,
    pub group_segment_size: u32,
    /// Address of the kernel descriptor (`NAME.kd`).
    pub kernel_object: u64,
    /// `void*` in C; kept as an integer GPU address here.
    pub kernarg_address: u64,
    pub reserved2: u64,
    pub completion_signal: Signal,
}

/// `hsa_barrier_and_packet_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BarrierAndPacket {
    pub header: u16,
    pub reserved0: u16,
    pub reserved1: u32,
    pub dep_signal: [Signal; 5],
    pub reserved2: u64,
    pub completion_signal: Signal,
}

/// `hsa_amd_vendor_packet_header_t`: the first dword of a vendor packet.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AmdVendorPacketHeader {
    pub header: u16,
    /// `AMD_AQL_FORMAT_PM4_IB` for an indirect buffer.
    pub amd_format: u8,
    pub reserved: u8,
}

/// The vendor-specific PM4 packet, laid out like aqlprofile's
/// `hsa_ext_amd_aql_pm4_packet_t` (header, 27 u16 of PM4, signal). As used
/// for one indirect buffer: dword 0 = header | format << 16, dwords 1..=4 the
/// INDIRECT_BUFFER packet, dword 5 = dw_count_remain (10), dwords 6..=13 zero.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AmdPm4IbPacket {
    pub header: AmdVendorPacketHeader,
    /// INDIRECT_BUFFER header, address low, address high, size | VALID.
    pub pm4_ib: [u32; 4],
    /// Dwords of the packet left after the PM4 command: 10.
    pub dw_count_remain: u32,
    pub reserved: [u32; 8],
    pub completion_signal: Signal,
}
