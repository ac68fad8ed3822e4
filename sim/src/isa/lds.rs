//! LDS (`ds_*`): loads, stores, two-address forms, atomics (performed per
//! lane in lane order, one valid order of the hardware's), and the
//! cross-lane moves that use the LDS crossbar without touching memory
//! (ds_swizzle_b32, ds_permute_b32, ds_bpermute_b32). Every access is
//! bounds-checked against the workgroup's allocation: out of range is a
//! fault, not a silent drop.

use super::atomic::{self, AOp};
use super::fault::{Flow, IsaFault};
use super::program::Inst;
use super::vmem::{d16_of, D16};
use super::wave::{Lanes, Wave, MAX_LANES};
use super::Ctx;

/// A DS operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DOp {
    /// `d16`: a byte or short into one half of the VGPR, the other kept.
    Load {
        bytes: u8,
        signed: bool,
        d16: D16,
    },
    /// `d16`: the high half's byte or short is stored.
    Store {
        bytes: u8,
        d16: D16,
    },
    /// Two loads/stores at offset0 and offset1 (in units of the element
    /// size, times 64 for the stride64 forms).
    Load2 {
        bytes: u8,
        st64: bool,
    },
    Store2 {
        bytes: u8,
        st64: bool,
    },
    Atomic {
        op: AOp,
        wide: bool,
        rtn: bool,
        /// gfx10 ds_cmpst: DATA0 is the compare value, DATA1 the new one
        /// (gfx11's ds_cmpstore swapped them).
        cmp_first: bool,
    },
    Swizzle,
    Permute,
    Bpermute,
    Nop,
}

fn width(s: &str) -> Option<(u8, bool)> {
    Some(match s {
        "b8" | "u8" => (1, false),
        "i8" => (1, true),
        "b16" | "u16" => (2, false),
        "i16" => (2, true),
        "b32" => (4, false),
        "b64" => (8, false),
        "b96" => (12, false),
        "b128" => (16, false),
        _ => return None,
    })
}

/// The DS operation `name` names, if implemented.
pub(crate) fn prepare(name: &str) -> Option<DOp> {
    let r = name.strip_prefix("ds_")?;
    match r {
        "swizzle_b32" => return Some(DOp::Swizzle),
        "permute_b32" => return Some(DOp::Permute),
        "bpermute_b32" => return Some(DOp::Bpermute),
        "nop" => return Some(DOp::Nop),
        _ => {}
    }
    for (p, two, st64) in [
        ("load_2addr_stride64_", true, true),
        ("read2st64_", true, true),
        ("load_2addr_", true, false),
        ("read2_", true, false),
    ] {
        if let Some(w) = r.strip_prefix(p) {
            let (bytes, _) = width(w)?;
            return (two && matches!(bytes, 4 | 8)).then_some(DOp::Load2 { bytes, st64 });
        }
    }
    for (p, st64) in [
        ("store_2addr_stride64_", true),
        ("write2st64_", true),
        ("store_2addr_", false),
        ("write2_", false),
    ] {
        if let Some(w) = r.strip_prefix(p) {
            let (bytes, _) = width(w)?;
            return matches!(bytes, 4 | 8).then_some(DOp::Store2 { bytes, st64 });
        }
    }
    if let Some(w) = r.strip_prefix("load_").or_else(|| r.strip_prefix("read_")) {
        let (w, d16) = d16_of(w);
        let (bytes, signed) = width(w)?;
        return (d16 == D16::No || bytes <= 2).then_some(DOp::Load { bytes, signed, d16 });
    }
    if let Some(w) = r
        .strip_prefix("store_")
        .or_else(|| r.strip_prefix("write_"))
    {
        let (w, d16) = d16_of(w);
        let (bytes, _) = width(w)?;
        // Only high-half stores exist among the d16 forms.
        let fits = match d16 {
            D16::No => true,
            D16::Hi => bytes <= 2,
            D16::Lo => false,
        };
        return fits.then_some(DOp::Store { bytes, d16 });
    }
    // Atomics: `<op>[_rtn]_<type>`; compare-stores by their own names.
    let (cmp_first, rest) = match r {
        "cmpst_b32" | "cmpst_rtn_b32" | "cmpst_b64" | "cmpst_rtn_b64" => (true, r),
        _ => (false, r),
    };
    let rtn = rest.contains("_rtn_");
    let plain = rest.replacen("_rtn_", "_", 1);
    let plain = match plain.as_str() {
        "cmpst_b32" | "cmpstore_b32" => "cmpswap_b32".to_string(),
        "cmpst_b64" | "cmpstore_b64" => "cmpswap_b64".to_string(),
        "wrxchg_b32" | "storexchg_b32" => "swap_b32".to_string(),
        "wrxchg_b64" | "storexchg_b64" => "swap_b64".to_string(),
        _ => plain,
    };
    let (op, wide) = atomic::parse(&plain)?;
    Some(DOp::Atomic {
        op,
        wide,
        rtn,
        cmp_first,
    })
}

