//! Program control: SOPP (branches, s_endpgm, barriers, waits, messages,
//! hints) and the SOPK hardware-register moves (s_getreg / s_setreg) and
//! waits. Memory is performed synchronously, so every wait counter is
//! already satisfied: the waits are decoded and checked, then go on.

use relaunch_facts::family::TrapRule;
use relaunch_facts::isa::hwreg::ShaderCycles;
use relaunch_isa::Family;

use super::fault::{Flow, IsaFault};
use super::program::Inst;
use super::wave::Wave;

/// A control instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum COp {
    /// s_nop, s_clause, s_delay_alu, waits, prefetch hints, priorities:
    /// nothing to do in a model without pipelines.
    Nothing,
    End,
    Branch,
    CbranchScc0,
    CbranchScc1,
    CbranchVccz,
    CbranchVccnz,
    CbranchExecz,
    CbranchExecnz,
    /// s_barrier, gfx12's s_barrier_wait.
    Barrier,
    /// gfx12's s_barrier_signal -1: the arrival half of the split barrier,
    /// paired with the s_barrier_wait that follows it.
    BarrierSignal,
    Sendmsg,
    /// s_sendmsg_rtn_b32 / _b64 (gfx11+): a message whose answer lands in
    /// the destination (`dwords` of it).
    SendmsgRtn {
        dwords: u8,
    },
    Trap,
    Sethalt,
    RoundMode,
    DenormMode,
    Getreg,
    Setreg,
    SetregImm,
    /// s_code_end: padding after the last kernel, never executed.
    CodeEnd,
}

/// The control operation `name` names, if implemented.
pub(crate) fn prepare(name: &str) -> Option<COp> {
    use COp::*;
    Some(match name {
        "s_nop"
        | "s_clause"
        | "s_delay_alu"
        | "s_waitcnt"
        | "s_waitcnt_vscnt"
        | "s_waitcnt_vmcnt"
        | "s_waitcnt_expcnt"
        | "s_waitcnt_lgkmcnt"
        | "s_waitcnt_depctr"
        | "s_wait_loadcnt"
        | "s_wait_storecnt"
        | "s_wait_samplecnt"
        | "s_wait_bvhcnt"
        | "s_wait_expcnt"
        | "s_wait_dscnt"
        | "s_wait_kmcnt"
        | "s_wait_loadcnt_dscnt"
        | "s_wait_storecnt_dscnt"
        | "s_wait_alu"
        | "s_wait_idle"
        | "s_inst_prefetch"
        | "s_set_inst_prefetch_distance"
        | "s_setprio"
        // A wave's s_sleep ends here at once (no pipelines, no clock to
        // wait on), so there is never a sleeping wave for s_wakeup to wake.
        | "s_sleep"
        | "s_wakeup"
        | "s_icache_inv"
        | "s_incperflevel"
        | "s_decperflevel"
        | "s_ttracedata"
        | "s_version" => Nothing,
        "s_endpgm" => End,
        "s_branch" => Branch,
        "s_cbranch_scc0" => CbranchScc0,
        "s_cbranch_scc1" => CbranchScc1,
        "s_cbranch_vccz" => CbranchVccz,
        "s_cbranch_vccnz" => CbranchVccnz,
        "s_cbranch_execz" => CbranchExecz,
        "s_cbranch_execnz" => CbranchExecnz,
        "s_barrier" | "s_barrier_wait" => Barrier,
        "s_barrier_signal" => BarrierSignal,
        "s_sendmsg" => Sendmsg,
        "s_sendmsg_rtn_b32" => SendmsgRtn { dwords: 1 },
        "s_sendmsg_rtn_b64" => SendmsgRtn { dwords: 2 },
        "s_trap" => Trap,
        "s_sethalt" => Sethalt,
        "s_round_mode" => RoundMode,
        "s_denorm_mode" => DenormMode,
        "s_getreg_b32" => Getreg,
        "s_setreg_b32" => Setreg,
        "s_setreg_imm32_b32" => SetregImm,
        "s_code_end" => CodeEnd,
        _ => return None,
    })
}

