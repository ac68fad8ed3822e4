//! Queues a runtime builds itself (ROCr's AQL queues): the ring, the
//! `amd_queue_t` with its dispatch ids and the `amd_signal_t` completion
//! signals all live in the runtime's memory, and the doorbell is a plain
//! 64-bit store of the last packet's id to a doorbell slot. The command
//! processor (`crate::queue::Processor`) serves them through this front:
//! - the doorbell is polled with a backoff (nothing wakes it: a store to
//!   memory is all the hardware sees);
//! - a consumed packet advances `read_dispatch_id`;
//! - completion is an atomic decrement of the signal's value, then, when
//!   the signal has a mailbox, the event id written there and the
//!   interrupt that sets the driver event;
//! - a queue error is a code stored in the queue's inactive signal (ROCr's
//!   codes), with that signal's interrupt.
//!
//! ROCr's signal waits are invisible here, so for the cross-queue check a
//! packet is taken as submitted after everything the host knew when the
//! processor read it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::device::{KernelEntry, SimDevice};
use crate::isa::ScratchSetup;
use crate::memory::DeviceMemory;
use crate::ordering::clock::{self, VectorClock};
use crate::queue::{Front, QueueError, QueueErrorKind};

use super::events::Events;

/// `amd_queue_t` offsets (ROCr's `amd_hsa_queue.h`, a layout fact).
pub mod amd_queue {
    pub const WRITE_DISPATCH_ID: u64 = 0x38;
    pub const READ_DISPATCH_ID: u64 = 0x80;
    /// The queue's scratch, as the CP programs it for each dispatch.
    pub const COMPUTE_TMPRING_SIZE: u64 = 0x8C;
    pub const SCRATCH_RESOURCE_DESCRIPTOR: u64 = 0x90;
    pub const SCRATCH_BACKING_MEMORY_LOCATION: u64 = 0xA0;
    pub const QUEUE_PROPERTIES: u64 = 0xB4;
    pub const QUEUE_INACTIVE_SIGNAL: u64 = 0xC0;
}

/// `amd_signal_t` offsets.
pub mod amd_signal {
    pub const VALUE: u64 = 8;
    pub const EVENT_MAILBOX_PTR: u64 = 16;
    pub const EVENT_ID: u64 = 24;
    pub const START_TS: u64 = 32;
    pub const END_TS: u64 = 40;
}

/// The error codes the CP stores in a queue's inactive signal (ROCr reads
/// them in `AqlQueue::DynamicScratchHandler`).
pub mod queue_error_code {
    /// Scratch needed by a wave64 / wave32 dispatch (the queue waits for
    /// the runtime to store 0 and retries the same packet).
    pub const SCRATCH_WAVE64: i64 = 1;
    pub const SCRATCH_WAVE32: i64 = 0x400;
    pub const INVALID_PACKET_FORMAT: i64 = 32;
    pub const MEMORY_VIOLATION: i64 = 0x2000_0000;
    pub const ILLEGAL_INSTRUCTION: i64 = 0x4000_0000;
    pub const DEBUG_TRAP: i64 = 0x8000_0000;
}

/// The processor's view of one runtime-built AQL queue.
pub(super) struct UserRingFront {
    pub(super) memory: Arc<DeviceMemory>,
    pub(super) doorbell: u64,
    pub(super) amd_queue: u64,
    pub(super) events: Arc<Events>,
    pub(super) suspended: AtomicBool,
}