#[inline]
fn check(ctx: &Ctx<'_>, at: u64, len: usize) -> Result<usize, IsaFault> {
    let end = at.checked_add(len as u64);
    match end {
        Some(e) if e <= ctx.lds.len() as u64 => Ok(at as usize),
        _ => Err(IsaFault::Lds {
            offset: at,
            len,
            lds_bytes: ctx.lds.len(),
        }),
    }
}

/// Execute one DS instruction.
pub(crate) fn execute(
    wave: &mut Wave,
    inst: &Inst,
    op: DOp,
    ctx: &mut Ctx<'_>,
) -> Result<Flow, IsaFault> {
    let w0 = inst.words[0];
    let w1 = inst.words[1];
    let (off0, off1) = (w0 & 0xFF, (w0 >> 8) & 0xFF);
    let offset = w0 & 0xFFFF;
    let addr_r = (w1 & 0xFF) as u16;
    let data0 = ((w1 >> 8) & 0xFF) as u16;
    let data1 = ((w1 >> 16) & 0xFF) as u16;
    let vdst = ((w1 >> 24) & 0xFF) as u16;
    let exec = wave.exec;
    let lanes = wave.lanes;
    let active = |l: usize| exec >> l & 1 != 0;
    match op {
        DOp::Nop => {}
        DOp::Load { bytes, signed, d16 } => {
            let addrs = *wave.v(addr_r)?;
            let n = usize::from(bytes).div_ceil(4);
            wave.v(vdst + n as u16 - 1)?;
            for l in (0..lanes).filter(|&l| active(l)) {
                let at = check(ctx, u64::from(addrs[l]) + u64::from(offset), bytes.into())?;
                let src = &ctx.lds[at..at + usize::from(bytes)];
                match bytes {
                    1 | 2 => {
                        let v = if bytes == 1 {
                            if signed {
                                src[0] as i8 as i32 as u32
                            } else {
                                u32::from(src[0])
                            }
                        } else {
                            let h = u16::from_le_bytes([src[0], src[1]]);
                            if signed {
                                h as i16 as i32 as u32
                            } else {
                                u32::from(h)
                            }
                        };
                        let old = wave.vgpr[vdst as usize][l];
                        // d16: the value as 16 bits into its half.
                        wave.vgpr[vdst as usize][l] = match d16 {
                            D16::No => v,
                            D16::Lo => (old & 0xFFFF_0000) | (v & 0xFFFF),
                            D16::Hi => (old & 0xFFFF) | (v << 16),
                        };
                    }
                    _ => {
                        for (i, c) in src.chunks_exact(4).enumerate() {
                            wave.vgpr[vdst as usize + i][l] =
                                u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                        }
                    }
                }
            }
        }
        DOp::Store { bytes, d16 } => {
            let addrs = *wave.v(addr_r)?;
            let n = usize::from(bytes).div_ceil(4);
            wave.v(data0 + n as u16 - 1)?;
            for l in (0..lanes).filter(|&l| active(l)) {
                let at = check(ctx, u64::from(addrs[l]) + u64::from(offset), bytes.into())?;
                let mut buf = [0u8; 16];
                for i in 0..n {
                    buf[4 * i..4 * i + 4]
                        .copy_from_slice(&wave.vgpr[data0 as usize + i][l].to_le_bytes());
                }
                if d16 == D16::Hi {
                    buf.copy_within(2..4, 0);
                }
                ctx.lds[at..at + usize::from(bytes)].copy_from_slice(&buf[..usize::from(bytes)]);
            }
        }
        DOp::Load2 { bytes, st64 } | DOp::Store2 { bytes, st64 } => {
            let load = matches!(op, DOp::Load2 { .. });
            let unit = u64::from(bytes) * if st64 { 64 } else { 1 };
            let n = usize::from(bytes) / 4;
            let addrs = *wave.v(addr_r)?;
            if load {
                wave.v(vdst + 2 * n as u16 - 1)?;
            } else {
                wave.v(data0 + n as u16 - 1)?;
                wave.v(data1 + n as u16 - 1)?;
            }
            for l in (0..lanes).filter(|&l| active(l)) {
                for (k, o) in [off0, off1].into_iter().enumerate() {
                    let at = check(ctx, u64::from(addrs[l]) + u64::from(o) * unit, bytes.into())?;
                    for i in 0..n {
                        let b = at + 4 * i;
                        if load {
                            let c = &ctx.lds[b..b + 4];
                            wave.vgpr[vdst as usize + k * n + i][l] =
                                u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                        } else {
                            let src = if k == 0 { data0 } else { data1 };
                            let v = wave.vgpr[src as usize + i][l];
                            ctx.lds[b..b + 4].copy_from_slice(&v.to_le_bytes());
                        }
                    }
                }
            }
        }
        DOp::Atomic {
            op,
            wide,
            rtn,
            cmp_first,
        } => {
            let bytes = if wide { 8 } else { 4 };
            let addrs = *wave.v(addr_r)?;
            let read64 = |w: &Wave, r: u16, l: usize| -> Result<u64, IsaFault> {
                let lo = u64::from(w.v(r)?[l]);
                Ok(if wide {
                    lo | (u64::from(w.v(r + 1)?[l]) << 32)
                } else {
                    lo
                })
            };
            let two = matches!(op, AOp::Cmpswap | AOp::Mskor);
            for l in (0..lanes).filter(|&l| active(l)) {
                let at = check(ctx, u64::from(addrs[l]) + u64::from(offset), bytes)?;
                let mut old = [0u8; 8];
                old[..bytes].copy_from_slice(&ctx.lds[at..at + bytes]);
                let old = u64::from_le_bytes(old);
                let (mut d, mut d2) = (read64(wave, data0, l)?, 0);
                if two {
                    d2 = read64(wave, data1, l)?;
                    if cmp_first || op == AOp::Mskor {
                        // ds_cmpst: (cmp, new); ds_mskor: (mask, or) maps
                        // to apply's (data = mask, data2 = or).
                        if cmp_first {
                            std::mem::swap(&mut d, &mut d2);
                        }
                    }
                }
                let new = atomic::apply(op, wide, old, d, d2);
                ctx.lds[at..at + bytes].copy_from_slice(&new.to_le_bytes()[..bytes]);
                if rtn {
                    wave.v_mut(vdst + u16::from(wide))?;
                    wave.vgpr[vdst as usize][l] = old as u32;
                    if wide {
                        wave.vgpr[vdst as usize + 1][l] = (old >> 32) as u32;
                    }
                }
            }
        }
        DOp::Swizzle => swizzle(wave, offset, addr_r, vdst)?,
        DOp::Permute | DOp::Bpermute => {
            let span = permute_span(wave, op).ok_or_else(|| IsaFault::Unimplemented {
                mnemonic: format!("{} in wave64", inst.decoded.mnemonic()),
                family: wave.isa.family,
            })?;
            let addrs = *wave.v(addr_r)?;
            let src = *wave.v(data0)?;
            let mut out: Lanes = *wave.v(vdst)?;
            // The lane an address names, within the lane's span of lanes.
            let pick = |l: usize, a: u32| {
                (l & !(span - 1)) | ((a.wrapping_add(offset) >> 2) as usize & (span - 1))
            };
            if op == DOp::Bpermute {
                // Each active lane reads the lane its address selects; a
                // disabled source lane reads as zero.
                for l in (0..lanes).filter(|&l| active(l)) {
                    let s = pick(l, addrs[l]);
                    out[l] = if active(s) { src[s] } else { 0 };
                }
            } else {
                // Each active lane writes its value to the lane its address
                // selects (higher lanes win a collision).
                let mut tmp = [0u32; MAX_LANES];
                for l in (0..lanes).filter(|&l| active(l)) {
                    tmp[pick(l, addrs[l])] = src[l];
                }
                for l in (0..lanes).filter(|&l| active(l)) {
                    out[l] = tmp[l];
                }
            }
            *wave.v_mut(vdst)? = out;
        }
    }
    Ok(Flow::Next)
}

