//! Vector memory: global, flat, buffer and scratch loads, stores and
//! atomics, per lane through the device's checked memory (one lock per
//! instruction, every lane's range checked), in lane order. Lanes with
//! consecutive addresses become one range of the access trace. Private
//! memory (scratch instructions, flat addresses in the private aperture,
//! swizzled buffers) is interleaved per lane: `private.rs`.

use relaunch_isa::{Family, Operand, Role};

use super::atomic::{self, AOp};
use super::fault::{Flow, IsaFault};
use super::operand::{Src, PRIVATE_APERTURE, SHARED_APERTURE};
use super::program::Inst;
use super::wave::{Wave, MAX_LANES};
use super::Ctx;
use crate::trace::AccessKind;

mod buffer_address;
mod coalesced;
mod names;
mod private;

pub(crate) use names::{d16_of, prepare_kind};

/// Which address space an instruction names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seg {
    Global,
    Flat,
    Buffer,
    /// scratch_* (private memory through FLAT_SCRATCH).
    Scratch,
}

/// Which half of the VGPR a 16-bit (d16) load or store uses; the other
/// half of a loaded VGPR is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum D16 {
    /// The whole VGPR (not a d16 form).
    No,
    Lo,
    Hi,
}

/// What a vector memory instruction does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VKind {
    Load {
        bytes: u8,
        signed: bool,
        d16: D16,
    },
    Store {
        bytes: u8,
        d16: D16,
    },
    Atomic {
        op: AOp,
        wide: bool,
    },
    /// Cache invalidates and write-backs (buffer_gl0_inv, buffer_gl1_inv,
    /// buffer_wbl2, global_inv, ...): the ordering model tracks caches,
    /// and a kernel's own accesses are coherent here.
    Nothing,
}

/// A prepared vector memory operation, its operands resolved once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct VOp {
    pub seg: Seg,
    pub kind: VKind,
    /// Immediate offset (global/flat).
    pub offset: i64,
    /// Address VGPR and how many (2: a 64-bit address).
    pub areg: u16,
    pub acount: u8,
    /// Global's scalar base pair, scratch's 32-bit scalar offset, when
    /// not `off`.
    pub saddr: Option<Src>,
    /// Scratch: the VGPR address is used (gfx10: when SADDR is `off`;
    /// gfx11/gfx12: the SVE bit, so neither may be used: the ST form).
    pub vaddr_used: bool,
    /// Data VGPR (stores, atomics).
    pub data: u16,
    /// Atomics: the pre-op value is returned (GLC / TH_ATOMIC_RETURN).
    pub rtn: bool,
    /// The VDST field: where a returning atomic puts the pre-op value (the
    /// decoder's tables, generated from the non-returning forms, name no
    /// destination for atomics).
    pub vdst: u16,
}

/// The vector memory operation `d` is, if implemented.
pub(crate) fn prepare(
    family: Family,
    d: &relaunch_isa::Instruction,
    words: &[u32; 4],
) -> Option<VOp> {
    let (seg, kind) = prepare_kind(d.format, d.name)?;
    let offset = match d.field(Role::Offset) {
        Some(Operand::Imm(v)) => v,
        _ => 0,
    };
    let (areg, acount) = match d.field(Role::Addr) {
        Some(Operand::Vgpr { first, count }) => (first, count),
        _ => (0, 0),
    };
    let saddr = match (seg, d.field(Role::Soffset)) {
        (Seg::Global | Seg::Scratch, Some(o)) => Some(Src::from_operand(o)),
        _ => None,
    };
    let fields = family.facts().memory;
    let vaddr_used = match fields.flat.vaddr_enable {
        None => saddr.is_none(),
        Some(sve) => sve.get(words) != 0,
    };
    let data = match (seg, d.field(Role::Data)) {
        // The decoder names a buffer store's VDATA nowhere (its tables
        // give stores no destination): read the field.
        (Seg::Buffer, _) => fields.buffer.vdata.get(words) as u16,
        (_, Some(Operand::Vgpr { first, .. })) => first,
        _ => 0,
    };
    Some(VOp {
        seg,
        kind,
        offset,
        areg,
        acount,
        saddr,
        vaddr_used,
        data,
        // A buffer atomic returns the old value into VDATA itself.
        rtn: match seg {
            Seg::Buffer => fields.buffer.returns.get(words) != 0,
            _ => fields.flat.returns.get(words) != 0,
        },
        vdst: match seg {
            Seg::Buffer => data,
            _ => fields.flat.vdst.get(words) as u16,
        },
    })
}

