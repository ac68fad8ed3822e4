//! The dispatch-pointer check: a kernel that reads its AQL dispatch packet
//! gets, in the user SGPRs after the private segment buffer, the address of
//! a `hsa_kernel_dispatch_packet_t` (layout: `relaunch-hsa-sys`). Whoever
//! wrote the IB also wrote that packet; it must describe exactly the
//! dispatch the CP is running (what the CP would have read from an AQL
//! packet), or the kernel would compute with wrong blockDim/gridDim.

use std::mem::offset_of;

use relaunch_hsa_sys::packet::{
    KernelDispatchPacket as P, AQL_PACKET_BYTES as DISPATCH_PACKET_BYTES, HSA_PACKET_HEADER_TYPE,
    HSA_PACKET_HEADER_WIDTH_TYPE, HSA_PACKET_TYPE_KERNEL_DISPATCH,
};

use super::check::StateError;
use crate::device::KernelEntry;
use crate::memory::{Access, DeviceMemory};

/// What the dispatch must be for the packet to match it.
pub(crate) struct Expected {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// LDS bytes the dispatch was given (RSRC2 LDS_SIZE).
    pub lds_bytes: u32,
    pub kernarg_ptr: u64,
    /// Bytes per LDS_SIZE granule on the family.
    pub lds_granule: u32,
}

/// Read the packet at `ptr` (faulting like the kernel's scalar load would)
/// and compare every field with the dispatch.
pub(crate) fn check(
    mem: &DeviceMemory,
    kernel: &KernelEntry,
    ptr: u64,
    want: &Expected,
) -> Result<(), StateError> {
    let invalid = |reason: String| StateError::Invalid {
        kernel: kernel.symbol.clone(),
        reason: format!("dispatch packet at {ptr:#x}: {reason}"),
    };
    if ptr % 64 != 0 {
        return Err(invalid("not 64-byte aligned like an AQL packet".into()));
    }
    mem.check(ptr, DISPATCH_PACKET_BYTES, Access::Read)
        .map_err(|f| invalid(f.to_string()))?;
    let bytes = mem
        .read_vec(ptr, DISPATCH_PACKET_BYTES)
        .map_err(|f| invalid(f.to_string()))?;
    let raw: [u8; DISPATCH_PACKET_BYTES] = bytes
        .as_slice()
        .try_into()
        .map_err(|_| invalid("short read".into()))?;
    let u16_at = |o: usize| u16::from_le_bytes([raw[o], raw[o + 1]]);
    let u32_at = |o: usize| u32::from_le_bytes([raw[o], raw[o + 1], raw[o + 2], raw[o + 3]]);
    let u64_at = |o: usize| u64::from(u32_at(o)) | u64::from(u32_at(o + 4)) << 32;
    let header = u16_at(offset_of!(P, header));
    let dims = u16_at(offset_of!(P, setup)) & 0x3;
    let mut wrong = Vec::new();
    let mut field = |name: &str, found: u64, expected: u64| {
        if found != expected {
            wrong.push(format!(
                "{name} is {found:#x}, the dispatch has {expected:#x}"
            ));
        }
    };
    let type_mask = (1u16 << HSA_PACKET_HEADER_WIDTH_TYPE) - 1;
    field(
        "header type",
        ((header >> HSA_PACKET_HEADER_TYPE) & type_mask).into(),
        HSA_PACKET_TYPE_KERNEL_DISPATCH.into(),
    );
    // Axes past `dims` are size 1 in the dispatch, which is what a kernel
    // reading the packet assumes of them.
    let used = (0..3)
        .filter(|&d| want.grid[d] > 1 || want.block[d] > 1)
        .max();
    if dims == 0 || used.is_some_and(|d| d >= usize::from(dims)) {
        field("setup dimensions", dims.into(), 3);
    }
    let workgroup_size = [
        u16_at(offset_of!(P, workgroup_size_x)),
        u16_at(offset_of!(P, workgroup_size_y)),
        u16_at(offset_of!(P, workgroup_size_z)),
    ];
    let grid_size = [
        u32_at(offset_of!(P, grid_size_x)),
        u32_at(offset_of!(P, grid_size_y)),
        u32_at(offset_of!(P, grid_size_z)),
    ];
    for d in 0..3 {
        let axis = ["x", "y", "z"][d];
        field(
            &format!("workgroup_size_{axis}"),
            workgroup_size[d].into(),
            want.block[d].into(),
        );
        field(
            &format!("grid_size_{axis}"),
            grid_size[d].into(),
            want.grid[d].into(),
        );
    }
    // Per work-item, as an AQL packet for this kernel would carry it.
    field(
        "private_segment_size",
        u32_at(offset_of!(P, private_segment_size)).into(),
        kernel.descriptor.private_segment_fixed_size.into(),
    );
    field(
        "kernel_object",
        u64_at(offset_of!(P, kernel_object)),
        kernel.kd_addr,
    );
    field(
        "kernarg_address",
        u64_at(offset_of!(P, kernarg_address)),
        want.kernarg_ptr,
    );
    // No AQL packet completes through an image the CP never processes.
    field(
        "completion_signal",
        u64_at(offset_of!(P, completion_signal)),
        0,
    );
    // The group segment is what the launch asked for; LDS_SIZE rounds it
    // up to the 512-byte granule, so it lies within one granule below.
    let g = u32_at(offset_of!(P, group_segment_size));
    if g < kernel.descriptor.group_segment_fixed_size
        || g > want.lds_bytes
        || want.lds_bytes - g >= want.lds_granule
    {
        wrong.push(format!(
            "group_segment_size is {g} bytes, but the dispatch allocates {} bytes of LDS \
             (static {})",
            want.lds_bytes, kernel.descriptor.group_segment_fixed_size
        ));
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(invalid(wrong.join("; ")))
    }
}
