//! What the kernel driver and the GPU do for one process, below a
//! runtime that builds its own queues and signals (the real ROCr): GPU
//! nodes, the process's memory mappings, events and interrupts, and
//! queues on the runtime's own rings served by the command processor.
//!
//! This is the seam for the driver fronts: the `libhsakmt.so.1` thunk
//! (`relaunch-kfd`) translates the thunk's C calls to these; a front for
//! the driver's ioctls (ROCm releases that link the thunk into ROCr) would
//! translate those, over the same model.

pub mod events;
pub mod memory;
pub mod queue;
mod registered;

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::Mutex;

use crate::device::{SimConfig, SimDevice, SimError};
use crate::memory::{DeviceMemory, MemKind};
use crate::queue::{Processor, QueueError, Shared};
use crate::sdma::{SdmaQueue, SdmaRing};
use crate::signal::SignalTable;

pub use events::{EventError, EventKind, Events, FaultRecord};
pub use memory::{DriverMemory, DriverMemoryError, MemFlags, Origin, RegionInfo};

/// Signal events one process may have (the events page's slots).
pub const EVENT_SLOTS: u32 = 4096;
/// Doorbells one process may have.
const DOORBELLS: u32 = 512;

/// What kind of queue a runtime asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueKind {
    /// AQL packets on the runtime's ring, `amd_queue_t` before it.
    ComputeAql,
    /// A copy engine queue.
    Sdma,
}

struct DriverQueue {
    engine: Engine,
    doorbell_slot: u32,
}

/// What serves a queue.
enum Engine {
    /// The command processor, on an AQL ring.
    Cp {
        shared: Arc<Shared>,
        front: Arc<queue::UserRingFront>,
        thread: Option<JoinHandle<()>>,
    },
    /// The copy engine; `indices` holds its read and write offsets.
    Sdma { queue: SdmaQueue, indices: u64 },
}

/// A created queue: what the runtime is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreatedQueue {
    pub id: u64,
    /// Where the runtime stores its write index.
    pub doorbell: u64,
    /// For SDMA queues, the engine's read offset and the runtime's copy of
    /// its write offset, which the driver provides (8 bytes each).
    pub read_ptr: Option<u64>,
    pub write_ptr: Option<u64>,
}

/// Errors of queue calls.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueueCallError {
    #[error("node {0} is not a GPU node of this driver")]
    NoSuchNode(u32),
    #[error("queue {0} does not exist")]
    NoSuchQueue(u64),
    #[error("ring of {0} bytes: must be a power of two of at least 64 packets")]
    BadRing(u64),
    #[error("every one of the {0} doorbells is in use")]
    NoDoorbell(u32),
    #[error("{0}")]
    Device(String),
}

/// One process's view of the simulated GPUs through the driver.
pub struct Driver {
    gpus: Vec<Arc<SimDevice>>,
    device_memory: Arc<DeviceMemory>,
    pub memory: DriverMemory,
    pub events: Arc<Events>,
    doorbell_page: u64,
    queues: Mutex<(HashMap<u64, DriverQueue>, Vec<u32>, u32)>,
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("gpus", &self.gpus.len())
            .finish()
    }
}

impl Driver {
    /// A driver over one simulated GPU per config (node `i + 1` is
    /// `configs[i]`; node 0 is the CPU).
    pub fn open(configs: Vec<SimConfig>) -> Result<Arc<Driver>, SimError> {
        let limit = configs
            .iter()
            .map(|c| c.memory_limit)
            .max()
            .unwrap_or(4 << 30);
        let device_memory = Arc::new(DeviceMemory::new(limit));
        let signals = Arc::new(SignalTable::default());
        let mut gpus = Vec::new();
        for config in configs {
            gpus.push(SimDevice::new_shared(
                config,
                Arc::clone(&device_memory),
                Arc::clone(&signals),
            )?);
        }
        let events_page = device_memory.allocate(EVENT_SLOTS as usize * 8, MemKind::Driver)?;
        let doorbell_page = device_memory.allocate(DOORBELLS as usize * 8, MemKind::Driver)?;
        let events = Arc::new(Events::new(events_page, EVENT_SLOTS));
        for (i, gpu) in gpus.iter().enumerate() {
            let events = Arc::clone(&events);
            let node = i as u32 + 1;
            gpu.add_fault_handler(Arc::new(move |ev| {
                use relaunch_hsa_sys as sys;
                let has = |bit: u32| ev.reason_mask & bit != 0;
                events.memory_fault(FaultRecord {
                    node,
                    address: ev.address,
                    not_present: has(sys::HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT),
                    read_only: has(sys::HSA_AMD_MEMORY_FAULT_READ_ONLY),
                    no_execute: has(sys::HSA_AMD_MEMORY_FAULT_NX),
                    gpu_access: has(sys::HSA_AMD_MEMORY_FAULT_HOST_ONLY),
                });
                // The runtime decides what a fault means (ROCr aborts
                // without a handler of its own), as with the real driver.
                true
            }));
        }
        Ok(Arc::new(Driver {
            memory: DriverMemory::new(Arc::clone(&device_memory)),
            gpus,
            device_memory,
            events,
            doorbell_page,
            queues: Mutex::new((HashMap::new(), Vec::new(), 0)),
        }))
    }

