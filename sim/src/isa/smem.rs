//! Scalar memory (SMEM): s_load / s_buffer_load through the scalar cache
//! (K$: recorded as scalar reads, so data an earlier dispatch wrote is
//! stale unless a boundary invalidated K$), and the cache maintenance ops,
//! which have nothing to do in a model that keeps no cache contents.

use super::buffer::Resource;
use super::fault::{Flow, IsaFault};
use super::program::Inst;
use super::wave::Wave;
use super::Ctx;
use crate::trace::AccessKind;

/// A scalar memory operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MOp {
    /// s_load of `n` dwords into consecutive SGPRs.
    Load(u8),
    /// gfx12 s_load_u8/i8/u16/i16: `bytes` wide, sign-extended when `signed`.
    LoadSub { bytes: u8, signed: bool },
    /// s_buffer_load of `n` dwords through a buffer resource.
    BufferLoad(u8),
    /// s_memtime, s_memrealtime (gfx10): the clock (`super::clock`) into
    /// an SGPR pair.
    Clock,
    /// s_dcache_inv, s_gl1_inv, s_dcache_wb, prefetches: no cache contents
    /// are modelled, so nothing to do (the ordering model handles K$).
    Nothing,
}

fn dwords(suffix: &str) -> Option<u8> {
    Some(match suffix {
        "dword" | "b32" => 1,
        "dwordx2" | "b64" => 2,
        "dwordx3" | "b96" => 3,
        "dwordx4" | "b128" => 4,
        "dwordx8" | "b256" => 8,
        "dwordx16" | "b512" => 16,
        _ => return None,
    })
}

/// The SMEM operation `name` names, if implemented.
pub(crate) fn prepare(name: &str) -> Option<MOp> {
    if let Some(s) = name.strip_prefix("s_load_") {
        return Some(match s {
            "u8" => MOp::LoadSub {
                bytes: 1,
                signed: false,
            },
            "i8" => MOp::LoadSub {
                bytes: 1,
                signed: true,
            },
            "u16" => MOp::LoadSub {
                bytes: 2,
                signed: false,
            },
            "i16" => MOp::LoadSub {
                bytes: 2,
                signed: true,
            },
            _ => MOp::Load(dwords(s)?),
        });
    }
    if let Some(s) = name.strip_prefix("s_buffer_load_") {
        return dwords(s).map(MOp::BufferLoad);
    }
    match name {
        "s_dcache_inv"
        | "s_gl1_inv"
        | "s_dcache_wb"
        | "s_prefetch_inst"
        | "s_prefetch_data"
        | "s_prefetch_inst_pc_rel"
        | "s_prefetch_data_pc_rel" => Some(MOp::Nothing),
        "s_memtime" | "s_memrealtime" => Some(MOp::Clock),
        _ => None,
    }
}

/// Execute one SMEM instruction.
pub(crate) fn execute(
    wave: &mut Wave,
    inst: &Inst,
    op: MOp,
    ctx: &mut Ctx<'_>,
) -> Result<Flow, IsaFault> {
    if op == MOp::Nothing {
        return Ok(Flow::Next);
    }
    let offset = inst.imm;
    // No SOFFSET (null) and an SGPR-pair base are the usual forms: read
    // without the general operand reads.
    let soffset = match inst.src[1] {
        super::operand::Src::Null => 0,
        s => i64::from(wave.scalar(s)?),
    };
    let first = match inst.dst {
        super::operand::Dst::Sgpr(n) => n as usize,
        other => {
            return Err(IsaFault::Operand {
                mnemonic: inst.decoded.mnemonic(),
                why: format!("destination {other:?} is not an SGPR range"),
            })
        }
    };
    let base_src = inst.src[0];
    // Staging for the forms that do not load straight into the SGPRs
    // (declared per form: the common one clears none).
    match op {
        MOp::Load(n) => {
            let base = match base_src {
                super::operand::Src::Sgpr(b) if usize::from(b) + 1 < super::wave::SGPR_SLOTS => {
                    let b = usize::from(b);
                    u64::from(wave.sgpr[b]) | u64::from(wave.sgpr[b + 1]) << 32
                }
                s => wave.scalar64(s, false)?,
            };
            let addr = base.wrapping_add_signed(offset + soffset) & !3;
            let n = usize::from(n);
            if let Some(dst) = wave.sgpr[..super::wave::VCC_LO + 2].get_mut(first..first + n) {
                // The common case: straight into the SGPRs.
                ctx.mem.read_u32s(addr, dst)?;
                ctx.trace.record(AccessKind::ScalarRead, addr, 4 * n as u64);
                return Ok(Flow::Next);
            }
            let mut buf = [0u8; 64];
            let bytes = &mut buf[..4 * n];
            ctx.mem.read(addr, bytes)?;
            ctx.trace
                .record(AccessKind::ScalarRead, addr, bytes.len() as u64);
            write_dwords(wave, inst, first, bytes)?;
        }
        MOp::LoadSub { bytes, signed } => {
            let addr = wave
                .scalar64(base_src, false)?
                .wrapping_add_signed(offset + soffset);
            let mut buf = [0u8; 4];
            let b = &mut buf[..bytes as usize];
            ctx.mem.read(addr, b)?;
            ctx.trace
                .record(AccessKind::ScalarRead, addr, u64::from(bytes));
            let v = match (bytes, signed) {
                (1, false) => u32::from(b[0]),
                (1, true) => b[0] as i8 as i32 as u32,
                (_, false) => u32::from(u16::from_le_bytes([b[0], b[1]])),
                (_, true) => u16::from_le_bytes([b[0], b[1]]) as i16 as i32 as u32,
            };
            write_dwords(wave, inst, first, &v.to_le_bytes())?;
        }
        MOp::BufferLoad(n) => {
            let rsrc = Resource::read(wave, base_src)?;
            let mut buf = [0u8; 64];
            let start = (offset + soffset).max(0) as u64 & !3;
            for i in 0..n as u64 {
                let at = start + 4 * i;
                let slot = &mut buf[4 * i as usize..4 * i as usize + 4];
                // Dwords past NUM_RECORDS read as zero, as the hardware
                // returns them.
                if at + 4 <= u64::from(rsrc.num_records) {
                    let addr = rsrc.base.wrapping_add(at);
                    ctx.mem.read(addr, slot)?;
                    ctx.trace.record(AccessKind::ScalarRead, addr, 4);
                } else {
                    slot.fill(0);
                }
            }
            write_dwords(wave, inst, first, &buf[..4 * n as usize])?;
        }
        MOp::Clock => {
            let t = super::clock::now(wave);
            write_dwords(wave, inst, first, &t.to_le_bytes())?;
        }
        MOp::Nothing => {}
    }
    Ok(Flow::Next)
}

fn write_dwords(wave: &mut Wave, inst: &Inst, first: usize, bytes: &[u8]) -> Result<(), IsaFault> {
    let n = bytes.len().div_ceil(4);
    if first + n > super::wave::VCC_LO + 2 {
        return Err(IsaFault::Operand {
            mnemonic: inst.decoded.mnemonic(),
            why: format!(
                "destination s[{first}:{}] is past the SGPR file",
                first + n - 1
            ),
        });
    }
    for (i, c) in bytes.chunks(4).enumerate() {
        let mut w = [0u8; 4];
        w[..c.len()].copy_from_slice(c);
        wave.sgpr[first + i] = u32::from_le_bytes(w);
    }
    Ok(())
}
