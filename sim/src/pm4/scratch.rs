//! The scratch ring of a direct PM4 dispatch, from what its IB programmed,
//! by the hardware's rules (`relaunch_facts::scratch`, `ScratchRules`):
//! COMPUTE_PGM_RSRC2.SCRATCH_EN gives each wave a slot of the ring
//! COMPUTE_TMPRING_SIZE describes (WAVES slots, per shader engine from
//! gfx11, of WAVESIZE granules); the slot's base reaches the wave as the
//! private segment wave byte offset SGPR added to the V# in s[0:3] or to
//! flat scratch init (gfx10, both user SGPRs the IB wrote), or as
//! FLAT_SCRATCH from COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI (gfx11, gfx12:
//! architected flat scratch). A dispatch whose ring cannot hold its waves
//! is refused before it runs; one reaching past mapped memory is a VM
//! fault (on hardware, the first wave given such a slot faults).

use relaunch_facts::family::FlatScratch;
use relaunch_facts::regs::{off, RSRC2_SCRATCH_EN};
use relaunch_facts::scratch::srd_base;
use relaunch_facts::sgprs::DeliveredSgprs;

use super::check::{need, ShFile, StateError};
use super::Pm4ErrorKind;
use crate::device::{KernelEntry, SimDevice};
use crate::isa::scratch::per_wave_bytes;
use crate::isa::ScratchSetup;
use crate::memory::Access;

/// Shader engines the simulated GPU reports (`HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES`).
pub const SHADER_ENGINES: u32 = 1;

/// The ring a dispatch of `kernel` runs with under RSRC2 `rsrc2`, or `None`
/// when SCRATCH_EN is clear (its waves get no slot). `user`: the user
/// SGPRs as the IB wrote them, laid out as `sgprs` says; `waves`: one
/// workgroup's waves.
pub(crate) fn ring(
    device: &SimDevice,
    regs: &ShFile,
    kernel: &KernelEntry,
    rsrc2: u32,
    user: &[u32],
    sgprs: DeliveredSgprs,
    waves: u32,
) -> Result<Option<ScratchSetup>, Pm4ErrorKind> {
    let family = device.family();
    let kd = &kernel.descriptor;
    let invalid = |reason: String| StateError::Invalid {
        kernel: kernel.symbol.clone(),
        reason,
    };
    if RSRC2_SCRATCH_EN.get(rsrc2) == 0 {
        if kd.scratch_enabled() {
            return Err(invalid(
                "the descriptor enables scratch (RSRC2.SCRATCH_EN) but the programmed \
                 COMPUTE_PGM_RSRC2 clears it: its waves would get no scratch slot"
                    .into(),
            )
            .into());
        }
        return Ok(None);
    }
    let tmpring = need(regs, family, off::COMPUTE_TMPRING_SIZE)?;
    let rules = family.scratch();
    let (base, srd) = match rules.flat_scratch {
        FlatScratch::Architected => {
            let lo = need(regs, family, off::COMPUTE_DISPATCH_SCRATCH_BASE_LO)?;
            let hi = need(regs, family, off::COMPUTE_DISPATCH_SCRATCH_BASE_HI)?;
            let base = ScratchSetup::dispatch_scratch_base(family, lo, hi)
                .ok_or_else(|| invalid(format!("{family} has no dispatch scratch base")))?;
            (base, [0; 4])
        }
        FlatScratch::Init => {
            // The waves find the ring only through the user SGPRs the IB wrote.
            let srd =
                (sgprs.private_segment_dwords == 4).then(|| [user[0], user[1], user[2], user[3]]);
            let init = sgprs
                .flat_scratch_init_at()
                .map(|at| u64::from(user[at as usize]) | u64::from(user[at as usize + 1]) << 32);
            let base = match (srd.map(srd_base), init) {
                (Some(a), Some(b)) if a != b => {
                    return Err(invalid(format!(
                        "the private segment buffer's base {a:#x} and flat scratch init \
                         {b:#x} differ: two scratch rings for one dispatch are not modelled"
                    ))
                    .into())
                }
                (Some(a), _) | (None, Some(a)) => a,
                (None, None) => {
                    return Err(invalid(
                        "RSRC2.SCRATCH_EN is set but the descriptor asks for neither the \
                         private segment buffer nor flat scratch init: on gfx10 no scratch \
                         base reaches the waves"
                            .into(),
                    )
                    .into())
                }
            };
            (base, srd.unwrap_or([0; 4]))
        }
    };
    let mut setup = ScratchSetup::from_tmpring(family, tmpring, base, srd);
    if rules.waves_per_engine {
        setup.slots = setup.slots.saturating_mul(SHADER_ENGINES);
    }
    let need_bytes = per_wave_bytes(kd.private_segment_fixed_size, !kd.wave32());
    if setup.slots == 0 || setup.wave_bytes < need_bytes.max(1) {
        return Err(invalid(format!(
            "COMPUTE_TMPRING_SIZE {tmpring:#010x} gives {} wave slots of {} bytes but a wave \
             needs {need_bytes} bytes ({} per work-item): waves would overrun each other's \
             scratch",
            setup.slots, setup.wave_bytes, kd.private_segment_fixed_size
        ))
        .into());
    }
    if setup.slots < waves {
        return Err(invalid(format!(
            "COMPUTE_TMPRING_SIZE {tmpring:#010x} gives {} wave slots but a workgroup has \
             {waves} waves: the workgroup could never launch",
            setup.slots
        ))
        .into());
    }
    let bytes = usize::try_from(setup.bytes()).unwrap_or(usize::MAX);
    device.memory.check(setup.base, bytes, Access::Write)?;
    Ok(Some(setup))
}
