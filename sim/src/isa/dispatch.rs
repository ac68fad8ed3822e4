//! Dispatch setup: the initial state of every wave exactly as the hardware
//! builds it from the dispatch (AMDGPUUsage, "Initial Kernel Execution
//! State"): user SGPRs as delivered (PM4 USER_DATA or what the AQL packet
//! processor loads), then the system SGPRs RSRC2 enables (workgroup ids),
//! work-item ids in VGPRs (packed 10:10:10 into v0 on gfx11+), the VGPR
//! count and MODE from RSRC1, EXEC covering the wave's work-items, and
//! with RSRC2.SCRATCH_EN each wave's scratch slot (the private segment
//! wave byte offset SGPR on gfx10, FLAT_SCRATCH on gfx11/gfx12: see
//! `scratch`); then the workgroups run, in id order on each of up to one
//! worker per core (each with waves, LDS and scratch slots of its own),
//! or, for a program with global wave sync instructions, all resident at
//! once on one worker (`cooperative`).

use std::sync::Arc;

use relaunch_facts::family::FlatScratch;
use relaunch_isa::{Family, Isa};

use super::cache;
use super::fault::IsaFault;
use super::growth::Growing;
use super::scratch::{self, ScratchSetup};
use super::workgroups::{on_workers, workers, Claims, GroupStart, Worker};
use crate::device::KernelEntry;
use crate::memory::DeviceMemory;
use crate::twins::{DispatchContext, KernelFault};

/// RSRC2 fields the setup reads (SPI_SHADER_PGM_RSRC2_CS / COMPUTE_PGM_RSRC2).
pub(super) mod rsrc2 {
    pub const SCRATCH_EN: u32 = 1 << 0;
    pub const USER_SGPR_SHIFT: u32 = 1;
    pub const USER_SGPR_MASK: u32 = 0x1F;
    pub const TGID_X_EN: u32 = 1 << 7;
    pub const TGID_Y_EN: u32 = 1 << 8;
    pub const TGID_Z_EN: u32 = 1 << 9;
    pub const TG_SIZE_EN: u32 = 1 << 10;
    pub const TIDIG_COMP_CNT_SHIFT: u32 = 11;
}

/// What one dispatch hands the interpreter besides the dispatch context.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The processor (`gfx1100`) the code runs on, for errors and decoding.
    pub processor: String,
    pub rsrc1: u32,
    pub rsrc2: u32,
    pub wave64: bool,
    /// The user SGPRs as delivered, `s0` first (RSRC2.USER_SGPR of them).
    pub user_sgprs: Vec<u32>,
    /// The runtime installed a trap handler (`SimConfig::trap_handler`).
    /// With `rsrc2` (TRAP_PRESENT on gfx10/gfx11) it decides whether the
    /// waves take traps (`control::trap_enabled`).
    pub trap_handler: bool,
    /// The queue's scratch as the hardware holds it (`None`: no scratch
    /// ring; a kernel with RSRC2.SCRATCH_EN is then refused).
    pub scratch: Option<ScratchSetup>,
    /// Private segment bytes per work-item the dispatch was given (the
    /// descriptor's `private_segment_fixed_size`, or an AQL packet's
    /// larger `private_segment_size`): a wave needing more than a slot is
    /// refused ("scratch needed").
    pub private_segment_bytes: u32,
    /// The device's compute units (`SimConfig::compute_units`): how many
    /// waves a cooperative dispatch may keep resident.
    pub compute_units: u32,
}

impl Launch {
    /// `kd` launched as a plain AQL dispatch with no queue behind it and
    /// no scratch ring (packet address and dispatch id 0), for callers that
    /// run the interpreter directly (tests, benchmarks): refused, as
    /// [`aql_user_sgprs`] says, for a kernel that needs more.
    pub fn without_queue(
        processor: &str,
        family: Family,
        kd: &relaunch_device::codeobj::KernelDescriptor,
        kernarg: u64,
        trap_handler: bool,
    ) -> Result<Launch, String> {
        let at = AqlSource {
            packet: 0,
            queue: None,
            id: 0,
            private_segment_size: 0,
        };
        Ok(Launch {
            processor: processor.to_string(),
            rsrc1: kd.compute_pgm_rsrc1,
            rsrc2: kd.compute_pgm_rsrc2,
            wave64: !kd.wave32(),
            user_sgprs: aql_user_sgprs(kd, family, kernarg, at, None)?,
            trap_handler,
            scratch: None,
            private_segment_bytes: kd.private_segment_fixed_size,
            compute_units: crate::device::DEFAULT_COMPUTE_UNITS,
        })
    }
}

