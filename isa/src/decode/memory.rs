//! Memory formats: SMEM, FLAT/GLOBAL/SCRATCH, MUBUF/MTBUF/VBUFFER, MIMG.

use super::tables::Tables;
use super::{bits, vgpr, Builder};
use crate::format::Format;
use crate::operand::{self, null_code, Operand, Role};
use crate::table::{self, Dst, Op};
use crate::Family;

impl Builder<'_> {
    pub(super) fn smem(&mut self, t: &Tables, d0: u32, d1: u32) -> Option<&'static Op> {
        let f = self.isa.family;
        let fields = f.facts().memory;
        let code = fields.smem_op.get(&[d0, d1]);
        let op = table::find(t.smem, code as u16, self.isa.sub())?;
        self.dst(Role::Dst, op.dst, bits(d0, 12, 6) as u16, false);
        if op.dst == Dst::None && op.name.contains("store") {
            let n = store_width(op.name);
            self.push(Role::Data, operand::sdst(f, bits(d0, 12, 6) as u16, n));
        }
        let base_count = if op.name.contains("buffer") { 4 } else { 2 };
        self.push(
            Role::Base,
            operand::sdst(f, (bits(d0, 5, 0) * 2) as u16, base_count),
        );
        let offset = fields.smem_offset.get_signed(&[d0, d1]);
        self.push(Role::Offset, Operand::Imm(offset));
        let soff = bits(d1, 31, 25) as u16;
        if soff != null_code(f) {
            self.push(Role::Soffset, operand::sdst(f, soff, 1));
        }
        Some(op)
    }

    pub(super) fn flat(&mut self, t: &Tables, w: &[u32; 4]) -> Option<&'static Op> {
        let f = self.isa.family;
        let seg = match self.format {
            Format::Flat => 0,
            Format::Scratch => 1,
            _ => 2,
        };
        let fl = f.facts().memory.flat;
        let (code, vdst, addr, data, saddr, offset) = (
            fl.op.get(w),
            fl.vdst.get(w),
            fl.addr.get(w),
            fl.data.get(w),
            fl.saddr.get(w),
            fl.offset.get_signed(w),
        );
        let op = table::find(t.flat[seg], code as u16, self.isa.sub())?;
        // An atomic names its destination only when it returns the old
        // value (GLC on gfx10/gfx11, TH bit 0 on gfx12); its data holds
        // the value and, for a compare-swap, the compare value after it.
        let atomic = atomic_width(op.name);
        match atomic {
            Some(width) if fl.returns.get(w) != 0 => self.push(
                Role::Dst,
                Operand::Vgpr {
                    first: vdst as u16,
                    count: width,
                },
            ),
            _ => self.dst(Role::Dst, op.dst, vdst as u16, true),
        }
        // A 64-bit address unless a scalar base supplies the high part
        // (scratch addresses are 32-bit offsets).
        let has_saddr = saddr as u16 != null_code(f);
        let addr_count = match self.format {
            Format::Flat => 2,
            Format::Global if !has_saddr => 2,
            _ => 1,
        };
        self.push(
            Role::Addr,
            Operand::Vgpr {
                first: addr as u16,
                count: addr_count,
            },
        );
        let data_count = match atomic {
            Some(width) if op.name.contains("cmpswap") => 2 * width,
            Some(width) => width,
            None => 1,
        };
        self.push(
            Role::Data,
            Operand::Vgpr {
                first: data as u16,
                count: data_count,
            },
        );
        if has_saddr {
            self.push(Role::Soffset, operand::sdst(f, saddr as u16, 2));
        }
        self.push(Role::Offset, Operand::Imm(offset));
        Some(op)
    }

    pub(super) fn buffer(&mut self, t: &Tables, w: &[u32; 4]) -> Option<&'static Op> {
        let f = self.isa.family;
        let (tab, code) = match (self.format, f) {
            (Format::Mubuf, Family::Gfx10) => (t.mubuf, bits(w[0], 24, 18)),
            (Format::Mubuf, _) => (t.mubuf, bits(w[0], 25, 18)),
            (Format::Mtbuf, Family::Gfx10) => {
                (t.mtbuf, bits(w[0], 18, 16) | (bits(w[1], 21, 21) << 3))
            }
            (Format::Mtbuf, _) => (t.mtbuf, bits(w[0], 18, 15)),
            (_, _) => (t.mubuf, bits(w[0], 21, 14)),
        };
        let op = table::find(tab, code as u16, self.isa.sub())?;
        let (vdata, vaddr, rsrc, soff) = match self.format {
            Format::Vbuffer => (
                bits(w[1], 7, 0),
                bits(w[2], 7, 0),
                bits(w[1], 17, 9),
                bits(w[0], 6, 0),
            ),
            _ => (
                bits(w[1], 15, 8),
                bits(w[1], 7, 0),
                bits(w[1], 20, 16) * 4,
                bits(w[1], 31, 24),
            ),
        };
        self.dst(Role::Dst, op.dst, vdata as u16, true);
        self.push(Role::Addr, vgpr(vaddr));
        self.push(Role::Base, operand::sdst(f, rsrc as u16, 4));
        self.push(Role::Soffset, operand::sdst(f, soff as u16, 1));
        Some(op)
    }

    pub(super) fn image(&mut self, t: &Tables, w: &[u32; 4]) -> Option<&'static Op> {
        let f = self.isa.family;
        let sub = self.isa.sub();
        let op = match (self.format, f) {
            (Format::Mimg, Family::Gfx10) => {
                let code = bits(w[0], 24, 18) | (bits(w[0], 0, 0) << 7);
                let op = table::find(t.mimg, code as u16, sub)?;
                self.extra = 4 * bits(w[0], 2, 1) as usize;
                op
            }
            (Format::Mimg, _) => {
                let op = table::find(t.mimg, bits(w[0], 25, 18) as u16, sub)?;
                if bits(w[0], 0, 0) != 0 {
                    // NSA: the number of address dwords follows from the
                    // opcode and dimension; 16-bit addresses are not modelled.
                    if bits(w[1], 30, 30) != 0 || op.name.contains("g16") {
                        return None;
                    }
                    let n = image_addresses(op.name, bits(w[0], 4, 2))?;
                    self.extra = 4 * (n.saturating_sub(1)).div_ceil(4) as usize;
                }
                op
            }
            (Format::Vsample, _) => table::find(t.vsample, bits(w[0], 21, 14) as u16, sub)?,
            (_, _) => table::find(t.mimg, bits(w[0], 21, 14) as u16, sub)?,
        };
        let (vdata, vaddr, rsrc) = match self.format {
            Format::Mimg => (bits(w[1], 15, 8), bits(w[1], 7, 0), bits(w[1], 20, 16) * 4),
            _ => (bits(w[1], 7, 0), bits(w[2], 7, 0), bits(w[1], 17, 9)),
        };
        self.dst(Role::Dst, op.dst, vdata as u16, true);
        self.push(Role::Addr, vgpr(vaddr));
        self.push(Role::Base, operand::sdst(f, rsrc as u16, 8));
        Some(op)
    }
}

