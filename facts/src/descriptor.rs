//! The 64-byte AMDHSA kernel descriptor (`NAME.kd`), code object V4/V5.
//! Layout from LLVM's AMDGPUUsage ("Kernel Descriptor"); see `docs/pm4.md`.
//! Its RSRC register images use the register tables' fields (`regs`).

use crate::regs::fields as f;

/// Size of a kernel descriptor in bytes.
pub const KERNEL_DESCRIPTOR_BYTES: usize = 64;

/// `kernel_code_properties` bit positions.
pub mod properties {
    pub const PRIVATE_SEGMENT_BUFFER: u16 = 1 << 0;
    pub const DISPATCH_PTR: u16 = 1 << 1;
    pub const QUEUE_PTR: u16 = 1 << 2;
    pub const KERNARG_SEGMENT_PTR: u16 = 1 << 3;
    pub const DISPATCH_ID: u16 = 1 << 4;
    pub const FLAT_SCRATCH_INIT: u16 = 1 << 5;
    pub const PRIVATE_SEGMENT_SIZE: u16 = 1 << 6;
    pub const WAVEFRONT_SIZE32: u16 = 1 << 10;
    pub const USES_DYNAMIC_STACK: u16 = 1 << 11;
}

/// COMPUTE_PGM_RSRC2 masks and shifts, from the register table's fields.
pub mod rsrc2 {
    use super::f;
    pub const SCRATCH_EN: u32 = f::RSRC2_SCRATCH_EN.mask();
    pub const USER_SGPR_SHIFT: u32 = f::RSRC2_USER_SGPR.lo as u32;
    pub const USER_SGPR_MASK: u32 = f::RSRC2_USER_SGPR.mask();
    /// gfx10/gfx11 only (gfx12 has DYNAMIC_VGPR at this bit).
    pub const TRAP_PRESENT: u32 = f::RSRC2_TRAP_PRESENT.mask();
    pub const TGID_X_EN: u32 = f::RSRC2_TGID_X_EN.mask();
    pub const TGID_Y_EN: u32 = f::RSRC2_TGID_Y_EN.mask();
    pub const TGID_Z_EN: u32 = f::RSRC2_TGID_Z_EN.mask();
    pub const TG_SIZE_EN: u32 = f::RSRC2_TG_SIZE_EN.mask();
    pub const TIDIG_COMP_CNT_SHIFT: u32 = f::RSRC2_TIDIG_COMP_CNT.lo as u32;
    pub const TIDIG_COMP_CNT_MASK: u32 = f::RSRC2_TIDIG_COMP_CNT.mask();
    pub const LDS_SIZE_SHIFT: u32 = f::RSRC2_LDS_SIZE.lo as u32;
    pub const LDS_SIZE_MASK: u32 = f::RSRC2_LDS_SIZE.mask();
    pub const EXCP_EN_SHIFT: u32 = f::RSRC2_EXCP_EN.lo as u32;
    pub const EXCP_EN_MASK: u32 = f::RSRC2_EXCP_EN.mask();
}

/// A decoded kernel descriptor. Raw register images are kept as-is; the
/// encoder derives what it programs from them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelDescriptor {
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub kernarg_size: u32,
    /// Byte offset from the descriptor's own address to the code entry.
    pub kernel_code_entry_byte_offset: i64,
    pub compute_pgm_rsrc3: u32,
    pub compute_pgm_rsrc1: u32,
    pub compute_pgm_rsrc2: u32,
    pub kernel_code_properties: u16,
    /// V5 kernarg preload field (bytes 58-59); must be zero on RDNA.
    pub kernarg_preload: u16,
}

/// A descriptor slice that is not 64 bytes long.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("kernel descriptor is {0} bytes, expected 64")]
pub struct DescriptorSizeError(pub usize);

