//! Per-IB bookkeeping shared by an [`IbHandle`](crate::IbHandle) and its
//! actor, so a kernarg patch on an idle IB needs no claim, no lock and no
//! atomic read-modify-write: the direct-patch fast path.
//!
//! Why it is sound. `IbHandle::patch` takes `&mut self`, so while it runs
//! no other operation on this IB can be sent: everything that could still
//! touch the IB's kernargs was sent earlier and is either
//! - in the mailbox or being run by the actor thread: counted in `queued`
//!   from the send until after it ran (decremented with release), or
//! - a replay already submitted: its ticket is in `last_*` (written under
//!   the actor claim before the claim is released or `queued` drops) until
//!   someone sees it finished (or failed: a dead queue reads nothing).
//!
//! So `queued == 0` (acquire) and "no unfinished last replay" mean nothing
//! reads or writes the kernargs but the patching thread, which then writes
//! them directly. Anything else takes the ordered path through the actor.

use crate::backend::{CompletionWatch, Ticket};
use crate::loom::{AtomicU32, AtomicU64, Ordering};

/// See the module docs. Line-aligned: written on every replay, so it keeps
/// a line of its own (layout only).
#[derive(Debug, Default)]
#[repr(align(64))]
pub(crate) struct IbTrack {
    /// Operations on this IB sent to the mailbox and not yet finished.
    queued: AtomicU32,
    /// Queue generation of the last replay (meaningful when `last_seq` != 0).
    last_epoch: AtomicU32,
    /// Sequence number of the last replay not yet seen finished; 0: none.
    last_seq: AtomicU64,
}

impl IbTrack {
    /// An operation on this IB goes into the mailbox.
    pub(crate) fn sent(&self) {
        self.queued.fetch_add(1, Ordering::Relaxed);
    }

    /// An operation taken from the mailbox finished (its effects, a
    /// replay's ticket included, are visible to whoever sees the count drop).
    pub(crate) fn ran(&self) {
        self.queued.fetch_sub(1, Ordering::Release);
    }

    /// A replay was submitted (under the actor claim).
    pub(crate) fn submitted(&self, ticket: Ticket) {
        self.last_epoch.store(ticket.epoch, Ordering::Relaxed);
        self.last_seq.store(ticket.seq, Ordering::Release);
    }

    /// The last replay not yet seen finished, if any.
    pub(crate) fn last(&self) -> Option<Ticket> {
        match self.last_seq.load(Ordering::Acquire) {
            0 => None,
            seq => Some(Ticket {
                epoch: self.last_epoch.load(Ordering::Relaxed),
                seq,
            }),
        }
    }

    /// The last replay finished (or failed): nothing runs the IB any more.
    pub(crate) fn settle(&self) {
        self.last_seq.store(0, Ordering::Relaxed);
    }

    /// True when no replay of the IB runs: the last one finished or failed.
    /// Called under the actor claim, or by the handle's `&mut` owner (then
    /// only with `queued == 0`, see the module docs).
    pub(crate) fn settled(&self, watch: &impl CompletionWatch) -> bool {
        match self.last() {
            None => true,
            Some(ticket) => match watch.is_complete(ticket) {
                Ok(false) => false,
                Ok(true) | Err(_) => {
                    self.settle();
                    true
                }
            },
        }
    }

    /// The direct-patch condition (see the module docs): nothing queued and
    /// no replay running. Only for the handle's `&mut` owner.
    #[inline]
    pub(crate) fn idle(&self, watch: &impl CompletionWatch) -> bool {
        self.queued.load(Ordering::Acquire) == 0
            && (self.last_seq.load(Ordering::Acquire) == 0 || self.settled(watch))
    }
}
