//! The facade's one error type: an enum of the typed errors of the crates
//! underneath (kept typed, so a caller can look inside a `CompileError`'s
//! hazard list), the facade's own refusals (typed: [`Refusal`]), and
//! context around either.
//! [`Error::class`] derives the class the C ABI maps to an `RL_ERR_*` code
//! and Python to an exception; the message says what was wrong and what
//! to do.

use std::fmt;

use relaunch_device::bundle::BundleError;
use relaunch_device::codeobj::CodeObjectError;
use relaunch_device::hsa::HsaError;
use relaunch_device::identity::IdentityError;
use relaunch_device::TargetError;
use relaunch_encoders::kernarg_pack::KernargError;
use relaunch_encoders::EncodeError;
use relaunch_lanes::{CompileError, PatchError, RecordError};
use relaunch_lanes::{LaneFailure, LowerLaneError};
use relaunch_sched::SchedError;

use crate::refusal::Refusal;

/// Error classes, stable across the C and Python front ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// A required argument was missing (C: NULL).
    Null,
    /// Text was not valid UTF-8.
    Utf8,
    /// Recording (building a graph or an IB) was refused: malformed
    /// arguments (geometry, kernargs, an unknown symbol or code object).
    Record,
    /// Compiling or finalizing was refused: hazards, and a kernel the PM4
    /// path cannot run (its verdict, family or LDS need), wherever that is
    /// found (`rl_pm4_dispatch`, `rl_graph_kernel_ex`, finalize).
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

/// The failure of one lane while lowering a graph's plan into IBs; the
/// facade's kernel resolver fails with facade errors.
pub type LaneLoweringError = LaneFailure<LowerLaneError<Error>>;