/// How many lanes one ds_permute/ds_bpermute routes among: the whole wave
/// in wave32; in wave64, gfx10 and gfx11 run the crossbar once per 32-lane
/// half, so ds_bpermute reads lane `(l & 32) | (index & 31)` of its own
/// half, while gfx12's covers all 64 lanes. Source: LLVM 19+
/// `GCNSubtarget::supportsWaveWideBPermute()` (true for gfx12 or wave32,
/// false for gfx10/gfx11 wave64), which is why LLVM's wave64 shuffle
/// lowering on gfx10/gfx11 (`SITargetLowering::lowerWaveShuffle`) permutes
/// both the value and its `v_permlane64_b32` half-swap and selects by
/// whether the index is in the other half. `None`: ds_permute_b32 in wave64,
/// whose forward routing across halves no public source states (refused).
fn permute_span(wave: &Wave, op: DOp) -> Option<usize> {
    match (wave.lanes, op) {
        (32, _) => Some(32),
        (_, DOp::Bpermute) => Some(match wave.isa.family.facts().isa.wave_wide_bpermute {
            false => 32,
            true => 64,
        }),
        _ => None,
    }
}

/// ds_swizzle_b32: the quad-permute mode (offset bit 15) and the bit-mask
/// mode (and/or/xor masks over groups of 32 lanes). Other modes fault.
fn swizzle(wave: &mut Wave, offset: u32, src: u16, vdst: u16) -> Result<(), IsaFault> {
    let exec = wave.exec;
    let lanes = wave.lanes;
    let quad = offset & 0x8000 != 0;
    if quad && offset & 0x7F00 != 0 {
        return Err(IsaFault::Unimplemented {
            mnemonic: format!("ds_swizzle_b32 offset:{offset:#x} (rotate/FFT modes)"),
            family: wave.isa.family,
        });
    }
    let (and, or, xor) = (
        (offset & 0x1F) as usize,
        ((offset >> 5) & 0x1F) as usize,
        ((offset >> 10) & 0x1F) as usize,
    );
    let data = *wave.v(src)?;
    let mut out: Lanes = *wave.v(vdst)?;
    for l in 0..lanes {
        if exec >> l & 1 != 0 {
            let s = if quad {
                (l & !3) | ((offset as usize >> (2 * (l & 3))) & 3)
            } else {
                (l & !31) | ((((l & 31) & and) | or) ^ xor)
            };
            out[l] = if exec >> s & 1 != 0 { data[s] } else { 0 };
        }
    }
    *wave.v_mut(vdst)? = out;
    Ok(())
}
