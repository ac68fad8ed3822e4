//! `IbHandle`: an IB retained on one actor, and the operations on it
//! (replay, patch, uninstall on drop), each going through the actor's
//! claim-or-enqueue protocol (see `actor`), except a patch of an idle IB,
//! which writes the kernargs directly (see `track`).

use crate::actor::{Actor, Installed, Op, Shared, Step};
use crate::backend::{IbLayout, KernargWriter, QueueBackend};
use crate::completion::{Completion, Reply};
use crate::error::{IbName, SchedError};
use crate::loom::Arc;
use crate::track::IbTrack;

/// An IB retained on one actor. Dropping it uninstalls the IB once no
/// replay of it runs any more (the caller does not wait). Deliberately not
/// over-aligned: front ends embed it in memory they do not allocate with
/// Rust's alignment (a Python object guarantees 16 bytes).
pub struct IbHandle<B: QueueBackend> {
    /// The actor's state, held directly: one pointer hop less per replay.
    shared: Arc<Shared<B>>,
    track: Arc<IbTrack>,
    writer: B::Writer,
    id: u64,
    actor: Actor<B>,
    layout: IbLayout,
    /// What errors call this IB (its label, else its id).
    name: IbName,
}

impl<B: QueueBackend> IbHandle<B> {
    pub(crate) fn new(actor: Actor<B>, installed: Installed<B>) -> Self {
        let Installed {
            id,
            layout,
            track,
            writer,
            label,
        } = installed;
        IbHandle {
            shared: actor.shared_arc(),
            track,
            writer,
            id,
            actor,
            layout,
            name: IbName { id, label },
        }
    }

    pub(crate) fn shared(&self) -> &Shared<B> {
        &self.shared
    }

    pub fn actor(&self) -> &Actor<B> {
        &self.actor
    }
    pub fn id(&self) -> u64 {
        self.id
    }
    /// What errors call this IB: its label when built with one, else its id.
    pub fn name(&self) -> &IbName {
        &self.name
    }
    pub fn layout(&self) -> &IbLayout {
        &self.layout
    }
    pub fn dispatch_count(&self) -> usize {
        self.layout.kernarg_lens.len()
    }

    /// Submits one replay; wait on the returned completion (or not).
    pub fn replay(&self) -> Result<Completion<B::Watch>, SchedError> {
        let shared = &*self.shared;
        match shared.claim()? {
            Ok(mut claimed) => {
                let ticket = claimed.core()?.replay(shared.index, self.id)?;
                // Cloned after the doorbell: one atomic less before it.
                let watch = Arc::clone(&shared.watch);
                Ok(Completion::issued(shared.index, watch, ticket))
            }
            Err(inbox) => {
                let watch = Arc::clone(&shared.watch);
                let (tx, reply) = Reply::pair(shared.index);
                self.track.sent();
                if let Err(err) = shared.enqueue(inbox, Op::Replay(self.id, tx)) {
                    self.track.ran();
                    return Err(err);
                }
                Ok(Completion::queued(shared.index, watch, reply))
            }
        }
    }

    /// Writes `bytes` at `offset` of dispatch `dispatch`'s kernargs. Checked
    /// now; applied now if no replay of this IB runs, else after the running
    /// ones finish (the caller does not wait). A queued patch that cannot be
    /// applied is reported by the next replay.
    ///
    /// `&mut self`: while a patch runs nobody else can send an operation on
    /// this IB, which is what lets an idle IB be patched by a plain write
    /// (no lock, no atomic read-modify-write).
    #[inline]
    pub fn patch(
        &mut self,
        dispatch: usize,
        offset: usize,
        bytes: &[u8],
    ) -> Result<(), SchedError> {
        if !self.shared.stopped() && self.track.idle(&*self.shared.watch) {
            return match self.writer.write(dispatch, offset, bytes) {
                Ok(()) => Ok(()),
                Err(()) => Err(self.refusal(dispatch, offset, bytes.len())),
            };
        }
        self.patch_ordered(dispatch, offset, bytes)
    }

    /// Why a patch range is refused (the layout words it).
    #[cold]
    fn refusal(&self, dispatch: usize, offset: usize, len: usize) -> SchedError {
        let problem = match self.layout.check_patch(dispatch, offset, len) {
            Err(problem) => problem,
            Ok(()) => format!("the IB's kernarg memory does not hold dispatch {dispatch}'s block"),
        };
        SchedError::PatchRefused { dispatch, problem }
    }

    /// A patch through the actor: now if no replay of this IB runs, else
    /// queued behind them.
    #[cold]
    fn patch_ordered(
        &mut self,
        dispatch: usize,
        offset: usize,
        bytes: &[u8],
    ) -> Result<(), SchedError> {
        self.layout
            .check_patch(dispatch, offset, bytes.len())
            .map_err(|problem| SchedError::PatchRefused { dispatch, problem })?;
        let shared = &*self.shared;
        match shared.claim()? {
            Ok(mut claimed) => {
                let step = shared.patch(claimed.core()?, (self.id, dispatch, offset, bytes), false);
                match step {
                    Step::Done(result) => result,
                    Step::Later(op) => {
                        claimed.later = Some(op);
                        Ok(())
                    }
                }
            }
            Err(inbox) => {
                self.track.sent();
                let op = Op::Patch {
                    ib: self.id,
                    dispatch,
                    offset,
                    bytes: bytes.to_vec(),
                };
                shared.enqueue(inbox, op).inspect_err(|_| self.track.ran())
            }
        }
    }

    fn uninstall_now(&self) -> Result<(), SchedError> {
        let shared = &*self.shared;
        match shared.claim()? {
            Ok(mut claimed) => match shared.uninstall(claimed.core()?, self.id, false) {
                Step::Done(result) => result,
                Step::Later(op) => {
                    claimed.later = Some(op);
                    Ok(())
                }
            },
            Err(inbox) => shared.enqueue(inbox, Op::Uninstall(self.id)),
        }
    }
}

impl<B: QueueBackend> Drop for IbHandle<B> {
    fn drop(&mut self) {
        match self.uninstall_now() {
            // After shutdown the actor already freed everything.
            Ok(()) | Err(SchedError::Stopped { .. }) => {}
            Err(err) => tracing::warn!(ib = self.id, "uninstall failed: {err}"),
        }
    }
}

impl<B: QueueBackend> std::fmt::Debug for IbHandle<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IbHandle")
            .field("actor", &self.actor.index())
            .field("id", &self.id)
            .field("dispatches", &self.dispatch_count())
            .finish()
    }
}