/// Per-lane byte addresses of a global/flat instruction.
fn flat_addresses(
    wave: &Wave,
    inst: &Inst,
    op: &VOp,
    out: &mut [u64; MAX_LANES],
) -> Result<(), IsaFault> {
    let offset = op.offset;
    let lo = wave.v(op.areg)?;
    match (op.saddr, op.acount) {
        (Some(s), _) => {
            let base = wave.scalar64(s, false)?;
            for l in 0..wave.lanes {
                out[l] = base
                    .wrapping_add(u64::from(lo[l]))
                    .wrapping_add_signed(offset);
            }
        }
        (None, 2) => {
            let hi = wave.v(op.areg + 1)?;
            for l in 0..wave.lanes {
                out[l] = (u64::from(lo[l]) | (u64::from(hi[l]) << 32)).wrapping_add_signed(offset);
            }
        }
        (None, _) => {
            return Err(operand_fault(
                inst,
                "a 32-bit address without a scalar base",
            ))
        }
    }
    Ok(())
}

#[cold]
fn operand_fault(inst: &Inst, why: &str) -> IsaFault {
    IsaFault::Operand {
        mnemonic: inst.decoded.mnemonic(),
        why: why.into(),
    }
}

/// Execute one vector memory instruction.
pub(crate) fn execute(
    wave: &mut Wave,
    inst: &Inst,
    op: VOp,
    ctx: &mut Ctx<'_>,
) -> Result<Flow, IsaFault> {
    let bytes: u32 = match op.kind {
        VKind::Nothing => return Ok(Flow::Next),
        VKind::Load { bytes, .. } | VKind::Store { bytes, .. } => bytes.into(),
        VKind::Atomic { wide, .. } => {
            if wide {
                8
            } else {
                4
            }
        }
    };
    let mut addrs = [0u64; MAX_LANES];
    let mut live = wave.exec;
    match op.seg {
        Seg::Scratch => {
            let il = private::scratch_interleave(wave, &op)?;
            return private::access(wave, inst, &op, ctx, &il, live, private::Bound::Slot);
        }
        Seg::Buffer => {
            let mut b = [None; MAX_LANES];
            if let Some(il) = buffer_address::buffer_addresses(wave, inst, bytes, &mut b)? {
                return private::access(wave, inst, &op, ctx, &il, live, private::Bound::Backing);
            }
            for l in 0..wave.lanes {
                match b[l] {
                    Some(a) => addrs[l] = a,
                    None => live &= !(1 << l),
                }
            }
            let oob = wave.exec & !live;
            match op.kind {
                // Out-of-bounds lanes read zero.
                VKind::Load { d16, .. } if oob != 0 => zero_lanes(wave, inst, bytes, d16, oob)?,
                // An out-of-bounds atomic writes nothing; what it returns
                // is not documented, so a returning one is refused.
                VKind::Atomic { .. } if oob != 0 && op.rtn => {
                    return Err(IsaFault::Unimplemented {
                        mnemonic: format!(
                            "{} returning the old value for lanes outside the buffer ({oob:#x})",
                            inst.decoded.mnemonic()
                        ),
                        family: wave.isa.family,
                    })
                }
                _ => {}
            }
        }
        Seg::Global | Seg::Flat => {
            flat_addresses(wave, inst, &op, &mut addrs)?;
            if op.seg == Seg::Flat {
                let mut private = 0u64;
                for l in 0..wave.lanes {
                    if live >> l & 1 != 0 {
                        let a = addrs[l];
                        if (PRIVATE_APERTURE..PRIVATE_APERTURE + (1 << 32)).contains(&a) {
                            private |= 1 << l;
                        } else if (SHARED_APERTURE..PRIVATE_APERTURE).contains(&a) {
                            return Err(IsaFault::Unimplemented {
                                mnemonic: format!(
                                    "{} of a flat address in the LDS aperture ({a:#x})",
                                    inst.decoded.mnemonic()
                                ),
                                family: wave.isa.family,
                            });
                        }
                    }
                }
                if private != 0 {
                    // Lanes in the private aperture reach scratch; the
                    // others go on to global memory below.
                    let il = private::flat_interleave(wave, &addrs, private);
                    private::access(wave, inst, &op, ctx, &il, private, private::Bound::Slot)?;
                    live &= !private;
                }
            }
        }
    }
    match op.kind {
        VKind::Load { bytes, signed, d16 } => {
            load(wave, inst, ctx, &addrs, live, (bytes, signed, d16))?
        }
        VKind::Store { bytes, d16 } => store(wave, op.data, ctx, &addrs, live, bytes, d16)?,
        VKind::Atomic { op: a, wide } => atomic(wave, &op, ctx, &addrs, live, a, wide)?,
        VKind::Nothing => {}
    }
    Ok(Flow::Next)
}

