//! The PM4 acceptance verdict: can the direct PM4 path run this kernel with
//! exactly the state the hardware would get from a full AQL dispatch? Every
//! reason for refusal is collected, never only the first (PM4.md,
//! "Acceptance for the direct PM4 path"). This is the encoder's policy: the
//! code-object reader (`relaunch-device`) only reports what a kernel asks
//! for; which SGPRs are delivered and the target's limits are facts
//! (`relaunch-facts`).

use std::fmt;

use relaunch_device::codeobj::{
    AqlFill, ArgFill, KernelArg, KernelDescriptor, KernelInfo, UnreadInputs, ValueKind,
};
use relaunch_facts::family::MAX_USER_SGPRS;
use relaunch_facts::sgprs::{enabled_user_sgprs, user_sgpr_padding};
use relaunch_facts::{Family, Limits};

/// COMPUTE_PGM_LO holds the entry address >> 8.
const CODE_ENTRY_ALIGN: u64 = 256;

/// One reason the direct PM4 path refuses a kernel.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// The kernel needs more scratch (private segment) memory per
    /// work-item than the PM4 path gives
    /// ([`crate::scratch::MAX_PRIVATE_SEGMENT_BYTES`]).
    Scratch { private_segment_fixed_size: u32 },
    /// Scratch on a family whose waves find their scratch only through the
    /// private segment buffer or flat scratch init SGPRs, asking for
    /// neither.
    ScratchWithoutBase,
    /// The kernel's stack size is only known at run time.
    DynamicStack,
    /// Needs the AQL queue pointer in SGPRs.
    QueuePtr,
    /// Needs a dispatch id in SGPRs.
    DispatchId,
    /// Needs flat scratch initialisation.
    FlatScratchInit,
    /// Needs the private segment size in an SGPR.
    PrivateSegmentSize,
    /// Asks for a private segment buffer on a family that has none to give.
    PrivateSegmentBufferOnGfx12,
    /// Uses kernarg preloading (V5 field), which needs the AQL packet.
    KernargPreload { preload: u16 },
    /// RSRC2 asks for more user SGPRs than USER_DATA can hold.
    TooManyUserSgprs { count: u32 },
    /// RSRC2's user SGPR count differs from what the enabled user SGPRs
    /// take (`delivered`: their total, which is what the encoder delivers
    /// when none of them is refused), beyond explained padding.
    UserSgprMismatch { rsrc2: u32, delivered: u32 },
    /// Static LDS beyond what one workgroup may use on the target.
    LdsTooLarge { bytes: u32, limit: u32 },
    /// The kernel's target is outside RDNA1-4.
    UnsupportedTarget { target: String },
    /// A hidden argument the library cannot fill honestly.
    UnfillableHiddenArgument { value_kind: String, offset: u32 },
    /// The code entry is not 256-byte aligned, so COMPUTE_PGM_LO/HI
    /// (entry >> 8) cannot address it.
    MisalignedCodeEntry { offset: u64 },
    /// An explicit argument of a kind that needs runtime objects (image,
    /// sampler, pipe, queue) or that this reader does not know.
    UnsupportedArgument { value_kind: String, offset: u32 },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Scratch {
                private_segment_fixed_size,
            } => write!(
                f,
                "scratch of {private_segment_fixed_size} bytes per work-item (the PM4 path gives \
                 at most {})",
                crate::scratch::MAX_PRIVATE_SEGMENT_BYTES
            ),
            Refusal::ScratchWithoutBase => f.write_str(
                "scratch without the private segment buffer or flat scratch init SGPRs (no \
                 scratch base would reach the waves)",
            ),
            Refusal::DynamicStack => f.write_str("dynamic stack"),
            Refusal::QueuePtr => f.write_str("queue ptr"),
            Refusal::DispatchId => f.write_str("dispatch id"),
            Refusal::FlatScratchInit => f.write_str("flat scratch init"),
            Refusal::PrivateSegmentSize => f.write_str("private segment size SGPR"),
            Refusal::PrivateSegmentBufferOnGfx12 => {
                f.write_str("private segment buffer SGPRs (not available on gfx12)")
            }
            Refusal::KernargPreload { preload } => {
                write!(f, "kernarg preload (field 0x{preload:04x})")
            }
            Refusal::TooManyUserSgprs { count } => {
                write!(f, "too many user SGPRs ({count} > {MAX_USER_SGPRS})")
            }
            Refusal::UserSgprMismatch { rsrc2, delivered } => write!(
                f,
                "user SGPR count mismatch (RSRC2 says {rsrc2}, the enabled user SGPRs take {delivered})"
            ),
            Refusal::LdsTooLarge { bytes, limit } => {
                write!(f, "LDS {bytes} bytes exceeds {limit}")
            }
            Refusal::UnsupportedTarget { target } => {
                write!(f, "unsupported target family ({target})")
            }
            Refusal::UnfillableHiddenArgument { value_kind, offset } => {
                write!(
                    f,
                    "unfillable hidden argument {value_kind} at offset {offset}"
                )
            }
            Refusal::MisalignedCodeEntry { offset } => {
                write!(f, "code entry 0x{offset:x} is not 256-byte aligned")
            }
            Refusal::UnsupportedArgument { value_kind, offset } => {
                write!(f, "unsupported argument kind {value_kind} at offset {offset}")
            }
        }
    }
}

