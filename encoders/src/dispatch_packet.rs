//! The dispatch packet image for kernels that read their AQL packet.
//!
//! A kernel whose descriptor enables the dispatch pointer (code object v4
//! HIP kernels read blockDim and gridDim through it, v5 ones the grid size)
//! expects the address of the `hsa_kernel_dispatch_packet_t` the CP is
//! executing in its first user SGPR pair after the private segment buffer.
//! A PM4 dispatch has no AQL packet, so the builder writes one per dispatch
//! into the kernarg image, 64-byte aligned beside the kernarg block, with
//! the fields the CP would have read for an AQL dispatch of the same launch,
//! and delivers its address. Layout from `hsa.h` (`hsa_kernel_dispatch_packet_t`).

use crate::dispatch::Launch;

/// Size of an AQL packet in bytes.
pub const DISPATCH_PACKET_BYTES: usize = 64;
/// AQL packets are 64-byte aligned in the queue ring; the image is too.
pub const DISPATCH_PACKET_ALIGN: u32 = 64;
/// Byte offset of `kernarg_address` in the packet.
pub const KERNARG_ADDRESS_OFFSET: usize = 40;

/// `HSA_PACKET_TYPE_KERNEL_DISPATCH`.
const PACKET_TYPE_KERNEL_DISPATCH: u16 = 2;
/// `HSA_PACKET_HEADER_BARRIER` bit.
const HEADER_BARRIER_SHIFT: u16 = 8;
/// `HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE` / `SCRELEASE_FENCE_SCOPE`.
const HEADER_ACQUIRE_SHIFT: u16 = 9;
const HEADER_RELEASE_SHIFT: u16 = 11;
/// `HSA_FENCE_SCOPE_SYSTEM`.
const FENCE_SCOPE_SYSTEM: u16 = 2;

/// The header a HIP launch gives its kernel dispatch packet: kernel dispatch
/// type, BARRIER, system-scope acquire and release fences (the retained IB
/// runs behind the vendor packet's barrier and fences, which are the same).
pub const DISPATCH_PACKET_HEADER: u16 = PACKET_TYPE_KERNEL_DISPATCH
    | (1 << HEADER_BARRIER_SHIFT)
    | (FENCE_SCOPE_SYSTEM << HEADER_ACQUIRE_SHIFT)
    | (FENCE_SCOPE_SYSTEM << HEADER_RELEASE_SHIFT);

/// Dimensions in `setup`: 3, as every HIP launch sets them (HIP launches
/// are three-dimensional; unused axes have size 1).
pub const DISPATCH_PACKET_DIMENSIONS: u16 = 3;

/// The fields of a kernel dispatch packet image, as the kernel reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispatchPacketImage {
    pub header: u16,
    pub setup: u16,
    pub workgroup_size: [u16; 3],
    pub grid_size: [u32; 3],
    pub private_segment_size: u32,
    pub group_segment_size: u32,
    /// Address of the kernel descriptor (`NAME.kd`).
    pub kernel_object: u64,
    pub kernarg_address: u64,
    pub completion_signal: u64,
}

impl DispatchPacketImage {
    /// The packet the CP would see for `launch` of the kernel whose
    /// descriptor is at `kd_address` with `static_lds` bytes of group
    /// segment, private_segment_size 0 (the builder sets the kernel's own
    /// for a kernel with scratch), completion signal 0 (the IB's own packet
    /// carries the completion).
    pub fn for_launch(
        kd_address: u64,
        launch: &Launch,
        static_lds: u32,
        kernarg_address: u64,
    ) -> Self {
        // Blocks are at most 1024 work-items (checked before this is
        // built), so every axis fits the u16 fields.
        let wg = launch.block.map(|b| b as u16);
        DispatchPacketImage {
            header: DISPATCH_PACKET_HEADER,
            setup: DISPATCH_PACKET_DIMENSIONS,
            workgroup_size: wg,
            grid_size: launch.grid,
            private_segment_size: 0,
            group_segment_size: static_lds.saturating_add(launch.dynamic_group_bytes),
            kernel_object: kd_address,
            kernarg_address,
            completion_signal: 0,
        }
    }

    /// The 64 bytes, little-endian, reserved fields zero.
    pub fn to_bytes(&self) -> [u8; DISPATCH_PACKET_BYTES] {
        let mut b = [0u8; DISPATCH_PACKET_BYTES];
        b[0..2].copy_from_slice(&self.header.to_le_bytes());
        b[2..4].copy_from_slice(&self.setup.to_le_bytes());
        for (i, w) in self.workgroup_size.iter().enumerate() {
            b[4 + 2 * i..6 + 2 * i].copy_from_slice(&w.to_le_bytes());
        }
        for (i, g) in self.grid_size.iter().enumerate() {
            b[12 + 4 * i..16 + 4 * i].copy_from_slice(&g.to_le_bytes());
        }
        b[24..28].copy_from_slice(&self.private_segment_size.to_le_bytes());
        b[28..32].copy_from_slice(&self.group_segment_size.to_le_bytes());
        b[32..40].copy_from_slice(&self.kernel_object.to_le_bytes());
        b[KERNARG_ADDRESS_OFFSET..48].copy_from_slice(&self.kernarg_address.to_le_bytes());
        b[56..64].copy_from_slice(&self.completion_signal.to_le_bytes());
        b
    }

    /// Read an image back (the simulator checks what a kernel would read).
    pub fn parse(b: &[u8; DISPATCH_PACKET_BYTES]) -> Self {
        let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let u64_at = |o: usize| u64::from(u32_at(o)) | u64::from(u32_at(o + 4)) << 32;
        DispatchPacketImage {
            header: u16_at(0),
            setup: u16_at(2),
            workgroup_size: [u16_at(4), u16_at(6), u16_at(8)],
            grid_size: [u32_at(12), u32_at(16), u32_at(20)],
            private_segment_size: u32_at(24),
            group_segment_size: u32_at(28),
            kernel_object: u64_at(32),
            kernarg_address: u64_at(KERNARG_ADDRESS_OFFSET),
            completion_signal: u64_at(56),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_has_the_hsa_layout_and_round_trips() {
        let launch = Launch {
            grid: [256, 4, 1],
            block: [64, 2, 1],
            dynamic_group_bytes: 128,
        };
        let p = DispatchPacketImage::for_launch(0x7f00_1000_0040, &launch, 512, 0x1234_5600);
        let b = p.to_bytes();
        // header: type 2, barrier bit 8, system scopes at 9 and 11.
        assert_eq!(
            u16::from_le_bytes([b[0], b[1]]),
            2 | 1 << 8 | 2 << 9 | 2 << 11
        );
        assert_eq!(u16::from_le_bytes([b[2], b[3]]), 3);
        assert_eq!(&b[4..10], &[64, 0, 2, 0, 1, 0]);
        assert_eq!(&b[10..12], &[0, 0], "reserved0");
        assert_eq!(u32::from_le_bytes(b[12..16].try_into().unwrap()), 256);
        assert_eq!(u32::from_le_bytes(b[28..32].try_into().unwrap()), 640);
        assert_eq!(
            u64::from_le_bytes(b[32..40].try_into().unwrap()),
            0x7f00_1000_0040
        );
        assert_eq!(
            u64::from_le_bytes(b[40..48].try_into().unwrap()),
            0x1234_5600
        );
        assert!(b[48..64].iter().all(|&x| x == 0));
        assert_eq!(DispatchPacketImage::parse(&b), p);
    }
}