pub(super) fn dst_reg(inst: &Inst) -> Result<u16, IsaFault> {
    match inst.dst {
        super::operand::Dst::Vgpr(r) => Ok(r),
        _ => Err(operand_fault(inst, "no destination VGPR")),
    }
}

fn zero_lanes(
    wave: &mut Wave,
    inst: &Inst,
    bytes: u32,
    d16: D16,
    lanes: u64,
) -> Result<(), IsaFault> {
    let r = dst_reg(inst)?;
    // A d16 load zeroes only its half.
    let keep = match d16 {
        D16::No => 0,
        D16::Lo => 0xFFFF_0000,
        D16::Hi => 0x0000_FFFF,
    };
    for i in 0..bytes.div_ceil(4) as u16 {
        let v = wave.v_mut(r + i)?;
        for (l, slot) in v.iter_mut().enumerate() {
            if lanes >> l & 1 != 0 {
                *slot &= keep;
            }
        }
    }
    Ok(())
}

fn load(
    wave: &mut Wave,
    inst: &Inst,
    ctx: &mut Ctx<'_>,
    addrs: &[u64; MAX_LANES],
    live: u64,
    (bytes, signed, d16): (u8, bool, D16),
) -> Result<(), IsaFault> {
    let r = dst_reg(inst)?;
    let n = usize::from(bytes).div_ceil(4);
    wave.v(r + n as u16 - 1)?;
    let b = usize::from(bytes);
    let lanes = wave.lanes;
    if b == 4 && d16 == D16::No {
        // The common case: one dword per lane, straight into the VGPR; in
        // a few runs of one address or consecutive dwords if it can.
        let out = &mut wave.vgpr[r as usize][..lanes];
        if coalesced::load(ctx, &addrs[..lanes], live, out) {
            return Ok(());
        }
        record_lanes(ctx, AccessKind::VectorRead, addrs, live, lanes, 4);
        return Ok(ctx.mem.gather_u32(
            &addrs[..lanes],
            live,
            &mut wave.vgpr[r as usize][..lanes],
        )?);
    }
    record_lanes(ctx, AccessKind::VectorRead, addrs, live, lanes, b as u64);
    let buf = &mut ctx.scratch[..];
    ctx.mem.gather(&addrs[..lanes], live, b, buf)?;
    write_loaded(wave, r, buf, live, (bytes, signed, d16));
    Ok(())
}

