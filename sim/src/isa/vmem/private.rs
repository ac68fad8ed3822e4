//! Private memory: scratch_* instructions, flat addresses in the private
//! aperture and swizzled buffers (the scratch V#), all interleaved per
//! lane (`isa::scratch::Interleave`), so the three views of one private
//! address meet at the same bytes. Accesses are split where the interleave
//! breaks them (every element, or every byte when misaligned) and go
//! through checked memory (VM faults, freed memory). A private access must
//! stay in the wave's slot: hardware would silently reach another wave's
//! private memory, the model refuses it. Private accesses are not put in
//! the dispatch's access trace: concurrently running waves always hold
//! distinct slots, so they never race, whatever the slot numbering.

use super::super::buffer::Resource;
use super::super::fault::{Flow, IsaFault};
use super::super::operand::PRIVATE_APERTURE;
use super::super::program::Inst;
use super::super::scratch::{outside_slot, Interleave, WaveSlot};
use super::super::wave::{Wave, MAX_LANES};
use super::super::Ctx;
use super::{dst_reg, store_bytes, write_loaded, VKind, VOp};
use crate::trace::AccessKind;

/// What bounds an interleaved access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bound {
    /// Private by instruction (scratch_*, flat private aperture): every
    /// byte in the wave's slot.
    Slot,
    /// A swizzled buffer: within the queue's scratch backing only the
    /// wave's own slot; elsewhere ordinary (traced) memory.
    Backing,
}

/// The MUBUF/VBUFFER fields the swizzled address needs.
pub(super) struct BufferFields {
    pub imm: u32,
    pub offen: bool,
    pub idxen: bool,
    pub vaddr: u16,
    pub soffset: u32,
}

fn empty(elem: u64, group: u64) -> Interleave {
    Interleave {
        base: [0; MAX_LANES],
        off: [0; MAX_LANES],
        elem,
        group,
    }
}

/// A scratch_* instruction's private addresses: SADDR (32 bits) + VADDR +
/// the signed offset, interleaved from FLAT_SCRATCH by lane.
pub(super) fn scratch_interleave(wave: &Wave, op: &VOp) -> Result<Interleave, IsaFault> {
    let s = match op.saddr {
        Some(src) => wave.scalar(src)?,
        None => 0,
    };
    let v = if op.vaddr_used {
        Some(wave.v(op.areg)?)
    } else {
        None
    };
    let lanes = wave.lanes as u64;
    let mut il = empty(4, 4 * lanes);
    for l in 0..wave.lanes {
        let a = s
            .wrapping_add(v.map_or(0, |v| v[l]))
            .wrapping_add(op.offset as u32);
        il.base[l] = wave.flat_scratch.wrapping_add(4 * l as u64);
        il.off[l] = u64::from(a);
    }
    Ok(il)
}

/// Flat addresses of the `lanes` mask in the private aperture: the low 32
/// bits are the private address.
pub(super) fn flat_interleave(wave: &Wave, addrs: &[u64; MAX_LANES], mask: u64) -> Interleave {
    let mut il = empty(4, 4 * wave.lanes as u64);
    for l in 0..wave.lanes {
        if mask >> l & 1 != 0 {
            il.base[l] = wave.flat_scratch.wrapping_add(4 * l as u64);
            il.off[l] = addrs[l].wrapping_sub(PRIVATE_APERTURE) & 0xFFFF_FFFF;
        }
    }
    il
}

/// A swizzled buffer access (RDNA ISA, buffer addressing, swizzled):
/// index = (IDXEN ? VGPR index : 0) + (ADD_TID_ENABLE ? lane : 0), offset
/// = (OFFEN ? VGPR offset : 0) + the instruction's offset; the address is
/// base + SOFFSET + (index / INDEX_STRIDE x STRIDE + offset / elem x
/// elem) x INDEX_STRIDE + index % INDEX_STRIDE x elem + offset % elem,
/// with 4-byte elements (gfx10 has no element size field; gfx11+
/// SWIZZLE_ENABLE 1).
pub(super) fn buffer_swizzled(
    wave: &Wave,
    inst: &Inst,
    rsrc: &Resource,
    f: BufferFields,
) -> Result<Interleave, IsaFault> {
    let refuse = |what: String| IsaFault::Unimplemented {
        mnemonic: format!("{} with a swizzled V#: {what}", inst.decoded.mnemonic()),
        family: wave.isa.family,
    };
    let four_byte = rsrc.swizzle_mode == wave.isa.family.facts().resource.swizzle_four_byte;
    if !four_byte {
        return Err(refuse(format!(
            "SWIZZLE_ENABLE {} (only 4-byte elements are modelled)",
            rsrc.swizzle_mode
        )));
    }
    // OOB_SELECT 2 and 3 check nothing in swizzle mode (ROCr's scratch V#:
    // "no bounds check in swizzle mode"); the index checks of 0 and 1 are
    // not modelled.
    if rsrc.oob_select < 2 {
        return Err(refuse(format!(
            "OOB_SELECT {} (index bounds checks are not modelled)",
            rsrc.oob_select
        )));
    }
    let elem = 4u64;
    let is = u64::from(rsrc.index_stride);
    let index = if f.idxen {
        Some(wave.v(f.vaddr)?)
    } else {
        None
    };
    let offset = if f.offen {
        Some(wave.v(f.vaddr + u16::from(f.idxen))?)
    } else {
        None
    };
    let mut il = empty(elem, elem * is);
    for l in 0..wave.lanes {
        let tid = if rsrc.add_tid { l as u64 } else { 0 };
        let i = u64::from(index.map_or(0, |v| v[l])) + tid;
        il.base[l] = rsrc
            .base
            .wrapping_add(u64::from(f.soffset))
            .wrapping_add(i / is * u64::from(rsrc.stride) * is)
            .wrapping_add(i % is * elem);
        il.off[l] = u64::from(offset.map_or(0, |v| v[l])) + u64::from(f.imm);
    }
    Ok(il)
}