/// True when the kernel reads its AQL dispatch packet (code object v4 HIP
/// kernels read blockDim and gridDim there; v5 ones their grid size): the
/// PM4 path then writes a `hsa_kernel_dispatch_packet_t` image per dispatch
/// beside its kernarg block and delivers its address in the dispatch-pointer
/// user SGPRs, as the CP does for an AQL dispatch. The queue pointer and the
/// dispatch id have no such stand-in: they are refused unless the code
/// provably never reads them ([`UnreadInputs`]), when zeros stand there.
pub fn synthesizes_dispatch_packet(kd: &KernelDescriptor) -> bool {
    kd.wants_dispatch_ptr()
}

/// Every refusal that follows from the descriptor alone for a target of
/// `family` with `limits`. Metadata-level refusals (hidden arguments,
/// target, code entry) are added by [`kernel_verdict`].
pub fn descriptor_refusals(kd: &KernelDescriptor, family: Family, limits: &Limits) -> Vec<Refusal> {
    refusals_on(kd, Some(family), limits, UnreadInputs::NONE)
}

/// [`descriptor_refusals`] for a kernel whose code provably never reads
/// `unread` (the reader's proof): those inputs are not refused.
pub fn descriptor_refusals_given(
    kd: &KernelDescriptor,
    family: Family,
    limits: &Limits,
    unread: UnreadInputs,
) -> Vec<Refusal> {
    refusals_on(kd, Some(family), limits, unread)
}