/// Put each live lane's `bytes` loaded bytes (`buf[l * bytes..]`) into
/// VGPRs from `r`, as the load's width, sign and d16 half say.
pub(super) fn write_loaded(
    wave: &mut Wave,
    r: u16,
    buf: &[u8],
    live: u64,
    (bytes, signed, d16): (u8, bool, D16),
) {
    let b = usize::from(bytes);
    let n = b.div_ceil(4);
    for l in 0..wave.lanes {
        if live >> l & 1 == 0 {
            continue;
        }
        let e = &buf[l * b..(l + 1) * b];
        if d16 != D16::No {
            // The value extended to 16 bits, into its half.
            let h = match (b, signed) {
                (1, true) => e[0] as i8 as i16 as u16,
                (1, false) => u16::from(e[0]),
                _ => u16::from_le_bytes([e[0], e[1]]),
            };
            let old = wave.vgpr[r as usize][l];
            wave.vgpr[r as usize][l] = match d16 {
                D16::Hi => (old & 0xFFFF) | u32::from(h) << 16,
                D16::Lo | D16::No => (old & 0xFFFF_0000) | u32::from(h),
            };
            continue;
        }
        match b {
            1 => {
                wave.vgpr[r as usize][l] = if signed {
                    e[0] as i8 as i32 as u32
                } else {
                    u32::from(e[0])
                }
            }
            2 => {
                let h = u16::from_le_bytes([e[0], e[1]]);
                wave.vgpr[r as usize][l] = if signed {
                    h as i16 as i32 as u32
                } else {
                    u32::from(h)
                }
            }
            _ => {
                for i in 0..n {
                    let c = &e[4 * i..4 * i + 4];
                    wave.vgpr[r as usize + i][l] = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                }
            }
        }
    }
}

fn store(
    wave: &mut Wave,
    r: u16,
    ctx: &mut Ctx<'_>,
    addrs: &[u64; MAX_LANES],
    live: u64,
    bytes: u8,
    d16: D16,
) -> Result<(), IsaFault> {
    let n = usize::from(bytes).div_ceil(4);
    wave.v(r + n as u16 - 1)?;
    let b = usize::from(bytes);
    let lanes = wave.lanes;
    if b == 4 {
        record_lanes(ctx, AccessKind::Write, addrs, live, lanes, 4);
        return Ok(ctx
            .mem
            .scatter_u32(&addrs[..lanes], live, &wave.vgpr[r as usize][..lanes])?);
    }
    let buf = &mut ctx.scratch[..];
    store_bytes(wave, r, live, b, d16, buf);
    for l in 0..lanes {
        if live >> l & 1 != 0 {
            ctx.trace
                .record_lane(AccessKind::Write, l, addrs[l], b as u64);
        }
    }
    ctx.mem.scatter(&addrs[..lanes], live, b, buf)?;
    Ok(())
}

/// Each live lane's `b` bytes to store from VGPRs at `r` (the high half's
/// for a d16_hi store), into `buf[l * b..]`.
pub(super) fn store_bytes(wave: &Wave, r: u16, live: u64, b: usize, d16: D16, buf: &mut [u8]) {
    let n = b.div_ceil(4);
    for l in 0..wave.lanes {
        if live >> l & 1 == 0 {
            continue;
        }
        let mut e = [0u8; 16];
        for i in 0..n {
            e[4 * i..4 * i + 4].copy_from_slice(&wave.vgpr[r as usize + i][l].to_le_bytes());
        }
        if d16 == D16::Hi {
            // The high half's bytes (byte 2, or bytes 2-3).
            e.copy_within(2..4, 0);
        }
        buf[l * b..(l + 1) * b].copy_from_slice(&e[..b]);
    }
}