/// True when control can go on after `op` to the next instruction.
pub(crate) fn falls_through(op: COp) -> bool {
    !matches!(op, COp::End | COp::Branch | COp::CodeEnd)
}

/// True when `op` branches to its SIMM16 target.
pub(crate) fn branches(op: COp) -> bool {
    matches!(
        op,
        COp::Branch
            | COp::CbranchScc0
            | COp::CbranchScc1
            | COp::CbranchVccz
            | COp::CbranchVccnz
            | COp::CbranchExecz
            | COp::CbranchExecnz
    )
}

/// The 16-bit immediate of SOPP/SOPK.
#[inline]
fn simm16(inst: &Inst) -> u32 {
    inst.words[0] & 0xFFFF
}

/// Hardware register ids (`hwreg(...)`) kernels read.
mod hwreg {
    pub const MODE: u32 = 1;
    pub const STATUS: u32 = 2;
    pub const GPR_ALLOC: u32 = 5;
    pub const LDS_ALLOC: u32 = 6;
    pub const HW_ID1: u32 = 23;
    pub const HW_ID2: u32 = 24;
}

/// Execute one control instruction.
pub(crate) fn execute(
    wave: &mut Wave,
    inst: &Inst,
    op: COp,
    interrupt: Option<&dyn Fn(u32)>,
) -> Result<Flow, IsaFault> {
    let take = |cond: bool| {
        if cond {
            Flow::Jump(inst.target)
        } else {
            Flow::Next
        }
    };
    Ok(match op {
        COp::Nothing => Flow::Next,
        COp::End => Flow::End,
        COp::Branch => Flow::Jump(inst.target),
        COp::CbranchScc0 => take(!wave.scc),
        COp::CbranchScc1 => take(wave.scc),
        COp::CbranchVccz => take(wave.vcc() == 0),
        COp::CbranchVccnz => take(wave.vcc() != 0),
        COp::CbranchExecz => take(wave.exec == 0),
        COp::CbranchExecnz => take(wave.exec != 0),
        COp::Barrier => Flow::Barrier,
        COp::BarrierSignal => barrier_signal(wave, inst)?,
        COp::Sendmsg => sendmsg(wave, inst, interrupt)?,
        COp::SendmsgRtn { dwords } => sendmsg_rtn(wave, inst, dwords)?,
        // "TRAP_EN: indicates that a trap handler is present. When set to
        // zero, traps are never taken" (RDNA ISA guides, STATUS): without a
        // handler s_trap does nothing. With one, ROCr's handler reports the
        // trap as a queue error, which is what this fault becomes.
        COp::Trap if !wave.trap_en => Flow::Next,
        COp::Trap => {
            return Err(IsaFault::Trap(format!(
                "s_trap {:#x}: the kernel raised a trap and the runtime's trap handler \
                 stopped the queue",
                simm16(inst) & 0xFF
            )))
        }
        COp::Sethalt => {
            if simm16(inst) & 1 != 0 {
                return Err(IsaFault::Trap(
                    "s_sethalt 1: the kernel halted its wave".into(),
                ));
            }
            Flow::Next
        }
        COp::RoundMode => {
            wave.mode = (wave.mode & !0xF) | (simm16(inst) & 0xF);
            Flow::Next
        }
        COp::DenormMode => {
            wave.mode = (wave.mode & !0xF0) | ((simm16(inst) & 0xF) << 4);
            Flow::Next
        }
        COp::Getreg => {
            let (id, offset, size) = hwreg_fields(simm16(inst));
            let full = read_hwreg(wave, inst, id)?;
            let v = (u64::from(full) >> offset) & ((1u64 << size) - 1);
            wave.write_scalar(inst.dst, v as u32)?;
            Flow::Next
        }
        COp::Setreg | COp::SetregImm => {
            let (id, offset, size) = hwreg_fields(simm16(inst));
            let value = match op {
                COp::SetregImm => inst.decoded.literal.unwrap_or(0),
                _ => wave.scalar(inst.src[2])?,
            };
            let mask = (((1u64 << size) - 1) << offset) as u32;
            let merge = |old: u32| (old & !mask) | ((value << offset) & mask);
            match flat_scratch_half(wave, id) {
                // The gfx10 prologue writes FLAT_SCRATCH this way.
                Some(hi) => {
                    let shift = if hi { 32 } else { 0 };
                    let old = (wave.flat_scratch >> shift) as u32;
                    wave.flat_scratch = (wave.flat_scratch & !(0xFFFF_FFFFu64 << shift))
                        | (u64::from(merge(old)) << shift);
                }
                None if id == hwreg::MODE => wave.mode = merge(wave.mode),
                None => {
                    return Err(IsaFault::Unimplemented {
                        mnemonic: format!("{} of hwreg {id}", inst.decoded.mnemonic()),
                        family: wave.isa.family,
                    })
                }
            }
            Flow::Next
        }
        COp::CodeEnd => {
            return Err(IsaFault::Control(
                "control reached s_code_end: the wave ran past the end of its kernel".into(),
            ))
        }
    })
}

