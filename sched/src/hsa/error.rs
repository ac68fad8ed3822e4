//! `HsaBackendError`: the HSA backend's one error type (its
//! `QueueBackend::Error`). The runtime's, the encoder's and the core
//! watch's errors pass through unchanged (same messages); the core asks it
//! only the `BackendFailure` questions.

use relaunch_device::hsa::HsaError;
use relaunch_encoders::{EncodeError, PatchError};

use crate::backend::{BackendFailure, WatchError};

/// Failures of the HSA backend: its own, and the runtime's, the encoder's
/// and the watch's passed through.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HsaBackendError {
    #[error("timed out after {waited_ms} ms waiting for {what}")]
    Timeout { what: String, waited_ms: u128 },
    #[error("the IB has {segments} segments but the queue ring holds {ring} packets; use a larger ring or fewer, larger segments")]
    RingTooSmall { segments: usize, ring: u32 },
    #[error("kernarg layout needs {bytes} bytes aligned to {align}: too large for this host")]
    KernargTooLarge { bytes: u64, align: u32 },
    /// What the HSA runtime (or the driver) said.
    #[error(transparent)]
    Hsa(#[from] HsaError),
    /// The encoder refused to finish the IB (scratch, layout).
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// A kernarg patch the IB refused.
    #[error(transparent)]
    Patch(#[from] PatchError),
    /// How a replay ended, as the core's watch bookkeeping says.
    #[error(transparent)]
    Watch(#[from] WatchError),
}

impl HsaBackendError {
    /// The runtime's error, when this is one.
    pub fn hsa(&self) -> Option<&HsaError> {
        match self {
            HsaBackendError::Hsa(e) => Some(e),
            _ => None,
        }
    }
}

impl BackendFailure for HsaBackendError {
    fn is_timeout(&self) -> bool {
        matches!(self, HsaBackendError::Timeout { .. })
    }

    fn lost_address(&self) -> Option<u64> {
        self.hsa().and_then(HsaError::lost_address)
    }

    fn is_unsupported(&self) -> bool {
        self.hsa().is_some_and(HsaError::is_unsupported)
    }
}