#[allow(clippy::too_many_arguments)]
fn atomic(
    wave: &mut Wave,
    vop: &VOp,
    ctx: &mut Ctx<'_>,
    addrs: &[u64; MAX_LANES],
    live: u64,
    op: AOp,
    wide: bool,
) -> Result<(), IsaFault> {
    let data = vop.data;
    let rtn = vop.rtn;
    let w = if wide { 2u16 } else { 1 };
    let two = op == AOp::Cmpswap;
    wave.v(data + if two { 2 * w } else { w } - 1)?;
    // The decoder's tables name no destination for atomics: VDST it is.
    let dst = rtn.then_some(vop.vdst);
    if let Some(d) = dst {
        wave.v(d + w - 1)?;
    }
    for l in 0..wave.lanes {
        if live >> l & 1 == 0 {
            continue;
        }
        let get = |r: u16| {
            let lo = u64::from(wave.vgpr[r as usize][l]);
            if wide {
                lo | (u64::from(wave.vgpr[r as usize + 1][l]) << 32)
            } else {
                lo
            }
        };
        // cmpswap's data is (new value, compare value).
        let (d, d2) = (get(data), if two { get(data + w) } else { 0 });
        let a = addrs[l];
        let old = if wide {
            ctx.mem
                .atomic_rmw_u64(a, |m| atomic::apply(op, true, m, d, d2))?
        } else {
            u64::from(
                ctx.mem
                    .atomic_rmw_u32(a, |m| atomic::apply(op, false, u64::from(m), d, d2) as u32)?,
            )
        };
        ctx.trace
            .record(AccessKind::Atomic, a, if wide { 8 } else { 4 });
        if let Some(r) = dst {
            wave.vgpr[r as usize][l] = old as u32;
            if wide {
                wave.vgpr[r as usize + 1][l] = (old >> 32) as u32;
            }
        }
    }
    Ok(())
}

/// Record every active lane's range; a uniform address (every lane reading
/// the same element, as a broadcast operand does) or consecutive lanes at
/// consecutive addresses are one range.
#[inline]
fn record_lanes(
    ctx: &mut Ctx<'_>,
    kind: AccessKind,
    addrs: &[u64; MAX_LANES],
    live: u64,
    lanes: usize,
    len: u64,
) {
    if live == 0 {
        return;
    }
    // One pass over the active lanes in order, gathering runs: a lane
    // inside the current run or right after it extends it, another starts
    // the next. Uniform and coalesced accesses are one run; lanes sharing
    // a few addresses (a row per head, say) a few. Each run is one exact
    // range; more than `RUNS` of them go lane by lane.
    const RUNS: usize = 4;
    let full = super::wave::full_mask(lanes);
    if live & full == full {
        // Every lane: where each lane neither repeats the previous lane's
        // address nor continues it, a run breaks; addresses rising by 0 or
        // `len` cover exactly [first, last + len). The scan stops at the
        // `RUNS`th break (a scattered access goes lane by lane anyway).
        let a = &addrs[..lanes];
        let mut breaks = [0usize; RUNS];
        let mut nb = 0;
        for l in 1..a.len() {
            let (p, c) = (a[l - 1], a[l]);
            if c != p && c != p.wrapping_add(len) {
                if nb == RUNS - 1 {
                    ctx.trace.record_lanes(kind, a, live, len);
                    return;
                }
                breaks[nb] = l;
                nb += 1;
            }
        }
        let mut start = 0;
        for &stop in breaks[..nb].iter().chain([&a.len()]) {
            let end = a[stop - 1].wrapping_add(len);
            ctx.trace.record(kind, a[start], end.wrapping_sub(a[start]));
            start = stop;
        }
        return;
    }
    let mut runs = [(0u64, 0u64); RUNS];
    let mut n = 0;
    let first = addrs[live.trailing_zeros() as usize];
    let mut cur = (first, first.wrapping_add(len));
    for l in crate::lanemask::set_lanes(live & super::wave::full_mask(lanes)) {
        let a = addrs[l];
        let end = a.wrapping_add(len);
        if a == cur.1 {
            cur.1 = end;
        } else if !(a >= cur.0 && end <= cur.1 && end >= a) {
            if n == RUNS {
                ctx.trace.record_lanes(kind, &addrs[..lanes], live, len);
                return;
            }
            runs[n] = cur;
            n += 1;
            cur = (a, end);
        }
    }
    for &(s, e) in runs[..n].iter().chain([&cur]) {
        ctx.trace.record(kind, s, e.wrapping_sub(s));
    }
}
