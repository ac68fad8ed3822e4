//! What one dispatch programs: the kernel's fixed state (checked once per
//! kernel) and the per-launch values (checked every dispatch).

use relaunch_device::codeobj::{KernelDescriptor, UnreadInputs};
use relaunch_facts::sgprs::{user_sgpr_padding, DeliveredSgprs};
use relaunch_facts::{Family, Limits};

use crate::error::EncodeError;
use crate::regs::{
    INIT_COMPUTE_SHADER_EN, INIT_CS_W32_EN, INIT_FORCE_START_AT_000, INIT_ORDER_MODE,
    LDS_GRANULE_BYTES, RSRC2_LDS_SIZE,
};
use crate::verdict::descriptor_refusals_given;
/// Most work-items one grid may have (HSA's GRID_MAX_SIZE on RDNA1-4; each
/// dimension is a 32-bit count, GRID_MAX_DIM). Every product of grid or
/// workgroup counts downstream (the hardware's, the simulator's) then fits
/// in 32 bits.
pub const MAX_GRID_WORK_ITEMS: u64 = u32::MAX as u64;

/// Total work-items of `grid`, or `None` past `MAX_GRID_WORK_ITEMS`
/// (checked: three 32-bit dimensions can exceed 64 bits).
pub fn grid_work_items(grid: [u32; 3]) -> Option<u64> {
    grid.iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(u64::from(d)))
        .filter(|&n| n <= MAX_GRID_WORK_ITEMS)
}

/// COMPUTE_RESOURCE_LIMITS relaunch programs: 0 = no waves-per-SH limit, no
/// workgroups-per-CU limit, no lock threshold, default SIMD placement. This
/// leaves occupancy to the hardware, as the queue's own AQL dispatches do.
pub const RESOURCE_LIMITS_VALUE: u32 = 0;

/// A kernel as the encoder needs it: its descriptor as loaded, where the
/// descriptor lives on the GPU, and the family its code object targets.
#[derive(Debug, Clone, Copy)]
pub struct KernelCode<'a> {
    pub symbol: &'a str,
    pub family: Family,
    pub descriptor: KernelDescriptor,
    /// GPU virtual address of the `.kd` symbol.
    pub kd_address: u64,
    /// Inputs the code provably never reads (the reader's
    /// `KernelInfo::unread`): accepted with zeros in their place.
    pub unread: UnreadInputs,
}

/// One launch: grid and block in work-items, dynamic group (LDS) bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_group_bytes: u32,
}

/// The per-kernel part of the programming, computed once per kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Prepared {
    pub kd_address: u64,
    pub pgm: [u32; 2],
    pub rsrc1: u32,
    /// RSRC2 with LDS_SIZE cleared (filled per launch).
    pub rsrc2_base: u32,
    pub rsrc3: u32,
    pub initiator: u32,
    /// The delivered user SGPRs, in order (`DeliveredSgprs`): the private
    /// segment buffer first (families that have one: the scratch V# for a
    /// kernel with scratch, else zeros), the address of the dispatch
    /// packet the builder writes per dispatch when the kernel reads it,
    /// zeros for a queue pointer and dispatch id the code never reads
    /// (before and after the kernarg pointer), flat scratch init (the
    /// backing's base).
    pub sgprs: DeliveredSgprs,
    /// The private segment size SGPR after it, with its value (bytes per
    /// work-item rounded up to a dword, as the CP delivers it).
    pub private_segment_size: Option<u32>,
    /// The kernel's waves get scratch (RSRC2.SCRATCH_EN): its dispatches
    /// program the IB's ring and its V#.
    pub scratch_en: bool,
    /// Its dispatches need the IB's scratch ring (scratch, or flat scratch
    /// init, which delivers the ring's base).
    pub ring: bool,
    /// Bytes of private memory one wave needs (`scratch::wave_need`).
    pub wave_bytes: u64,
    /// The descriptor's private_segment_fixed_size (the synthesized
    /// dispatch packet's private_segment_size).
    pub private_bytes: u32,
    /// The kernel runs in wave64 (its V#'s INDEX_STRIDE, its waves per group).
    pub wave64: bool,
    /// Zero dwords RSRC2 declares after the delivered user SGPRs (gfx1100/
    /// gfx1102 "16 initialised SGPRs" padding, see `user_sgpr_padding`).
    pub padding_dwords: u8,
    pub kernarg_size: u32,
    pub static_lds: u32,
    /// The target's workgroup limits, checked per launch.
    pub limits: Limits,
}

