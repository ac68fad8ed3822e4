//! The queue vocabulary every backend implements: install a program as a
//! retained IB, submit it (publish the packet and ring), patch kernargs,
//! uninstall; plus a shared [`CompletionWatch`] that waits for tickets
//! without holding the actor. Each backend names its own error type
//! ([`QueueBackend::Error`], a [`BackendFailure`]): the core asks it what
//! it needs to know (a timeout? a lost device, and where?) and never what
//! concrete type it is. The real backend is `crate::hsa` (over
//! `relaunch_device::hsa`); `relaunch_testsupport::counter` is an
//! in-memory one that really executes counter IBs, small enough for loom.

use std::collections::VecDeque;
use std::time::Duration;

use crate::loom::Arc;

/// Names one replay's completion: the backend's queue generation (bumped
/// when a faulted queue is replaced) and the replay's number in it (1, 2, ...).
/// Replays on one queue complete in ticket order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticket {
    pub epoch: u32,
    pub seq: u64,
}

/// A replay whose packets are published but whose doorbell may not be
/// rung yet: `ring` it (a fan-out publishes every lane first, then rings
/// every queue, so the lanes start as close together as possible).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Published {
    pub ticket: Ticket,
    /// The value to ring the doorbell with (`None`: nothing left to ring).
    pub doorbell: Option<u64>,
}

/// What the caller's thread needs to validate a kernarg patch without
/// touching the installed IB (which may be busy on the actor thread).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IbLayout {
    /// Kernarg block length of each dispatch, in dispatch order.
    pub kernarg_lens: Vec<u32>,
    /// Identical kernarg blocks are shared, so patching is refused.
    pub shared_kernargs: bool,
    /// Size of the IB in dwords (for work estimates and reports).
    pub dwords: usize,
    /// Bytes the installed IB keeps alive: device memory (PM4, kernargs)
    /// plus host bookkeeping (packets, patch sites, kernarg image, this
    /// layout's own table). 0 when a backend does not account.
    pub retained_bytes: usize,
}

impl IbLayout {
    /// Checks a patch of `len` bytes at `offset` of `dispatch`'s block.
    pub fn check_patch(&self, dispatch: usize, offset: usize, len: usize) -> Result<(), String> {
        if self.shared_kernargs {
            return Err(
                "the IB shares identical kernarg blocks (built with kernargs_immutable); \
                 rebuild it without that option to patch"
                    .to_string(),
            );
        }
        let Some(&block) = self.kernarg_lens.get(dispatch) else {
            return Err(format!(
                "dispatch {dispatch} does not exist; the IB has {} dispatches",
                self.kernarg_lens.len()
            ));
        };
        match offset.checked_add(len) {
            Some(end) if end <= block as usize => Ok(()),
            _ => Err(format!(
                "{len} bytes at offset {offset} do not fit the dispatch's {block}-byte kernarg block"
            )),
        }
    }
}

/// What the core needs to know about a backend's error, whatever its type:
/// the actors and completions class failures with these, and front ends
/// read them through `SchedError`.
pub trait BackendFailure: std::error::Error + Send + Sync + 'static {
    /// A wait for a replay (or for room to submit one) ran out of time;
    /// the replay may still finish (`Completion::wait_or_abandon` then
    /// gives it up).
    fn is_timeout(&self) -> bool;
    /// The faulting address when the device is lost (a memory fault was
    /// reported for it: every later replay fails at once).
    fn lost_address(&self) -> Option<u64> {
        None
    }
    /// The device is lost (see [`Self::lost_address`]).
    fn is_device_lost(&self) -> bool {
        self.lost_address().is_some()
    }
    /// The device or its runtime refused the request as unsupported (not a
    /// fault of the request or of the queue).
    fn is_unsupported(&self) -> bool {
        false
    }
}

/// The error bound of a backend's error type: what `BackendFailure` asks,
/// cheap to clone (one queue fault is reported to every waiter of the
/// replays it ended) and able to carry the core's own [`WatchError`]s.
pub trait BackendErrorType: BackendFailure + Clone + From<WatchError> {}

impl<E: BackendFailure + Clone + From<WatchError>> BackendErrorType for E {}

