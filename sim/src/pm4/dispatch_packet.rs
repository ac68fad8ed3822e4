//! The dispatch-pointer check: a kernel that reads its AQL dispatch packet
//! gets, in the user SGPRs after the private segment buffer, the address of
//! a `hsa_kernel_dispatch_packet_t` image. On the direct PM4 path the IB's
//! builder writes that image; here it must describe exactly the dispatch
//! the CP is running (what the CP would have read from an AQL packet), or
//! the kernel would compute with wrong blockDim/gridDim.

use relaunch_encoders::dispatch_packet::{
    DispatchPacketImage, DISPATCH_PACKET_BYTES, DISPATCH_PACKET_DIMENSIONS, DISPATCH_PACKET_HEADER,
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
    let p = DispatchPacketImage::parse(&raw);
    let mut wrong = Vec::new();
    let mut field = |name: &str, found: u64, expected: u64| {
        if found != expected {
            wrong.push(format!(
                "{name} is {found:#x}, the dispatch has {expected:#x}"
            ));
        }
    };
    field("header", p.header.into(), DISPATCH_PACKET_HEADER.into());
    field("setup", p.setup.into(), DISPATCH_PACKET_DIMENSIONS.into());
    for d in 0..3 {
        let axis = ["x", "y", "z"][d];
        field(
            &format!("workgroup_size_{axis}"),
            p.workgroup_size[d].into(),
            want.block[d].into(),
        );
        field(
            &format!("grid_size_{axis}"),
            p.grid_size[d].into(),
            want.grid[d].into(),
        );
    }
    field("private_segment_size", p.private_segment_size.into(), 0);
    field("kernel_object", p.kernel_object, kernel.kd_addr);
    field("kernarg_address", p.kernarg_address, want.kernarg_ptr);
    field("completion_signal", p.completion_signal, 0);
    // The group segment is what the launch asked for; LDS_SIZE rounds it
    // up to the 512-byte granule, so it lies within one granule below.
    let g = p.group_segment_size;
    if g < kernel.descriptor.group_segment_fixed_size
        || g > want.lds_bytes
        || want.lds_bytes - g >= relaunch_facts::regs::LDS_GRANULE_BYTES
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