/// The descriptor's refusals; `family` is `None` for an unsupported target,
/// whose SGPR layout is unknown: then only the reasons that hold on any
/// target are given.
fn refusals_on(
    kd: &KernelDescriptor,
    family: Option<Family>,
    limits: &Limits,
    unread: UnreadInputs,
) -> Vec<Refusal> {
    let mut out = Vec::new();
    // Scratch is given (`crate::scratch`) up to a per-work-item cap.
    if kd.private_segment_fixed_size > crate::scratch::MAX_PRIVATE_SEGMENT_BYTES {
        out.push(Refusal::Scratch {
            private_segment_fixed_size: kd.private_segment_fixed_size,
        });
    }
    let flat_scratch = family.map(|f| f.scratch().flat_scratch);
    let init = flat_scratch == Some(relaunch_facts::family::FlatScratch::Init);
    if init
        && kd.scratch_enabled()
        && !kd.wants_private_segment_buffer()
        && !kd.wants_flat_scratch_init()
    {
        out.push(Refusal::ScratchWithoutBase);
    }
    if kd.uses_dynamic_stack() {
        out.push(Refusal::DynamicStack);
    }
    if kd.wants_queue_ptr() && !unread.queue_ptr {
        out.push(Refusal::QueuePtr);
    }
    if kd.wants_dispatch_id() && !unread.dispatch_id {
        out.push(Refusal::DispatchId);
    }
    // Delivered where waves build FLAT_SCRATCH themselves (gfx10); with
    // architected flat scratch there is nothing to deliver.
    let architected = flat_scratch == Some(relaunch_facts::family::FlatScratch::Architected);
    if kd.wants_flat_scratch_init() && architected {
        out.push(Refusal::FlatScratchInit);
    }
    if kd.wants_private_segment_size() && architected {
        out.push(Refusal::PrivateSegmentSize);
    }
    let psb_missing = family.is_some_and(|f| !f.user_sgprs().private_segment_buffer);
    if kd.wants_private_segment_buffer() && psb_missing {
        out.push(Refusal::PrivateSegmentBufferOnGfx12);
    }
    if kd.kernarg_preload != 0 {
        out.push(Refusal::KernargPreload {
            preload: kd.kernarg_preload,
        });
    }
    let count = kd.user_sgpr_count();
    if count > MAX_USER_SGPRS {
        out.push(Refusal::TooManyUserSgprs { count });
    } else {
        let enabled = enabled_user_sgprs(kd);
        if family.is_some() && count != enabled + user_sgpr_padding(kd) {
            out.push(Refusal::UserSgprMismatch {
                rsrc2: count,
                delivered: enabled,
            });
        }
    }
    if kd.group_segment_fixed_size > limits.max_lds_bytes {
        out.push(Refusal::LdsTooLarge {
            bytes: kd.group_segment_fixed_size,
            limit: limits.max_lds_bytes,
        });
    }
    out
}

/// Refusals that follow from the metadata's argument list: hidden arguments
/// the library cannot fill honestly and explicit arguments of kinds it cannot
/// supply (see `args.rs` for which are which and why).
pub fn argument_refusals(args: &[KernelArg]) -> Vec<Refusal> {
    argument_refusals_given(args, UnreadInputs::NONE)
}

/// [`argument_refusals`] for a kernel whose code provably never reads
/// `unread`. Besides, the hidden arguments HIP passes null on every launch
/// without device enqueue or a multi-device cooperative group
/// ([`AqlFill::Null`]) get that null on the PM4 path too.
pub fn argument_refusals_given(args: &[KernelArg], unread: UnreadInputs) -> Vec<Refusal> {
    let filled = |a: &KernelArg| match a.value_kind.aql_fill() {
        Some(AqlFill::Null) => true,
        Some(AqlFill::HostcallBuffer) => unread.hostcall_buffer,
        None => false,
    };
    args.iter()
        .filter(|a| a.fill() == ArgFill::Unfillable && !filled(a))
        .map(|a| {
            let value_kind = a.value_kind.to_string();
            if a.value_kind.is_hidden() {
                Refusal::UnfillableHiddenArgument {
                    value_kind,
                    offset: a.offset,
                }
            } else {
                Refusal::UnsupportedArgument {
                    value_kind,
                    offset: a.offset,
                }
            }
        })
        .collect()
}

