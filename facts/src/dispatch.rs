//! What the hardware does with a compute dispatch's state, as data: the
//! effect of each DISPATCH_INITIATOR bit, COMPUTE_RESOURCE_LIMITS field and
//! COMPUTE_PGM_RSRC1/2/3 field, and how RSRC2 sizes LDS. The fields
//! themselves (names, bits, which family has which) are the register
//! tables' (`regs`); this module says what each one means.
//!
//! Facts, not policy: the simulated device models each effect or refuses
//! the field by name; the encoder picks its values knowing them. Sources:
//! the kernel's `gc_*_sh_mask.h` (fields), `nvd.h` and AMDGPUUsage
//! ("Initial Kernel Execution State", the descriptor's RSRC fields).

use crate::family::Family;
use crate::field::Field;
use crate::regs::{self, off, RSRC2_LDS_SIZE};

/// What a DISPATCH_INITIATOR bit does when set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitiatorEffect {
    /// COMPUTE_SHADER_EN: compute waves are launched only when set.
    Launch,
    /// PARTIAL_TG_EN: the last workgroup of an axis may be partial
    /// (NUM_THREAD_PARTIAL threads).
    PartialGroups,
    /// FORCE_START_AT_000: workgroup ids start at 0; clear, they start at
    /// COMPUTE_START_X/Y/Z.
    StartAtZero,
    /// USE_THREAD_DIMENSIONS: the DISPATCH_DIRECT dims count work-items,
    /// not workgroups.
    ThreadDimensions,
    /// ORDER_MODE: workgroups are launched in id order; clear, as resources
    /// allow. Launch order only: which workgroups run does not change.
    LaunchOrder,
    /// DISABLE_DISP_PREMPT_EN: the dispatch is not preempted mid-flight.
    /// Scheduling only.
    NoPreemption,
    /// CS_W32_EN: waves are wave32; clear, wave64.
    Wave32,
    /// Something else the CP does; the text says what.
    Other(&'static str),
}

/// The effect of the DISPATCH_INITIATOR field called `name` (as in the
/// family's register table, which says which bits each family has).
pub fn initiator_effect(name: &str) -> InitiatorEffect {
    match name {
        "COMPUTE_SHADER_EN" => InitiatorEffect::Launch,
        "PARTIAL_TG_EN" => InitiatorEffect::PartialGroups,
        "FORCE_START_AT_000" => InitiatorEffect::StartAtZero,
        "USE_THREAD_DIMENSIONS" => InitiatorEffect::ThreadDimensions,
        "ORDER_MODE" => InitiatorEffect::LaunchOrder,
        "DISABLE_DISP_PREMPT_EN" => InitiatorEffect::NoPreemption,
        "CS_W32_EN" => InitiatorEffect::Wave32,
        "ORDERED_APPEND_ENBL" | "ORDERED_APPEND_MODE" => {
            InitiatorEffect::Other("ordered append (GDS ordered-count allocation)")
        }
        "SCALAR_L1_INV_VOL" | "VECTOR_L1_INV_VOL" => {
            InitiatorEffect::Other("invalidation of volatile cache lines at dispatch start")
        }
        "TUNNEL_ENABLE" => InitiatorEffect::Other("the dispatch tunnel (priority path)"),
        "RESTORE" => InitiatorEffect::Other("restoring a preempted dispatch's saved state"),
        "AMP_SHADER_EN" => InitiatorEffect::Other("an amplification (task) shader dispatch"),
        "PING_PONG_EN" => InitiatorEffect::Other("ping-pong workgroup launch"),
        "INTERLEAVE_2D_EN" => InitiatorEffect::Other("2D interleaved workgroup launch"),
        "TTRACE_QUEUE_ID" => InitiatorEffect::Other("the thread-trace queue id"),
        _ => InitiatorEffect::Other("a reserved bit"),
    }
}

/// The DISPATCH_INITIATOR fields of `family` (every bit outside them is
/// reserved there).
pub fn initiator_fields(family: Family) -> &'static [Field] {
    regs::table(family)
        .get(u32::from(off::COMPUTE_DISPATCH_INITIATOR))
        .map_or(&[][..], |r| r.fields)
}

/// The bit that makes a dispatch's waves wave32, per family.
pub const fn wave32_bit(family: Family) -> Field {
    family.facts().dispatch.wave32_bit
}

/// What a COMPUTE_RESOURCE_LIMITS field does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitEffect {
    /// WAVES_PER_SH: at most this many of the dispatch's waves resident per
    /// shader array at once; 0 = no limit. A workgroup's waves must all be
    /// resident together (they share LDS and barriers), so a limit below
    /// one workgroup's waves leaves the dispatch unable to launch.
    WavesPerSh,
    /// TG_PER_CU: at most this many workgroups per CU at once; 0 = no limit.
    GroupsPerCu,
    /// Where waves are placed (CU groups, SIMD distribution, lock
    /// threshold): which SIMD or CU runs a wave, never what it computes.
    Placement,
}

/// The effect of the COMPUTE_RESOURCE_LIMITS field called `name`; `None`
/// for a name the table does not have.
pub fn limit_effect(name: &str) -> Option<LimitEffect> {
    Some(match name {
        "WAVES_PER_SH" => LimitEffect::WavesPerSh,
        "TG_PER_CU" => LimitEffect::GroupsPerCu,
        "LOCK_THRESHOLD" | "SIMD_DEST_CNTL" | "FORCE_SIMD_DIST" | "CU_GROUP_COUNT" => {
            LimitEffect::Placement
        }
        _ => return None,
    })
}

