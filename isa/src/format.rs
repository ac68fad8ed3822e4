//! Encoding formats and how each family tells them apart.

use crate::Family;

/// An encoding format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Sop1,
    Sop2,
    Sopk,
    Sopc,
    Sopp,
    Smem,
    Vop1,
    Vop2,
    Vopc,
    Vop3,
    Vop3p,
    Vopd,
    /// gfx10 VINTRP (32-bit), gfx11/gfx12 VINTERP (64-bit).
    Vinterp,
    /// gfx11 LDSDIR, gfx12 VDSDIR.
    Ldsdir,
    Ds,
    Flat,
    Global,
    Scratch,
    Mubuf,
    Mtbuf,
    Mimg,
    /// gfx12 buffer instructions (MUBUF and MTBUF in one format).
    Vbuffer,
    Vimage,
    Vsample,
    Exp,
}

impl Format {
    /// Which format dword 0 belongs to in `family`.
    pub fn of(family: Family, d0: u32) -> Option<Format> {
        if d0 >> 31 == 0 {
            return Some(match d0 >> 25 {
                0x3F => Format::Vop1,
                0x3E => Format::Vopc,
                _ => Format::Vop2,
            });
        }
        if d0 >> 30 == 0b10 {
            return Some(match d0 >> 23 {
                0x17D => Format::Sop1,
                0x17E => Format::Sopc,
                0x17F => Format::Sopp,
                _ if d0 >> 28 == 0b1011 => Format::Sopk,
                _ => Format::Sop2,
            });
        }
        let top6 = d0 >> 26;
        let top8 = d0 >> 24;
        match family {
            Family::Gfx10 => Some(match top6 {
                0x3D => Format::Smem,
                0x35 => Format::Vop3,
                0x33 if top8 == 0xCC => Format::Vop3p,
                0x32 => Format::Vinterp,
                0x36 => Format::Ds,
                0x37 => match (d0 >> 14) & 3 {
                    0 => Format::Flat,
                    1 => Format::Scratch,
                    2 => Format::Global,
                    _ => return None,
                },
                0x38 => Format::Mubuf,
                0x3A => Format::Mtbuf,
                0x3C => Format::Mimg,
                0x3E => Format::Exp,
                _ => return None,
            }),
            Family::Gfx11 => Some(match top6 {
                0x3D => Format::Smem,
                0x35 => Format::Vop3,
                0x33 => match top8 {
                    0xCC => Format::Vop3p,
                    0xCD => Format::Vinterp,
                    0xCE => Format::Ldsdir,
                    _ => return None,
                },
                0x32 => Format::Vopd,
                0x36 => Format::Ds,
                0x37 => match (d0 >> 16) & 3 {
                    0 => Format::Flat,
                    1 => Format::Scratch,
                    2 => Format::Global,
                    _ => return None,
                },
                0x38 => Format::Mubuf,
                0x3A => Format::Mtbuf,
                0x3C => Format::Mimg,
                0x3E => Format::Exp,
                _ => return None,
            }),
            Family::Gfx12 => Some(match top6 {
                0x3D => Format::Smem,
                0x35 => Format::Vop3,
                0x33 => match top8 {
                    0xCC => Format::Vop3p,
                    0xCD => Format::Vinterp,
                    0xCE => Format::Ldsdir,
                    _ => return None,
                },
                0x32 => Format::Vopd,
                0x36 => Format::Ds,
                0x3B => match top8 & 3 {
                    0 => Format::Flat,
                    1 => Format::Scratch,
                    2 => Format::Global,
                    _ => return None,
                },
                0x31 => Format::Vbuffer,
                0x34 => Format::Vimage,
                0x39 => Format::Vsample,
                0x3E => Format::Exp,
                _ => return None,
            }),
        }
    }

    /// Bytes before any literal / DPP / SDWA / NSA dwords.
    pub fn base_len(self, family: Family) -> usize {
        match self {
            Format::Sop1
            | Format::Sop2
            | Format::Sopk
            | Format::Sopc
            | Format::Sopp
            | Format::Vop1
            | Format::Vop2
            | Format::Vopc
            | Format::Ldsdir => 4,
            Format::Vinterp => match family {
                Family::Gfx10 => 4,
                Family::Gfx11 | Family::Gfx12 => 8,
            },
            Format::Flat | Format::Global | Format::Scratch => match family {
                Family::Gfx10 | Family::Gfx11 => 8,
                Family::Gfx12 => 12,
            },
            Format::Vbuffer | Format::Vimage | Format::Vsample => 12,
            Format::Smem
            | Format::Vop3
            | Format::Vop3p
            | Format::Vopd
            | Format::Ds
            | Format::Mubuf
            | Format::Mtbuf
            | Format::Mimg
            | Format::Exp => 8,
        }
    }

    /// Whether instructions of this format read or write memory, and which
    /// path: what the certifier counts.
    pub fn memory_class(self) -> MemoryClass {
        match self {
            Format::Smem => MemoryClass::Scalar,
            Format::Flat
            | Format::Global
            | Format::Scratch
            | Format::Mubuf
            | Format::Mtbuf
            | Format::Mimg
            | Format::Vbuffer
            | Format::Vimage
            | Format::Vsample => MemoryClass::Vector,
            Format::Ds | Format::Ldsdir => MemoryClass::Lds,
            Format::Sop1
            | Format::Sop2
            | Format::Sopk
            | Format::Sopc
            | Format::Sopp
            | Format::Vop1
            | Format::Vop2
            | Format::Vopc
            | Format::Vop3
            | Format::Vop3p
            | Format::Vopd
            | Format::Vinterp
            | Format::Exp => MemoryClass::None,
        }
    }
}

/// The memory path of an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryClass {
    None,
    /// Scalar memory (K$): SMEM.
    Scalar,
    /// Vector memory (V$, GL1): buffer, global, flat, scratch, image.
    Vector,
    /// LDS: DS and LDS-direct/param loads.
    Lds,
}