    /// The simulated GPUs, node `i + 1` at index `i`.
    pub fn gpus(&self) -> &[Arc<SimDevice>] {
        &self.gpus
    }

    /// The GPU at topology node `node`.
    pub fn gpu(&self, node: u32) -> Option<&Arc<SimDevice>> {
        (node as usize)
            .checked_sub(1)
            .and_then(|i| self.gpus.get(i))
    }

    /// The device memory every GPU of this driver checks.
    pub fn device_memory(&self) -> &Arc<DeviceMemory> {
        &self.device_memory
    }

    /// Free or unregister memory, forgetting kernels decoded from it.
    pub fn release_memory(&self, addr: u64) -> Result<(), DriverMemoryError> {
        let len = self.memory.query(addr).map_or(0, |r| r.len);
        self.memory.release(addr)?;
        for gpu in &self.gpus {
            gpu.forget_code_in(addr, len);
        }
        Ok(())
    }

    /// Create a queue on `node` over the runtime's ring. For an AQL queue
    /// `amd_queue` is the runtime's `amd_queue_t`; an SDMA queue gets its
    /// read and write offsets from the driver.
    pub fn create_queue(
        &self,
        node: u32,
        kind: QueueKind,
        ring: u64,
        ring_bytes: u64,
        amd_queue: u64,
    ) -> Result<CreatedQueue, QueueCallError> {
        let gpu = self.gpu(node).ok_or(QueueCallError::NoSuchNode(node))?;
        if kind == QueueKind::ComputeAql {
            let packets = ring_bytes / 64;
            if packets < 64 || !packets.is_power_of_two() || packets > u64::from(u32::MAX) {
                return Err(QueueCallError::BadRing(ring_bytes));
            }
        }
        let mut q = self.queues.lock();
        let slot = match q.1.pop() {
            Some(s) => s,
            None if q.2 < DOORBELLS => {
                q.2 += 1;
                q.2 - 1
            }
            None => return Err(QueueCallError::NoDoorbell(DOORBELLS)),
        };
        let doorbell = self.doorbell_page + 8 * u64::from(slot);
        let _ = self.device_memory.write_u64(doorbell, 0);
        let id = gpu.next_queue_id();
        let started = match kind {
            QueueKind::ComputeAql => self.start_cp(gpu, id, ring, ring_bytes, doorbell, amd_queue),
            QueueKind::Sdma => self.start_sdma(gpu, id, ring, ring_bytes, doorbell),
        };
        let (engine, created) = match started {
            Ok(s) => s,
            Err(e) => {
                q.1.push(slot);
                return Err(e);
            }
        };
        q.0.insert(
            id,
            DriverQueue {
                engine,
                doorbell_slot: slot,
            },
        );
        tracing::debug!(id, node, ring, ring_bytes, ?kind, "kfd queue created");
        Ok(created)
    }

    fn start_cp(
        &self,
        gpu: &Arc<SimDevice>,
        id: u64,
        ring: u64,
        ring_bytes: u64,
        doorbell: u64,
        amd_queue: u64,
    ) -> Result<(Engine, CreatedQueue), QueueCallError> {
        let front = Arc::new(queue::UserRingFront {
            memory: Arc::clone(&self.device_memory),
            doorbell,
            amd_queue,
            events: Arc::clone(&self.events),
            suspended: AtomicBool::new(false),
        });
        let shared = Shared::new(None);
        let processor = Processor::new(
            Arc::clone(gpu),
            Arc::clone(&shared),
            Arc::clone(&front) as Arc<dyn crate::queue::Front>,
            id,
            ring,
            (ring_bytes / 64) as u32,
        );
        let thread = std::thread::Builder::new()
            .name(format!("relaunch-kfd-q{id}"))
            .spawn(move || processor.run())
            .map_err(|e| QueueCallError::Device(format!("could not start the CP thread: {e}")))?;
        let engine = Engine::Cp {
            shared,
            front,
            thread: Some(thread),
        };
        let created = CreatedQueue {
            id,
            doorbell,
            read_ptr: None,
            write_ptr: None,
        };
        Ok((engine, created))
    }

