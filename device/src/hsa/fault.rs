//! GPU memory (VM) faults: the process-wide system event handler and the
//! record of which GPUs are lost.
//!
//! ROCr does not report a VM fault to a queue's error callback: it calls
//! every handler registered with `hsa_amd_register_system_event_handler`
//! and calls `abort()` unless one returns success (ROCR-Runtime,
//! `src/core/runtime/runtime.cpp`, `Runtime::VMFaultHandler`). The kernel
//! driver has by then stopped every queue of the process on that GPU, so
//! the GPU is lost to this process; other GPUs are not affected. relaunch
//! registers one handler per table (while any of its runtimes is open),
//! records the fault here and returns success; every queue, wait and
//! replay on that GPU then fails at once with `HsaError::DeviceLost`.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use relaunch_hsa_sys as sys;

/// One recorded GPU memory fault, as the runtime reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuFault {
    /// The faulting agent's handle.
    pub agent: u64,
    /// The virtual address accessed.
    pub address: u64,
    /// `HSA_AMD_MEMORY_FAULT_*` bits.
    pub reason_mask: u32,
}

impl GpuFault {
    /// The reasons, worded ("page not present ..."), or "reason unknown".
    pub fn reasons(&self) -> String {
        let words = sys::fault_reasons(self.reason_mask);
        if words.is_empty() {
            "reason unknown".to_string()
        } else {
            words.join(", ")
        }
    }
}

/// The faults of one function table (one runtime library in this process).
#[derive(Debug, Default)]
pub(crate) struct FaultBook {
    /// Faults recorded (read on every submit: 0 means nothing is lost).
    count: AtomicUsize,
    faults: Mutex<Vec<GpuFault>>,
    /// relaunch runtimes open over this table; the handler is registered
    /// when this goes from 0 to 1 (ROCr forgets handlers when it shuts down).
    open: AtomicUsize,
}

/// Bound on faults kept per table (one per GPU is what matters).
const MAX_FAULTS: usize = 256;

impl FaultBook {
    /// The book of `api`'s table: one per registration entry point, for the
    /// life of the process (the callback may run after every runtime went).
    pub(crate) fn of(api: &sys::HsaApi) -> &'static FaultBook {
        static BOOKS: Mutex<Vec<(usize, &'static FaultBook)>> = Mutex::new(Vec::new());
        let key = api.amd_register_system_event_handler as usize;
        let mut books = BOOKS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, book)) = books.iter().find(|(k, _)| *k == key) {
            return book;
        }
        // Leaked on purpose: the runtime keeps the pointer as callback data.
        let book: &'static FaultBook = Box::leak(Box::default());
        books.push((key, book));
        book
    }

    /// True once any fault was recorded (one load).
    #[inline]
    pub(crate) fn any(&self) -> bool {
        self.count.load(Ordering::Acquire) != 0
    }

    /// The first fault recorded on `agent`, if any.
    pub(crate) fn lost(&self, agent: u64) -> Option<GpuFault> {
        if !self.any() {
            return None;
        }
        let faults = self.faults.lock().unwrap_or_else(|e| e.into_inner());
        faults.iter().find(|f| f.agent == agent).cloned()
    }

    fn record(&self, fault: GpuFault) {
        let mut faults = self.faults.lock().unwrap_or_else(|e| e.into_inner());
        if faults.iter().any(|f| f.agent == fault.agent) {
            return; // The first fault names the cause; later ones follow from it.
        }
        if faults.len() < MAX_FAULTS {
            tracing::error!(
                agent = fault.agent,
                address = fault.address,
                reasons = %fault.reasons(),
                "GPU memory fault: this GPU is lost to the process"
            );
            faults.push(fault);
            self.count.store(faults.len(), Ordering::Release);
        }
    }

    /// A runtime over this table was opened: register the handler if no
    /// other relaunch runtime holds the table open. A refusal is logged,
    /// not fatal (older ROCr keep one handler: the application's).
    pub(crate) fn opened(&'static self, api: &sys::HsaApi, origin: &str) {
        if self.open.fetch_add(1, Ordering::AcqRel) != 0 {
            return;
        }
        let data = (self as *const FaultBook).cast_mut().cast::<c_void>();
        // SAFETY: initialised runtime; the callback does not unwind and its
        // data is a leaked FaultBook, valid for the life of the process.
        let status = unsafe { (api.amd_register_system_event_handler)(on_system_event, data) };
        if status != sys::HSA_STATUS_SUCCESS {
            tracing::warn!(
                status,
                origin,
                "hsa_amd_register_system_event_handler refused relaunch's handler; \
                 a GPU memory fault will abort this process unless the application's \
                 handler returns success"
            );
        }
    }

    /// The runtime opened with [`FaultBook::opened`] was shut down.
    pub(crate) fn closed(&self) {
        self.open.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The system event handler: records memory faults and says they were
/// handled, so ROCr does not abort the process. Other event types are left
/// to other handlers (not handled here).
unsafe extern "C" fn on_system_event(
    event: *const sys::AmdEvent,
    data: *mut c_void,
) -> sys::Status {
    if event.is_null() || data.is_null() {
        return sys::HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the runtime passes a valid event for the duration of the call.
    let event = unsafe { *event };
    if event.event_type != sys::HSA_AMD_GPU_MEMORY_FAULT_EVENT {
        return sys::HSA_STATUS_ERROR;
    }
    // SAFETY: `data` is the leaked FaultBook registered in `opened`.
    let book = unsafe { &*data.cast::<FaultBook>() };
    let info = event.memory_fault;
    let recorded = catch_unwind(AssertUnwindSafe(|| {
        book.record(GpuFault {
            agent: info.agent.handle,
            address: info.virtual_address,
            reason_mask: info.fault_reason_mask,
        })
    }));
    match recorded {
        Ok(()) => sys::HSA_STATUS_SUCCESS,
        Err(_) => sys::HSA_STATUS_ERROR,
    }
}
