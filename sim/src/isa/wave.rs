//! The state of one wave: SGPRs, VGPRs per lane, EXEC, VCC, SCC, M0, MODE,
//! the program counter and the wave size. Register numbering follows the
//! scalar source encoding: `s0..s105`, VCC at 106/107, TTMPs at 108..123.
//! M0 and EXEC have their own fields (M0's encoding moved between gfx10 and
//! gfx11; EXEC is read by every vector instruction).

use relaunch_isa::Isa;

use super::fault::IsaFault;

/// Lanes of the widest wave; vector registers are fixed arrays of this many.
pub const MAX_LANES: usize = 64;

/// One vector register: a value per lane (lanes past the wave size unused).
pub type Lanes = [u32; MAX_LANES];

/// SGPR-file slots addressed by encoding (s0..s105, VCC, TTMPs).
pub const SGPR_SLOTS: usize = 124;
/// Slot of VCC_LO (VCC_HI is the next one).
pub const VCC_LO: usize = 106;
/// Slot of TTMP0.
pub const TTMP0: usize = 108;

/// The hardware MODE register fields kernels read and the ALU obeys
/// (FP_ROUND 3:0, FP_DENORM 7:4, DX10_CLAMP 8, IEEE 9, ...), as
/// `s_getreg_b32 hwreg(HW_REG_MODE)` returns it.
pub mod mode {
    /// FP_ROUND: round mode of f32 (bits 1:0) and f64/f16 (bits 3:2); 0 = nearest even.
    pub const FP_ROUND_SHIFT: u32 = 0;
    /// FP_DENORM: f32 (bits 5:4) and f64/f16 (bits 7:6); 3 = keep input and output denormals.
    pub const FP_DENORM_SHIFT: u32 = 4;
    pub const DX10_CLAMP: u32 = 1 << 8;
    pub const IEEE: u32 = 1 << 9;
}

/// One wave's architectural state.
#[derive(Debug, Clone)]
pub struct Wave {
    /// Family, subtarget and wave size the program was decoded for.
    pub isa: Isa,
    /// 32 or 64.
    pub lanes: usize,
    /// Scalar registers by encoding slot (see the module doc).
    pub sgpr: [u32; SGPR_SLOTS],
    pub m0: u32,
    /// M0 was written since the wave started (its initial value is
    /// undefined; the GWS instructions read M0[21:16]).
    pub m0_written: bool,
    /// Lane mask; bits at and above `lanes` are always zero.
    pub exec: u64,
    pub scc: bool,
    /// The MODE register (see [`mode`]).
    pub mode: u32,
    /// Vector registers, as many as RSRC1 allocates (`vgpr.len()`).
    pub vgpr: Vec<Lanes>,
    /// Index of the next instruction in the program.
    pub pc: u32,
    /// The wave's index within its workgroup (HW_ID / wave id).
    pub wave_in_group: u32,
    /// The workgroup this wave belongs to.
    pub workgroup_id: [u32; 3],
    /// Set by s_endpgm.
    pub done: bool,
    /// STATUS.TRAP_EN: a trap handler is present, so s_trap is taken
    /// (`control::trap_enabled` decides it per family at dispatch).
    pub trap_en: bool,
    /// FLAT_SCRATCH: the base scratch and flat-private accesses interleave
    /// from (set by the hardware on gfx11/gfx12, by the prologue's
    /// s_setreg on gfx10).
    pub flat_scratch: u64,
    /// The wave's scratch slot when RSRC2.SCRATCH_EN gave it one.
    pub slot: Option<super::scratch::WaveSlot>,
    /// Instructions this wave has run: its clock reads' model
    /// (`super::clock`), one cycle each; up to date where a clock is read
    /// and between runs (`exec::run_wave`).
    pub cycles: u64,
}

impl Wave {
    /// A wave with every register zero, `vgprs` vector registers and EXEC
    /// all ones for the wave size.
    pub fn new(isa: Isa, vgprs: usize) -> Wave {
        let lanes = if isa.wave64 { 64 } else { 32 };
        Wave {
            isa,
            lanes,
            sgpr: [0; SGPR_SLOTS],
            m0: 0,
            m0_written: false,
            exec: full_mask(lanes),
            scc: false,
            mode: 0,
            vgpr: vec![[0; MAX_LANES]; vgprs],
            pc: 0,
            wave_in_group: 0,
            workgroup_id: [0; 3],
            done: false,
            trap_en: false,
            flat_scratch: 0,
            slot: None,
            cycles: 0,
        }
    }

    /// The mask of every lane of this wave.
    #[inline]
    pub fn full_mask(&self) -> u64 {
        full_mask(self.lanes)
    }

    /// VCC as a lane mask (VCC_HI only in wave64).
    #[inline]
    pub fn vcc(&self) -> u64 {
        let lo = u64::from(self.sgpr[VCC_LO]);
        if self.lanes == 64 {
            lo | (u64::from(self.sgpr[VCC_LO + 1]) << 32)
        } else {
            lo
        }
    }

