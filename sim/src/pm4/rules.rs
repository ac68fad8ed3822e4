//! The hardware's rules for a dispatch's state, applied by what each field
//! does (`relaunch_facts::dispatch`): a value is accepted when the model
//! performs its effect, and refused, naming the field, when the effect is
//! not modelled or the kernel's code could not run under it. None of these
//! compares with what relaunch's encoder emits: an IB written by ROCr, HIP
//! or by hand is held to the same rules.

use relaunch_facts::dispatch::{
    self, initiator_effect, initiator_fields, limit_effect, pgm_effect, InitiatorEffect,
    LimitEffect, PgmEffect,
};
use relaunch_facts::family::MAX_USER_SGPRS;
use relaunch_facts::regs::{off, table};
use relaunch_facts::sgprs::enabled_user_sgprs;
use relaunch_facts::{Family, KernelDescriptor};

/// What the initiator asks of the launch, once its bits are accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Launch {
    /// DISPATCH_DIRECT dims are work-items (USE_THREAD_DIMENSIONS).
    pub thread_dims: bool,
    /// Workgroup ids start at 0 whatever COMPUTE_START holds.
    pub start_at_zero: bool,
}

/// DISPATCH_INITIATOR: every set bit must be a field of the family whose
/// effect is modelled; COMPUTE_SHADER_EN must be set (else no waves), and
/// CS_W32_EN must give the wave size the kernel's code was built for.
pub(crate) fn initiator(family: Family, value: u32, wave32: bool) -> Result<Launch, String> {
    let fields = initiator_fields(family);
    let known = fields.iter().fold(0, |m, f| m | f.mask());
    if value & !known != 0 {
        return Err(format!(
            "DISPATCH_INITIATOR {value:#x} sets {:#x}, bits {family} does not define (reserved)",
            value & !known
        ));
    }
    let mut launch = Launch {
        thread_dims: false,
        start_at_zero: false,
    };
    let mut launches = false;
    for f in fields {
        let set = f.get(value) != 0;
        match initiator_effect(f.name) {
            InitiatorEffect::Launch => launches = set,
            InitiatorEffect::ThreadDimensions => launch.thread_dims = set,
            InitiatorEffect::StartAtZero => launch.start_at_zero = set,
            InitiatorEffect::Wave32 => {
                if set != wave32 {
                    return Err(format!(
                        "DISPATCH_INITIATOR CS_W32_EN is {} but the kernel is wave{}: the \
                         hardware would launch its code with the other wave size",
                        u8::from(set),
                        if wave32 { 32 } else { 64 }
                    ));
                }
            }
            // Launch order and preemption change when workgroups run, never
            // what they compute; the model runs them in id order.
            InitiatorEffect::LaunchOrder | InitiatorEffect::NoPreemption => {}
            InitiatorEffect::PartialGroups if set => {
                return Err(
                    "DISPATCH_INITIATOR PARTIAL_TG_EN is set; partial workgroups are not modelled"
                        .into(),
                )
            }
            InitiatorEffect::PartialGroups => {}
            InitiatorEffect::Other(what) if set => {
                return Err(format!(
                    "DISPATCH_INITIATOR {value:#x} sets {} ({what}), whose effect is not modelled",
                    f.name
                ))
            }
            InitiatorEffect::Other(_) => {}
        }
    }
    if !launches {
        return Err(format!(
            "DISPATCH_INITIATOR {value:#x} lacks COMPUTE_SHADER_EN: the CP would launch no waves"
        ));
    }
    Ok(launch)
}

