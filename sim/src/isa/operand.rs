//! Source and destination operands resolved once at decode time, and how a
//! wave reads and writes them: scalar values (with inline constants and
//! literals), per-lane values, lane masks, VGPR writes under EXEC.

use relaunch_isa::{Operand, Special};

use super::fault::IsaFault;
use super::wave::{Lanes, Wave, MAX_LANES, TTMP0, VCC_LO};

/// A source operand, resolved from the decoder's [`Operand`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Src {
    /// An SGPR-file slot: s0..s105, VCC_LO/HI (106/107), TTMPs (108..123).
    /// A 64-bit read takes the slot and the next one.
    Sgpr(u8),
    M0,
    /// Reads as zero; writes are dropped.
    Null,
    ExecLo,
    ExecHi,
    Scc,
    Vccz,
    Execz,
    /// An inline integer constant (-16..=64).
    Int(i8),
    /// An inline float constant as f32 bits; 64-bit and 16-bit operations
    /// read it as the same value in their own format.
    Float(u32),
    /// The 32-bit literal.
    Literal(u32),
    /// A VGPR.
    Vgpr(u16),
    /// src_shared_base and friends: aperture constants.
    Aperture(Special),
    /// An operand the interpreter has no value for (LDS_DIRECT, a reserved
    /// field code, POPS_EXITING_WAVE_ID): reading it faults.
    Unsupported(Operand),
}

/// A scalar or vector destination, resolved from the decoder's [`Operand`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dst {
    /// No destination field.
    None,
    /// An SGPR-file slot (see [`Src::Sgpr`]).
    Sgpr(u8),
    M0,
    Null,
    ExecLo,
    ExecHi,
    Vgpr(u16),
    /// A destination code the interpreter cannot write.
    Unsupported(Operand),
}

impl Src {
    /// Resolve a decoded source operand.
    pub fn from_operand(op: Operand) -> Src {
        match op {
            Operand::Sgpr { first, .. } => Src::Sgpr(first),
            Operand::Vgpr { first, .. } => Src::Vgpr(first),
            Operand::Special(s) => match s {
                Special::VccLo => Src::Sgpr(VCC_LO as u8),
                Special::VccHi => Src::Sgpr(VCC_LO as u8 + 1),
                Special::Ttmp(n) => Src::Sgpr(TTMP0 as u8 + n),
                Special::M0 => Src::M0,
                Special::Null => Src::Null,
                Special::ExecLo => Src::ExecLo,
                Special::ExecHi => Src::ExecHi,
                Special::Scc => Src::Scc,
                Special::Vccz => Src::Vccz,
                Special::Execz => Src::Execz,
                Special::SharedBase
                | Special::SharedLimit
                | Special::PrivateBase
                | Special::PrivateLimit => Src::Aperture(s),
                Special::LdsDirect | Special::PopsExitingWaveId => Src::Unsupported(op),
            },
            Operand::InlineInt(v) => Src::Int(v),
            Operand::InlineFloat(b) => Src::Float(b),
            Operand::Literal(v) => Src::Literal(v),
            Operand::Imm(_) | Operand::Reserved(_) => Src::Unsupported(op),
        }
    }

    /// True for a VGPR source (differs per lane).
    #[inline]
    pub fn is_vgpr(&self) -> bool {
        matches!(self, Src::Vgpr(_))
    }
}

impl Dst {
    /// Resolve a decoded destination operand.
    pub fn from_operand(op: Operand) -> Dst {
        match op {
            Operand::Sgpr { first, .. } => Dst::Sgpr(first),
            Operand::Vgpr { first, .. } => Dst::Vgpr(first),
            Operand::Special(s) => match s {
                Special::VccLo => Dst::Sgpr(VCC_LO as u8),
                Special::VccHi => Dst::Sgpr(VCC_LO as u8 + 1),
                Special::Ttmp(n) => Dst::Sgpr(TTMP0 as u8 + n),
                Special::M0 => Dst::M0,
                Special::Null => Dst::Null,
                Special::ExecLo => Dst::ExecLo,
                Special::ExecHi => Dst::ExecHi,
                _ => Dst::Unsupported(op),
            },
            _ => Dst::Unsupported(op),
        }
    }
}