/// Poll `ready` with a backoff from 20 us to 1 ms until it holds or
/// `timeout` passes; true when it held.
fn poll(timeout: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    let mut step = Duration::from_micros(20);
    loop {
        if ready() {
            return true;
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        std::thread::sleep(step.min(deadline - now));
        step = (step * 2).min(Duration::from_millis(1));
    }
}

/// AMD_QUEUE_PROPERTIES_ENABLE_PROFILING.
const PROFILING: u32 = 1 << 3;

impl UserRingFront {
    fn profiling(&self) -> bool {
        self.memory
            .read_u32(self.amd_queue + amd_queue::QUEUE_PROPERTIES)
            .is_ok_and(|p| p & PROFILING != 0)
    }

    /// Store `value` into signal `handle` and raise its interrupt.
    fn signal_store(&self, handle: u64, value: i64) -> Result<(), String> {
        self.memory
            .store_u64_release(handle + amd_signal::VALUE, value as u64)
            .map_err(|f| format!("signal {handle:#x}: {f}"))?;
        self.interrupt(handle)
    }

    /// The mailbox write and interrupt of signal `handle`, if it has one.
    fn interrupt(&self, handle: u64) -> Result<(), String> {
        let mailbox = self
            .memory
            .read_u64(handle + amd_signal::EVENT_MAILBOX_PTR)
            .map_err(|f| format!("signal {handle:#x}: {f}"))?;
        if mailbox == 0 {
            return Ok(());
        }
        let id = self
            .memory
            .read_u32(handle + amd_signal::EVENT_ID)
            .map_err(|f| format!("signal {handle:#x}: {f}"))?;
        self.memory
            .store_u64_release(mailbox, u64::from(id))
            .map_err(|f| format!("signal {handle:#x}'s mailbox: {f}"))?;
        self.events.interrupt(mailbox);
        Ok(())
    }
}

impl Front for UserRingFront {
    fn doorbell(&self) -> i64 {
        self.memory.load_u64_acquire(self.doorbell).unwrap_or(0) as i64
    }

    fn wait_doorbell(&self, seen: i64, timeout: Duration) {
        poll(timeout, || self.doorbell() != seen);
    }

    fn idle(&self, timeout: Duration) {
        std::thread::sleep(timeout);
    }

    fn queue_address(&self) -> Option<u64> {
        Some(self.amd_queue)
    }

    fn runnable(&self) -> bool {
        !self.suspended.load(Ordering::Acquire)
    }

    /// A real runtime's host waits are invisible here (ROCr reads signal
    /// memory itself), so a packet is taken to know every completion that
    /// happened before the CP picked it up (the processor takes a packet as
    /// soon as its header is valid): races are reported only between
    /// packets that could have overlapped, never between two the host may
    /// have ordered by waiting.
    fn submitted(&self, _id: u64) -> Arc<VectorClock> {
        clock::memory_and_host()
    }

    fn signal_value(&self, handle: u64) -> Option<i64> {
        self.memory
            .load_u64_acquire(handle + amd_signal::VALUE)
            .ok()
            .map(|v| v as i64)
    }

    fn complete(&self, handle: u64, start: u64) -> Result<(), String> {
        if self.profiling() {
            // The CP stamps start and end into the signal before it
            // decrements it (ROCr reads them once the value drops).
            let end = crate::pm4::timestamp::read().max(start + 1);
            self.memory
                .write_u64(handle + amd_signal::START_TS, start)
                .and_then(|()| self.memory.write_u64(handle + amd_signal::END_TS, end))
                .map_err(|f| format!("completion signal {handle:#x}: {f}"))?;
        }
        // Whoever sees the signal drop (the host, a barrier on another
        // queue) knows this packet's work.
        clock::release_to_memory();
        self.memory
            .atomic_add_i64(handle + amd_signal::VALUE, -1)
            .map_err(|f| format!("completion signal {handle:#x}: {f}"))?;
        self.interrupt(handle)
    }

    fn wait_zero(&self, handle: u64, timeout: Duration) -> Result<bool, String> {
        let mut bad = None;
        let reached = poll(timeout, || match self.signal_value(handle) {
            Some(v) => v == 0,
            None => {
                bad = Some(format!(
                    "barrier dependency signal {handle:#x} is not readable"
                ));
                true
            }
        });
        match bad {
            Some(m) => Err(m),
            None => {
                if reached {
                    // The dependency's completion happened before what follows.
                    clock::acquire_from_memory();
                }
                Ok(reached)
            }
        }
    }

    fn consumed(&self, next: u64) {
        let _ = self
            .memory
            .store_u64_release(self.amd_queue + amd_queue::READ_DISPATCH_ID, next);
    }

    fn kernel(&self, device: &SimDevice, kernel_object: u64) -> Result<Arc<KernelEntry>, String> {
        device.kernel_in_memory(kernel_object)
    }

    fn shader_interrupt(&self, data: u32) {
        self.events.interrupt_partial(data);
    }

    fn report(&self, err: &QueueError) {
        let code = match err.kind {
            QueueErrorKind::InvalidPacket => queue_error_code::INVALID_PACKET_FORMAT,
            QueueErrorKind::VmFault => queue_error_code::MEMORY_VIOLATION,
            QueueErrorKind::Trap => queue_error_code::DEBUG_TRAP,
            // What the interpreter cannot run is reported as the hardware
            // reports an instruction it cannot execute; stderr says which.
            QueueErrorKind::KernelFault | QueueErrorKind::Violation | QueueErrorKind::Injected => {
                queue_error_code::ILLEGAL_INSTRUCTION
            }
        };
        let signal = self
            .memory
            .read_u64(self.amd_queue + amd_queue::QUEUE_INACTIVE_SIGNAL)
            .unwrap_or(0);
        eprintln!("relaunch-kfd: GPU queue error: {err}");
        if signal == 0 {
            return;
        }
        if let Err(m) = self.signal_store(signal, code) {
            tracing::error!(error = %m, "could not report a queue error to the runtime");
        }
    }

    /// What ROCr's `InitScratchSRD` left in `amd_queue_t`: TMPRING_SIZE
    /// (0 until a dispatch needed scratch), the V# and the backing's
    /// address (absolute on gfx9 and later).
    fn scratch(&self, device: &SimDevice) -> Result<Option<ScratchSetup>, String> {
        let read = |at: u64| {
            self.memory
                .read_u64(self.amd_queue + at)
                .map_err(|f| format!("reading amd_queue_t: {f}"))
        };
        let tmpring = self
            .memory
            .read_u32(self.amd_queue + amd_queue::COMPUTE_TMPRING_SIZE)
            .map_err(|f| format!("reading amd_queue_t: {f}"))?;
        if tmpring == 0 {
            return Ok(None);
        }
        let srd = read(amd_queue::SCRATCH_RESOURCE_DESCRIPTOR)?;
        let srd_hi = read(amd_queue::SCRATCH_RESOURCE_DESCRIPTOR + 8)?;
        let srd = [
            srd as u32,
            (srd >> 32) as u32,
            srd_hi as u32,
            (srd_hi >> 32) as u32,
        ];
        let base = read(amd_queue::SCRATCH_BACKING_MEMORY_LOCATION)?;
        Ok(Some(ScratchSetup::from_tmpring(
            device.family(),
            tmpring,
            base,
            srd,
        )))
    }

    /// ROCr's protocol: the error code in the inactive signal (its handler
    /// allocates, rewrites the `amd_queue_t` fields and stores 0), then the
    /// queue waits for that 0 and retries the same packet.
    fn grow_scratch(
        &self,
        _device: &SimDevice,
        _wave_bytes: u64,
        wave64: bool,
        asked: bool,
    ) -> Result<bool, String> {
        let signal = self
            .memory
            .read_u64(self.amd_queue + amd_queue::QUEUE_INACTIVE_SIGNAL)
            .map_err(|f| format!("reading amd_queue_t: {f}"))?;
        if signal == 0 {
            return Err("the dispatch needs scratch and the queue has no inactive \
                        signal to ask the runtime for it"
                .into());
        }
        if !asked {
            let code = if wave64 {
                queue_error_code::SCRATCH_WAVE64
            } else {
                queue_error_code::SCRATCH_WAVE32
            };
            self.signal_store(signal, code)?;
            return Ok(false);
        }
        Ok(self.signal_value(signal) == Some(0))
    }
}
