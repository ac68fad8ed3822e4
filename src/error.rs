//! The facade's one error type. Each variant is a class the C ABI maps to
//! an `RL_ERR_*` code and Python to an exception; the message says what
//! was wrong and what to do.

use std::fmt;

/// Error classes, stable across the C and Python front ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// A required argument was missing (C: NULL).
    Null,
    /// Text was not valid UTF-8.
    Utf8,
    /// Recording (building a graph or an IB) was refused.
    Record,
    /// Compiling or finalizing was refused (hazards, encoder refusals).
    Compile,
    /// Replaying failed (queue fault, timeout, simulator violation).
    Replay,
    /// A handle was stale, foreign or of the wrong kind.
    Handle,
    /// Certification of a module was refused.
    Certification,
    /// No device, a denied device, or an ambiguous selector.
    Device,
    /// The GPU is lost to this process: a memory (VM) fault was reported
    /// for it and the driver stopped its queues. A kind of `Device` (C:
    /// `RL_ERR_DEVICE`; Python: `DeviceLostError`, a `DeviceError`).
    DeviceLost,
    /// A bug: an invariant broke (a caught panic at the boundaries).
    Internal,
}

impl ErrorClass {
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Null => "null",
            ErrorClass::Utf8 => "utf8",
            ErrorClass::Record => "record",
            ErrorClass::Compile => "compile",
            ErrorClass::Replay => "replay",
            ErrorClass::Handle => "handle",
            ErrorClass::Certification => "certification",
            ErrorClass::Device => "device",
            ErrorClass::DeviceLost => "device_lost",
            ErrorClass::Internal => "internal",
        }
    }
}

/// A failure of a facade call: its class and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    class: ErrorClass,
    message: String,
}

impl Error {
    pub fn new(class: ErrorClass, message: impl Into<String>) -> Self {
        Error {
            class,
            message: message.into(),
        }
    }

    pub fn class(&self) -> ErrorClass {
        self.class
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same error with `context: ` in front of its message.
    pub fn context(self, context: impl fmt::Display) -> Self {
        Error {
            class: self.class,
            message: format!("{context}: {}", self.message),
        }
    }

    pub(crate) fn device(e: impl fmt::Display) -> Self {
        Error::new(ErrorClass::Device, e.to_string())
    }
    pub(crate) fn record(e: impl fmt::Display) -> Self {
        Error::new(ErrorClass::Record, e.to_string())
    }
    pub(crate) fn compile(e: impl fmt::Display) -> Self {
        Error::new(ErrorClass::Compile, e.to_string())
    }
    /// A replay's scheduler error: `DeviceLost` when the GPU is lost.
    pub(crate) fn sched(e: relaunch_sched::SchedError) -> Self {
        let class = if e.is_device_lost() {
            ErrorClass::DeviceLost
        } else {
            ErrorClass::Replay
        };
        Error::new(class, e.to_string())
    }
    /// An HSA-layer error of a device operation: `DeviceLost` when the
    /// GPU is lost, else `fallback`.
    pub(crate) fn hsa(e: relaunch_device::hsa::HsaError, fallback: ErrorClass) -> Self {
        let class = if e.lost_address().is_some() {
            ErrorClass::DeviceLost
        } else {
            fallback
        };
        Error::new(class, e.to_string())
    }
    pub(crate) fn handle(e: impl fmt::Display) -> Self {
        Error::new(ErrorClass::Handle, e.to_string())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// `Result` with the facade's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
