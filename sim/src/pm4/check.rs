//! The DISPATCH_DIRECT check: what the hardware does with the SH state an
//! IB programmed, and whether the kernel at COMPUTE_PGM can run under it
//! (RSRC1/2/3 by each field's effect, user SGPR count and contents, LDS,
//! wave32, initiator bits, resource limits, block and grid dims). Register
//! facts, field effects, the user-SGPR layout and the target's limits come
//! from `relaunch-facts` (`rules` applies them); nothing here compares with
//! what relaunch's encoder emits.

use std::sync::Arc;

use relaunch_facts::regs::{off, table, RSRC2_USER_SGPR};
use relaunch_facts::sgprs::DeliveredSgprs;
use relaunch_facts::Family;

use super::Pm4ErrorKind;
use crate::device::{KernelEntry, SimDevice};
use crate::memory::Access;
use crate::twins::DispatchContext;

/// The SH register file of one IB (SET_SH_REG offsets 0..0x400).
pub(crate) struct ShFile {
    regs: Vec<Option<u32>>,
}

impl ShFile {
    pub(crate) fn new() -> Self {
        ShFile {
            regs: vec![None; 0x400],
        }
    }

    pub(crate) fn write(&mut self, offset: u32, values: &[u32]) {
        for (i, v) in values.iter().enumerate() {
            if let Some(slot) = self.regs.get_mut(offset as usize + i) {
                *slot = Some(*v);
            }
        }
    }

    fn get(&self, offset: u16) -> Option<u32> {
        self.regs.get(offset as usize).copied().flatten()
    }
}

/// Programmed state that does not match what the kernel needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    #[error(
        "{register} was not written in this IB before DISPATCH_DIRECT: a retained IB must \
         program every register its dispatches use"
    )]
    Unwritten { register: &'static str },
    #[error(
        "COMPUTE_PGM_LO/HI give code address {addr:#x}, where no loaded kernel's code starts{hint}"
    )]
    WrongCodeAddress { addr: u64, hint: String },
    #[error("kernel {kernel}: {register} is {found:#010x} but the descriptor needs {expected:#010x}{what}")]
    Mismatch {
        kernel: String,
        register: &'static str,
        found: u32,
        expected: u32,
        what: String,
    },
    #[error("kernel {kernel}: {reason}")]
    Invalid { kernel: String, reason: String },
}

/// A dispatch whose state checked out.
pub(crate) struct Checked {
    pub kernel: Arc<KernelEntry>,
    pub ctx: DispatchContext,
}

fn reg_name(family: Family, offset: u16) -> &'static str {
    table(family).get(offset as u32).map_or("?", |r| r.name)
}

pub(crate) fn need(regs: &ShFile, family: Family, offset: u16) -> Result<u32, StateError> {
    regs.get(offset).ok_or(StateError::Unwritten {
        register: reg_name(family, offset),
    })
}

