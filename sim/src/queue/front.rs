//! What differs between the queues the command processor serves: where
//! the doorbell, the read index and the completion signals live, how a
//! dispatch's kernel object is found, and how a queue error reaches the
//! queue's owner. The processor (`processor.rs`, `packets.rs`) is one
//! model of the hardware's packet processor; a front is the memory
//! layout around it:
//! - [`SimFront`]: queues of the simulator's own HSA table (`crate::hsa`):
//!   indices and signals in Rust objects, errors through a callback;
//! - `crate::driver::queue`: queues a runtime built itself on the
//!   kernel-driver front (ROCr's ring, `amd_queue_t`, `amd_signal_t` in
//!   memory, errors through the queue's inactive signal).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use crate::device::{KernelEntry, SimDevice};
use crate::isa::ScratchSetup;
use crate::memory::{DeviceMemory, MemKind};
use crate::ordering::clock::VectorClock;
use crate::signal::{Condition, SignalTable, SimSignal};

use super::{QueueError, Shared};

pub(crate) trait Front: Send + Sync {
    /// A value that changes whenever the host rings the doorbell.
    fn doorbell(&self) -> i64;
    /// Sleep until the doorbell differs from `seen`, or `timeout` passes.
    fn wait_doorbell(&self, seen: i64, timeout: Duration);
    /// Sleep while the queue cannot run (dead, suspended or its device lost).
    fn idle(&self, timeout: Duration);
    /// The queue's `hsa_queue_t` in device memory, if it has one there
    /// (what a kernel's queue pointer receives).
    fn queue_address(&self) -> Option<u64> {
        None
    }
    /// False while the queue's owner suspended it.
    fn runnable(&self) -> bool {
        true
    }
    /// What the host knew when it submitted packet `id`.
    fn submitted(&self, id: u64) -> Arc<VectorClock>;
    /// The value of completion signal `handle`; `None` when it names none.
    fn signal_value(&self, handle: u64) -> Option<i64>;
    /// Decrement completion signal `handle` and wake its waiters; the
    /// packet started at `start` on the GPU clock (`pm4::timestamp`).
    fn complete(&self, handle: u64, start: u64) -> Result<(), String>;
    /// Wait at most `timeout` for signal `handle` to reach zero: true once it has.
    fn wait_zero(&self, handle: u64, timeout: Duration) -> Result<bool, String>;
    /// Every packet before `next` was consumed.
    fn consumed(&self, next: u64);
    /// The kernel whose descriptor is at `kernel_object`.
    fn kernel(&self, device: &SimDevice, kernel_object: u64) -> Result<Arc<KernelEntry>, String>;
    /// A kernel's interrupt (`s_sendmsg` MSG_INTERRUPT) with its M0 `data`.
    fn shader_interrupt(&self, data: u32);
    /// Tell the queue's owner of a queue error (VM faults go elsewhere).
    fn report(&self, err: &QueueError);
    /// The queue's scratch as the hardware reads it at a dispatch (`None`:
    /// the owner gave it none).
    fn scratch(&self, device: &SimDevice) -> Result<Option<ScratchSetup>, String>;
    /// "Scratch needed": ask the owner for slots of at least `wave_bytes`
    /// for waves of this size. `asked` is false on the first call (the
    /// request is made), true while the processor waits for the answer.
    /// `Ok(true)` once the owner answered (the processor reads
    /// [`Front::scratch`] again), `Ok(false)` while it has not.
    fn grow_scratch(
        &self,
        device: &SimDevice,
        wave_bytes: u64,
        wave64: bool,
        asked: bool,
    ) -> Result<bool, String>;
}

/// Bytes of ROCr's `amd_queue_t` (`amd_hsa_queue.h`), whose first 40
/// are the public `hsa_queue_t`.
const AMD_QUEUE_BYTES: usize = 256;

/// The queue's `amd_queue_t` in device memory, as a kernel's queue
/// pointer receives it from the CP: the `hsa_queue_t` fields (type
/// MULTI, KERNEL_DISPATCH, ring, doorbell, size, id); the rest zero (the
/// simulator's queues keep their indices and scratch in Rust objects).
pub(super) fn amd_queue_image(
    device: &SimDevice,
    ring: u64,
    size: u32,
    doorbell: u64,
    id: u64,
) -> Result<u64, crate::SimError> {
    let at = device
        .memory
        .allocate(AMD_QUEUE_BYTES, MemKind::HostFineGrained)?;
    let mut image = [0u8; 40];
    image[4..8].copy_from_slice(&1u32.to_le_bytes());
    image[8..16].copy_from_slice(&ring.to_le_bytes());
    image[16..24].copy_from_slice(&doorbell.to_le_bytes());
    image[24..28].copy_from_slice(&size.to_le_bytes());
    image[32..40].copy_from_slice(&id.to_le_bytes());
    if let Err(f) = device.memory.write(at, &image) {
        let _ = device.memory.free(at);
        return Err(crate::SimError::Queue(format!(
            "writing the amd_queue_t: {f}"
        )));
    }
    Ok(at)
}

