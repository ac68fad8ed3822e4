//! Completions: a one-shot reply slot the actor thread fills for work it
//! took from the mailbox, and [`Completion`], what `replay` returns: either
//! the ticket at once (the caller's thread submitted) or a reply slot that
//! will hold it, plus the backend's watch to wait on the ticket.

use std::time::{Duration, Instant};

use crate::backend::{CompletionWatch, Ticket};
use crate::error::SchedError;
use crate::loom::{self, Arc, Condvar, Mutex};

/// A value the actor thread hands to one waiting caller.
pub(crate) struct Reply<T> {
    slot: Mutex<Option<Result<T, SchedError>>>,
    ready: Condvar,
}

impl<T: Clone> Reply<T> {
    /// A slot and the sending half that goes into the mailbox.
    pub(crate) fn pair(actor: usize) -> (ReplyTx<T>, Arc<Reply<T>>) {
        let cell = Arc::new(Reply {
            slot: Mutex::new(None),
            ready: Condvar::new(),
        });
        let tx = ReplyTx {
            cell: Some(Arc::clone(&cell)),
            actor,
        };
        (tx, cell)
    }

    /// The value once sent, waiting at most `timeout` (`None` if not yet).
    pub(crate) fn get(&self, timeout: Option<Duration>) -> Option<Result<T, SchedError>> {
        let start = Instant::now();
        let mut slot = loom::lock(&self.slot);
        loop {
            if let Some(value) = slot.as_ref() {
                return Some(value.clone());
            }
            slot = match timeout {
                None => loom::wait(&self.ready, slot),
                Some(limit) => {
                    let left = limit.saturating_sub(start.elapsed());
                    if left.is_zero() {
                        return None;
                    }
                    loom::wait_timeout(&self.ready, slot, left)
                }
            };
        }
    }

    /// The value if already sent, without waiting.
    pub(crate) fn peek(&self) -> Option<Result<T, SchedError>> {
        loom::lock(&self.slot).clone()
    }
}

/// The sending half of a [`Reply`]. Dropping it unsent (the actor ended
/// without reaching the operation) tells the waiter the actor stopped, so
/// no caller waits forever.
pub(crate) struct ReplyTx<T> {
    cell: Option<Arc<Reply<T>>>,
    actor: usize,
}

impl<T> ReplyTx<T> {
    pub(crate) fn send(mut self, value: Result<T, SchedError>) {
        if let Some(cell) = self.cell.take() {
            *loom::lock(&cell.slot) = Some(value);
            cell.ready.notify_all();
        }
    }
}

impl<T> Drop for ReplyTx<T> {
    fn drop(&mut self) {
        if let Some(cell) = self.cell.take() {
            let mut slot = loom::lock(&cell.slot);
            if slot.is_none() {
                *slot = Some(Err(SchedError::Stopped { actor: self.actor }));
            }
            drop(slot);
            cell.ready.notify_all();
        }
    }
}

#[derive(Clone)]
enum State {
    /// Submitted by the caller's thread.
    Issued(Ticket),
    /// Queued in the mailbox; the actor thread will send the ticket.
    Queued(Arc<Reply<Ticket>>),
}

/// One replay in flight. Waiting is optional: the replay runs regardless,
/// and later operations on the actor stay ordered after it. A clone
/// watches the same replay (e.g. to keep its code alive until it settled).
pub struct Completion<W: CompletionWatch> {
    actor: usize,
    watch: Arc<W>,
    state: State,
}

impl<W: CompletionWatch> Clone for Completion<W> {
    fn clone(&self) -> Self {
        Completion {
            actor: self.actor,
            watch: Arc::clone(&self.watch),
            state: self.state.clone(),
        }
    }
}

impl<W: CompletionWatch> Completion<W> {
    pub(crate) fn issued(actor: usize, watch: Arc<W>, ticket: Ticket) -> Self {
        Completion {
            actor,
            watch,
            state: State::Issued(ticket),
        }
    }

    pub(crate) fn queued(actor: usize, watch: Arc<W>, reply: Arc<Reply<Ticket>>) -> Self {
        Completion {
            actor,
            watch,
            state: State::Queued(reply),
        }
    }

    /// The queue actor this replay went to.
    pub fn actor(&self) -> usize {
        self.actor
    }

    /// The ticket, once the replay was submitted (`None` while it waits in
    /// the mailbox; `Err` if submitting failed).
    pub fn ticket(&self) -> Option<Result<Ticket, SchedError>> {
        match &self.state {
            State::Issued(ticket) => Some(Ok(*ticket)),
            State::Queued(reply) => reply.peek(),
        }
    }

    /// True once the replay finished; an error if it failed.
    pub fn is_complete(&self) -> Result<bool, SchedError> {
        match self.ticket() {
            None => Ok(false),
            Some(ticket) => self
                .watch
                .is_complete(ticket?)
                .map_err(|cause| self.failed(cause)),
        }
    }

    /// Waits up to `timeout` for the replay to finish.
    pub fn wait(&self, timeout: Duration) -> Result<(), SchedError> {
        let start = Instant::now();
        let ticket = match &self.state {
            State::Issued(ticket) => *ticket,
            State::Queued(reply) => match reply.get(Some(timeout)) {
                Some(result) => result?,
                None => {
                    return Err(SchedError::Timeout {
                        actor: self.actor,
                        what: "submit a queued replay",
                        waited_ms: start.elapsed().as_millis(),
                    })
                }
            },
        };
        let left = timeout.saturating_sub(start.elapsed());
        self.watch
            .wait(ticket, left)
            .map_err(|cause| self.failed(cause))
    }

    /// Waits up to `timeout`, and gives the replay up if it has not
    /// finished by then (the timeout contract): its queue is stopped, so the
    /// replay makes no more changes to memory once this returns (what it
    /// wrote before may be partial), every replay queued behind it on that
    /// queue is abandoned too, and the lane's next replay runs on a new
    /// queue. For a caller that treats a timeout as a hang; [`Self::wait`]
    /// leaves the replay running.
    pub fn wait_or_abandon(&self, timeout: Duration) -> Result<(), SchedError> {
        let waited = self.wait(timeout);
        let timed_out = match &waited {
            Err(SchedError::Backend { cause, .. }) => cause.is_timeout(),
            Err(SchedError::Timeout { .. }) => true,
            _ => false,
        };
        if !timed_out {
            return waited;
        }
        let Some(Ok(ticket)) = self.ticket() else {
            return waited;
        };
        match self.watch.abandon(ticket) {
            Ok(true) => Err(SchedError::Abandoned {
                actor: self.actor,
                waited_ms: timeout.as_millis(),
                cause: waited.err().map(|e| e.to_string()).unwrap_or_default(),
            }),
            // Settled just now: report what it did.
            Ok(false) => self.wait(Duration::ZERO),
            Err(cause) => Err(self.failed(cause)),
        }
    }

    fn failed(&self, cause: W::Error) -> SchedError {
        SchedError::Backend {
            actor: self.actor,
            during: "replay",
            cause: cause.into(),
        }
    }
}

impl<W: CompletionWatch> std::fmt::Debug for Completion<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.state {
            State::Issued(t) => format!("issued {t:?}"),
            State::Queued(_) => "queued".to_string(),
        };
        f.debug_struct("Completion")
            .field("actor", &self.actor)
            .field("state", &state)
            .finish()
    }
}
