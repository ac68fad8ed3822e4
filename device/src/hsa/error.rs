//! `HsaError`: every way the HSA runtime layer fails, each message saying
//! what was wrong and what to do.

use std::time::Duration;

/// Errors of the HSA runtime layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HsaError {
    /// No usable GPU through this table: the library did not load, `hsa_init`
    /// failed, or the runtime lists no GPU agent.
    #[error("no ROCm GPU agent: {reason}")]
    NoGpu { reason: String },
    /// An HSA call returned an error status.
    #[error("{call} failed with {message} (status {status:#x})")]
    Call {
        call: &'static str,
        status: u32,
        message: String,
    },
    /// The caller passed something this layer refuses before calling HSA.
    #[error("invalid {what}: {problem}")]
    Invalid { what: &'static str, problem: String },
    /// The agent offers no memory pool of the kind needed.
    #[error(
        "agent {agent} has no {wanted} memory pool; the ROCm install or driver does not expose it"
    )]
    NoPool { agent: String, wanted: &'static str },
    /// A wait ran out of time.
    #[error("timed out after {} ms waiting for {what}: value seen {seen}, {state}", waited.as_millis())]
    Timeout {
        what: String,
        waited: Duration,
        seen: i64,
        state: String,
    },
    /// The runtime reported an error on the queue through its error callback.
    #[error("queue {queue_id} reported {message} (status {status:#x}) {during}; the queue is unusable: drop it and create a new one")]
    QueueFault {
        queue_id: u64,
        status: u32,
        message: String,
        during: String,
    },
    /// A GPU memory (VM) fault was reported for this GPU: the driver has
    /// stopped every queue of this process on it.
    #[error("GPU {gpu} is lost to this process: memory (VM) fault at address {address:#x} ({reasons}), reported {during}; the driver stopped every queue of this process on that GPU, so nothing more runs on it (other GPUs keep working): fix the address, then restart the process")]
    DeviceLost {
        gpu: String,
        address: u64,
        reasons: String,
        during: String,
    },
    /// Every ring slot holds a packet the packet processor has not consumed.
    #[error("queue {queue_id} is full ({in_flight} of {size} packets in flight); wait for completions before submitting more")]
    QueueFull {
        queue_id: u64,
        in_flight: u64,
        size: u32,
    },
    /// The kernarg arena cannot fit another block.
    #[error("kernarg arena exhausted: {requested} bytes aligned to {align} do not fit ({used} of {capacity} bytes used); create a larger arena")]
    ArenaFull {
        requested: usize,
        align: usize,
        used: usize,
        capacity: usize,
    },
    /// A host read or write fell outside its allocation or block.
    #[error("access of {len} bytes at offset {offset} is outside the {size}-byte {target}")]
    OutOfBounds {
        target: &'static str,
        offset: usize,
        len: usize,
        size: usize,
    },
    /// The runtime cannot do this at all, whatever the arguments (an old
    /// ROCr that cannot map IB memory executable): a limit of the installed
    /// runtime, reported as a device error, not as the caller's input.
    #[error("the HSA runtime cannot provide {what}: {reason}")]
    Unsupported { what: &'static str, reason: String },
    /// Host access to memory only the GPU can reach.
    #[error("allocation at {addr:#x} is device memory the host cannot read or write; use a host (CPU agent) pool for data the host touches")]
    NotHostAccessible { addr: u64 },
}

impl HsaError {
    pub(crate) fn lost(gpu: &str, fault: &super::GpuFault, during: &str) -> HsaError {
        HsaError::DeviceLost {
            gpu: gpu.to_string(),
            address: fault.address,
            reasons: fault.reasons(),
            during: during.to_string(),
        }
    }

    /// True when this is [`HsaError::Unsupported`]: the runtime in use
    /// cannot do what was asked (upgrade it or use another device).
    pub fn is_unsupported(&self) -> bool {
        matches!(self, HsaError::Unsupported { .. })
    }

    /// The faulting address when this is `DeviceLost`.
    pub fn lost_address(&self) -> Option<u64> {
        match self {
            HsaError::DeviceLost { address, .. } => Some(*address),
            _ => None,
        }
    }
}