/// A fault of the interpreter, with where it happened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("kernel {kernel} at byte offset {at} ({mnemonic}, {processor}, wave {wave} of workgroup {workgroup:?}): {fault}", at = super::program::signed_hex(*.offset))]
pub struct IsaError {
    pub kernel: String,
    /// From the kernel's entry; negative in a callee placed before it.
    pub offset: i64,
    /// The mnemonic as LLVM spells it.
    pub mnemonic: String,
    pub processor: String,
    pub workgroup: [u32; 3],
    pub wave: usize,
    pub fault: IsaFault,
}

/// VGPRs RSRC1 allocates per work-item: GRANULATED_WORKITEM_VGPR_COUNT
/// (bits 5:0) in granules of 8 (wave32) or 4 (wave64).
pub fn vgpr_count(rsrc1: u32, wave64: bool) -> usize {
    let g = (rsrc1 & 0x3F) as usize + 1;
    if wave64 {
        4 * g
    } else {
        8 * g
    }
}

/// The MODE register a wave starts with, from RSRC1: FLOAT_MODE (bits
/// 19:12) gives FP_ROUND and FP_DENORM; DX10_CLAMP (21) and IEEE_MODE (23)
/// exist on gfx10 and gfx11 only.
pub fn initial_mode(rsrc1: u32, family: Family) -> u32 {
    let float = (rsrc1 >> 12) & 0xFF;
    match family.facts().dispatch.rsrc1_clamp_ieee {
        true => float | (((rsrc1 >> 21) & 1) << 8) | (((rsrc1 >> 23) & 1) << 9),
        false => float,
    }
}

fn isa_of(launch: &Launch) -> Result<Isa, KernelFault> {
    Isa::from_processor(&launch.processor, launch.wave64).ok_or_else(|| {
        KernelFault::Interpreter(format!(
            "the instruction interpreter has no decoder for {}: register a host twin",
            launch.processor
        ))
    })
}

/// Run every workgroup of the dispatch on the interpreter. Returns the
/// wave-instructions executed.
pub fn run(
    ctx: &mut DispatchContext,
    mem: &DeviceMemory,
    kernel: &Arc<KernelEntry>,
    launch: &Launch,
) -> Result<u64, KernelFault> {
    let isa = isa_of(launch)?;
    let code = cache::program(kernel, isa, mem)?;
    run_program(ctx, mem, &kernel.symbol, &code, launch)
}

fn setup_fault(kernel: &str, launch: &Launch, what: String) -> KernelFault {
    KernelFault::Interpreter(format!(
        "kernel {kernel} on {}: {what}; the instruction interpreter does not model it \
         (register a host twin to run this kernel)",
        launch.processor
    ))
}

