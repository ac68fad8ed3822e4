//! Instruction names to vector memory operations: the access width and
//! signedness, the d16 half, loads, stores, atomics and cache controls.

use relaunch_isa::Format;

use super::super::atomic;
use super::{Seg, VKind, D16};

fn width(s: &str) -> Option<(u8, bool)> {
    Some(match s {
        "dword" | "b32" => (4, false),
        "dwordx2" | "b64" => (8, false),
        "dwordx3" | "b96" => (12, false),
        "dwordx4" | "b128" => (16, false),
        "ubyte" | "u8" | "byte" | "b8" => (1, false),
        "sbyte" | "i8" => (1, true),
        "ushort" | "u16" | "short" | "b16" => (2, false),
        "sshort" | "i16" => (2, true),
        _ => return None,
    })
}

/// The d16 forms: gfx10's `short_d16_hi`, gfx11+'s `d16_hi_b16` (DS:
/// `u16_d16_hi` on every family).
pub(crate) fn d16_of(w: &str) -> (&str, D16) {
    if let Some(x) = w.strip_suffix("_d16_hi") {
        (x, D16::Hi)
    } else if let Some(x) = w.strip_suffix("_d16") {
        (x, D16::Lo)
    } else if let Some(x) = w.strip_prefix("d16_hi_") {
        (x, D16::Hi)
    } else if let Some(x) = w.strip_prefix("d16_") {
        (x, D16::Lo)
    } else {
        (w, D16::No)
    }
}

pub(crate) fn prepare_kind(format: Format, name: &str) -> Option<(Seg, VKind)> {
    let (seg, rest) = match format {
        Format::Global => (Seg::Global, name.strip_prefix("global_")?),
        Format::Flat => (Seg::Flat, name.strip_prefix("flat_")?),
        Format::Mubuf | Format::Vbuffer => (Seg::Buffer, name.strip_prefix("buffer_")?),
        Format::Scratch => (Seg::Scratch, name.strip_prefix("scratch_")?),
        _ => return None,
    };
    let kind = match rest {
        "gl0_inv" | "gl1_inv" | "wbl2" | "inv" | "wb" | "wbinvl1" => VKind::Nothing,
        _ => {
            if let Some(w) = rest.strip_prefix("load_") {
                let (w, d16) = d16_of(w);
                let (bytes, signed) = width(w)?;
                if d16 != D16::No && bytes > 2 {
                    return None;
                }
                VKind::Load { bytes, signed, d16 }
            } else if let Some(w) = rest.strip_prefix("store_") {
                let (w, d16) = d16_of(w);
                let (bytes, _) = width(w)?;
                // Only the high-half stores exist (a low-half store is the
                // plain byte/short store).
                if d16 == D16::Lo || (d16 == D16::Hi && bytes > 2) {
                    return None;
                }
                VKind::Store { bytes, d16 }
            } else if let Some(a) = rest.strip_prefix("atomic_") {
                // Scratch has none (a buffer atomic on private memory is
                // refused when it happens: `private::access`).
                if seg == Seg::Scratch {
                    return None;
                }
                let (op, wide) = atomic::parse(a)?;
                VKind::Atomic { op, wide }
            } else {
                return None;
            }
        }
    };
    Some((seg, kind))
}
