//! System event handlers (`hsa_amd_register_system_event_handler`) and the
//! runtime's own copy (`hsa_memory_copy`) of the simulated table.
//!
//! Each simulated GPU reports its VM faults to [`dispatch`], which calls
//! every registered C handler the way ROCr does (all of them; handled when
//! one returns success). ROCr forgets its handlers when its last
//! `hsa_shut_down` tears the runtime down; so does this table.

use std::ffi::c_void;
use std::sync::Arc;

use relaunch_hsa_sys::{self as sys, Status, SystemEventCallback};

use super::{fail, guard, system, with_system_mut, CallbackData, GPU_AGENT_BASE};
use crate::device::SimDevice;
use crate::fault::VmFaultEvent;

/// Registered handlers: (callback, data).
pub(super) type Handlers = Vec<(SystemEventCallback, CallbackData)>;

pub(super) extern "C" fn register_system_event_handler(
    callback: SystemEventCallback,
    data: *mut c_void,
) -> Status {
    with_system_mut(|s| {
        // ROCr 6 keeps every handler (older ones refused a second).
        s.event_handlers.push((callback, CallbackData(data)));
        sys::HSA_STATUS_SUCCESS
    })
}

/// Make GPU `index` report its VM faults to the registered handlers.
pub(super) fn connect(device: &Arc<SimDevice>, index: usize) {
    let agent = sys::Agent {
        handle: GPU_AGENT_BASE + index as u64,
    };
    device.add_fault_handler(Arc::new(move |event: &VmFaultEvent| dispatch(agent, event)));
}

/// Call every registered handler with `event`; true when one handled it.
fn dispatch(agent: sys::Agent, event: &VmFaultEvent) -> bool {
    let handlers: Handlers = system().read().event_handlers.clone();
    let c_event = sys::AmdEvent {
        event_type: sys::HSA_AMD_GPU_MEMORY_FAULT_EVENT,
        memory_fault: sys::GpuMemoryFaultInfo {
            agent,
            virtual_address: event.address,
            fault_reason_mask: event.reason_mask,
        },
    };
    let mut handled = false;
    for (callback, data) in handlers {
        // SAFETY: a handler registered under the HSA contract, called with
        // a valid event for the duration of the call and its own data.
        let status = unsafe { callback(&c_event, data.0) };
        handled |= status == sys::HSA_STATUS_SUCCESS;
    }
    handled
}

/// `hsa_memory_copy`: any two ranges, each inside one live allocation of
/// the simulated system or in plain host memory (as ROCr copies through
/// the CPU or a blit for either).
pub(super) extern "C" fn memory_copy(dst: *mut c_void, src: *const c_void, size: usize) -> Status {
    guard(|| {
        let memory = {
            let s = system().read();
            if let Err(st) = super::initialized(&s) {
                return st;
            }
            Arc::clone(&s.memory)
        };
        if size == 0 {
            return sys::HSA_STATUS_SUCCESS;
        }
        if dst.is_null() || src.is_null() {
            return fail(
                sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                "hsa_memory_copy: null dst or src",
            );
        }
        for (what, addr) in [("dst", dst as u64), ("src", src as u64)] {
            if let Some(a) = memory.allocation_of(addr) {
                if addr + size as u64 > a.base + a.len as u64 {
                    return fail(
                        sys::HSA_STATUS_ERROR_INVALID_ALLOCATION,
                        format!(
                            "hsa_memory_copy: {what} {addr:#x} + {size} bytes runs past the \
                             allocation at {:#x} ({} bytes)",
                            a.base, a.len
                        ),
                    );
                }
            }
        }
        // SAFETY: both ranges are either inside live allocations (checked
        // above; the simulator's GPU addresses are host addresses) or host
        // memory the caller owns under the HSA contract; `copy` allows overlap.
        unsafe { std::ptr::copy(src.cast::<u8>(), dst.cast::<u8>(), size) };
        sys::HSA_STATUS_SUCCESS
    })
}