/// Observes completions of one backend's queue from any thread.
pub trait CompletionWatch: Send + Sync + 'static {
    /// The backend's error (the same type as its `QueueBackend::Error`).
    type Error: BackendErrorType;
    /// `Ok(true)` once the replay finished; `Err` once it is known to have
    /// failed (its queue faulted: nothing will run it any more).
    fn is_complete(&self, ticket: Ticket) -> Result<bool, Self::Error>;
    /// Blocks until the replay finishes or fails, or `timeout` passes (an
    /// error saying what was waited for and what was seen).
    fn wait(&self, ticket: Ticket, timeout: Duration) -> Result<(), Self::Error>;
    /// Gives up on a replay that did not finish in time: its queue is
    /// stopped (work in flight discarded, nothing more changes memory) and
    /// replaced by the next submit; the replay and every one queued behind
    /// it then report that they were abandoned. `Ok(false)` when the replay
    /// had settled (finished or failed) by then. Backends that cannot stop
    /// their queue say so.
    fn abandon(&self, ticket: Ticket) -> Result<bool, Self::Error> {
        Err(WatchError::CannotAbandon {
            epoch: ticket.epoch,
            seq: ticket.seq,
        }
        .into())
    }
}

/// Writes an installed IB's kernargs from the thread that owns its
/// [`IbHandle`](crate::IbHandle), without going through the actor (the
/// direct-patch fast path, see `track`). Clones write the same memory; the
/// scheduler keeps exactly one, in the IB's handle.
pub trait KernargWriter: Clone + Send + Sync + 'static {
    /// Writes `bytes` at `offset` of `dispatch`'s kernarg block; `Err(())`
    /// (nothing written) when the range is not inside that block or the IB
    /// cannot be patched; the caller words the error. Only called while no
    /// replay of the IB runs and no other write to it happens (the handle's
    /// `&mut` and the IB's track guarantee it).
    #[allow(clippy::result_unit_err)]
    fn write(&mut self, dispatch: usize, offset: usize, bytes: &[u8]) -> Result<(), ()>;
}

/// One hardware queue and the IBs retained on it. Methods take `&mut self`:
/// the actor guarantees one caller at a time.
pub trait QueueBackend: Send + 'static {
    /// What `install` turns into a retained IB.
    type Program: Send + 'static;
    /// A retained IB: its PM4 and kernarg memory, its prebuilt packets.
    type Installed: Send + 'static;
    /// Its failures: what the actor reports as a `SchedError::Backend`
    /// cause.
    type Error: BackendErrorType;
    type Watch: CompletionWatch<Error = Self::Error>;
    /// Direct writes to an installed IB's kernargs (kept by its handle).
    type Writer: KernargWriter;

    /// The completion observer (the same one for the backend's life).
    fn watch(&self) -> Arc<Self::Watch>;
    /// Encodes/copies `program` into memory the queue can run.
    fn install(&mut self, program: Self::Program) -> Result<Self::Installed, Self::Error>;
    /// Patch-validation facts about `ib`.
    fn layout(&self, ib: &Self::Installed) -> IbLayout;
    /// The label `ib` was built with, which errors name it by (`None`:
    /// errors name its id).
    fn label(&self, _ib: &Self::Installed) -> Option<std::sync::Arc<str>> {
        None
    }
    /// A writer for `ib`'s kernargs that stays usable (writing memory
    /// nothing reads any more) even after `ib` is uninstalled.
    fn writer(&self, ib: &Self::Installed) -> Self::Writer;
    /// Publishes `ib`'s packets and rings the doorbell. A queue that faulted
    /// earlier is replaced first (new epoch), so one fault does not end the
    /// actor.
    fn submit(&mut self, ib: &Self::Installed) -> Result<Ticket, Self::Error> {
        let published = self.publish(ib)?;
        self.ring(&published);
        Ok(published.ticket)
    }
    /// The first half of `submit`: writes `ib`'s packets (header last, with
    /// release) without ringing. The queue may start them before the ring
    /// (a packet processor may poll), never later than it. If publishing
    /// fails part-way, what was published is rung before the error returns.
    fn publish(&mut self, ib: &Self::Installed) -> Result<Published, Self::Error>;
    /// The second half: rings the doorbell for a `publish` of this backend.
    fn ring(&mut self, published: &Published);
    /// Writes kernarg bytes; the actor calls it only when no replay of `ib`
    /// is running, and only with ranges `layout` accepted.
    fn patch(
        &mut self,
        ib: &mut Self::Installed,
        dispatch: usize,
        offset: usize,
        bytes: &[u8],
    ) -> Result<(), Self::Error>;
    /// Frees `ib`; called only when no replay of it is running.
    fn uninstall(&mut self, ib: Self::Installed) -> Result<(), Self::Error>;
}