/// The f64 bit pattern of an inline float constant given as f32 bits.
#[inline]
pub fn inline_f64(bits: u32) -> u64 {
    // 1/(2*pi) has its own f64 pattern, not the widened f32 one.
    if bits == 0x3E22_F983 {
        0x3FC4_5F30_6DC9_C882
    } else {
        f64::from(f32::from_bits(bits)).to_bits()
    }
}

/// The f16 bit pattern of an inline float constant given as f32 bits.
#[inline]
pub fn inline_f16(bits: u32) -> u16 {
    match bits {
        0x3F00_0000 => 0x3800,
        0xBF00_0000 => 0xB800,
        0x3F80_0000 => 0x3C00,
        0xBF80_0000 => 0xBC00,
        0x4000_0000 => 0x4000,
        0xC000_0000 => 0xC000,
        0x4080_0000 => 0x4400,
        0xC080_0000 => 0xC400,
        // 1/(2*pi)
        _ => 0x3118,
    }
}

#[cold]
fn unreadable(src: Src) -> IsaFault {
    IsaFault::Operand {
        mnemonic: String::new(),
        why: format!("source operand {src:?} has no value in the interpreter"),
    }
}

#[cold]
fn unwritable(dst: Dst) -> IsaFault {
    IsaFault::Operand {
        mnemonic: String::new(),
        why: format!("destination {dst:?} cannot be written by the interpreter"),
    }
}

impl Wave {
    /// A uniform 32-bit source value (not a VGPR). Always inlined: every
    /// executor reads its sources through it, and a call per read (with
    /// the fault returned through memory) cost more than the read.
    #[inline(always)]
    pub fn scalar(&self, src: Src) -> Result<u32, IsaFault> {
        // The usual operands first, as plain tests: a match over every
        // kind becomes a jump table, an indirect branch per operand read
        // that mispredicts whenever the kind differs from the last one.
        if let Src::Sgpr(n) = src {
            return Ok(self.sgpr[n as usize]);
        }
        if let Src::Literal(v) | Src::Float(v) = src {
            return Ok(v);
        }
        if let Src::Int(v) = src {
            return Ok(v as i32 as u32);
        }
        self.scalar_other(src)
    }

    /// [`Wave::scalar`] of the operands other than an SGPR or a constant.
    #[inline]
    fn scalar_other(&self, src: Src) -> Result<u32, IsaFault> {
        Ok(match src {
            Src::Sgpr(n) => self.sgpr[n as usize],
            Src::M0 => self.m0,
            Src::Null => 0,
            Src::ExecLo => self.exec as u32,
            Src::ExecHi => (self.exec >> 32) as u32,
            Src::Scc => u32::from(self.scc),
            Src::Vccz => u32::from(self.vcc() == 0),
            Src::Execz => u32::from(self.exec == 0),
            Src::Int(v) => v as i32 as u32,
            Src::Float(b) => b,
            Src::Literal(v) => v,
            Src::Aperture(s) => (aperture(s) >> 32) as u32,
            Src::Vgpr(_) | Src::Unsupported(_) => return Err(unreadable(src)),
        })
    }

    /// A uniform 64-bit source value: an SGPR pair, EXEC, an inline
    /// constant (integers sign-extended, floats as f64), or the literal
    /// (sign-extended when `signed`, else zero-extended, as the hardware
    /// extends it per operand type).
    #[inline]
    pub fn scalar64(&self, src: Src, signed: bool) -> Result<u64, IsaFault> {
        Ok(match src {
            Src::Sgpr(n) => {
                let n = n as usize;
                let hi = self.sgpr.get(n + 1).copied().unwrap_or(0);
                u64::from(self.sgpr[n]) | (u64::from(hi) << 32)
            }
            Src::ExecLo => self.exec,
            Src::Null => 0,
            Src::Int(v) => v as i64 as u64,
            Src::Float(b) => inline_f64(b),
            Src::Literal(v) if signed => v as i32 as i64 as u64,
            Src::Literal(v) => u64::from(v),
            Src::Scc | Src::Vccz | Src::Execz | Src::M0 | Src::ExecHi => {
                u64::from(self.scalar(src)?)
            }
            Src::Aperture(s) => aperture(s),
            Src::Vgpr(_) | Src::Unsupported(_) => return Err(unreadable(src)),
        })
    }

