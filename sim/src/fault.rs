//! GPU memory (VM) faults as ROCr and the kernel driver really handle them.
//!
//! A VM fault is not a queue error: the driver stops every queue of the
//! process on that GPU (the GPU is lost to the process; other GPUs go on),
//! and ROCr reports the fault through the system event handlers registered
//! with `hsa_amd_register_system_event_handler`, never through the queue's
//! error callback. When no handler returns success, ROCr prints "Memory
//! access fault by GPU node-N ..." and calls `abort()` (ROCR-Runtime,
//! `src/core/runtime/runtime.cpp`, `Runtime::VMFaultHandler`). The
//! simulator does the same: [`SimDevice::report_vm_fault`] marks the device
//! lost, calls its fault handlers and, if none accepts, the abort hook,
//! which by default aborts the process like ROCr (tests may replace it
//! with [`set_abort_hook`] to turn the abort into a named failure).

use std::sync::Arc;

use parking_lot::RwLock;

use crate::device::SimDevice;
use crate::memory::{FaultCause, VmFault};

/// The `HSA_AMD_MEMORY_FAULT_*` reason bits the driver reports for an
/// access the memory refused.
pub fn reason_mask(f: &VmFault) -> u32 {
    use relaunch_hsa_sys as sys;
    match f.cause {
        FaultCause::NotExecutable { .. } => sys::HSA_AMD_MEMORY_FAULT_NX,
        FaultCause::NotGpuAccessible { .. } => sys::HSA_AMD_MEMORY_FAULT_HOST_ONLY,
        FaultCause::Unmapped
        | FaultCause::QueueInactive
        | FaultCause::Freed { .. }
        | FaultCause::PastEnd { .. }
        | FaultCause::Misaligned { .. } => sys::HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT,
    }
}

/// One VM fault as the simulated driver reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VmFaultEvent {
    /// The simulated GPU's target (e.g. `gfx1100`).
    pub target: String,
    /// The faulting address.
    pub address: u64,
    /// `HSA_AMD_MEMORY_FAULT_*` bits.
    pub reason_mask: u32,
    /// Where it happened (not part of what ROCr reports; for messages).
    pub queue: u64,
    pub packet: u64,
    pub message: String,
}

/// A system-event sink: true when it handled the fault (no abort).
pub type FaultHandler = Arc<dyn Fn(&VmFaultEvent) -> bool + Send + Sync>;

/// What runs when no handler accepted a fault.
pub type AbortHook = Arc<dyn Fn(&VmFaultEvent) + Send + Sync>;

/// A device's fault handlers.
#[derive(Default)]
pub(crate) struct Handlers(RwLock<Vec<FaultHandler>>);

impl std::fmt::Debug for Handlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} fault handler(s)", self.0.read().len())
    }
}

static ABORT_HOOK: RwLock<Option<AbortHook>> = RwLock::new(None);

/// Replace what an unhandled VM fault does (default: print ROCr's message
/// and abort the process). Returns the previous hook.
pub fn set_abort_hook(hook: Option<AbortHook>) -> Option<AbortHook> {
    std::mem::replace(&mut *ABORT_HOOK.write(), hook)
}

fn unhandled(event: &VmFaultEvent) {
    let hook = ABORT_HOOK.read().clone();
    match hook {
        Some(hook) => hook(event),
        None => {
            eprintln!(
                "Memory access fault by GPU {} on address {:#x}. Reason: {}. \
                 (relaunch-sim: no system event handler accepted the fault; aborting as ROCr does)",
                event.target, event.address, event.message
            );
            std::process::abort();
        }
    }
}

impl SimDevice {
    /// Add a system-event sink for this device's VM faults.
    pub fn add_fault_handler(&self, handler: FaultHandler) {
        self.fault_handlers.0.write().push(handler);
    }

    /// Drop every fault handler (the HSA layer does at its last shutdown,
    /// as ROCr forgets its handlers then).
    pub fn clear_fault_handlers(&self) {
        self.fault_handlers.0.write().clear();
    }

    /// The first VM fault, once the device is lost to the process.
    pub fn lost(&self) -> Option<&VmFaultEvent> {
        self.lost.get()
    }

    /// True once a VM fault stopped every queue of this device.
    pub fn is_lost(&self) -> bool {
        self.lost.get().is_some()
    }

    /// A VM fault happened on one of this device's queues: every queue of
    /// the device stops (the first fault is kept), then the handlers are
    /// told; if none accepts, the abort hook runs.
    pub fn report_vm_fault(&self, event: VmFaultEvent) {
        let first = self.lost.set(event.clone()).is_ok();
        tracing::error!(
            target = %event.target,
            address = event.address,
            first,
            "sim VM fault: every queue of the process on this GPU is stopped"
        );
        let handlers: Vec<FaultHandler> = self.fault_handlers.0.read().clone();
        let mut handled = false;
        for h in handlers {
            // Every handler is called, as ROCr calls each registered one.
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| h(&event))).unwrap_or(false)
            {
                handled = true;
            }
        }
        if !handled {
            unhandled(&event);
        }
    }
}
