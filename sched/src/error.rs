//! `SchedError`: every way the actors and the scheduler fail, each message
//! saying what was wrong and what to do. A backend's own error (its
//! `QueueBackend::Error`) travels as a [`BackendCause`], a cheap-to-clone
//! handle that answers the [`BackendFailure`] questions, because one queue
//! fault is reported to every waiter of the replays it ended. Nothing here
//! knows a backend's concrete error type.

use std::fmt;
// Not a protocol primitive: only shares an immutable error value.
use std::sync::Arc;

use crate::backend::BackendFailure;

/// A queue backend's error, shared between everyone it concerns.
#[derive(Clone)]
pub struct BackendCause(Arc<dyn BackendFailure>);

impl BackendCause {
    /// The backend's error, asked through [`BackendFailure`].
    pub fn get(&self) -> &dyn BackendFailure {
        &*self.0
    }

    /// See [`BackendFailure::is_timeout`].
    pub fn is_timeout(&self) -> bool {
        self.0.is_timeout()
    }

    /// See [`BackendFailure::is_device_lost`].
    pub fn is_device_lost(&self) -> bool {
        self.0.is_device_lost()
    }

    /// See [`BackendFailure::lost_address`].
    pub fn lost_address(&self) -> Option<u64> {
        self.0.lost_address()
    }
}

impl<E: BackendFailure> From<E> for BackendCause {
    fn from(err: E) -> Self {
        BackendCause(Arc::new(err))
    }
}

impl fmt::Display for BackendCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for BackendCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl std::error::Error for BackendCause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// Names an installed IB in errors: its label when it was given one
/// (`IbBuilder::set_label`; the facade labels a graph's lanes `lane<N>`),
/// else its id on its actor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IbName {
    /// The IB's id on its actor (`IbHandle::id`).
    pub id: u64,
    pub label: Option<Arc<str>>,
}

impl fmt::Display for IbName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.label {
            Some(label) => write!(f, "IB {label:?}"),
            None => write!(f, "IB {}", self.id),
        }
    }
}

/// ", IB ..." after a lane's actor, or nothing when the lane's IB was
/// never installed (an install failure).
fn ib_suffix(ib: &Option<IbName>) -> String {
    ib.as_ref().map_or_else(String::new, |ib| format!(", {ib}"))
}

/// Errors of the queue actors and the scheduler.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SchedError {
    /// The actor has shut down (or is shutting down) and takes no more work.
    #[error("queue actor {actor} has shut down and accepts no more operations; install on a live scheduler")]
    Stopped { actor: usize },
    /// The handle does not name an IB installed on this actor.
    #[error("IB {ib} is not installed on queue actor {actor}: it was uninstalled or belongs to another actor")]
    UnknownIb { actor: usize, ib: u64 },
    /// The queue backend failed.
    #[error("queue actor {actor}: {during} failed: {cause}")]
    Backend {
        actor: usize,
        during: &'static str,
        cause: BackendCause,
    },
    /// A kernarg patch was refused before anything was written.
    #[error("kernarg patch of dispatch {dispatch} refused: {problem}")]
    PatchRefused { dispatch: usize, problem: String },
    /// A patch queued behind a replay could not be applied; reported by the
    /// next replay of the same IB.
    #[error("kernarg patch of dispatch {dispatch} on queue actor {actor} was not applied: {cause}; patch again before replaying")]
    PatchNotApplied {
        actor: usize,
        dispatch: usize,
        cause: String,
    },
    /// The operation was on one lane of a multi-lane IB: which lane, the
    /// actor it runs on and its IB (`None` when installing it failed).
    #[error("lane {lane} (queue actor {actor}{}): {source}", ib_suffix(.ib))]
    Lane {
        lane: usize,
        actor: usize,
        ib: Option<IbName>,
        source: Box<SchedError>,
    },
    /// Several lanes failed in one replay; each entry is a `Lane` error.
    #[error("{} lanes failed: {}", failures.len(), join(failures))]
    Lanes { failures: Vec<SchedError> },
    /// A lane index out of range.
    #[error("lane {lane} does not exist; this multi-lane IB has {count} lanes")]
    NoSuchLane { lane: usize, count: usize },
    /// A queue policy value outside 0..=4.
    #[error("queue policy {value} is not 0 (auto) or an explicit count 1-4")]
    BadPolicy { value: u32 },
    /// A scheduler was asked for with nothing to schedule on, or no lanes.
    #[error("nothing to schedule: {what}")]
    Empty { what: &'static str },
    /// A wait ran out of time before the actor even submitted the replay.
    #[error("timed out after {waited_ms} ms waiting for queue actor {actor} to {what}; the actor is stuck behind earlier operations (a patch or uninstall waiting for a long replay?)")]
    Timeout {
        actor: usize,
        what: &'static str,
        waited_ms: u128,
    },
    /// A replay did not finish in time and was given up: its queue was
    /// stopped and will be replaced (see `Completion::wait_or_abandon`).
    #[error("queue actor {actor}: the replay did not finish within {waited_ms} ms and was abandoned: its queue was stopped (work in flight discarded; memory it was writing may be partially written) and the lane's next replay runs on a new queue ({cause})")]
    Abandoned {
        actor: usize,
        waited_ms: u128,
        cause: String,
    },
    /// The operating system refused to start an actor thread.
    #[error("could not start the thread of queue actor {actor}: {message}")]
    Spawn { actor: usize, message: String },
}

fn join(errors: &[SchedError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl SchedError {
    /// True when the cause (of any lane) is a lost GPU: a memory fault was
    /// reported for the device (HSA: `HsaError::DeviceLost`).
    pub fn is_device_lost(&self) -> bool {
        self.any_cause(&|c| c.is_device_lost())
    }

    /// The faulting address when a backend cause (of any lane) is a lost
    /// device.
    pub fn lost_address(&self) -> Option<u64> {
        self.find_cause(&|c| c.lost_address())
    }

    /// True when the backend cause of this error (of any lane, for a
    /// multi-lane error) is one for which `pred` holds: how front ends
    /// class an error by what the backend said (e.g.
    /// `|c| c.is_unsupported()`).
    pub fn any_cause(&self, pred: &dyn Fn(&dyn BackendFailure) -> bool) -> bool {
        self.find_cause(&|c| pred(c).then_some(())).is_some()
    }

    /// The first answer `f` gives for a backend cause of this error (of
    /// any lane, in lane order): the one walk `any_cause` and
    /// `lost_address` share.
    fn find_cause<T>(&self, f: &dyn Fn(&dyn BackendFailure) -> Option<T>) -> Option<T> {
        match self {
            SchedError::Backend { cause, .. } => f(cause.get()),
            SchedError::Lane { source, .. } => source.find_cause(f),
            SchedError::Lanes { failures } => failures.iter().find_map(|e| e.find_cause(f)),
            _ => None,
        }
    }

    /// The lane this error names, if it is about one lane.
    pub fn lane(&self) -> Option<usize> {
        match self {
            SchedError::Lane { lane, .. } => Some(*lane),
            SchedError::Lanes { failures } if failures.len() == 1 => failures[0].lane(),
            _ => None,
        }
    }

    /// The failure of lane `lane`: this error when it is that lane's, or
    /// that lane's entry of a multi-lane error.
    pub fn of_lane(&self, lane: usize) -> Option<&SchedError> {
        match self {
            SchedError::Lane { lane: l, .. } if *l == lane => Some(self),
            SchedError::Lanes { failures } => failures.iter().find(|f| f.lane() == Some(lane)),
            _ => None,
        }
    }
}