    /// Lane `lane`'s 32-bit value of `src` (VGPR or uniform).
    #[inline]
    pub fn lane(&self, src: Src, lane: usize) -> Result<u32, IsaFault> {
        match src {
            Src::Vgpr(r) => Ok(self.v(r)?[lane]),
            _ => self.scalar(src),
        }
    }

    /// Every lane's 32-bit value of `src` into `out` (the wave's lanes only:
    /// entries past them are left as they are; nothing reads them).
    #[inline]
    pub fn read_lanes(&self, src: Src, out: &mut Lanes) -> Result<(), IsaFault> {
        let n = self.lanes;
        match src {
            Src::Vgpr(r) => out[..n].copy_from_slice(&self.v(r)?[..n]),
            _ => out[..n].fill(self.scalar(src)?),
        }
        Ok(())
    }

    /// Every lane's 64-bit value of `src` (a VGPR pair, or uniform).
    #[inline]
    pub fn read_lanes64(
        &self,
        src: Src,
        signed: bool,
        out: &mut [u64; MAX_LANES],
    ) -> Result<(), IsaFault> {
        match src {
            Src::Vgpr(r) => {
                let (lo, hi) = (self.v(r)?, self.v(r + 1)?);
                for l in 0..self.lanes {
                    out[l] = u64::from(lo[l]) | (u64::from(hi[l]) << 32);
                }
            }
            _ => *out = [self.scalar64(src, signed)?; MAX_LANES],
        }
        Ok(())
    }

    /// Write a 32-bit scalar destination.
    #[inline]
    pub fn write_scalar(&mut self, dst: Dst, value: u32) -> Result<(), IsaFault> {
        // An SGPR first, as a plain test (see `scalar`).
        if let Dst::Sgpr(n) = dst {
            self.sgpr[n as usize] = value;
            return Ok(());
        }
        match dst {
            Dst::Sgpr(n) => self.sgpr[n as usize] = value,
            Dst::M0 => {
                self.m0 = value;
                self.m0_written = true;
            }
            Dst::Null | Dst::None => {}
            Dst::ExecLo => self.set_exec((self.exec & !0xFFFF_FFFF) | u64::from(value)),
            Dst::ExecHi => self.set_exec((self.exec & 0xFFFF_FFFF) | (u64::from(value) << 32)),
            Dst::Vgpr(_) | Dst::Unsupported(_) => return Err(unwritable(dst)),
        }
        Ok(())
    }

    /// Write a 64-bit scalar destination (an SGPR pair or EXEC).
    #[inline]
    pub fn write_scalar64(&mut self, dst: Dst, value: u64) -> Result<(), IsaFault> {
        match dst {
            Dst::Sgpr(n) => {
                let n = n as usize;
                if n + 1 >= self.sgpr.len() {
                    return Err(unwritable(dst));
                }
                self.sgpr[n] = value as u32;
                self.sgpr[n + 1] = (value >> 32) as u32;
            }
            Dst::ExecLo => self.set_exec(value),
            Dst::Null | Dst::None => {}
            Dst::M0 | Dst::ExecHi | Dst::Vgpr(_) | Dst::Unsupported(_) => {
                return Err(unwritable(dst))
            }
        }
        Ok(())
    }

    /// Read a lane mask source (one SGPR in wave32, a pair in wave64).
    #[inline]
    pub fn read_mask(&self, src: Src) -> Result<u64, IsaFault> {
        let m = if self.lanes == 64 {
            self.scalar64(src, false)?
        } else {
            u64::from(self.scalar(src)?)
        };
        Ok(m & self.full_mask())
    }

