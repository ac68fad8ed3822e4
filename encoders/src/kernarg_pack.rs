//! Packing a kernarg segment: the caller's explicit arguments, then every
//! hidden argument the direct PM4 path can fill honestly (block counts,
//! group sizes, remainders, grid dims, dynamic LDS size, zero global
//! offsets) and `__local` pointer offsets, at the offsets the metadata
//! declares. Kinds with no honest value were refused by the verdict, and a
//! kernel with such an argument is not packed at all (other PM4 refusals
//! do not change the hidden arguments: those kernels run as public AQL).

use relaunch_device::codeobj::{ArgFill, Axis, KernelInfo};

use crate::verdict::kernel_verdict;

/// Why a kernarg segment could not be packed; the message names the kernel.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct KernargError(String);

type Result<T> = std::result::Result<T, KernargError>;

/// One launch's geometry (work-items), as the hidden arguments see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_group_bytes: u32,
}

/// The full kernarg segment for `kernel`: `explicit` holds the explicit
/// arguments packed at their metadata offsets (it may stop after the last
/// explicit argument); hidden arguments are filled from `geometry`.
pub fn pack(kernel: &KernelInfo, explicit: &[u8], geometry: &Geometry) -> Result<Vec<u8>> {
    // An argument neither path can fill makes the segment meaningless.
    // Other PM4 refusals (scratch, SGPRs the CP delivers) leave the hidden
    // arguments as HSA defines them: such a kernel runs as public AQL.
    let verdict = kernel_verdict(kernel);
    if !verdict.aql_refusals().is_empty() {
        return Err(KernargError(format!(
            "{}: the PM4 verdict refused this kernel ({verdict}), and the public-AQL path cannot \
             fill those arguments either; its kernargs are not packed",
            kernel.name
        )));
    }
    let size = kernel.kernarg_size as usize;
    if explicit.len() > size {
        return Err(KernargError(format!(
            "{}: {} explicit kernarg bytes exceed the kernel's {size}-byte segment",
            kernel.name,
            explicit.len()
        )));
    }
    let mut out = vec![0u8; size];
    out[..explicit.len()].copy_from_slice(explicit);
    let dynamic_pointers = kernel
        .args
        .iter()
        .filter(|a| a.fill() == ArgFill::DynamicLdsOffset)
        .count();
    if dynamic_pointers > 1 {
        return Err(KernargError(format!(
            "{}: {dynamic_pointers} __local pointer arguments; one dynamic group size can only \
             place one (split the LDS by hand in the kernel)",
            kernel.name
        )));
    }
    let axis = |a: Axis| match a {
        Axis::X => 0,
        Axis::Y => 1,
        Axis::Z => 2,
    };
    let Geometry {
        grid,
        block,
        dynamic_group_bytes,
    } = *geometry;
    for arg in &kernel.args {
        let value: u64 = match arg.fill() {
            ArgFill::Caller | ArgFill::Ignored => continue,
            ArgFill::Zero => 0,
            ArgFill::BlockCount(a) => {
                let (g, b) = (grid[axis(a)], block[axis(a)].max(1));
                u64::from(g.div_ceil(b))
            }
            ArgFill::GroupSize(a) => u64::from(block[axis(a)]),
            ArgFill::Remainder(a) => u64::from(grid[axis(a)] % block[axis(a)].max(1)),
            ArgFill::GridDims => {
                if grid[2] > 1 {
                    3
                } else if grid[1] > 1 {
                    2
                } else {
                    1
                }
            }
            ArgFill::DynamicLdsSize => u64::from(dynamic_group_bytes),
            ArgFill::DynamicLdsOffset => {
                let align = arg.pointee_align.unwrap_or(16).max(1);
                let offset = u64::from(kernel.group_segment_size)
                    .checked_next_multiple_of(u64::from(align))
                    .filter(|&o| o <= u64::from(u32::MAX))
                    .ok_or_else(|| {
                        KernargError(format!(
                            "{}: static LDS of {} bytes aligned to {align} overflows the 32-bit \
                             dynamic LDS offset",
                            kernel.name, kernel.group_segment_size
                        ))
                    })?;
                offset
            }
            // Null, as HIP passes it, or a placeholder: the public-AQL path
            // writes the hostcall buffer's address at install, and the PM4
            // verdict accepts a hostcall kernel only when its code
            // provably never reads the argument.
            ArgFill::Unfillable if arg.value_kind.aql_fill().is_some() => 0,
            ArgFill::Unfillable => {
                return Err(KernargError(format!(
                    "{}: argument {} at offset {} has no honest value on the PM4 path",
                    kernel.name, arg.value_kind, arg.offset
                )))
            }
        };
        let (start, len) = (arg.offset as usize, arg.size as usize);
        let Some(slot) = start
            .checked_add(len)
            .and_then(|end| out.get_mut(start..end))
        else {
            return Err(KernargError(format!(
                "{}: argument {} at offset {start} (+{len}) lies outside the {size}-byte segment",
                kernel.name, arg.value_kind
            )));
        };
        if arg.fill() != ArgFill::DynamicLdsOffset && start < explicit.len() {
            return Err(KernargError(format!(
                "{}: the {} explicit bytes given overlap hidden argument {} at offset {start}",
                kernel.name,
                explicit.len(),
                arg.value_kind
            )));
        }
        let bytes = value.to_le_bytes();
        let n = len.min(8);
        slot[..n].copy_from_slice(&bytes[..n]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use relaunch_device::codeobj::{KernelArg, ValueKind};
    use relaunch_device::GfxTarget;
    use relaunch_facts::descriptor::{properties, rsrc2, KernelDescriptor};

    /// A kernel with one `__local` pointer at offset 0 and `lds` bytes of
    /// static LDS in its descriptor and `md_lds` in its metadata, as a
    /// crafted code object may declare them.
    fn kernel(lds: u32, md_lds: u32) -> KernelInfo {
        KernelInfo {
            name: "crafted".into(),
            symbol: "crafted.kd".into(),
            target: GfxTarget::parse("gfx1100").unwrap(),
            descriptor: KernelDescriptor {
                group_segment_fixed_size: lds,
                private_segment_fixed_size: 0,
                kernarg_size: 8,
                kernel_code_entry_byte_offset: 0,
                compute_pgm_rsrc3: 0,
                compute_pgm_rsrc1: 0,
                compute_pgm_rsrc2: 2 << rsrc2::USER_SGPR_SHIFT,
                kernel_code_properties: properties::KERNARG_SEGMENT_PTR,
                kernarg_preload: 0,
            },
            kd_vaddr: 0,
            code_entry_offset: 0,
            kernarg_size: 8,
            kernarg_align: 8,
            args: vec![KernelArg {
                offset: 0,
                size: 8,
                value_kind: ValueKind::DynamicSharedPointer,
                name: None,
                type_name: None,
                address_space: Some("local".into()),
                pointee_align: Some(256),
            }],
            group_segment_size: md_lds,
            private_segment_size: 0,
            wavefront_size: 32,
            uses_dynamic_stack: false,
            max_flat_workgroup_size: None,
            registers: Default::default(),
            unread: Default::default(),
        }
    }

    const GEOMETRY: Geometry = Geometry {
        grid: [64, 1, 1],
        block: [64, 1, 1],
        dynamic_group_bytes: 0,
    };

    #[test]
    fn static_lds_near_4gib_does_not_wrap_the_dynamic_offset() {
        // Accepted descriptor, metadata disagreeing (the reader refuses
        // that, but a hand-built KernelInfo can): the arithmetic itself
        // must refuse, not wrap to offset 0.
        let k = kernel(0, u32::MAX - 7);
        let err = pack(&k, &[], &GEOMETRY).unwrap_err().to_string();
        assert!(err.contains("overflows"), "{err}");
        let ok = pack(&kernel(100, 100), &[], &GEOMETRY).unwrap();
        assert_eq!(u64::from_le_bytes(ok[..8].try_into().unwrap()), 256);
    }

    #[test]
    fn kernels_the_verdict_refused_are_not_packed() {
        let err = pack(&kernel(u32::MAX - 7, u32::MAX - 7), &[], &GEOMETRY)
            .unwrap_err()
            .to_string();
        assert!(err.contains("verdict refused"), "{err}");
    }
}
