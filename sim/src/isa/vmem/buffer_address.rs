//! Buffer addressing (MUBUF, gfx12 VBUFFER): the fields per family, the
//! V#, and raw per-lane addresses with the NUM_RECORDS bound; a swizzled
//! V# goes to the interleave (`private::buffer_swizzled`).

use relaunch_isa::Role;

use super::super::buffer::Resource;
use super::super::fault::IsaFault;
use super::super::operand::Src;
use super::super::program::Inst;
use super::super::scratch::Interleave;
use super::super::wave::{Wave, MAX_LANES};
use super::private;

/// Per-lane addresses of a buffer instruction; `None` for a lane out of
/// bounds (loads read zero, stores are dropped). A swizzled V# gives an
/// interleave instead (`private::buffer_swizzled`).
pub(super) fn buffer_addresses(
    wave: &Wave,
    inst: &Inst,
    bytes: u32,
    out: &mut [Option<u64>; MAX_LANES],
) -> Result<Option<Interleave>, IsaFault> {
    let w = &inst.words;
    let b = wave.isa.family.facts().memory.buffer;
    let (imm, offen, idxen, vaddr, rsrc_first) = (
        b.offset.get(w),
        b.offen.get(w) != 0,
        b.idxen.get(w) != 0,
        b.vaddr.get(w) as u16,
        b.rsrc.get(w) * b.rsrc_scale,
    );
    let rsrc = Resource::read(wave, Src::Sgpr(rsrc_first as u8))?;
    let soff = match inst.decoded.field(Role::Soffset) {
        Some(o) => wave.scalar(Src::from_operand(o))?,
        None => 0,
    };
    if rsrc.swizzle {
        let fields = private::BufferFields {
            imm,
            offen,
            idxen,
            vaddr,
            soffset: soff,
        };
        return private::buffer_swizzled(wave, inst, &rsrc, fields).map(Some);
    }
    if idxen || rsrc.add_tid || (rsrc.stride != 0 && rsrc.oob_select != 3) {
        return Err(IsaFault::Unimplemented {
            mnemonic: format!(
                "{} with idxen {idxen}, swizzle {}, add_tid {}, stride {} (only raw buffers are modelled)",
                inst.decoded.mnemonic(),
                rsrc.swizzle,
                rsrc.add_tid,
                rsrc.stride
            ),
            family: wave.isa.family,
        });
    }
    let v = if offen { Some(wave.v(vaddr)?) } else { None };
    for l in 0..wave.lanes {
        let off = u64::from(v.map_or(0, |v| v[l])) + u64::from(imm);
        out[l] = (off + u64::from(bytes) <= u64::from(rsrc.num_records))
            .then(|| rsrc.base.wrapping_add(u64::from(soff)).wrapping_add(off));
    }
    Ok(None)
}
