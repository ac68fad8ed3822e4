//! The buffer resource descriptor (V#) fields the interpreter uses: base
//! address, stride, NUM_RECORDS, the out-of-bounds rule and the swizzle
//! fields (SWIZZLE_ENABLE, INDEX_STRIDE, ADD_TID_ENABLE).

use super::fault::IsaFault;
use super::operand::Src;
use super::wave::Wave;

/// A decoded 128-bit buffer resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Resource {
    /// BASE_ADDRESS (dword0, dword1 bits 15:0).
    pub base: u64,
    /// STRIDE (dword1 bits 29:16).
    pub stride: u32,
    /// NUM_RECORDS (dword2): bytes for raw buffers, records for structured.
    pub num_records: u32,
    /// SWIZZLE_ENABLE (dword1 bit 31 on gfx10, bits 31:30 on gfx11+).
    pub swizzle: bool,
    /// The raw SWIZZLE_ENABLE value (gfx11+: 1 = 4-byte elements).
    pub swizzle_mode: u32,
    /// INDEX_STRIDE (dword3 bits 22:21) in records: 8, 16, 32 or 64.
    pub index_stride: u32,
    /// OOB_SELECT (dword3 bits 29:28).
    pub oob_select: u32,
    /// ADD_TID_ENABLE (dword3 bit 23).
    pub add_tid: bool,
}

impl Resource {
    /// Read the four SGPRs from `src`.
    pub fn read(wave: &Wave, src: Src) -> Result<Resource, IsaFault> {
        let Src::Sgpr(n) = src else {
            return Err(IsaFault::Operand {
                mnemonic: String::new(),
                why: format!("buffer resource {src:?} is not an SGPR quad"),
            });
        };
        let n = n as usize;
        if n + 3 >= wave.sgpr.len() {
            return Err(IsaFault::Operand {
                mnemonic: String::new(),
                why: format!("buffer resource s[{n}:{}] is past the SGPR file", n + 3),
            });
        }
        let d = [
            wave.sgpr[n],
            wave.sgpr[n + 1],
            wave.sgpr[n + 2],
            wave.sgpr[n + 3],
        ];
        let swizzle_mode = wave.isa.family.facts().resource.swizzle.get(d[1]);
        Ok(Resource {
            base: u64::from(d[0]) | (u64::from(d[1] & 0xFFFF) << 32),
            stride: (d[1] >> 16) & 0x3FFF,
            num_records: d[2],
            swizzle: swizzle_mode != 0,
            swizzle_mode,
            index_stride: 8 << ((d[3] >> 21) & 3),
            oob_select: (d[3] >> 28) & 3,
            add_tid: d[3] >> 23 & 1 != 0,
        })
    }
}