/// COMPUTE_RESOURCE_LIMITS: limits on how many waves or workgroups are
/// resident at once and where they go. The model runs one workgroup at a
/// time, the tightest schedule any limit allows, so each value is modelled
/// except a WAVES_PER_SH below one workgroup's waves, which the hardware
/// can never launch (a workgroup's waves are resident together).
pub(crate) fn resource_limits(
    family: Family,
    value: u32,
    waves_per_group: u32,
) -> Result<(), String> {
    let fields = table(family)
        .get(u32::from(off::COMPUTE_RESOURCE_LIMITS))
        .map_or(&[][..], |r| r.fields);
    let known = fields.iter().fold(0, |m, f| m | f.mask());
    if value & !known != 0 {
        return Err(format!(
            "COMPUTE_RESOURCE_LIMITS {value:#x} sets reserved bits {:#x}",
            value & !known
        ));
    }
    for f in fields {
        let v = f.get(value);
        match limit_effect(f.name) {
            Some(LimitEffect::WavesPerSh) if v != 0 && v < waves_per_group => {
                return Err(format!(
                    "COMPUTE_RESOURCE_LIMITS WAVES_PER_SH is {v}, fewer than the {waves_per_group} \
                     waves of one workgroup: the dispatch could never launch"
                ))
            }
            Some(LimitEffect::WavesPerSh | LimitEffect::GroupsPerCu | LimitEffect::Placement) => {}
            None => {
                return Err(format!(
                    "COMPUTE_RESOURCE_LIMITS field {} has no known effect",
                    f.name
                ))
            }
        }
    }
    Ok(())
}

/// How a programmed COMPUTE_PGM_RSRC1/2/3 differs from what the kernel's
/// code needs (its descriptor's value): each field by its effect. Wave
/// state must be the descriptor's, the VGPR allocation at least its; the
/// user SGPR count, LDS, scratch and TRAP_PRESENT are checked by the
/// caller; scheduling fields may hold anything. Returns the differing
/// fields, described.
pub(crate) fn pgm_differences(family: Family, register: u16, found: u32, code: u32) -> Vec<String> {
    let Some(reg) = table(family).get(u32::from(register)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let described = reg.fields.iter().fold(0, |m, f| m | f.mask());
    if (found ^ code) & !described != 0 {
        out.push(format!("undefined bits {:#x}", (found ^ code) & !described));
    }
    for f in reg.fields {
        let (v, want) = (f.get(found), f.get(code));
        let wrong = match pgm_effect(reg.name, f.name) {
            PgmEffect::WaveState => v != want,
            PgmEffect::VgprAllocation => v < want,
            PgmEffect::UserSgprCount
            | PgmEffect::LdsAllocation
            | PgmEffect::Scratch
            | PgmEffect::TrapPresent
            | PgmEffect::Scheduling
            | PgmEffect::Ignored => false,
        };
        if wrong {
            out.push(format!("{} {v:#x}, the code's {want:#x}", f.name));
        }
    }
    out
}

/// Why the model cannot run a kernel with this descriptor, whatever the IB
/// programs: every reason, each naming what is not modelled. (The
/// hardware would run it; the model has no state behind these.) Scratch
/// is modelled: the IB's registers give the ring (`scratch`).
pub(crate) fn unmodelled(kd: &KernelDescriptor, family: Family) -> Vec<String> {
    let mut out = Vec::new();
    if kd.kernarg_preload != 0 {
        out.push(format!(
            "kernarg preload ({:#06x}): SGPRs preloaded with kernel arguments are not modelled",
            kd.kernarg_preload
        ));
    }
    if kd.wants_private_segment_buffer() && !family.user_sgprs().private_segment_buffer {
        out.push(format!(
            "a private segment buffer, which {family} does not deliver"
        ));
    }
    let count = kd.user_sgpr_count();
    let enabled = enabled_user_sgprs(kd);
    if count > MAX_USER_SGPRS {
        out.push(format!(
            "RSRC2.USER_SGPR {count}: only {MAX_USER_SGPRS} USER_DATA registers can be loaded"
        ));
    } else if count < enabled {
        let names = [
            (
                kd.wants_private_segment_buffer(),
                "the private segment buffer",
            ),
            (kd.wants_dispatch_ptr(), "the dispatch pointer"),
            (kd.wants_queue_ptr(), "the queue pointer"),
            (kd.wants_kernarg_segment_ptr(), "the kernarg pointer"),
            (kd.wants_dispatch_id(), "the dispatch id"),
            (kd.wants_flat_scratch_init(), "flat scratch init"),
            (kd.wants_private_segment_size(), "the private segment size"),
        ];
        let listed: Vec<&str> = names
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, n)| *n)
            .collect();
        out.push(format!(
            "RSRC2.USER_SGPR {count} is fewer than the {enabled} its enabled user SGPRs take \
             ({}): the code would read them past the loaded ones",
            listed.join(", ")
        ));
    }
    out
}

