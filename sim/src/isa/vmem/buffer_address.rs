//! Buffer addressing (MUBUF, gfx12 VBUFFER): the fields per family, the
//! V#, and raw per-lane addresses with the NUM_RECORDS bound; a swizzled
//! V# goes to the interleave (`private::buffer_swizzled`).

use relaunch_isa::{Family, Role};

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
    let (imm, offen, idxen, vaddr, rsrc_first) = match wave.isa.family {
        Family::Gfx10 => (
            w[0] & 0xFFF,
            w[0] >> 12 & 1 != 0,
            w[0] >> 13 & 1 != 0,
            (w[1] & 0xFF) as u16,
            ((w[1] >> 16) & 0x1F) * 4,
        ),
        Family::Gfx11 => (
            w[0] & 0xFFF,
            w[1] >> 22 & 1 != 0,
            w[1] >> 23 & 1 != 0,
            (w[1] & 0xFF) as u16,
            ((w[1] >> 16) & 0x1F) * 4,
        ),
        Family::Gfx12 => (
            w[2] >> 8,
            w[1] >> 30 & 1 != 0,
            w[1] >> 31 != 0,
            (w[2] & 0xFF) as u16,
            (w[1] >> 9) & 0x1FF,
        ),
    };
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