/// The whole verdict for one kernel as the code-object reader read it:
/// descriptor refusals on its target (family-dependent ones only when the
/// target is supported, else an unsupported-target refusal first), what
/// the metadata adds (a dynamic stack the descriptor bit missed, a code
/// entry COMPUTE_PGM cannot address), then the argument refusals.
pub fn kernel_verdict(info: &KernelInfo) -> Verdict {
    let kd = &info.descriptor;
    let mut refusals = match info.target.facts() {
        Ok(row) => refusals_on(kd, Some(row.family), &row.limits, info.unread),
        Err(_) => {
            let mut r = refusals_on(kd, None, &Limits::ANY_TARGET, info.unread);
            r.insert(
                0,
                Refusal::UnsupportedTarget {
                    target: info.target.to_string(),
                },
            );
            r
        }
    };
    refusals.extend(argument_refusals_given(&info.args, info.unread));
    if info.uses_dynamic_stack && !kd.uses_dynamic_stack() {
        // The metadata knows more than the descriptor bit: still refuse.
        refusals.push(Refusal::DynamicStack);
    }
    if info.code_entry_offset % CODE_ENTRY_ALIGN != 0 {
        refusals.push(Refusal::MisalignedCodeEntry {
            offset: info.code_entry_offset,
        });
    }
    Verdict {
        refusals,
        dispatch_packet: synthesizes_dispatch_packet(kd),
    }
}

/// `info.pm4_verdict()`: the verdict of a kernel the reader returned.
pub trait Pm4Verdict {
    /// Can the direct PM4 path run this kernel, and if not, every reason.
    fn pm4_verdict(&self) -> Verdict;
}

impl Pm4Verdict for KernelInfo {
    fn pm4_verdict(&self) -> Verdict {
        kernel_verdict(self)
    }
}

/// The verdict for one kernel: accepted when no refusal applies.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Verdict {
    pub refusals: Vec<Refusal>,
    /// The kernel reads the dispatch packet, which the PM4 path synthesizes
    /// (see [`synthesizes_dispatch_packet`]); shown beside "accepted".
    pub dispatch_packet: bool,
}

impl Verdict {
    pub fn accepted(&self) -> bool {
        self.refusals.is_empty()
    }

    /// The refusals the public-AQL path shares (it is architecture-neutral
    /// and the packet processor programs the rest from the descriptor,
    /// and relaunch's hostcall service fills `hidden_hostcall_buffer`, but
    /// it has no image/sampler objects or OpenCL printf buffer either, and
    /// the workgroup LDS limit is the hardware's): the arguments relaunch
    /// cannot fill on an AQL dispatch ([`ValueKind::aql_fill`] says which
    /// it can), and static LDS past the limit. Empty when public AQL can
    /// run it.
    pub fn aql_refusals(&self) -> Vec<&Refusal> {
        self.refusals
            .iter()
            .filter(|r| match r {
                Refusal::UnfillableHiddenArgument { value_kind, .. } => {
                    ValueKind::parse(value_kind).aql_fill().is_none()
                }
                Refusal::UnsupportedArgument { .. } | Refusal::LdsTooLarge { .. } => true,
                _ => false,
            })
            .collect()
    }