/// The addresses of piece `k..k + p` of every live lane, checked against
/// the bound; `traced` gets the lanes that are ordinary memory.
fn piece_addrs(
    wave: &Wave,
    il: &Interleave,
    live: u64,
    (k, p): (u64, u64),
    bound: Bound,
    traced: &mut u64,
) -> Result<[u64; MAX_LANES], IsaFault> {
    let mut out = [0u64; MAX_LANES];
    for l in 0..wave.lanes {
        if live >> l & 1 == 0 {
            continue;
        }
        let a = il.at(l, k);
        out[l] = a;
        let slot: Option<&WaveSlot> = wave.slot.as_ref();
        match (bound, slot) {
            (Bound::Slot, None) => {
                return Err(IsaFault::Private(format!(
                    "lane {l} accesses private memory (address {a:#x}) but RSRC2.SCRATCH_EN gave \
                     this wave no scratch"
                )))
            }
            (Bound::Slot, Some(s)) if !s.holds(a, p) => {
                return Err(IsaFault::Private(outside_slot(l, a, p, s)))
            }
            (Bound::Backing, Some(s)) if s.in_backing(a) && !s.holds(a, p) => {
                return Err(IsaFault::Private(outside_slot(l, a, p, s)))
            }
            (Bound::Backing, Some(s)) if s.in_backing(a) => {}
            (Bound::Backing, _) => *traced |= 1 << l,
            (Bound::Slot, Some(_)) => {}
        }
    }
    Ok(out)
}

/// Execute a load or store through the interleave for the `live` lanes.
pub(super) fn access(
    wave: &mut Wave,
    inst: &Inst,
    op: &VOp,
    ctx: &mut Ctx<'_>,
    il: &Interleave,
    live: u64,
    bound: Bound,
) -> Result<Flow, IsaFault> {
    let bytes = match op.kind {
        VKind::Load { bytes, .. } | VKind::Store { bytes, .. } => bytes,
        VKind::Nothing => return Ok(Flow::Next),
        VKind::Atomic { .. } => {
            return Err(IsaFault::Unimplemented {
                mnemonic: format!("{} on private memory", inst.decoded.mnemonic()),
                family: wave.isa.family,
            })
        }
    };
    let b = u64::from(bytes);
    let bu = usize::from(bytes);
    let p = il.piece(live, wave.lanes, b);
    let pu = p as usize;
    let lanes = wave.lanes;
    let mut tmp = [0u8; MAX_LANES * 16];
    let mut traced = 0u64;
    match op.kind {
        VKind::Load { signed, d16, .. } => {
            let r = dst_reg(inst)?;
            wave.v(r + bu.div_ceil(4) as u16 - 1)?;
            for j in 0..b / p {
                let addrs = piece_addrs(wave, il, live, (j * p, p), bound, &mut traced)?;
                ctx.mem.gather(&addrs[..lanes], live, pu, &mut tmp)?;
                let at = (j * p) as usize;
                for l in 0..lanes {
                    if live >> l & 1 != 0 {
                        ctx.scratch[l * bu + at..l * bu + at + pu]
                            .copy_from_slice(&tmp[l * pu..(l + 1) * pu]);
                        if traced >> l & 1 != 0 {
                            ctx.trace
                                .record_lane(AccessKind::VectorRead, l, addrs[l], p);
                        }
                    }
                }
            }
            write_loaded(wave, r, ctx.scratch, live, (bytes, signed, d16));
        }
        VKind::Store { d16, .. } => {
            wave.v(op.data + bu.div_ceil(4) as u16 - 1)?;
            store_bytes(wave, op.data, live, bu, d16, ctx.scratch);
            for j in 0..b / p {
                let addrs = piece_addrs(wave, il, live, (j * p, p), bound, &mut traced)?;
                let at = (j * p) as usize;
                for l in 0..lanes {
                    if live >> l & 1 != 0 {
                        tmp[l * pu..(l + 1) * pu]
                            .copy_from_slice(&ctx.scratch[l * bu + at..l * bu + at + pu]);
                        if traced >> l & 1 != 0 {
                            ctx.trace.record_lane(AccessKind::Write, l, addrs[l], p);
                        }
                    }
                }
                ctx.mem.scatter(&addrs[..lanes], live, pu, &tmp)?;
            }
        }
        VKind::Atomic { .. } | VKind::Nothing => {}
    }
    Ok(Flow::Next)
}