impl Prepared {
    /// Check the kernel against `family` and `limits` and derive its fixed
    /// state; `trap_handler`: the runtime installed one for the GPU.
    pub fn new(
        code: &KernelCode<'_>,
        family: Family,
        limits: Limits,
        trap_handler: bool,
    ) -> Result<Self, EncodeError> {
        if code.family != family {
            return Err(EncodeError::FamilyMismatch {
                symbol: code.symbol.to_string(),
                kernel: code.family,
                builder: family,
            });
        }
        let kd = &code.descriptor;
        let reasons = descriptor_refusals_given(kd, family, &limits, code.unread);
        if !reasons.is_empty() {
            return Err(EncodeError::Refused {
                symbol: code.symbol.to_string(),
                reasons,
            });
        }
        let entry = kd.code_entry(code.kd_address);
        if entry % 256 != 0 {
            return Err(EncodeError::MisalignedCodeEntry {
                symbol: code.symbol.to_string(),
                entry,
            });
        }
        if entry >> 48 != 0 {
            return Err(EncodeError::CodeEntryOutOfRange {
                symbol: code.symbol.to_string(),
                entry,
            });
        }
        let sgprs = DeliveredSgprs::of(kd, family.user_sgprs());
        let mut initiator = INIT_COMPUTE_SHADER_EN.place(1)
            | INIT_FORCE_START_AT_000.place(1)
            | INIT_ORDER_MODE.place(1);
        if kd.wave32() {
            initiator |= INIT_CS_W32_EN.place(1);
        }
        Ok(Prepared {
            kd_address: code.kd_address,
            pgm: [(entry >> 8) as u32, (entry >> 40) as u32],
            rsrc1: kd.compute_pgm_rsrc1,
            // TRAP_PRESENT exactly when the CP would set it for an AQL
            // dispatch: when the runtime installed a trap handler.
            rsrc2_base: (kd.compute_pgm_rsrc2 & !RSRC2_LDS_SIZE.mask())
                | crate::regs::rsrc2_trap_bits(family, trap_handler),
            rsrc3: kd.compute_pgm_rsrc3,
            initiator,
            sgprs,
            private_segment_size: sgprs
                .private_segment_size
                .then(|| kd.private_segment_fixed_size.div_ceil(4) * 4),
            scratch_en: kd.scratch_enabled(),
            ring: kd.scratch_enabled() || sgprs.flat_scratch_init,
            wave_bytes: crate::scratch::wave_need(kd.private_segment_fixed_size, !kd.wave32()),
            private_bytes: kd.private_segment_fixed_size,
            wave64: !kd.wave32(),
            // Accepted descriptors keep RSRC2's count within 16, so it fits.
            padding_dwords: user_sgpr_padding(kd) as u8,
            kernarg_size: kd.kernarg_size,
            static_lds: kd.group_segment_fixed_size,
            limits,
        })
    }

    /// Number of USER_DATA registers this kernel loads: the delivered ones
    /// and the padding after them (RSRC2's USER_SGPR count).
    #[inline]
    pub fn user_sgprs(&self) -> usize {
        self.sgprs.count() as usize + self.padding_dwords as usize
    }
}

/// Per-launch values after checking the launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LaunchState {
    pub groups: [u32; 3],
    pub rsrc2: u32,
}

/// Check `launch` for a prepared kernel and compute workgroup counts and RSRC2.
#[inline]
pub(crate) fn check_launch(
    p: &Prepared,
    launch: &Launch,
    symbol: &str,
) -> Result<LaunchState, EncodeError> {
    let Launch {
        grid,
        block,
        dynamic_group_bytes,
    } = *launch;
    if grid.contains(&0) || block.contains(&0) {
        return Err(EncodeError::ZeroDimension {
            symbol: symbol.to_string(),
            grid,
            block,
        });
    }
    if grid_work_items(grid).is_none() {
        return Err(EncodeError::GridTooLarge {
            symbol: symbol.to_string(),
            grid,
        });
    }
    let work_items = block[0] as u64 * block[1] as u64 * block[2] as u64;
    if work_items > u64::from(p.limits.max_workgroup_items) {
        return Err(EncodeError::BlockTooLarge {
            symbol: symbol.to_string(),
            work_items,
            limit: p.limits.max_workgroup_items,
        });
    }
    let mut groups = [0u32; 3];
    for axis in 0..3 {
        if grid[axis] % block[axis] != 0 {
            return Err(EncodeError::NonIntegralGrid {
                symbol: symbol.to_string(),
                axis: ['x', 'y', 'z'][axis],
                grid: grid[axis],
                block: block[axis],
            });
        }
        groups[axis] = grid[axis] / block[axis];
    }
    let lds = p.static_lds as u64 + dynamic_group_bytes as u64;
    if lds > u64::from(p.limits.max_lds_bytes) {
        return Err(EncodeError::LdsTooLarge {
            symbol: symbol.to_string(),
            bytes: lds,
            limit: p.limits.max_lds_bytes,
        });
    }
    let granules = lds.div_ceil(LDS_GRANULE_BYTES as u64) as u32;
    Ok(LaunchState {
        groups,
        rsrc2: p.rsrc2_base | RSRC2_LDS_SIZE.place(granules),
    })
}