impl KernelDescriptor {
    /// Decode the little-endian 64-byte image.
    pub fn parse(bytes: &[u8]) -> Result<Self, DescriptorSizeError> {
        let bytes: &[u8; KERNEL_DESCRIPTOR_BYTES] = bytes
            .try_into()
            .map_err(|_| DescriptorSizeError(bytes.len()))?;
        let u32_at =
            |o: usize| u32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]);
        let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]);
        let mut entry = [0u8; 8];
        entry.copy_from_slice(&bytes[16..24]);
        Ok(KernelDescriptor {
            group_segment_fixed_size: u32_at(0),
            private_segment_fixed_size: u32_at(4),
            kernarg_size: u32_at(8),
            kernel_code_entry_byte_offset: i64::from_le_bytes(entry),
            compute_pgm_rsrc3: u32_at(44),
            compute_pgm_rsrc1: u32_at(48),
            compute_pgm_rsrc2: u32_at(52),
            kernel_code_properties: u16_at(56),
            kernarg_preload: u16_at(58),
        })
    }

    /// Encode back to the 64-byte image (reserved bytes zero).
    pub fn to_bytes(&self) -> [u8; KERNEL_DESCRIPTOR_BYTES] {
        let mut out = [0u8; KERNEL_DESCRIPTOR_BYTES];
        out[0..4].copy_from_slice(&self.group_segment_fixed_size.to_le_bytes());
        out[4..8].copy_from_slice(&self.private_segment_fixed_size.to_le_bytes());
        out[8..12].copy_from_slice(&self.kernarg_size.to_le_bytes());
        out[16..24].copy_from_slice(&self.kernel_code_entry_byte_offset.to_le_bytes());
        out[44..48].copy_from_slice(&self.compute_pgm_rsrc3.to_le_bytes());
        out[48..52].copy_from_slice(&self.compute_pgm_rsrc1.to_le_bytes());
        out[52..56].copy_from_slice(&self.compute_pgm_rsrc2.to_le_bytes());
        out[56..58].copy_from_slice(&self.kernel_code_properties.to_le_bytes());
        out[58..60].copy_from_slice(&self.kernarg_preload.to_le_bytes());
        out
    }

    fn has(&self, bit: u16) -> bool {
        self.kernel_code_properties & bit != 0
    }

    /// True for wave32 kernels (`CS_W32_EN` must then be set at dispatch).
    pub fn wave32(&self) -> bool {
        self.has(properties::WAVEFRONT_SIZE32)
    }

    /// Wavefront size in lanes.
    pub fn wavefront_size(&self) -> u32 {
        if self.wave32() {
            32
        } else {
            64
        }
    }

    pub fn wants_private_segment_buffer(&self) -> bool {
        self.has(properties::PRIVATE_SEGMENT_BUFFER)
    }
    pub fn wants_dispatch_ptr(&self) -> bool {
        self.has(properties::DISPATCH_PTR)
    }
    pub fn wants_queue_ptr(&self) -> bool {
        self.has(properties::QUEUE_PTR)
    }
    pub fn wants_kernarg_segment_ptr(&self) -> bool {
        self.has(properties::KERNARG_SEGMENT_PTR)
    }
    pub fn wants_dispatch_id(&self) -> bool {
        self.has(properties::DISPATCH_ID)
    }
    pub fn wants_flat_scratch_init(&self) -> bool {
        self.has(properties::FLAT_SCRATCH_INIT)
    }
    pub fn wants_private_segment_size(&self) -> bool {
        self.has(properties::PRIVATE_SEGMENT_SIZE)
    }
    pub fn uses_dynamic_stack(&self) -> bool {
        self.has(properties::USES_DYNAMIC_STACK)
    }

    /// USER_SGPR count from RSRC2 (what the hardware will load).
    pub fn user_sgpr_count(&self) -> u32 {
        f::RSRC2_USER_SGPR.get(self.compute_pgm_rsrc2)
    }

    /// SCRATCH_EN from RSRC2.
    pub fn scratch_enabled(&self) -> bool {
        self.compute_pgm_rsrc2 & rsrc2::SCRATCH_EN != 0
    }

    /// Absolute code entry address for a descriptor loaded at `kd_address`.
    pub fn code_entry(&self, kd_address: u64) -> u64 {
        kd_address.wrapping_add_signed(self.kernel_code_entry_byte_offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_field() {
        let kd = KernelDescriptor {
            group_segment_fixed_size: 0x100,
            private_segment_fixed_size: 0,
            kernarg_size: 8,
            kernel_code_entry_byte_offset: -0x1000 + 0x40,
            compute_pgm_rsrc3: 0x0,
            compute_pgm_rsrc1: 0x60AF_0000,
            compute_pgm_rsrc2: 0x0000_0084 | (2 << rsrc2::USER_SGPR_SHIFT),
            kernel_code_properties: properties::KERNARG_SEGMENT_PTR | properties::WAVEFRONT_SIZE32,
            kernarg_preload: 0,
        };
        let back = KernelDescriptor::parse(&kd.to_bytes()).unwrap();
        assert_eq!(back, kd);
        assert!(back.wave32());
        assert_eq!(back.user_sgpr_count(), 2);
        assert_eq!(back.code_entry(0x1_0000_1000), 0x1_0000_0040);
    }

    #[test]
    fn rsrc2_masks_are_the_documented_bits() {
        assert_eq!(rsrc2::SCRATCH_EN, 1);
        assert_eq!(rsrc2::USER_SGPR_MASK, 0x1F << 1);
        assert_eq!(rsrc2::TRAP_PRESENT, 1 << 6);
        assert_eq!(
            [
                rsrc2::TGID_X_EN,
                rsrc2::TGID_Y_EN,
                rsrc2::TGID_Z_EN,
                rsrc2::TG_SIZE_EN
            ],
            [1 << 7, 1 << 8, 1 << 9, 1 << 10]
        );
        assert_eq!(rsrc2::TIDIG_COMP_CNT_MASK, 0x3 << 11);
        assert_eq!(rsrc2::LDS_SIZE_MASK, 0x1FF << 15);
        assert_eq!(rsrc2::EXCP_EN_MASK, 0x7F << 24);
    }

    #[test]
    fn rejects_wrong_size() {
        assert_eq!(
            KernelDescriptor::parse(&[0u8; 63]),
            Err(DescriptorSizeError(63))
        );
    }
}