/// A failure of a facade call. Where one crate error type reaches the
/// facade through operations of different classes (an HSA error while
/// opening a device, loading a module or copying memory; a scheduler error
/// while creating queues, installing, replaying or patching), the variant
/// names the operation and the class follows from it.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A graph-authoring call was refused (an unknown buffer or node handle
    /// is a handle error, as the seed's C ABI classes it; the rest record).
    #[error(transparent)]
    Graph(#[from] RecordError),
    /// `instantiate` refused the graph (e.g. its unordered hazards).
    #[error(transparent)]
    Compile(#[from] CompileError),
    /// Lowering a lane of the plan into its IB failed (compile class).
    #[error(transparent)]
    Lowering(Box<LaneLoweringError>),
    /// A kernarg patch of a compiled plan was refused (record class).
    #[error(transparent)]
    PlanPatch(#[from] PatchError),
    /// The encoder refused a dispatch being recorded (record class).
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// Kernargs could not be packed for a kernel (record class).
    #[error(transparent)]
    Kernargs(#[from] KernargError),
    /// A code object could not be read (record class).
    #[error(transparent)]
    CodeObject(#[from] CodeObjectError),
    /// A bundle tree or archive was refused (record class).
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// Device selection, the host manifest or the deny list refused.
    #[error(transparent)]
    Identity(#[from] IdentityError),
    /// A GPU target name was malformed or of no supported family.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The simulator refused a simulated device.
    #[cfg(feature = "sim")]
    #[error(transparent)]
    Sim(#[from] relaunch_sim::SimError),
    /// The HSA runtime library could not be loaded (device class).
    #[error(transparent)]
    Library(#[from] relaunch_hsa_sys::LoadError),
    /// An HSA call opening or using the device (runtime, pools, memory,
    /// queues) failed (device class).
    #[error(transparent)]
    Device(#[from] HsaError),
    /// Loading a code object into the runtime, or finding a kernel symbol
    /// in it, failed (record class).
    #[error(transparent)]
    Load(HsaError),
    /// A copy to or from device memory failed (replay class; device lost
    /// when the GPU is lost).
    #[error(transparent)]
    Copy(HsaError),
    /// Creating the queue actors failed (device class).
    #[error(transparent)]
    Queues(SchedError),
    /// Installing an IB on its queue actor failed (compile class; device
    /// class when the runtime cannot hold IBs at all).
    #[error(transparent)]
    Install(SchedError),
    /// A replay failed (replay class; device lost when the GPU is lost).
    #[error(transparent)]
    Replay(SchedError),
    /// A kernarg patch of an installed IB was refused or not applied
    /// (record class, whatever the scheduler's reason: the seed's C ABI
    /// classes patch failures as record errors).
    #[error(transparent)]
    Patch(SchedError),
    /// The HIP multistream fallback failed: no HIP library (device
    /// class), a HIP call (replay class) or a replay timeout (replay).
    #[error(transparent)]
    Hip(crate::hip_streams::HipError),
    /// A kernel a submission path cannot run: which kernel and why
    /// (compile class; the reference's "PM4 compilation rejects the kernel").
    #[error("{message}")]
    RefusedKernel {
        kernel: String,
        reason: String,
        message: String,
    },
    /// A refusal of the facade itself, typed: what was refused and its
    /// data ([`Error::refusal`]).
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// A refusal that is only its text: a front end's own (a NULL
    /// argument, text that is not UTF-8, a malformed C handle).
    #[error("{message}")]
    Message { class: ErrorClass, message: String },
    /// Another error with what to do about it after its message.
    #[error("{source}; {hint}")]
    Hint {
        #[source]
        source: Box<Error>,
        hint: String,
    },
    /// Another error with what was being done in front of its message.
    #[error("{context}: {source}")]
    Context {
        context: String,
        #[source]
        source: Box<Error>,
    },
}

impl From<LaneLoweringError> for Error {
    fn from(e: LaneLoweringError) -> Self {
        Error::Lowering(Box::new(e))
    }
}

/// `fn main() -> Result<(), relaunch::Error>` prints an error with Debug:
/// lead with the message a user can act on, then the typed form.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")?;
        match self.refusal() {
            Some(refusal) => write!(f, " [{refusal:?}]"),
            None => write!(f, " [{:?}]", self.class()),
        }
    }
}

impl Error {
    /// A refusal of class `class` that is only its text, `message` (the
    /// facade's own refusals are typed: [`Refusal`]).
    pub fn new(class: ErrorClass, message: impl Into<String>) -> Self {
        Error::Message {
            class,
            message: message.into(),
        }
    }

    /// The class the front ends report (C `RL_ERR_*`, Python exception).
    pub fn class(&self) -> ErrorClass {
        use relaunch_lanes::RecordError as R;
        match self {
            Error::Graph(R::UnknownBuffer { .. } | R::UnknownNode { .. }) => ErrorClass::Handle,
            Error::Graph(_) => ErrorClass::Record,
            // An IB the installed runtime cannot hold at all is a device
            // limit, not a refusal of the program.
            Error::Install(e) if e.any_cause(&|c| c.is_unsupported()) => ErrorClass::Device,
            Error::Compile(_) | Error::Lowering(_) | Error::Install(_) => ErrorClass::Compile,
            Error::Encode(e) if e.refuses_kernel() => ErrorClass::Compile,
            Error::PlanPatch(_)
            | Error::Encode(_)
            | Error::Kernargs(_)
            | Error::CodeObject(_)
            | Error::Bundle(_)
            | Error::Load(_)
            | Error::Patch(_) => ErrorClass::Record,
            #[cfg(feature = "sim")]
            Error::Sim(_) => ErrorClass::Device,
            Error::Identity(_)
            | Error::Target(_)
            | Error::Library(_)
            | Error::Device(_)
            | Error::Queues(_) => ErrorClass::Device,
            Error::Copy(e) if e.lost_address().is_some() => ErrorClass::DeviceLost,
            Error::Copy(_) => ErrorClass::Replay,
            Error::Replay(e) if e.is_device_lost() => ErrorClass::DeviceLost,
            Error::Replay(_) => ErrorClass::Replay,
            Error::Hip(crate::hip_streams::HipError::Library { .. }) => ErrorClass::Device,
            Error::Hip(_) => ErrorClass::Replay,
            Error::RefusedKernel { .. } => ErrorClass::Compile,
            Error::Refused(refusal) => refusal.class(),
            Error::Message { class, .. } => *class,
            Error::Context { source, .. } | Error::Hint { source, .. } => source.class(),
        }
    }

    /// The message (what was wrong and what to do), as `Display` shows it.
    pub fn message(&self) -> String {
        self.to_string()
    }

    /// The error this one wraps when it is context around another.
    pub fn innermost(&self) -> &Error {
        match self {
            Error::Context { source, .. } | Error::Hint { source, .. } => source.innermost(),
            other => other,
        }
    }

    /// The same error with `context: ` in front of its message.
    pub fn context(self, context: impl fmt::Display) -> Self {
        Error::Context {
            context: context.to_string(),
            source: Box::new(self),
        }
    }

    /// The same error with `; hint` after its message.
    pub fn hint(self, hint: impl fmt::Display) -> Self {
        Error::Hint {
            source: Box::new(self),
            hint: hint.to_string(),
        }
    }

    /// The hazards of a refused graph, and whether their listing stopped
    /// early (`None` for any other error).
    pub fn hazards(&self) -> Option<(&[relaunch_lanes::Hazard], bool)> {
        match self.innermost() {
            Error::Compile(CompileError::Hazards { hazards, truncated }) => {
                Some((hazards, *truncated))
            }
            _ => None,
        }
    }

    /// The faulting GPU address when the GPU is lost to this process (the
    /// `DeviceLost` class), `None` otherwise.
    pub fn lost_address(&self) -> Option<u64> {
        match self.innermost() {
            Error::Replay(e) | Error::Install(e) | Error::Queues(e) | Error::Patch(e) => {
                e.lost_address()
            }
            Error::Copy(e) | Error::Device(e) | Error::Load(e) => e.lost_address(),
            _ => None,
        }
    }

    /// What the facade refused, with its data (`None` for an error of a
    /// crate underneath or a refusal that is only text).
    pub fn refusal(&self) -> Option<&Refusal> {
        match self.innermost() {
            Error::Refused(refusal) => Some(refusal),
            _ => None,
        }
    }

    /// The kernel a submission path refused and why (`None` for any other
    /// error).
    pub fn refused_kernel(&self) -> Option<(&str, String)> {
        match self.innermost() {
            Error::RefusedKernel { kernel, reason, .. } => Some((kernel, reason.clone())),
            Error::Encode(EncodeError::Refused { symbol, reasons }) => {
                Some((symbol, relaunch_encoders::error::join(reasons)))
            }
            _ => None,
        }
    }

    /// A kernel refusal: `message` says it all; `kernel` and `reason` are
    /// its data for front ends.
    pub(crate) fn kernel_refused(
        kernel: impl Into<String>,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Error::RefusedKernel {
            kernel: kernel.into(),
            reason: reason.into(),
            message: message.into(),
        }
    }
}

/// The text of a caught panic's payload: how the C ABI and Python report a
/// panic they stopped at their boundary (one helper for both).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-text payload".to_string()
    }
}

/// `Result` with the facade's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use relaunch_lanes::{Access, KernelNode, NodeId};

    #[test]
    fn hazards_stay_typed_and_class_follows_the_variant() {
        let mut g = crate::Graph::new(crate::default_graph_options());
        let buf = g.buffer("x", 64).unwrap();
        for name in ["a", "b"] {
            g.kernel_named(KernelNode {
                accesses: vec![Access::write(buf, 0, 64)],
                ..KernelNode::named(name, [1, 1, 1], [1, 1, 1])
            })
            .unwrap();
        }
        let Err(err) = g.instantiate() else {
            panic!("two unordered writers instantiated");
        };
        assert_eq!(err.class(), ErrorClass::Compile);
        match &err {
            Error::Compile(CompileError::Hazards { hazards, .. }) => {
                assert_eq!(hazards.len(), 1);
                assert_eq!(hazards[0].kind, relaunch_lanes::HazardKind::Waw);
            }
            other => panic!("not a typed hazard list: {other:?}"),
        }
        let wrapped = err.context("graph g");
        assert_eq!(wrapped.class(), ErrorClass::Compile);
        assert!(wrapped.message().starts_with("graph g: "), "{wrapped}");
        assert!(matches!(wrapped.innermost(), Error::Compile(_)));
    }

    #[test]
    fn unknown_graph_handles_are_handle_errors_and_the_rest_record_errors() {
        let mut g = crate::Graph::new(crate::default_graph_options());
        let err = g
            .add_dependency(NodeId::from_raw(7), NodeId::from_raw(8))
            .unwrap_err();
        assert_eq!(err.class(), ErrorClass::Handle);
        let err = g.buffer("empty", 0).unwrap_err();
        assert_eq!(err.class(), ErrorClass::Record);
        assert!(matches!(
            err,
            Error::Graph(RecordError::ZeroSizeBuffer { .. })
        ));
    }

    #[test]
    fn hints_and_refusals_keep_their_class() {
        let e = Error::new(ErrorClass::Utf8, "bad")
            .hint("fix it")
            .context("arg");
        assert_eq!(e.class(), ErrorClass::Utf8);
        assert_eq!(e.message(), "arg: bad; fix it");
    }

    /// The reference guide's "PM4 compilation rejects the kernel" is the
    /// compile class; a launch's malformed arguments stay record errors.
    #[test]
    fn encoder_refusals_of_the_kernel_are_compile_errors() {
        let kernel = EncodeError::FamilyMismatch {
            symbol: "k".into(),
            kernel: relaunch_device::Family::Gfx11,
            builder: relaunch_device::Family::Gfx12,
        };
        assert_eq!(Error::Encode(kernel).class(), ErrorClass::Compile);
        let launch = EncodeError::ZeroDimension {
            symbol: "k".into(),
            grid: [0, 1, 1],
            block: [1, 1, 1],
        };
        assert_eq!(Error::Encode(launch).class(), ErrorClass::Record);
    }
}