/// STATUS.TRAP_EN of a dispatch's waves: is a trap handler present?
/// gfx10/gfx11: COMPUTE_PGM_RSRC2.TRAP_PRESENT (bit 6) as the waves got it
/// (the CP sets it for AQL dispatches when the runtime installed a
/// handler). gfx12 has no such bit (LLVM's AMDHSAKernelDescriptor.h:
/// bit 6 is ENABLE_TRAP_HANDLER on GFX6-GFX11, ENABLE_DYNAMIC_VGPR on
/// GFX120); there the trap handler is the per-process TBA/TMA the kernel
/// driver hands the scheduler firmware when the runtime registered one
/// (amdkfd `add_queue_mes`: `queue_input.tba_addr = qpd->tba_addr`,
/// `trap_en` set but for a debugger workaround; with the HWS path,
/// `pm_map_process_v9` sets SQ_SHADER_TBA_HI.TRAP_EN when `tba_addr` is
/// set), so the runtime's state decides. How the firmware turns that into
/// a wave's TRAP_EN is not public; this is the reading of the driver.
pub(crate) fn trap_enabled(family: Family, rsrc2: u32, trap_handler: bool) -> bool {
    match family.facts().dispatch.trap {
        TrapRule::Rsrc2Bit(bit) => bit.get(rsrc2) != 0,
        TrapRule::RuntimeState => trap_handler,
    }
}

/// hwreg(id, offset, size) from SIMM16: id 5:0, offset 10:6, size-1 15:11.
fn hwreg_fields(simm: u32) -> (u32, u32, u32) {
    (simm & 0x3F, (simm >> 6) & 0x1F, ((simm >> 11) & 0x1F) + 1)
}

/// Whether hwreg `id` is FLAT_SCRATCH's high (`Some(true)`) or low half
/// on the wave's family (`relaunch-facts`: gfx10 and gfx11 have them).
fn flat_scratch_half(wave: &Wave, id: u32) -> Option<bool> {
    let (lo, hi) = wave.isa.family.scratch().flat_scratch_hwregs?;
    (id == lo || id == hi).then_some(id == hi)
}

fn read_hwreg(wave: &Wave, inst: &Inst, id: u32) -> Result<u32, IsaFault> {
    if let Some(hi) = flat_scratch_half(wave, id) {
        return Ok((wave.flat_scratch >> if hi { 32 } else { 0 }) as u32);
    }
    match wave.isa.sub.shader_cycles() {
        ShaderCycles::Low20 { id: at } if at == id => {
            return Ok((super::clock::now(wave) & 0xF_FFFF) as u32)
        }
        ShaderCycles::Split { lo, .. } if lo == id => return Ok(super::clock::now(wave) as u32),
        ShaderCycles::Split { hi, .. } if hi == id => {
            return Ok((super::clock::now(wave) >> 32) as u32)
        }
        ShaderCycles::None | ShaderCycles::Low20 { .. } | ShaderCycles::Split { .. } => {}
    }
    Ok(match id {
        hwreg::MODE => wave.mode,
        // STATUS: SCC (bit 0), EXECZ (9), VCCZ (10), IN_BARRIER (11) and
        // HALT (13) are the only dynamic bits; a running wave is not halted.
        hwreg::STATUS => {
            u32::from(wave.scc)
                | (u32::from(wave.exec == 0) << 9)
                | (u32::from(wave.vcc() == 0) << 10)
        }
        // HW_ID1: WAVE_ID 4:0; the simulator places every wave on SIMD 0 of
        // WGP 0, SA 0, SE 0.
        hwreg::HW_ID1 => wave.wave_in_group & 0x1F,
        hwreg::HW_ID2 | hwreg::GPR_ALLOC | hwreg::LDS_ALLOC => {
            return Err(unimplemented_hwreg(wave, inst, id))
        }
        _ => return Err(unimplemented_hwreg(wave, inst, id)),
    })
}