    /// True when a kernel needs relaunch's hostcall service (its
    /// `hidden_hostcall_buffer`: HIP's device printf): the PM4 path
    /// refuses it, the public-AQL path serves it.
    pub fn needs_hostcall(&self) -> bool {
        self.refusals.iter().any(|r| {
            matches!(r, Refusal::UnfillableHiddenArgument { value_kind, .. }
                if ValueKind::parse(value_kind) == ValueKind::HiddenHostcallBuffer)
        })
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.accepted() {
            return f.write_str(if self.dispatch_packet {
                "accepted (dispatch packet synthesized)"
            } else {
                "accepted"
            });
        }
        f.write_str("refused: ")?;
        for (i, r) in self.refusals.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relaunch_device::codeobj::{KernelArg, ValueKind};
    use relaunch_device::GfxTarget;
    use relaunch_facts::descriptor::{properties as p, rsrc2};
    use relaunch_facts::sgprs::delivered_user_sgprs;

    const RDNA: Limits = Limits::RDNA;

    /// `kd` as the reader would return it for `target`.
    fn info(kd: KernelDescriptor, target: &str, args: Vec<KernelArg>) -> KernelInfo {
        KernelInfo {
            name: "k".into(),
            symbol: "k.kd".into(),
            target: GfxTarget::parse(target).unwrap(),
            descriptor: kd,
            kd_vaddr: 0,
            code_entry_offset: 0,
            kernarg_size: kd.kernarg_size,
            kernarg_align: 8,
            args,
            group_segment_size: kd.group_segment_fixed_size,
            private_segment_size: kd.private_segment_fixed_size,
            wavefront_size: kd.wavefront_size(),
            uses_dynamic_stack: kd.uses_dynamic_stack(),
            max_flat_workgroup_size: None,
            registers: Default::default(),
            unread: Default::default(),
        }
    }

    fn kd(props: u16, user_sgprs: u32) -> KernelDescriptor {
        KernelDescriptor {
            group_segment_fixed_size: 0,
            private_segment_fixed_size: 0,
            kernarg_size: 8,
            kernel_code_entry_byte_offset: 0,
            compute_pgm_rsrc3: 0,
            compute_pgm_rsrc1: 0,
            compute_pgm_rsrc2: user_sgprs << rsrc2::USER_SGPR_SHIFT,
            kernel_code_properties: props,
            kernarg_preload: 0,
        }
    }

    #[test]
    fn kernarg_only_kernel_is_accepted_everywhere() {
        let k = kd(p::KERNARG_SEGMENT_PTR | p::WAVEFRONT_SIZE32, 2);
        for fam in [Family::Gfx10, Family::Gfx11, Family::Gfx12] {
            assert!(descriptor_refusals(&k, fam, &RDNA).is_empty());
        }
    }

    #[test]
    fn private_segment_buffer_counts_on_gfx10_11_only() {
        let k = kd(p::PRIVATE_SEGMENT_BUFFER | p::KERNARG_SEGMENT_PTR, 6);
        assert!(descriptor_refusals(&k, Family::Gfx11, &RDNA).is_empty());
        let refusals = descriptor_refusals(&k, Family::Gfx12, &RDNA);
        assert!(refusals.contains(&Refusal::PrivateSegmentBufferOnGfx12));
    }

    #[test]
    fn collects_every_reason() {
        let mut k = kd(
            p::DISPATCH_PTR
                | p::QUEUE_PTR
                | p::KERNARG_SEGMENT_PTR
                | p::DISPATCH_ID
                | p::FLAT_SCRATCH_INIT,
            11, // the enabled SGPRs take 10
        );
        k.private_segment_fixed_size = 70_000;
        let v = Verdict {
            refusals: descriptor_refusals(&k, Family::Gfx11, &RDNA),
            dispatch_packet: true,
        };
        let text = v.to_string();
        for needle in [
            "scratch",
            "queue ptr",
            "dispatch id",
            "flat scratch init",
            "mismatch",
        ] {
            assert!(text.contains(needle), "{text}");
        }
    }

    #[test]
    fn a_kernel_needing_the_dispatch_id_is_refused_with_the_reason() {
        // The dispatch packet is synthesized, the dispatch id (2 SGPRs
        // after the kernarg pointer) has no stand-in: refused, saying so,
        // on every family.
        let k = kd(
            p::DISPATCH_PTR | p::KERNARG_SEGMENT_PTR | p::DISPATCH_ID | p::WAVEFRONT_SIZE32,
            6,
        );
        for fam in [Family::Gfx10, Family::Gfx11, Family::Gfx12] {
            assert_eq!(
                descriptor_refusals(&k, fam, &RDNA),
                vec![Refusal::DispatchId],
                "{fam:?}"
            );
        }
        let v = kernel_verdict(&info(k, "gfx1201", vec![]));
        assert!(!v.accepted());
        assert!(v.to_string().contains("dispatch id"), "{v}");
    }

    #[test]
    fn gfx1100_init16_padding_is_accepted_other_surplus_is_not() {
        // counter.kd as clang-19 writes it for gfx1100: 15 user SGPRs
        // (2 kernarg + 13 padding) + TGID_X = 16.
        let mut k = kd(p::KERNARG_SEGMENT_PTR | p::WAVEFRONT_SIZE32, 15);
        k.compute_pgm_rsrc2 |= rsrc2::TGID_X_EN;
        assert_eq!(user_sgpr_padding(&k), 13);
        assert!(descriptor_refusals(&k, Family::Gfx11, &RDNA).is_empty());
        k.compute_pgm_rsrc2 &= !rsrc2::TGID_X_EN;
        assert_eq!(user_sgpr_padding(&k), 0);
        assert_eq!(
            descriptor_refusals(&k, Family::Gfx11, &RDNA),
            vec![Refusal::UserSgprMismatch {
                rsrc2: 15,
                delivered: 2
            }]
        );
    }

    #[test]
    fn refused_sgprs_do_not_also_report_a_mismatch() {
        let k = kd(
            p::PRIVATE_SEGMENT_BUFFER | p::QUEUE_PTR | p::KERNARG_SEGMENT_PTR,
            8,
        );
        assert_eq!(
            descriptor_refusals(&k, Family::Gfx10, &RDNA),
            vec![Refusal::QueuePtr]
        );
    }

    #[test]
    fn dispatch_ptr_is_delivered_not_refused() {
        // A code object v4 HIP kernel on gfx1100: dispatch ptr + kernarg
        // ptr (4) padded to 15 with TGID_X.
        let mut k = kd(
            p::DISPATCH_PTR | p::KERNARG_SEGMENT_PTR | p::WAVEFRONT_SIZE32,
            15,
        );
        k.compute_pgm_rsrc2 |= rsrc2::TGID_X_EN;
        assert!(descriptor_refusals(&k, Family::Gfx11, &RDNA).is_empty());
        assert_eq!(delivered_user_sgprs(&k, Family::Gfx11.user_sgprs()), 4);
        assert_eq!(user_sgpr_padding(&k), 11);
        let v = kernel_verdict(&info(k, "gfx1100", vec![]));
        assert_eq!(v.to_string(), "accepted (dispatch packet synthesized)");
        let k = kd(p::DISPATCH_PTR | p::KERNARG_SEGMENT_PTR, 4);
        assert!(descriptor_refusals(&k, Family::Gfx12, &RDNA).is_empty());
    }

    #[test]
    fn kernel_verdict_adds_target_and_argument_reasons() {
        let arg = |offset, kind: &str| KernelArg {
            offset,
            size: 8,
            value_kind: ValueKind::parse(kind),
            name: None,
            type_name: None,
            address_space: None,
            pointee_align: None,
        };
        let args = [
            arg(0, "global_buffer"),
            arg(8, "image"),
            arg(16, "hidden_block_count_x"),
            arg(24, "hidden_hostcall_buffer"),
        ];
        let k = kd(p::KERNARG_SEGMENT_PTR | p::WAVEFRONT_SIZE32, 2);
        let v = kernel_verdict(&info(k, "gfx1100", args.to_vec()));
        assert_eq!(
            v.to_string(),
            "refused: unsupported argument kind image at offset 8, \
             unfillable hidden argument hidden_hostcall_buffer at offset 24"
        );
        let v = info(k, "gfx90a", args[..1].to_vec()).pm4_verdict();
        assert_eq!(v.to_string(), "refused: unsupported target family (gfx90a)");
        let mut misaligned = info(k, "gfx1100", vec![]);
        misaligned.code_entry_offset = 0x1040;
        misaligned.uses_dynamic_stack = true;
        assert_eq!(
            misaligned.pm4_verdict().refusals,
            vec![
                Refusal::DynamicStack,
                Refusal::MisalignedCodeEntry { offset: 0x1040 }
            ]
        );
    }
}