/// A queue of the simulator's own HSA table.
pub(super) struct SimFront {
    /// The queue's `amd_queue_t` image ([`amd_queue_image`]), freed with
    /// the ring when the queue is destroyed.
    pub(super) amd_queue: u64,
    pub(super) shared: Arc<Shared>,
    pub(super) doorbell: Arc<SimSignal>,
    pub(super) signals: Arc<SignalTable>,
    /// The scratch backing this front allocated as the queue's owner (the
    /// simulator's HSA table plays ROCr's part): address and setup.
    pub(super) scratch: Mutex<Option<(u64, ScratchSetup)>>,
    pub(super) memory: Arc<DeviceMemory>,
}

/// Wave slots of the backing a [`SimFront`] allocates: more than the waves
/// of the largest workgroup (1024 work-items in waves of 32).
const SIM_SCRATCH_SLOTS: u32 = 64;

impl Drop for SimFront {
    fn drop(&mut self) {
        // The processor that used it has exited (this front is its).
        if let Some((addr, _)) = self.scratch.get_mut().take() {
            let _ = self.memory.free(addr);
        }
    }
}

impl Front for SimFront {
    fn doorbell(&self) -> i64 {
        self.doorbell.load()
    }

    fn queue_address(&self) -> Option<u64> {
        Some(self.amd_queue)
    }

    fn wait_doorbell(&self, seen: i64, timeout: Duration) {
        self.doorbell.wait(Condition::Ne, seen, timeout);
    }

    fn idle(&self, timeout: Duration) {
        // Destroy stores i64::MIN to wake the processor.
        self.doorbell.wait(Condition::Eq, i64::MIN, timeout);
    }

    fn submitted(&self, id: u64) -> Arc<VectorClock> {
        self.doorbell.covering(id)
    }

    fn signal_value(&self, handle: u64) -> Option<i64> {
        self.signals.get(handle).map(|s| s.load())
    }

    fn complete(&self, handle: u64, _start: u64) -> Result<(), String> {
        let signal = self
            .signals
            .get(handle)
            .ok_or_else(|| format!("completion signal handle {handle} is not a live signal"))?;
        signal.subtract(1);
        Ok(())
    }

    fn wait_zero(&self, handle: u64, timeout: Duration) -> Result<bool, String> {
        let signal = self.signals.get(handle).ok_or_else(|| {
            format!("barrier-AND dependency signal {handle} is not a live signal")
        })?;
        Ok(signal.wait(Condition::Eq, 0, timeout) == 0)
    }

    fn consumed(&self, next: u64) {
        self.shared.read_index.store(next, Ordering::Release);
    }

    fn kernel(&self, device: &SimDevice, kernel_object: u64) -> Result<Arc<KernelEntry>, String> {
        device.kernel_at_descriptor(kernel_object).ok_or_else(|| {
            format!("kernel_object {kernel_object:#x} is not a loaded kernel descriptor")
        })
    }

    fn shader_interrupt(&self, data: u32) {
        self.signals.interrupt(data);
    }

    fn report(&self, err: &QueueError) {
        if let Some(cb) = &self.shared.callback {
            cb(err);
        }
    }

    fn scratch(&self, _device: &SimDevice) -> Result<Option<ScratchSetup>, String> {
        Ok(self.scratch.lock().map(|(_, s)| s))
    }

    /// As ROCr does for its queues, at once: a backing of slots of the
    /// size asked (in the family's TMPRING granule), the earlier one freed
    /// (only this queue's processor, now between packets, used it).
    fn grow_scratch(
        &self,
        device: &SimDevice,
        wave_bytes: u64,
        _wave64: bool,
        _asked: bool,
    ) -> Result<bool, String> {
        let family = device.family();
        let granule = family.scratch().wavesize_granule;
        let wave_bytes = wave_bytes.div_ceil(granule).max(1) * granule;
        let bytes = wave_bytes * u64::from(SIM_SCRATCH_SLOTS);
        let addr = self
            .memory
            .allocate(bytes as usize, MemKind::Device)
            .map_err(|e| format!("allocating {bytes} bytes of scratch: {e}"))?;
        let setup = ScratchSetup {
            base: addr,
            wave_bytes,
            slots: SIM_SCRATCH_SLOTS,
            srd: crate::isa::scratch::scratch_srd(family, addr, bytes as u32),
        };
        if let Some((old, _)) = self.scratch.lock().replace((addr, setup)) {
            let _ = self.memory.free(old);
        }
        Ok(true)
    }
}