/// Check the state for one DISPATCH_DIRECT and build its dispatch context
/// (with its scratch ring, from the registers the IB programmed: `scratch`).
pub(crate) fn dispatch_state(
    device: &SimDevice,
    regs: &ShFile,
    groups: [u32; 3],
    initiator: u32,
) -> Result<Checked, Pm4ErrorKind> {
    let facts = device.facts();
    let family = facts.family;
    let limits = facts.limits;
    let lo = need(regs, family, off::COMPUTE_PGM_LO)?;
    let hi = need(regs, family, off::COMPUTE_PGM_HI)?;
    super::strict::pgm_hi(hi).map_err(|reason| StateError::Invalid {
        kernel: "at COMPUTE_PGM".to_string(),
        reason,
    })?;
    let addr = (u64::from(lo) << 8) | (u64::from(hi & 0xFF) << 40);
    let kernel = device.kernel_at_entry(addr).ok_or_else(|| {
        let hint = match device.kernel_at_descriptor(addr) {
            Some(k) => format!(
                " ({addr:#x} is the descriptor of {}: PGM must hold its code entry {:#x})",
                k.symbol, k.code_entry
            ),
            None => String::new(),
        };
        StateError::WrongCodeAddress { addr, hint }
    })?;
    let kd = kernel.descriptor;
    let name = kernel.symbol.clone();
    let invalid = |reason: String| StateError::Invalid {
        kernel: name.clone(),
        reason,
    };
    let unmodelled = super::rules::unmodelled(&kd, family);
    if !unmodelled.is_empty() {
        return Err(invalid(format!(
            "the simulated device cannot run it: {}",
            unmodelled.join("; ")
        ))
        .into());
    }
    let mismatch = |register: u16, found: u32, expected: u32, what: String| StateError::Mismatch {
        kernel: name.clone(),
        register: reg_name(family, register),
        found,
        expected,
        what,
    };
    // RSRC1/RSRC3 (and RSRC2's wave-state fields below) by each field's
    // effect: the code runs as its descriptor promises only with the same
    // wave state; more VGPRs or other scheduling fields change nothing.
    let pgm = |register: u16, found: u32, code: u32| {
        let diff = super::rules::pgm_differences(family, register, found, code);
        if diff.is_empty() {
            Ok(())
        } else {
            Err(mismatch(
                register,
                found,
                code,
                format!(" ({})", diff.join(", ")),
            ))
        }
    };
    let rsrc1 = need(regs, family, off::COMPUTE_PGM_RSRC1)?;
    pgm(off::COMPUTE_PGM_RSRC1, rsrc1, kd.compute_pgm_rsrc1)?;
    let rsrc2 = need(regs, family, off::COMPUTE_PGM_RSRC2)?;
    // TRAP_PRESENT by the runtime's rule, not the descriptor's (0 by contract).
    let trap = relaunch_facts::regs::rsrc2_trap_bits(family, true);
    let want_trap = relaunch_facts::regs::rsrc2_trap_bits(family, device.config().trap_handler);
    if rsrc2 & trap != want_trap {
        return Err(invalid(format!(
            "COMPUTE_PGM_RSRC2 TRAP_PRESENT is {} but must be {}: the runtime {} a trap \
             handler, and the CP sets the bit for an AQL dispatch exactly then",
            u32::from(rsrc2 & trap != 0),
            u32::from(want_trap != 0),
            if device.config().trap_handler {
                "installs"
            } else {
                "has no"
            }
        ))
        .into());
    }
    let (f, e) = (
        RSRC2_USER_SGPR.get(rsrc2),
        RSRC2_USER_SGPR.get(kd.compute_pgm_rsrc2),
    );
    if f != e {
        // s0.. are the USER_DATA registers, then the system SGPRs: the code
        // finds both only at the count it was compiled with.
        let what = format!(" (USER_SGPR count {f}, descriptor {e})");
        return Err(mismatch(off::COMPUTE_PGM_RSRC2, rsrc2, kd.compute_pgm_rsrc2, what).into());
    }
    pgm(off::COMPUTE_PGM_RSRC2, rsrc2, kd.compute_pgm_rsrc2)?;
    let lds_bytes = super::rules::lds_bytes(family, rsrc2);
    if lds_bytes < kd.group_segment_fixed_size || lds_bytes > limits.max_lds_bytes {
        return Err(invalid(format!(
            "RSRC2 LDS_SIZE gives {lds_bytes} bytes; the kernel's static group segment is {} \
             bytes and a workgroup may use at most {}",
            kd.group_segment_fixed_size, limits.max_lds_bytes
        ))
        .into());
    }
    let rsrc3 = need(regs, family, off::COMPUTE_PGM_RSRC3)?;
    pgm(off::COMPUTE_PGM_RSRC3, rsrc3, kd.compute_pgm_rsrc3)?;

    // User SGPRs: [the private segment buffer], [the dispatch packet's
    // address], [the queue pointer], the kernarg pointer, [the dispatch
    // id], [flat scratch init], [the private segment size], each as the
    // IB wrote it (AMDGPUUsage's order; the
    // scratch ones only matter to a dispatch with SCRATCH_EN: `scratch`).
    let sgprs = DeliveredSgprs::of(&kd, facts.user_sgprs);
    let count = sgprs.count();
    let mut user = Vec::with_capacity(count as usize);
    for i in 0..count as u16 {
        user.push(need(regs, family, off::COMPUTE_USER_DATA_0 + i)?);
    }
    let pair = |at: u32| u64::from(user[at as usize]) | (u64::from(user[at as usize + 1]) << 32);
    let dispatch_ptr = sgprs.dispatch_ptr_at().map(pair);
    // The queue pointer and dispatch id pairs go to the wave as the IB
    // wrote them (the hardware gives them no meaning).
    let (kernarg_ptr, kernarg_size) = if let Some(at) = sgprs.kernarg_ptr_at() {
        let ptr = pair(at);
        let size = kd.kernarg_size as usize;
        if size > 0 {
            // The kernel's first s_load would fault here; report it as such.
            device.memory.check(ptr, size, Access::Read)?;
        }
        (ptr, size)
    } else {
        (0, 0)
    };

    let launch = super::rules::initiator(family, initiator, kd.wave32()).map_err(invalid)?;
    let mut block = [0u32; 3];
    for (d, slot) in block.iter_mut().enumerate() {
        let o = off::COMPUTE_NUM_THREAD_X + d as u16;
        let raw = need(regs, family, o)?;
        let fields = table(family).get(o as u32).map_or(&[][..], |r| r.fields);
        let full = fields.iter().find(|f| f.name == "NUM_THREAD_FULL");
        let partial = fields.iter().find(|f| f.name == "NUM_THREAD_PARTIAL");
        *slot = full.map_or(raw, |f| f.get(raw));
        if partial.is_some_and(|f| f.get(raw) != 0) || *slot == 0 {
            return Err(invalid(format!(
                "{} is {raw:#x}: need a non-zero NUM_THREAD_FULL and no partial threads",
                reg_name(family, o)
            ))
            .into());
        }
    }
    let threads = block.iter().map(|&b| u64::from(b)).product::<u64>();
    if threads > u64::from(limits.max_workgroup_items) {
        return Err(invalid(format!(
            "block {block:?} has {threads} work-items (max {})",
            limits.max_workgroup_items
        ))
        .into());
    }
    if let Some(value) = regs.get(off::COMPUTE_RESOURCE_LIMITS) {
        super::rules::resource_limits(family, value, super::rules::waves(threads, kd.wave32()))
            .map_err(invalid)?;
    }
    // Without FORCE_START_AT_000 workgroup ids start at COMPUTE_START_*;
    // an offset start is not modelled, a zero one is the same launch.
    if !launch.start_at_zero {
        for d in 0..3u16 {
            let start = need(regs, family, off::COMPUTE_START_X + d)?;
            if start != 0 {
                return Err(invalid(format!(
                    "COMPUTE_START dimension {d} is {start} with FORCE_START_AT_000 clear: \
                     workgroup ids offset from 0 are not modelled"
                ))
                .into());
            }
        }
    }
    let mut grid = [0u32; 3];
    let by_threads = launch.thread_dims;
    for d in 0..3 {
        if groups[d] == 0 {
            return Err(invalid(format!("DISPATCH_DIRECT dimension {d} is 0")).into());
        }
        grid[d] = if by_threads {
            if groups[d] % block[d] != 0 {
                return Err(invalid(format!(
                    "grid {groups:?} work-items is not a whole number of {block:?} blocks"
                ))
                .into());
            }
            groups[d]
        } else {
            groups[d].checked_mul(block[d]).ok_or_else(|| {
                invalid(format!(
                    "grid {groups:?} x block {block:?} overflows 32 bits"
                ))
            })?
        };
    }
    device.check_dispatch_size(grid, block).map_err(invalid)?;
    let waves = super::rules::waves(threads, kd.wave32());
    let scratch = super::scratch::ring(device, regs, &kernel, rsrc2, &user, sgprs, waves)?;
    let mut ctx = DispatchContext::new(kernarg_ptr, kernarg_size, grid, block, lds_bytes as usize);
    ctx.scratch = scratch;
    // Every USER_DATA register RSRC2 declares, for the interpreter; those
    // past the delivered ones (LLVM's gfx1100 padding) read as written, or
    // zero when the IB left them alone.
    ctx.user_sgprs = (0..RSRC2_USER_SGPR.get(rsrc2) as u16)
        .map(|i| regs.get(off::COMPUTE_USER_DATA_0 + i).unwrap_or(0))
        .collect();
    if let Some(ptr) = dispatch_ptr {
        let want = super::dispatch_packet::Expected {
            grid,
            block,
            lds_bytes,
            kernarg_ptr,
            lds_granule: relaunch_facts::dispatch::lds_granule_bytes(family),
        };
        super::dispatch_packet::check(&device.memory, &kernel, ptr, &want)?;
        ctx.dispatch_ptr = ptr;
    }
    Ok(Checked { kernel, ctx })
}
