//! System events (`hsa_amd_register_system_event_handler`): how ROCr reports
//! a GPU memory (VM) fault. Such a fault never reaches a queue's error
//! callback; ROCr calls every registered system event handler and aborts the
//! process unless one of them returns `HSA_STATUS_SUCCESS`.

use crate::handles::Agent;
use crate::status::Status;

/// `hsa_amd_event_type_t`.
pub type AmdEventType = u32;
/// `HSA_AMD_GPU_MEMORY_FAULT_EVENT`.
pub const HSA_AMD_GPU_MEMORY_FAULT_EVENT: AmdEventType = 0;

/// `hsa_amd_memory_fault_reason_t` bits.
pub const HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT: u32 = 1 << 0;
pub const HSA_AMD_MEMORY_FAULT_READ_ONLY: u32 = 1 << 1;
pub const HSA_AMD_MEMORY_FAULT_NX: u32 = 1 << 2;
pub const HSA_AMD_MEMORY_FAULT_HOST_ONLY: u32 = 1 << 3;
pub const HSA_AMD_MEMORY_FAULT_DRAMECC: u32 = 1 << 4;
pub const HSA_AMD_MEMORY_FAULT_IMPRECISE: u32 = 1 << 5;
pub const HSA_AMD_MEMORY_FAULT_SRAMECC: u32 = 1 << 6;
pub const HSA_AMD_MEMORY_FAULT_HANG: u32 = 1 << 31;

/// `hsa_amd_gpu_memory_fault_info_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GpuMemoryFaultInfo {
    /// The agent whose access faulted.
    pub agent: Agent,
    /// The virtual address accessed.
    pub virtual_address: u64,
    /// `HSA_AMD_MEMORY_FAULT_*` bits.
    pub fault_reason_mask: u32,
}

/// `hsa_amd_event_t`: the type and (for the one type there is) the fault.
/// The C union has a single member, so it is laid out as that member.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AmdEvent {
    pub event_type: AmdEventType,
    pub memory_fault: GpuMemoryFaultInfo,
}

/// `hsa_amd_system_event_callback_t`. Called on a runtime thread; must not
/// unwind. Returning success tells ROCr the event was handled (no abort).
pub type SystemEventCallback =
    unsafe extern "C" fn(event: *const AmdEvent, data: *mut std::ffi::c_void) -> Status;

/// The reasons in `mask`, as ROCr's own fault message words them.
pub fn fault_reasons(mask: u32) -> Vec<&'static str> {
    const NAMES: [(u32, &str); 8] = [
        (
            HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT,
            "page not present or supervisor privilege",
        ),
        (HSA_AMD_MEMORY_FAULT_READ_ONLY, "write to a read-only page"),
        (
            HSA_AMD_MEMORY_FAULT_NX,
            "execute access to a page marked NX",
        ),
        (HSA_AMD_MEMORY_FAULT_HOST_ONLY, "host-only page"),
        (HSA_AMD_MEMORY_FAULT_DRAMECC, "DRAM ECC failure"),
        (HSA_AMD_MEMORY_FAULT_IMPRECISE, "address may not be exact"),
        (HSA_AMD_MEMORY_FAULT_SRAMECC, "SRAM ECC failure"),
        (HSA_AMD_MEMORY_FAULT_HANG, "GPU reset after a hang"),
    ];
    NAMES
        .iter()
        .filter(|(bit, _)| mask & bit != 0)
        .map(|(_, name)| *name)
        .collect()
}