#[cold]
fn unimplemented_hwreg(wave: &Wave, inst: &Inst, id: u32) -> IsaFault {
    IsaFault::Unimplemented {
        mnemonic: format!("{} of hwreg {id}", inst.decoded.mnemonic()),
        family: wave.isa.family,
    }
}

/// MSG_INTERRUPT: the message id every RDNA family gives the shader
/// interrupt (LLVM's SIDefines.h `ID_INTERRUPT`).
const MSG_INTERRUPT: u32 = 1;

/// s_sendmsg: MSG_INTERRUPT raises an interrupt whose data is M0 (device
/// code signalling the host: ockl stores an event id into a signal's
/// mailbox, then interrupts with its low bits) to the queue's handler;
/// MSG_DEALLOC_VGPRS (gfx11+, id 3) changes nothing here, the VGPRs are
/// released when the wave ends. Other messages belong to graphics stages
/// or traps.
fn sendmsg(wave: &Wave, inst: &Inst, interrupt: Option<&dyn Fn(u32)>) -> Result<Flow, IsaFault> {
    let id = simm16(inst) & 0xFF;
    let dealloc = wave.isa.family.facts().isa.dealloc_vgprs_msg == Some(id);
    if id == MSG_INTERRUPT {
        if let Some(raise) = interrupt {
            raise(wave.m0);
        }
        Ok(Flow::Next)
    } else if dealloc {
        Ok(Flow::Next)
    } else {
        Err(IsaFault::Unimplemented {
            mnemonic: format!("s_sendmsg with message id {id}"),
            family: wave.isa.family,
        })
    }
}

/// MSG_RTN_GET_REALTIME: the message id (SSRC0's field value, bits 7:0)
/// gfx11 and gfx12 give the real-time clock (LLVM's SIDefines.h
/// `ID_RTN_GET_REALTIME`).
const MSG_RTN_GET_REALTIME: u32 = 0x83;

/// s_sendmsg_rtn: MSG_RTN_GET_REALTIME answers with the clock
/// (`super::clock`; the b32 form its low half). The other messages
/// (doorbell, DDID, TMA/TBA, wave save) answer with state the simulator
/// does not model.
fn sendmsg_rtn(wave: &mut Wave, inst: &Inst, dwords: u8) -> Result<Flow, IsaFault> {
    let id = inst.words[0] & 0xFF;
    if id != MSG_RTN_GET_REALTIME {
        return Err(IsaFault::Unimplemented {
            mnemonic: format!("{} with message id {id:#x}", inst.decoded.mnemonic()),
            family: wave.isa.family,
        });
    }
    let t = super::clock::now(wave);
    match dwords {
        1 => wave.write_scalar(inst.dst, t as u32)?,
        _ => wave.write_scalar64(inst.dst, t)?,
    }
    Ok(Flow::Next)
}

/// gfx12 s_barrier_signal: only the workgroup barrier (-1) is modelled.
fn barrier_signal(wave: &Wave, inst: &Inst) -> Result<Flow, IsaFault> {
    match inst.src[0] {
        super::operand::Src::Int(-1) => Ok(Flow::Next),
        other => Err(IsaFault::Unimplemented {
            mnemonic: format!("s_barrier_signal of barrier {other:?} (only -1 is modelled)"),
            family: wave.isa.family,
        }),
    }
}