/// Waves one workgroup of `threads` work-items takes.
pub(crate) fn waves(threads: u64, wave32: bool) -> u32 {
    let lanes = if wave32 { 32 } else { 64 };
    threads.div_ceil(lanes).min(u64::from(u32::MAX)) as u32
}

/// LDS bytes RSRC2 gives a dispatch on `family`.
pub(crate) fn lds_bytes(family: Family, rsrc2: u32) -> u32 {
    dispatch::lds_bytes(family, rsrc2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use relaunch_facts::regs::{INIT_COMPUTE_SHADER_EN, INIT_CS_W32_EN};

    const EMITTED_W32: u32 = 0x8045;

    #[test]
    fn initiator_accepts_every_modelled_combination() {
        for f in Family::ALL {
            let l = initiator(f, EMITTED_W32, true).unwrap();
            assert!(l.start_at_zero && !l.thread_dims);
            assert!(initiator(f, 0x45, false).is_ok());
            // ORDER_MODE and FORCE_START_AT_000 clear, thread dimensions set.
            let l = initiator(f, INIT_COMPUTE_SHADER_EN.mask() | 1 << 5, false).unwrap();
            assert!(l.thread_dims && !l.start_at_zero);
        }
        // DISABLE_DISP_PREMPT_EN exists from gfx11 on.
        assert!(initiator(Family::Gfx11, EMITTED_W32 | 1 << 17, true).is_ok());
        let e = initiator(Family::Gfx10, EMITTED_W32 | 1 << 17, true).unwrap_err();
        assert!(e.contains("reserved"), "{e}");
    }

    #[test]
    fn initiator_refuses_unmodelled_bits_by_name() {
        for (bit, name) in [
            (14, "RESTORE"),
            (3, "ORDERED_APPEND_ENBL"),
            (13, "TUNNEL_ENABLE"),
            (1, "PARTIAL_TG_EN"),
        ] {
            let e = initiator(Family::Gfx11, EMITTED_W32 | 1 << bit, true).unwrap_err();
            assert!(e.contains(name), "{e}");
        }
        let e = initiator(Family::Gfx11, EMITTED_W32 | 1 << 30, true).unwrap_err();
        assert!(e.contains("reserved"), "{e}");
        let e = initiator(Family::Gfx12, EMITTED_W32 & !1, true).unwrap_err();
        assert!(e.contains("lacks COMPUTE_SHADER_EN"), "{e}");
        let e = initiator(Family::Gfx12, EMITTED_W32 & !INIT_CS_W32_EN.mask(), true).unwrap_err();
        assert!(e.contains("CS_W32_EN"), "{e}");
    }

    #[test]
    fn resource_limits_are_modelled_by_meaning() {
        for f in Family::ALL {
            assert!(resource_limits(f, 0, 16).is_ok());
            // WAVES_PER_SH 16, TG_PER_CU 2, CU_GROUP_COUNT 1, SIMD_DEST_CNTL.
            let v = 16 | 2 << 12 | 1 << 22 | 1 << 24;
            assert!(resource_limits(f, v, 16).is_ok(), "{f}");
            let e = resource_limits(f, 4, 16).unwrap_err();
            assert!(e.contains("WAVES_PER_SH is 4"), "{e}");
            let e = resource_limits(f, 1 << 31, 1).unwrap_err();
            assert!(e.contains("reserved"), "{e}");
        }
    }

    #[test]
    fn rsrc1_wave_state_must_match_vgprs_may_grow() {
        let code = 0x0020_0042; // VGPRS 2, SGPRS 1, DX10_CLAMP
        let f = Family::Gfx11;
        assert!(pgm_differences(f, off::COMPUTE_PGM_RSRC1, code, code).is_empty());
        assert!(pgm_differences(f, off::COMPUTE_PGM_RSRC1, code + 1, code).is_empty());
        let d = pgm_differences(f, off::COMPUTE_PGM_RSRC1, code - 1, code);
        assert!(d[0].contains("VGPRS"), "{d:?}");
        // PRIORITY is scheduling; FLOAT_MODE is wave state.
        assert!(pgm_differences(f, off::COMPUTE_PGM_RSRC1, code | 3 << 10, code).is_empty());
        let d = pgm_differences(f, off::COMPUTE_PGM_RSRC1, code ^ 1 << 16, code);
        assert!(d[0].contains("FLOAT_MODE"), "{d:?}");
    }
}