/// Why a watch could not say how a ticket ended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WatchError {
    #[error("replay ticket {seq} of queue generation {epoch} is from a queue replaced more than {kept} faults ago; its outcome was not kept")]
    Forgotten { epoch: u32, seq: u64, kept: usize },
    #[error("replay {seq} of queue generation {epoch} never ran: replay {faulted} before it on the same queue failed ({cause})")]
    Abandoned {
        epoch: u32,
        seq: u64,
        faulted: u64,
        cause: String,
    },
    #[error("replay {seq} of queue generation {epoch} cannot be abandoned: this backend cannot stop its queue, so the replay keeps running")]
    CannotAbandon { epoch: u32, seq: u64 },
    #[error("replay ticket {seq} of queue generation {epoch} was never issued (current generation {current}, {issued} replays issued)")]
    NeverIssued {
        epoch: u32,
        seq: u64,
        current: u32,
        issued: u64,
    },
}

/// The error for a replay of a queue generation that died after
/// `completed` replays: the next one carried the fault, later ones never ran.
pub fn failed_or_abandoned<E: Clone + std::fmt::Display + From<WatchError>>(
    ticket: Ticket,
    completed: u64,
    cause: &E,
) -> E {
    if ticket.seq <= completed.saturating_add(1) {
        return cause.clone();
    }
    WatchError::Abandoned {
        epoch: ticket.epoch,
        seq: ticket.seq,
        faulted: completed + 1,
        cause: cause.to_string(),
    }
    .into()
}

/// How many replaced queue generations a watch remembers.
pub const RETIRED_EPOCHS_KEPT: usize = 16;

/// Outcomes of queue generations replaced after a fault: replays up to
/// `completed` finished, later ones failed with `cause`. Bounded.
#[derive(Debug)]
pub struct RetiredEpochs<E> {
    entries: VecDeque<(u32, u64, E)>,
}

impl<E> Default for RetiredEpochs<E> {
    fn default() -> Self {
        RetiredEpochs {
            entries: VecDeque::new(),
        }
    }
}

impl<E: Clone + std::fmt::Display + From<WatchError>> RetiredEpochs<E> {
    pub fn retire(&mut self, epoch: u32, completed: u64, cause: E) {
        if self.entries.len() == RETIRED_EPOCHS_KEPT {
            self.entries.pop_front();
        }
        self.entries.push_back((epoch, completed, cause));
    }

    /// The outcome of `ticket` if its epoch was retired.
    pub fn outcome(&self, ticket: Ticket) -> Result<(), E> {
        match self.entries.iter().find(|e| e.0 == ticket.epoch) {
            Some((_, completed, _)) if ticket.seq <= *completed => Ok(()),
            Some((_, completed, cause)) => Err(failed_or_abandoned(ticket, *completed, cause)),
            None => Err(WatchError::Forgotten {
                epoch: ticket.epoch,
                seq: ticket.seq,
                kept: RETIRED_EPOCHS_KEPT,
            }
            .into()),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn patch_checks_name_the_problem() {
        let layout = IbLayout {
            kernarg_lens: vec![16, 8],
            shared_kernargs: false,
            dwords: 40,
            retained_bytes: 0,
        };
        assert!(layout.check_patch(1, 4, 4).is_ok());
        assert!(layout.check_patch(1, 0, 8).is_ok());
        assert_eq!(
            layout.check_patch(2, 0, 4).unwrap_err(),
            "dispatch 2 does not exist; the IB has 2 dispatches"
        );
        assert_eq!(
            layout.check_patch(1, 6, 4).unwrap_err(),
            "4 bytes at offset 6 do not fit the dispatch's 8-byte kernarg block"
        );
        assert!(layout.check_patch(0, usize::MAX, 2).is_err());
        let shared = IbLayout {
            shared_kernargs: true,
            ..layout
        };
        assert!(shared
            .check_patch(0, 0, 4)
            .unwrap_err()
            .contains("kernargs_immutable"));
    }

    #[test]
    fn retired_epochs_keep_outcomes_and_forget_old_ones() {
        let mut log = RetiredEpochs::<WatchError>::default();
        let cause = WatchError::Forgotten {
            epoch: 9,
            seq: 9,
            kept: 0,
        };
        log.retire(0, 3, cause.clone());
        assert!(log.outcome(Ticket { epoch: 0, seq: 3 }).is_ok());
        let err = log.outcome(Ticket { epoch: 0, seq: 4 }).unwrap_err();
        assert_eq!(err.to_string(), cause.to_string());
        let err = log.outcome(Ticket { epoch: 0, seq: 6 }).unwrap_err();
        assert!(err
            .to_string()
            .starts_with("replay 6 of queue generation 0 never ran: replay 4 before it"));
        for epoch in 1..=RETIRED_EPOCHS_KEPT as u32 {
            log.retire(epoch, 0, cause.clone());
        }
        let err = log.outcome(Ticket { epoch: 0, seq: 1 }).unwrap_err();
        assert!(matches!(err, WatchError::Forgotten { epoch: 0, .. }));
    }
}