/// Run `code` (the program as it grows) for every workgroup of `ctx`: in
/// id order on one worker, or spread over several (see [`workers`]), as
/// the hardware runs workgroups
/// concurrently on its compute units. Each worker has its waves, LDS and
/// scratch slots of its own (a compute unit's); the dispatch's trace is
/// the union of theirs and its fault the lowest workgroup's.
pub(crate) fn run_program(
    ctx: &mut DispatchContext,
    mem: &DeviceMemory,
    kernel: &str,
    code: &Growing,
    launch: &Launch,
) -> Result<u64, KernelFault> {
    let first = code.latest();
    let isa = first.isa;
    let r2 = launch.rsrc2;
    if r2 & rsrc2::TG_SIZE_EN != 0 {
        return Err(setup_fault(
            kernel,
            launch,
            "RSRC2 enables the workgroup-info SGPR (TG_SIZE_EN)".into(),
        ));
    }
    let counts = ctx.workgroup_counts()?;
    let block = ctx.block;
    let threads = (block[0] * block[1] * block[2]) as usize;
    let lanes = if isa.wave64 { 64 } else { 32 };
    let nwaves = threads.div_ceil(lanes);
    let vgprs = vgpr_count(launch.rsrc1, isa.wave64);
    let tid_dims = ((r2 >> rsrc2::TIDIG_COMP_CNT_SHIFT) & 3) as usize + 1;
    let packed = isa.family.facts().dispatch.packed_work_item_ids;
    if !packed && tid_dims > vgprs {
        return Err(setup_fault(
            kernel,
            launch,
            format!("{tid_dims} work-item id VGPRs but only {vgprs} VGPRs allocated"),
        ));
    }
    let private = if r2 & rsrc2::SCRATCH_EN != 0 {
        Some(scratch_for(kernel, launch, nwaves)?)
    } else {
        None
    };
    let start = GroupStart {
        launch,
        isa,
        user: ((r2 >> rsrc2::USER_SGPR_SHIFT) & rsrc2::USER_SGPR_MASK) as usize,
        tid_dims,
        block,
        threads,
        lanes,
        nwaves,
        vgprs,
        mode: initial_mode(launch.rsrc1, isa.family),
        trap_en: super::control::trap_enabled(isa.family, r2, launch.trap_handler),
        packed,
        private,
        counts,
    };
    let groups = counts.iter().map(|&c| u64::from(c)).product::<u64>();
    // On a queue's processor thread: its inactivation stops the kernel,
    // on every worker (the flag is bound to that thread only).
    let inactive = crate::memory::bound_inactivation();
    let interrupts = super::bound_interrupts();
    if first.global_sync {
        let (i, s) = (inactive.as_deref(), interrupts.as_deref());
        return super::cooperative::run(ctx, mem, kernel, code, &start, groups, i, s);
    }
    let workers = workers(groups, private, nwaves);
    let claims = Claims::new(groups, workers);
    let lds_bytes = ctx.lds_bytes;
    let work = |k: usize| {
        let mut w = Worker::new(&start, lds_bytes, k);
        w.run(
            mem,
            kernel,
            code,
            &claims,
            inactive.as_deref(),
            interrupts.as_deref(),
        );
        w
    };
    let done = on_workers(workers, inactive.clone(), work).map_err(|e| {
        KernelFault::Interpreter(format!(
            "kernel {kernel}: {e} (RELAUNCH_SIM_WORKERS=1 runs workgroups on the queue's thread)"
        ))
    })?;
    let mut executed = 0;
    let mut failure: Option<(u64, KernelFault)> = None;
    for mut w in done {
        executed += w.executed;
        w.tbuf.flush_into(&mut ctx.trace);
        if let Some((g, f)) = w.failure {
            if failure.as_ref().is_none_or(|(at, _)| g < *at) {
                failure = Some((g, f));
            }
        }
    }
    match failure {
        Some((_, f)) => Err(f),
        None => Ok(executed),
    }
}

/// Whether the wave gets the private segment wave byte offset SGPR
/// (families whose kernels build FLAT_SCRATCH themselves).
pub(super) fn wave_offset_sgpr(family: Family) -> bool {
    match family.scratch().flat_scratch {
        FlatScratch::Init => true,
        FlatScratch::Architected => false,
    }
}

/// The scratch a SCRATCH_EN dispatch runs with, or why it cannot run.
fn scratch_for(kernel: &str, launch: &Launch, nwaves: usize) -> Result<ScratchSetup, KernelFault> {
    let fault = |what: String| {
        KernelFault::Interpreter(format!("kernel {kernel} on {}: {what}", launch.processor))
    };
    let setup = launch.scratch.ok_or_else(|| {
        fault(
            "RSRC2 enables scratch (SCRATCH_EN) but the queue gave this dispatch no scratch \
             ring (no ScratchSetup: COMPUTE_TMPRING_SIZE and the scratch base are the queue \
             owner's); give the queue a scratch backing or register a host twin"
                .into(),
        )
    })?;
    let need = scratch::per_wave_bytes(launch.private_segment_bytes, launch.wave64);
    if need > setup.wave_bytes {
        return Err(fault(format!(
            "scratch needed: a wave needs {need} bytes of private memory ({} bytes per \
             work-item x {} lanes) but the queue's slots hold {} bytes \
             (TMPRING_SIZE.WAVESIZE); the queue owner must grow the scratch backing",
            launch.private_segment_bytes,
            if launch.wave64 { 64 } else { 32 },
            setup.wave_bytes
        )));
    }
    if (setup.slots as usize) < nwaves {
        return Err(fault(format!(
            "a workgroup has {nwaves} waves but the scratch ring has {} wave slots \
             (TMPRING_SIZE.WAVES): the workgroup could never launch",
            setup.slots
        )));
    }
    Ok(setup)
}

