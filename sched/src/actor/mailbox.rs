//! The state word and the mailbox: who runs an operation (a caller that
//! claimed an idle actor, or the actor thread) and how queued operations
//! reach the actor thread (see the module docs of `actor`).

use super::{Core, Op, Shared};
use crate::backend::QueueBackend;
use crate::error::SchedError;
use crate::loom::{self, MutPtr, Ordering};

/// `Shared::state`: someone (a caller or the actor thread) is running an
/// operation.
pub(super) const BUSY: u32 = 1;
/// No new operations are accepted.
pub(super) const STOPPED: u32 = 2;
/// One operation counted in: reserved by a sender (in the mailbox or about
/// to be sent), or deferred in `Core::first`, and not yet run. Counted
/// before it is sent and uncounted after it ran, so a claim (which needs
/// the whole word zero) never overtakes it.
pub(super) const ONE: u32 = 4;

/// Operations counted in `state`.
pub(super) fn queued(state: u32) -> u32 {
    state / ONE
}

impl<B: QueueBackend> Shared<B> {
    /// Claims the actor for the caller's thread if it is idle; otherwise
    /// reserves a place in the mailbox for the caller's operation (send it
    /// with [`Shared::enqueue`]). Always inlined: returned through memory,
    /// the nested result's unaligned fields cost store-forwarding stalls
    /// (measured: a 4-byte patch went from ~43 to ~21 ns).
    #[inline(always)]
    pub(crate) fn claim(&self) -> Result<Result<Claimed<'_, B>, Reserved<'_, B>>, SchedError> {
        if self.try_claim() {
            return Ok(Ok(self.claimed()));
        }
        self.claim_or_reserve()
    }

    /// The slow path of `claim`: one compare-and-swap either claims (the
    /// actor went idle meanwhile) or counts the operation in.
    fn claim_or_reserve(&self) -> Result<Result<Claimed<'_, B>, Reserved<'_, B>>, SchedError> {
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            if state & STOPPED != 0 {
                return Err(SchedError::Stopped { actor: self.index });
            }
            let (next, claims) = match state {
                0 => (BUSY, true),
                _ => (state + ONE, false),
            };
            match self
                .state
                .compare_exchange(state, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) if claims => return Ok(Ok(self.claimed())),
                Ok(_) => {
                    return Ok(Err(Reserved {
                        shared: self,
                        sent: false,
                    }))
                }
                Err(now) => state = now,
            }
        }
    }

    /// Claims the actor if it is idle, without reserving otherwise (the
    /// fan-out sends a busy actor's lanes later, through `replay`).
    #[inline]
    pub(crate) fn claim_idle(&self) -> Result<Option<Claimed<'_, B>>, SchedError> {
        if self.try_claim() {
            return Ok(Some(self.claimed()));
        }
        if self.stopped() {
            return Err(SchedError::Stopped { actor: self.index });
        }
        Ok(None)
    }

    #[inline(always)]
    fn claimed(&self) -> Claimed<'_, B> {
        Claimed {
            shared: self,
            core: Some(self.core.get_mut()),
            later: None,
        }
    }

    /// True once shutdown began (no new operations are taken).
    #[inline]
    pub(crate) fn stopped(&self) -> bool {
        self.state.load(Ordering::Relaxed) & STOPPED != 0
    }

    /// Idle (nothing running, nothing queued, not stopped) -> `BUSY`.
    #[inline]
    fn try_claim(&self) -> bool {
        self.state
            .compare_exchange(0, BUSY, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Sends `op` into the place `slot` reserved, waiting for room in a
    /// full mailbox. Fails only when the actor thread is gone.
    pub(crate) fn enqueue(&self, mut slot: Reserved<'_, B>, op: Op<B>) -> Result<(), SchedError> {
        slot.sent = true;
        drop(slot);
        self.tx
            .send(op)
            .map_err(|_| SchedError::Stopped { actor: self.index })
    }

    /// The actor thread takes `BUSY` to run what it received, waiting
    /// while a claim holds it: nobody else can take it meanwhile (the
    /// operation is counted), and that claim's release sees the count and
    /// wakes us. A `Wake` counts nothing of its own: with nothing counted
    /// the deferred operation already ran, so there is nothing to take
    /// `BUSY` for (and a claim's release would not wake us); false then.
    pub(super) fn take_busy(&self, wake: bool) -> bool {
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            if wake && queued(state) == 0 {
                return false;
            }
            if state & BUSY == 0 {
                match self.state.compare_exchange(
                    state,
                    state | BUSY,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => return true,
                    Err(now) => state = now,
                }
                continue;
            }
            let guard = loom::lock(&self.handoff);
            // Looked at under the lock the releaser takes before notifying:
            // a release after this load wakes the wait below.
            if self.state.load(Ordering::Acquire) & BUSY != 0 {
                drop(loom::wait(&self.released, guard));
            }
            state = self.state.load(Ordering::Acquire);
        }
    }

    /// Wakes the actor thread if it waits in `take_busy`.
    fn notify_released(&self) {
        drop(loom::lock(&self.handoff));
        self.released.notify_one();
    }

    pub(super) fn stop(&self) {
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            if state & STOPPED != 0 {
                return;
            }
            // Stopped and the shutdown counted in at once: no claim or
            // reservation comes between.
            match self.state.compare_exchange(
                state,
                (state | STOPPED) + ONE,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(now) => state = now,
            }
        }
        // Waits for room like any sender (the actor thread drains the
        // mailbox without needing anything this thread holds). Fails only
        // if the actor thread is gone already.
        let _ = self.tx.send(Op::Shutdown);
    }
}