    fn start_sdma(
        &self,
        gpu: &Arc<SimDevice>,
        id: u64,
        ring: u64,
        ring_bytes: u64,
        doorbell: u64,
    ) -> Result<(Engine, CreatedQueue), QueueCallError> {
        // The driver's page for the offsets: the engine writes the read
        // offset, the runtime keeps its write offset beside it.
        let indices = self
            .device_memory
            .allocate(16, MemKind::Driver)
            .map_err(|e| QueueCallError::Device(e.to_string()))?;
        let events = Arc::clone(&self.events);
        let sdma = SdmaQueue::start(
            Arc::clone(gpu),
            id,
            SdmaRing {
                base: ring,
                bytes: ring_bytes,
                doorbell,
                read_ptr: indices,
            },
            Arc::new(move |event_id| events.interrupt_id(event_id)),
        );
        let queue = match sdma {
            Ok(q) => q,
            Err(msg) => {
                let _ = self.device_memory.free(indices);
                return Err(QueueCallError::Device(msg));
            }
        };
        let created = CreatedQueue {
            id,
            doorbell,
            read_ptr: Some(indices),
            write_ptr: Some(indices + 8),
        };
        Ok((Engine::Sdma { queue, indices }, created))
    }

    /// Suspend (`running` false) or resume a queue.
    pub fn set_queue_running(&self, id: u64, running: bool) -> Result<(), QueueCallError> {
        let q = self.queues.lock();
        let queue = q.0.get(&id).ok_or(QueueCallError::NoSuchQueue(id))?;
        match &queue.engine {
            Engine::Cp { front, .. } => front
                .suspended
                .store(!running, std::sync::atomic::Ordering::Release),
            Engine::Sdma { queue, .. } => queue.set_running(running),
        }
        Ok(())
    }

    /// Whether `id` names a live queue.
    pub fn has_queue(&self, id: u64) -> Result<(), QueueCallError> {
        self.queues
            .lock()
            .0
            .contains_key(&id)
            .then_some(())
            .ok_or(QueueCallError::NoSuchQueue(id))
    }

    /// Destroy a queue: work in flight is discarded, as the driver's
    /// destroy does.
    pub fn destroy_queue(&self, id: u64) -> Result<(), QueueCallError> {
        let mut q = self.queues.lock();
        let queue = q.0.remove(&id).ok_or(QueueCallError::NoSuchQueue(id))?;
        q.1.push(queue.doorbell_slot);
        drop(q);
        match queue.engine {
            Engine::Cp {
                shared, mut thread, ..
            } => {
                // Discarded at once (ROCr's `hsa_queue_inactivate` is this
                // call): the packet running stops touching memory and, on
                // the interpreter, stops running; then the processor exits.
                shared.inactivate();
                shared.stop();
                if let Some(thread) = thread.take() {
                    if !crate::queue::join_bounded(thread, crate::queue::DESTROY_JOIN_LIMIT) {
                        // Only a twin that never returns keeps it: it is
                        // detached, every memory access it makes refused.
                        tracing::error!(
                            queue = id,
                            "kfd queue's processor still running a packet at destroy; detached"
                        );
                    }
                }
                shared.retire();
            }
            Engine::Sdma { queue, indices } => {
                queue.destroy();
                let _ = self.device_memory.free(indices);
            }
        }
        Ok(())
    }

    /// Errors the processors reported so far, over every queue.
    pub fn queue_errors(&self) -> Vec<QueueError> {
        self.queues
            .lock()
            .0
            .values()
            .flat_map(|q| match &q.engine {
                Engine::Cp { shared, .. } => shared.errors(),
                Engine::Sdma { .. } => Vec::new(),
            })
            .collect()
    }

    /// Why SDMA engines halted, per queue id.
    pub fn sdma_halts(&self) -> Vec<(u64, String)> {
        self.queues
            .lock()
            .0
            .iter()
            .filter_map(|(id, q)| match &q.engine {
                Engine::Sdma { queue, .. } => queue.halted().map(|m| (*id, m)),
                Engine::Cp { .. } => None,
            })
            .collect()
    }

    /// Stop every queue and free every mapping (the process closed the driver).
    pub fn close(&self) {
        let ids: Vec<u64> = self.queues.lock().0.keys().copied().collect();
        for id in ids {
            let _ = self.destroy_queue(id);
        }
        self.memory.release_all();
    }
}