/// Whether `kernel`'s code uses instructions whose results the hardware
/// only guarantees to a documented precision (transcendentals, reciprocals,
/// square roots), so a host twin's exact math may differ in the last bits.
pub fn uses_approximate_ops(
    kernel: &Arc<KernelEntry>,
    launch: &Launch,
    mem: &DeviceMemory,
) -> Result<bool, KernelFault> {
    let prog = cache::program(kernel, isa_of(launch)?, mem)?.latest();
    Ok(prog.insts.iter().any(|i| {
        let n = i.decoded.name;
        n.starts_with("v_") && APPROXIMATE.iter().any(|a| n.contains(a))
    }))
}

/// Name parts of the approximate vector ALU ops.
const APPROXIMATE: [&str; 8] = [
    "_exp_", "_log_", "_rcp_", "_rsq_", "_sqrt_", "_sin_", "_cos_", "_div_",
];

/// The user SGPRs the packet processor loads for an AQL dispatch, in the
/// order the descriptor's enables give (AMDGPUUsage, "Initial Kernel
/// Execution State"): the private segment buffer (the queue's V# with
/// INDEX_STRIDE for the wave size; zeros without a scratch setup, where a
/// kernel cannot reach scratch anyway), the dispatch packet's address, the
/// queue's address, the kernarg pointer, the dispatch id, flat scratch
/// init (the 64-bit base of the queue's scratch backing: the prologue adds
/// the wave offset and writes FLAT_SCRATCH) and the private segment size
/// (per work-item, rounded up to a dword), as the descriptor enables
/// them; RSRC2's count beyond them (LLVM's gfx1100 padding) reads as zero.
/// Flat scratch init and the private segment size without a scratch setup,
/// or on families with architected flat scratch, are errors, not made-up
/// values.
pub fn aql_user_sgprs(
    kd: &relaunch_device::codeobj::KernelDescriptor,
    family: relaunch_facts::Family,
    kernarg: u64,
    at: AqlSource,
    scratch: Option<&ScratchSetup>,
) -> Result<Vec<u32>, String> {
    let count = kd.user_sgpr_count() as usize;
    let mut out = Vec::with_capacity(count);
    // gfx12 has no private segment buffer SGPRs.
    let psb = kd.wants_private_segment_buffer() && family.user_sgprs().private_segment_buffer;
    if psb {
        match scratch {
            Some(s) => out.extend(s.delivered_srd(!kd.wave32())),
            None => out.extend([0; 4]),
        }
    }
    let pair = |out: &mut Vec<u32>, v: u64| out.extend([v as u32, (v >> 32) as u32]);
    if kd.wants_dispatch_ptr() {
        pair(&mut out, at.packet);
    }
    if kd.wants_queue_ptr() {
        let queue = at.queue.ok_or_else(|| {
            "the descriptor asks for the queue pointer, which this queue has no \
             hsa_queue_t in device memory to deliver (register a host twin)"
                .to_string()
        })?;
        pair(&mut out, queue);
    }
    if kd.wants_kernarg_segment_ptr() {
        pair(&mut out, kernarg);
    }
    if kd.wants_dispatch_id() {
        pair(&mut out, at.id);
    }
    let needs_setup = |what: &str| -> Result<&ScratchSetup, String> {
        match (family.scratch().flat_scratch, scratch) {
            (FlatScratch::Architected, _) => Err(format!(
                "the descriptor asks for {what}, which {family} does not deliver (architected \
                 flat scratch: the hardware sets FLAT_SCRATCH)"
            )),
            (FlatScratch::Init, None) => Err(format!(
                "the descriptor asks for {what}, which needs scratch: this dispatch has no \
                 scratch setup (the queue has no scratch backing; register a host twin)"
            )),
            (FlatScratch::Init, Some(s)) => Ok(s),
        }
    };
    if kd.wants_flat_scratch_init() {
        let s = needs_setup("flat scratch init")?;
        pair(&mut out, s.base);
    }
    if kd.wants_private_segment_size() {
        needs_setup("the private segment size")?;
        let per_lane = kd.private_segment_fixed_size.max(at.private_segment_size);
        out.push(per_lane.div_ceil(4) * 4);
    }
    out.resize(count.max(out.len()), 0);
    Ok(out)
}

/// Where an AQL dispatch came from: what the dispatch and queue pointers
/// and the dispatch id deliver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AqlSource {
    /// The packet's ring slot (the dispatch pointer).
    pub packet: u64,
    /// The queue's `hsa_queue_t`, when it lives in device memory.
    pub queue: Option<u64>,
    /// The packet id (the dispatch id).
    pub id: u64,
    /// The packet's private_segment_size (bytes per work-item; the
    /// descriptor's fixed size counts when larger).
    pub private_segment_size: u32,
}