    /// Write a lane mask destination (VCC-like: one SGPR in wave32, a pair
    /// in wave64).
    #[inline]
    pub fn write_mask(&mut self, dst: Dst, mask: u64) -> Result<(), IsaFault> {
        let mask = mask & self.full_mask();
        if self.lanes == 64 {
            self.write_scalar64(dst, mask)
        } else {
            self.write_scalar(dst, mask as u32)
        }
    }

    /// Write `values` into VGPR `reg` in the lanes EXEC enables.
    #[inline]
    pub fn write_vgpr(&mut self, reg: u16, values: &Lanes) -> Result<(), IsaFault> {
        let exec = self.exec;
        let lanes = self.lanes;
        let r = self.v_mut(reg)?;
        if exec == full_or(lanes) {
            r[..lanes].copy_from_slice(&values[..lanes]);
        } else {
            for l in 0..lanes {
                if exec >> l & 1 != 0 {
                    r[l] = values[l];
                }
            }
        }
        Ok(())
    }

    /// Write 64-bit `values` into VGPRs `reg`, `reg+1` in the lanes EXEC enables.
    #[inline]
    pub fn write_vgpr64(&mut self, reg: u16, values: &[u64; MAX_LANES]) -> Result<(), IsaFault> {
        let exec = self.exec;
        self.v(reg + 1)?;
        for l in 0..self.lanes {
            if exec >> l & 1 != 0 {
                self.vgpr[reg as usize][l] = values[l] as u32;
                self.vgpr[reg as usize + 1][l] = (values[l] >> 32) as u32;
            }
        }
        Ok(())
    }
}

#[inline]
fn full_or(lanes: usize) -> u64 {
    super::wave::full_mask(lanes)
}

/// The aperture constants (src_shared_base etc.): the high half of the
/// 64-bit flat address of the LDS and scratch apertures. The simulated
/// device maps no flat aperture, so both sit far above any host address.
pub fn aperture(s: Special) -> u64 {
    match s {
        Special::SharedBase => SHARED_APERTURE,
        Special::SharedLimit => SHARED_APERTURE | 0xFFFF_FFFF,
        Special::PrivateBase => PRIVATE_APERTURE,
        Special::PrivateLimit => PRIVATE_APERTURE | 0xFFFF_FFFF,
        _ => 0,
    }
}

/// Flat addresses in `[SHARED_APERTURE, +4 GiB)` are LDS.
pub const SHARED_APERTURE: u64 = 0xFFFF_8000_0000_0000;
/// Flat addresses in `[PRIVATE_APERTURE, +4 GiB)` are scratch.
pub const PRIVATE_APERTURE: u64 = 0xFFFF_8001_0000_0000;

/// The source operand a scalar register field code (0..=127, as SDST and
/// SOPK's register field use) names on `family`.
pub fn scalar_code(family: relaunch_isa::Family, code: u8) -> Src {
    let codes = family.facts().isa.sgprs;
    let (m0, null) = (codes.m0, codes.null);
    match code {
        0..=123 => Src::Sgpr(code),
        c if c == m0 => Src::M0,
        c if c == null => Src::Null,
        126 => Src::ExecLo,
        127 => Src::ExecHi,
        _ => Src::Unsupported(Operand::Reserved(u16::from(code))),
    }
}

/// The destination a scalar register field code names on `family`.
pub fn scalar_dst_code(family: relaunch_isa::Family, code: u8) -> Dst {
    match scalar_code(family, code) {
        Src::Sgpr(n) => Dst::Sgpr(n),
        Src::M0 => Dst::M0,
        Src::Null => Dst::Null,
        Src::ExecLo => Dst::ExecLo,
        Src::ExecHi => Dst::ExecHi,
        _ => Dst::Unsupported(Operand::Reserved(u16::from(code))),
    }
}