    /// Write VCC from a lane mask (wave32 leaves VCC_HI alone).
    #[inline]
    pub fn set_vcc(&mut self, mask: u64) {
        self.sgpr[VCC_LO] = mask as u32;
        if self.lanes == 64 {
            self.sgpr[VCC_LO + 1] = (mask >> 32) as u32;
        }
    }

    /// Write EXEC, dropping bits past the wave size.
    #[inline]
    pub fn set_exec(&mut self, mask: u64) {
        self.exec = mask & self.full_mask();
    }

    /// VGPR `reg`, or a fault when RSRC1 did not allocate it.
    #[inline]
    pub fn v(&self, reg: u16) -> Result<&Lanes, IsaFault> {
        let n = self.vgpr.len();
        self.vgpr
            .get(reg as usize)
            .ok_or_else(|| vgpr_fault(reg, n))
    }

    /// VGPR `reg` for writing, or a fault when RSRC1 did not allocate it.
    #[inline]
    pub fn v_mut(&mut self, reg: u16) -> Result<&mut Lanes, IsaFault> {
        let n = self.vgpr.len();
        self.vgpr
            .get_mut(reg as usize)
            .ok_or_else(|| vgpr_fault(reg, n))
    }

    /// Reset for another workgroup: registers zero, EXEC full, pc 0.
    pub fn reset(&mut self) {
        self.sgpr = [0; SGPR_SLOTS];
        self.m0 = 0;
        self.m0_written = false;
        self.exec = self.full_mask();
        self.scc = false;
        for r in &mut self.vgpr {
            *r = [0; MAX_LANES];
        }
        self.pc = 0;
        self.done = false;
        self.flat_scratch = 0;
        self.slot = None;
        self.cycles = 0;
    }
}

/// The mask of `lanes` lanes.
#[inline]
pub fn full_mask(lanes: usize) -> u64 {
    if lanes >= 64 {
        u64::MAX
    } else {
        (1u64 << lanes) - 1
    }
}

/// The bits of `m` as one 0/1 byte per lane (bit i at byte i), the whole
/// chunks of eight holding the first `n` (later bytes zero), eight lanes
/// per multiply: each byte picks its own bit of the broadcast byte.
#[inline]
pub fn unpack_bits(m: u64, n: usize) -> [u8; MAX_LANES] {
    let mut out = [0u8; MAX_LANES];
    // Only the chunks holding the first `n` lanes (one for a one-lane wave).
    let used = n.div_ceil(8).min(MAX_LANES / 8);
    for (k, chunk) in out.chunks_exact_mut(8).take(used).enumerate() {
        let byte = (m >> (8 * k)) & 0xFF;
        let picked = byte.wrapping_mul(0x0101_0101_0101_0101) & 0x8040_2010_0804_0201;
        // A non-zero byte (at most 0x80) gains its top bit from + 0x7F,
        // with no carry into the next byte.
        let ones = ((picked + 0x7F7F_7F7F_7F7F_7F7F) & 0x8080_8080_8080_8080) >> 7;
        chunk.copy_from_slice(&ones.to_le_bytes());
    }
    out
}

/// The lane mask of 0/1 bytes (byte i to bit i), from the whole chunks of
/// eight holding the first `n` (later chunks ignored), four lanes per
/// multiply: byte j (bit 8j) times 2^(24 - 7j) lands on bit 24 + j, and no
/// two partial products share a bit. Four bytes at a time, not eight: a
/// vectorised lane loop stores its bytes four at a time, and a wider read
/// straddling two such stores waits for both to retire (no store
/// forwarding), which cost more than the packing.
#[inline]
pub fn pack_bits(flags: &[u8; MAX_LANES], n: usize) -> u64 {
    let mut m = 0u64;
    let used = 2 * n.div_ceil(8).min(MAX_LANES / 8);
    for (k, chunk) in flags.chunks_exact(4).take(used).enumerate() {
        let x = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        m |= u64::from((x.wrapping_mul(0x0102_0408) >> 24) & 0xF) << (4 * k);
    }
    m
}

#[cold]
fn vgpr_fault(reg: u16, allocated: usize) -> IsaFault {
    IsaFault::Register {
        what: format!(
            "v{reg} is used but the descriptor's RSRC1 allocates {allocated} VGPRs \
             (v0..v{})",
            allocated.saturating_sub(1)
        ),
    }
}

#[cfg(test)]
mod bits_tests {
    use super::{pack_bits, unpack_bits};

    #[test]
    fn lane_bytes_round_trip() {
        for m in [
            0,
            1,
            u64::MAX,
            0x8000_0000_0000_0001,
            0xDEAD_BEEF_0123_4567,
            1 << 63,
        ] {
            let b = unpack_bits(m, 64);
            for (i, &x) in b.iter().enumerate() {
                assert_eq!(u64::from(x), m >> i & 1);
            }
            assert_eq!(pack_bits(&b, 64), m);
            // A one-lane or nine-lane span reads one or two chunks.
            assert_eq!(pack_bits(&unpack_bits(m, 1), 1), m & 0xFF);
            assert_eq!(pack_bits(&unpack_bits(m, 9), 9), m & 0xFFFF);
        }
    }
}