/// Registers of a FLAT/GLOBAL atomic's value (`None`: not an atomic).
fn atomic_width(name: &str) -> Option<u8> {
    if !name.contains("_atomic_") {
        return None;
    }
    let wide = ["_x2", "_b64", "_u64", "_i64", "_f64"];
    Some(if wide.iter().any(|s| name.ends_with(s)) {
        2
    } else {
        1
    })
}

fn store_width(name: &str) -> u8 {
    for (s, n) in [
        ("x16", 16),
        ("x8", 8),
        ("x4", 4),
        ("x2", 2),
        ("b64", 2),
        ("b128", 4),
    ] {
        if name.ends_with(s) {
            return n;
        }
    }
    1
}

/// gfx11 MIMG address count for an NSA encoding: coordinates per dimension
/// plus what the opcode's name adds.
fn image_addresses(name: &str, dim: u32) -> Option<u32> {
    let coords = [1u32, 2, 3, 3, 2, 3, 3, 4][dim as usize];
    let grad = [1u32, 2, 3, 2, 1, 2, 2, 2][dim as usize];
    let mods = name
        .strip_prefix("image_sample")
        .or_else(|| name.strip_prefix("image_gather4"));
    let mut n = coords;
    match mods {
        Some(m) => {
            for part in m.split('_').filter(|p| !p.is_empty()) {
                n += match part {
                    "c" | "b" | "l" | "cl" | "o" => 1,
                    "d" | "cd" => 2 * grad,
                    "lz" | "h" => 0,
                    _ => return None,
                };
            }
        }
        None if name.contains("_mip") => n += 1,
        None if name.starts_with("image_bvh") => return None,
        None => {}
    }
    Some(n)
}
