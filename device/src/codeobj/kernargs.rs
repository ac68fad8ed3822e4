//! Packing a kernarg segment: the caller's explicit arguments, then every
//! hidden argument the direct PM4 path can fill honestly (block counts,
//! group sizes, remainders, grid dims, dynamic LDS size, zero global
//! offsets) and `__local` pointer offsets, at the offsets the metadata
//! declares. Kinds with no honest value were refused by the verdict.

use super::args::{ArgFill, Axis};
use super::kernel::KernelInfo;

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
                u64::from(kernel.group_segment_size.next_multiple_of(align))
            }
            ArgFill::Unfillable => {
                return Err(KernargError(format!(
                    "{}: argument {} at offset {} has no honest value on the PM4 path",
                    kernel.name, arg.value_kind, arg.offset
                )))
            }
        };
        let (start, len) = (arg.offset as usize, arg.size as usize);
        let Some(slot) = out.get_mut(start..start + len) else {
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