/// What a COMPUTE_PGM_RSRC1/2/3 field does to the waves it launches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgmEffect {
    /// Initial wave state the kernel's code was compiled for (float mode,
    /// which system SGPRs/VGPRs are loaded, exception enables, ...): the
    /// code computes what its descriptor promises only with the
    /// descriptor's value.
    WaveState,
    /// The VGPR allocation (RSRC1.VGPRS, granules): at least what the code
    /// uses; more changes nothing it computes.
    VgprAllocation,
    /// The user SGPR count (RSRC2.USER_SGPR): how many USER_DATA registers
    /// are loaded into s0..; the system SGPRs follow them, so the code
    /// finds them only at the count it was compiled with.
    UserSgprCount,
    /// RSRC2.LDS_SIZE: the LDS allocation, in [`lds_granule_bytes`] units.
    LdsAllocation,
    /// RSRC2.SCRATCH_EN: waves get scratch (the queue's scratch ring).
    Scratch,
    /// RSRC2.TRAP_PRESENT: a trap handler is installed (set by the CP from
    /// the runtime's state for an AQL dispatch).
    TrapPresent,
    /// Scheduling or performance only (priority, WGP mode, forward
    /// progress, instruction prefetch, ...): never what a wave computes.
    Scheduling,
    /// Ignored by these families (RSRC1.SGPRS: SGPRs are not allocated by
    /// count on gfx10+).
    Ignored,
}

/// The effect of field `name` of COMPUTE_PGM_RSRC1, RSRC2 or RSRC3
/// (`register` is the register's table name).
pub fn pgm_effect(register: &str, name: &str) -> PgmEffect {
    use PgmEffect::*;
    match (register, name) {
        ("COMPUTE_PGM_RSRC1", "VGPRS") => VgprAllocation,
        ("COMPUTE_PGM_RSRC1", "SGPRS") => Ignored,
        ("COMPUTE_PGM_RSRC1", "PRIORITY" | "BULKY" | "WGP_MODE" | "MEM_ORDERED")
        | ("COMPUTE_PGM_RSRC1", "FWD_PROGRESS" | "DISABLE_PERF" | "WG_RR_EN") => Scheduling,
        ("COMPUTE_PGM_RSRC2", "USER_SGPR") => UserSgprCount,
        ("COMPUTE_PGM_RSRC2", "LDS_SIZE") => LdsAllocation,
        ("COMPUTE_PGM_RSRC2", "SCRATCH_EN") => Scratch,
        ("COMPUTE_PGM_RSRC2", "TRAP_PRESENT") => TrapPresent,
        ("COMPUTE_PGM_RSRC2", "WGP_TAKEOVER") => Scheduling,
        ("COMPUTE_PGM_RSRC3", "INST_PREF_SIZE" | "GLG_EN") => Scheduling,
        // Everything else sets up the wave (FLOAT_MODE, IEEE_MODE, PRIV,
        // TGID/TIDIG enables, EXCP_EN, SHARED_VGPR_CNT, DYNAMIC_VGPR, ...).
        _ => WaveState,
    }
}

/// Bytes per RSRC2.LDS_SIZE granule for compute, per family.
pub const fn lds_granule_bytes(family: Family) -> u32 {
    family.facts().dispatch.lds_granule
}

/// LDS bytes a dispatch gets from its RSRC2.
pub const fn lds_bytes(family: Family, rsrc2: u32) -> u32 {
    RSRC2_LDS_SIZE.get(rsrc2) * lds_granule_bytes(family)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regs::table;

    #[test]
    fn every_initiator_field_has_an_effect_and_w32_is_bit_15() {
        for f in Family::ALL {
            let fields = initiator_fields(f);
            assert!(!fields.is_empty(), "{f}");
            for fl in fields {
                // "RESERVED" is the one field a name does not explain.
                let reserved =
                    initiator_effect(fl.name) == InitiatorEffect::Other("a reserved bit");
                assert_eq!(reserved, fl.name == "RESERVED", "{f} {}", fl.name);
            }
            assert_eq!(wave32_bit(f).lo, 15);
            assert!(fields.contains(&wave32_bit(f)), "{f}");
        }
    }

    #[test]
    fn every_resource_limits_field_has_an_effect() {
        for f in Family::ALL {
            let r = table(f)
                .get(u32::from(off::COMPUTE_RESOURCE_LIMITS))
                .unwrap();
            for fl in r.fields {
                assert!(limit_effect(fl.name).is_some(), "{f} {}", fl.name);
            }
        }
    }

    #[test]
    fn rsrc_fields_the_code_depends_on_are_wave_state() {
        for f in Family::ALL {
            let t = table(f);
            for reg in [
                "COMPUTE_PGM_RSRC1",
                "COMPUTE_PGM_RSRC2",
                "COMPUTE_PGM_RSRC3",
            ] {
                assert!(!t.by_name(reg).unwrap().fields.is_empty(), "{f} {reg}");
            }
        }
        assert_eq!(
            pgm_effect("COMPUTE_PGM_RSRC1", "FLOAT_MODE"),
            PgmEffect::WaveState
        );
        assert_eq!(
            pgm_effect("COMPUTE_PGM_RSRC2", "TGID_X_EN"),
            PgmEffect::WaveState
        );
        assert_eq!(
            pgm_effect("COMPUTE_PGM_RSRC1", "PRIORITY"),
            PgmEffect::Scheduling
        );
        assert_eq!(lds_bytes(Family::Gfx11, RSRC2_LDS_SIZE.place(3)), 1536);
    }
}