/// A place in the mailbox, counted in the state word. Send the operation
/// with [`Shared::enqueue`]; dropped unsent, it gives the place back.
pub(crate) struct Reserved<'a, B: QueueBackend> {
    shared: &'a Shared<B>,
    sent: bool,
}

impl<B: QueueBackend> Drop for Reserved<'_, B> {
    fn drop(&mut self) {
        if self.sent {
            return;
        }
        let shared = self.shared;
        shared.state.fetch_sub(ONE, Ordering::AcqRel);
        // The actor thread may wait for this operation (at shutdown) or for
        // `BUSY` (a `Wake`): let it look at the count again. A full mailbox
        // wakes it anyway.
        shared.notify_released();
        let _ = shared.tx.try_send(Op::Wake);
    }
}

/// The caller's thread running an operation on an idle actor. Dropping it
/// hands a deferred operation to the actor thread and releases the actor.
pub(crate) struct Claimed<'a, B: QueueBackend> {
    shared: &'a Shared<B>,
    /// The core, ours while this claim holds `BUSY`.
    core: Option<MutPtr<Option<Core<B>>>>,
    pub(crate) later: Option<Box<Op<B>>>,
}

impl<B: QueueBackend> Claimed<'_, B> {
    /// True when this claim is on `shared`'s actor.
    pub(crate) fn is_of(&self, shared: &Shared<B>) -> bool {
        std::ptr::eq(self.shared, shared)
    }

    #[inline]
    pub(crate) fn core(&mut self) -> Result<&mut Core<B>, SchedError> {
        let actor = self.shared.index;
        // SAFETY: this claim set `BUSY` and holds it until it drops (after
        // `core` is cleared), so nobody else touches the core meanwhile;
        // the borrow is tied to `&mut self`.
        let core = self.core.as_ref().map(|ptr| unsafe { ptr.deref() });
        core.and_then(|core| core.as_mut())
            .ok_or_else(|| SchedError::Stopped { actor })
    }
}

impl<B: QueueBackend> Drop for Claimed<'_, B> {
    fn drop(&mut self) {
        // The core access ends (the pointer is dropped) before `BUSY` is
        // released.
        let deferred = match (self.later.take(), self.core.take()) {
            (Some(op), Some(ptr)) => {
                // SAFETY: this claim still holds `BUSY` (released below).
                match unsafe { ptr.deref() } {
                    Some(core) => {
                        core.first = Some(op);
                        true
                    }
                    None => false,
                }
            }
            _ => false,
        };
        let state = &self.shared.state;
        // Nothing queued meanwhile and nothing to hand over: just release.
        if !deferred
            && state
                .compare_exchange(BUSY, 0, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            return;
        }
        if deferred {
            // Counted in and released in one step (`BUSY` is set, so the
            // sum does not borrow): no claim comes between.
            state.fetch_add(ONE - BUSY, Ordering::AcqRel);
        } else {
            state.fetch_and(!BUSY, Ordering::AcqRel);
        }
        self.shared.notify_released();
        if deferred {
            // Not holding `BUSY` any more, so waiting for room is safe.
            let _ = self.shared.tx.send(Op::Wake);
        }
    }
}
