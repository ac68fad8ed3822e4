//! The queue actor: one hardware queue (a [`QueueBackend`]), the IBs
//! retained on it, and the protocol that keeps operations in order.
//!
//! Protocol. Operations take effect in the order they were sent. The
//! mailbox (`Inbox`) holds operations not yet run; an atomic state word
//! says whether someone is running one (`BUSY`), whether the mailbox holds
//! any (`QUEUED`, changed only under the mailbox lock, so it mirrors the
//! mailbox) and whether the actor stopped (`STOPPED`). A caller that finds
//! the state all clear claims the actor with one compare-and-swap and runs
//! its operation on its own thread; that is the hot path: a replay goes
//! from the call to the doorbell with no mailbox lock and no thread
//! wake-up, and releasing is one more compare-and-swap. Otherwise the
//! caller takes the mailbox lock, looks again, and appends to the mailbox;
//! the actor thread runs it later. A release that finds `QUEUED` set takes
//! the lock and wakes the actor thread.
//!
//! Why this and not a mailbox the actor thread spins on: measured on the
//! simulated gfx1201 (`relaunch-bench submit`, timed to the doorbell
//! write), a 1-dispatch replay through an idle actor takes ~0.9-1.2 us p50
//! against ~0.45-0.6 us for arming a signal and submitting directly on the
//! queue (both mostly cache misses after waiting for the previous replay),
//! while a hand-off to a parked thread costs 10-20 us (a futex wake on a
//! loaded 2-core host), and spinning would burn a core per queue.
//!
//! A patch or uninstall must not touch an IB a replay is still running.
//! On the caller's thread such an operation is not waited for: it is put at
//! the head of the mailbox (it precedes anything queued meanwhile) and the
//! actor thread waits for the replay, then applies it; everything sent
//! after it queues behind it. So a patch sent after a replay lands after
//! that replay completes, and the caller never blocks on the GPU.
//!
//! A patch of an idle IB needs none of this: the handle's `&mut` plus the
//! IB's `track` (operations queued, last replay) prove nothing else can
//! touch its kernargs, and the caller writes them directly (`track`).
//!
//! Shutdown sets `STOPPED` (new operations are refused), queues
//! a final `Shutdown` after everything already sent, and joins the thread,
//! which waits for running replays before freeing their IBs.

use std::collections::VecDeque;
use std::time::Duration;

use crate::backend::{CompletionWatch, IbLayout, Published, QueueBackend, Ticket};
use crate::completion::ReplyTx;
use crate::error::SchedError;
use crate::loom::{self, Arc, AtomicU8, Condvar, MutPtr, Mutex, MutexGuard, Ordering, UnsafeCell};
use crate::slab::Slab;
use crate::track::IbTrack;

mod runner;

pub use runner::Actor;

/// Tuning of one actor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActorOptions {
    /// Operations the mailbox holds before senders wait for room.
    pub mailbox_capacity: usize,
    /// How long the actor thread waits for a running replay before a queued
    /// patch gives up (reported by the next replay) or an uninstall sets
    /// the IB's memory aside until that replay settles (finishes, fails or
    /// is abandoned; looked at again at each uninstall and at shutdown).
    pub drain_timeout: Duration,
}

impl Default for ActorOptions {
    fn default() -> Self {
        ActorOptions {
            mailbox_capacity: 1024,
            drain_timeout: Duration::from_secs(10),
        }
    }
}

/// What installing an IB hands to its new handle.
pub(crate) struct Installed<B: QueueBackend> {
    pub(crate) id: u64,
    pub(crate) layout: IbLayout,
    pub(crate) track: Arc<IbTrack>,
    pub(crate) writer: B::Writer,
    /// The backend's label of the IB (for errors naming it).
    pub(crate) label: Option<std::sync::Arc<str>>,
}

impl<B: QueueBackend> Clone for Installed<B> {
    fn clone(&self) -> Self {
        Installed {
            id: self.id,
            layout: self.layout.clone(),
            track: Arc::clone(&self.track),
            writer: self.writer.clone(),
            label: self.label.clone(),
        }
    }
}

pub(crate) enum Op<B: QueueBackend> {
    Install(B::Program, ReplyTx<Installed<B>>),
    Replay(u64, ReplyTx<Ticket>),
    Patch {
        ib: u64,
        dispatch: usize,
        offset: usize,
        bytes: Vec<u8>,
    },
    Uninstall(u64),
    Shutdown,
}

pub(crate) struct Inbox<B: QueueBackend> {
    queue: VecDeque<Op<B>>,
}

/// `Shared::state`: someone (a caller or the actor thread) is running an
/// operation.
const BUSY: u8 = 1;
/// The mailbox is not empty (set and cleared under the mailbox lock).
const QUEUED: u8 = 2;
/// No new operations are accepted.
const STOPPED: u8 = 4;

// repr(C), fields the replay reads first, and line-aligned so they share
// one cache line: one line less to fetch on the hot path (layout only;
// nothing relies on it for soundness).
#[repr(C, align(64))]
struct Entry<B: QueueBackend> {
    /// The latest replay submitted, operations queued (shared with the
    /// handle for its direct patches).
    track: Arc<IbTrack>,
    /// A queued patch that could not be applied, for the next replay.
    deferred: Option<Box<SchedError>>,
    ib: B::Installed,
}

/// State only the operation runner touches. `backend` is declared first so
/// the queue goes before the IB memory it may still be reading. repr(C)
/// (layout only): with a small backend, the slab's pointer shares the
/// cache line of `Shared`'s hot fields.
#[repr(C)]
pub(crate) struct Core<B: QueueBackend> {
    backend: B,
    ibs: Slab<Entry<B>>,
    /// IBs uninstalled while a replay still ran past `drain_timeout`,
    /// with their tracks: freed once that replay settled (finished,
    /// failed or abandoned), checked at each uninstall and at shutdown.
    graveyard: Vec<(B::Installed, Arc<IbTrack>)>,
}

// SAFETY: every field but `core` is Sync. `core` is reached only by the
// one party holding `BUSY` (`Claimed::core`, or the actor thread's loop in
// `runner`); `BUSY` is set and cleared with acquire/release on `state`, so
// successive holders are ordered. The loom models check that no two
// accesses overlap.
unsafe impl<B: QueueBackend> Sync for Shared<B> {}

/// repr(C) and line-aligned, hot fields first: a replay on the caller's
/// thread touches `state`, `watch` and `core` (layout only).
#[repr(C, align(64))]
pub(crate) struct Shared<B: QueueBackend> {
    /// `BUSY | QUEUED | STOPPED` (see the module docs).
    state: AtomicU8,
    pub(crate) index: usize,
    pub(crate) watch: Arc<B::Watch>,
    /// `None` once shutdown dropped the backend (the queue is destroyed).
    /// Only whoever holds `BUSY` touches it (a claim or the actor thread):
    /// the state word is its lock, so no second lock is taken per replay.
    core: UnsafeCell<Option<Core<B>>>,
    inbox: Mutex<Inbox<B>>,
    /// The actor thread waits here for work (one waiter: notify_one).
    wake: Condvar,
    /// Senders wait here for room in a full mailbox.
    space: Condvar,
    opts: ActorOptions,
}

/// Whether an operation ran or must wait for a replay on the actor thread.
/// `Later` is boxed: `Op` carries an install's whole program, and a large
/// inline variant made every patch and claim move it around (memcpy).
pub(crate) enum Step<B: QueueBackend, R> {
    Done(R),
    Later(Box<Op<B>>),
}

impl<B: QueueBackend> Core<B> {
    fn install(&mut self, actor: usize, program: B::Program) -> Result<Installed<B>, SchedError> {
        let ib = self
            .backend
            .install(program)
            .map_err(|cause| SchedError::Backend {
                actor,
                during: "install",
                cause: cause.into(),
            })?;
        let layout = self.backend.layout(&ib);
        let writer = self.backend.writer(&ib);
        let label = self.backend.label(&ib);
        let track = Arc::new(IbTrack::default());
        let id = self.ibs.insert(Entry {
            ib,
            track: Arc::clone(&track),
            deferred: None,
        });
        Ok(Installed {
            id,
            layout,
            track,
            writer,
            label,
        })
    }

    pub(crate) fn replay(&mut self, actor: usize, ib: u64) -> Result<Ticket, SchedError> {
        self.start_replay(actor, ib, |backend, ib| backend.submit(ib), |t| *t)
    }

    /// `replay` without the doorbell: the caller rings with [`Core::ring`]
    /// before it releases the actor (a fan-out publishes every lane first).
    pub(crate) fn publish(&mut self, actor: usize, ib: u64) -> Result<Published, SchedError> {
        self.start_replay(actor, ib, |backend, ib| backend.publish(ib), |p| p.ticket)
    }

    /// What `replay` and `publish` share: a queued patch that failed is
    /// reported instead of replaying; `start` (submit or publish) runs on
    /// the IB; its ticket goes on the IB's track.
    #[inline(always)]
    fn start_replay<T>(
        &mut self,
        actor: usize,
        ib: u64,
        start: impl FnOnce(&mut B, &B::Installed) -> Result<T, B::Error>,
        ticket: impl FnOnce(&T) -> Ticket,
    ) -> Result<T, SchedError> {
        let Core { backend, ibs, .. } = self;
        let entry = ibs
            .get_mut(ib)
            .ok_or_else(|| SchedError::UnknownIb { actor, ib })?;
        if let Some(err) = entry.deferred.take() {
            return Err(*err);
        }
        let started = start(backend, &entry.ib).map_err(|cause| SchedError::Backend {
            actor,
            during: "replay submit",
            cause: cause.into(),
        })?;
        entry.track.submitted(ticket(&started));
        Ok(started)
    }

    pub(crate) fn ring(&mut self, published: &Published) {
        self.backend.ring(published);
    }

    /// A queued operation on `ib` finished (see `track`).
    fn ran(&self, ib: u64) {
        if let Some(entry) = self.ibs.get(ib) {
            entry.track.ran();
        }
    }
}

impl<B: QueueBackend> Shared<B> {
    /// Runs a patch, or hands it back if a replay of its IB still runs and
    /// `wait` is false. With `wait`, blocks (actor thread only). Inlined:
    /// returning the `Step` through memory cost store-forwarding stalls on
    /// the patch hot path.
    #[inline]
    pub(crate) fn patch(
        &self,
        core: &mut Core<B>,
        op: (u64, usize, usize, &[u8]),
        wait: bool,
    ) -> Step<B, Result<(), SchedError>> {
        let (ib, dispatch, offset, bytes) = op;
        let actor = self.index;
        let Core { backend, ibs, .. } = core;
        let Some(entry) = ibs.get_mut(ib) else {
            return Step::Done(Err(SchedError::UnknownIb { actor, ib }));
        };
        if !entry.track.settled(&*self.watch) {
            if !wait {
                entry.track.sent();
                return Step::Later(Box::new(Op::Patch {
                    ib,
                    dispatch,
                    offset,
                    bytes: bytes.to_vec(),
                }));
            }
            let ticket = entry.track.last().unwrap_or(Ticket { epoch: 0, seq: 0 });
            let waited = self.watch.wait(ticket, self.opts.drain_timeout);
            if !entry.track.settled(&*self.watch) {
                let cause = match waited {
                    Err(cause) => cause.to_string(),
                    Ok(()) => "the replay before it did not finish".to_string(),
                };
                let err = SchedError::PatchNotApplied {
                    actor,
                    dispatch,
                    cause,
                };
                entry.deferred = Some(Box::new(err.clone()));
                return Step::Done(Err(err));
            }
        }
        let result = backend
            .patch(&mut entry.ib, dispatch, offset, bytes)
            .map_err(|cause| SchedError::Backend {
                actor,
                during: "kernarg patch",
                cause: cause.into(),
            });
        if let (Err(err), true) = (&result, wait) {
            // Nobody waits for a queued patch: the next replay reports it.
            entry.deferred = Some(Box::new(SchedError::PatchNotApplied {
                actor,
                dispatch,
                cause: err.to_string(),
            }));
        }
        Step::Done(result)
    }

    pub(crate) fn uninstall(
        &self,
        core: &mut Core<B>,
        ib: u64,
        wait: bool,
    ) -> Step<B, Result<(), SchedError>> {
        let actor = self.index;
        let Some(entry) = core.ibs.get_mut(ib) else {
            return Step::Done(Err(SchedError::UnknownIb { actor, ib }));
        };
        if !entry.track.settled(&*self.watch) {
            if !wait {
                return Step::Later(Box::new(Op::Uninstall(ib)));
            }
            if let Some(ticket) = entry.track.last() {
                let _ = self.watch.wait(ticket, self.opts.drain_timeout);
            }
        }
        let Some(entry) = core.ibs.remove(ib) else {
            return Step::Done(Err(SchedError::UnknownIb { actor, ib }));
        };
        self.bury_settled(core);
        if !entry.track.settled(&*self.watch) {
            tracing::warn!(
                actor,
                ib,
                "IB still running after the drain timeout; its memory is kept until its replay \
                 settles"
            );
            core.graveyard.push((entry.ib, entry.track));
            return Step::Done(Ok(()));
        }
        Step::Done(
            core.backend
                .uninstall(entry.ib)
                .map_err(|cause| SchedError::Backend {
                    actor,
                    during: "uninstall",
                    cause: cause.into(),
                }),
        )
    }

    /// Frees the graveyard's IBs whose replays have settled since (an
    /// abandoned replay counts: its queue no longer reads them).
    fn bury_settled(&self, core: &mut Core<B>) {
        if core.graveyard.is_empty() {
            return;
        }
        let watch = &*self.watch;
        let (settled, running): (Vec<_>, Vec<_>) = std::mem::take(&mut core.graveyard)
            .into_iter()
            .partition(|(_, track)| track.settled(watch));
        core.graveyard = running;
        for (ib, _) in settled {
            if let Err(cause) = core.backend.uninstall(ib) {
                tracing::warn!(actor = self.index, "freeing a settled IB failed: {cause}");
            }
        }
    }

    /// Runs `op` on the actor thread (blocking waits allowed).
    fn run_queued(&self, core: &mut Core<B>, op: Op<B>) {
        let actor = self.index;
        match op {
            Op::Install(program, reply) => reply.send(core.install(actor, program)),
            Op::Replay(ib, reply) => {
                reply.send(core.replay(actor, ib));
                core.ran(ib);
            }
            Op::Patch {
                ib,
                dispatch,
                offset,
                bytes,
            } => {
                if let Step::Done(Err(err)) = self.patch(core, (ib, dispatch, offset, &bytes), true)
                {
                    tracing::warn!(actor, ib, "queued kernarg patch failed: {err}");
                }
                core.ran(ib);
            }
            Op::Uninstall(ib) => {
                if let Step::Done(Err(err)) = self.uninstall(core, ib, true) {
                    tracing::warn!(actor, ib, "queued uninstall failed: {err}");
                }
            }
            Op::Shutdown => {
                let ids = core.ibs.ids();
                for ib in ids {
                    if let Step::Done(Err(err)) = self.uninstall(core, ib, true) {
                        tracing::warn!(actor, ib, "uninstall at shutdown failed: {err}");
                    }
                }
                // Settled meanwhile (finished, or abandoned by a timeout):
                // freed. Still running after every drain wait: leaking the
                // memory is better than freeing it under the GPU.
                self.bury_settled(core);
                let kept = std::mem::take(&mut core.graveyard);
                if !kept.is_empty() {
                    tracing::error!(
                        actor,
                        count = kept.len(),
                        "IBs still running at shutdown are leaked, not freed"
                    );
                }
                kept.into_iter().for_each(|(ib, _)| std::mem::forget(ib));
            }
        }
    }

    /// Claims the actor for the caller's thread if it is idle; otherwise
    /// returns the locked mailbox so the caller can queue its operation.
    /// Always inlined: returned through memory, the nested result's
    /// unaligned fields cost store-forwarding stalls (measured: a 4-byte
    /// patch went from ~43 to ~21 ns).
    #[inline(always)]
    pub(crate) fn claim(
        &self,
    ) -> Result<Result<Claimed<'_, B>, MutexGuard<'_, Inbox<B>>>, SchedError> {
        if !self.try_claim() {
            let inbox = loom::lock(&self.inbox);
            if self.state.load(Ordering::Acquire) & STOPPED != 0 {
                return Err(SchedError::Stopped { actor: self.index });
            }
            // Released meanwhile? Then it is ours after all.
            if !self.try_claim() {
                return Ok(Err(inbox));
            }
        }
        Ok(Ok(Claimed {
            shared: self,
            core: Some(self.core.get_mut()),
            later: None,
        }))
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

    /// Appends `op` to a mailbox obtained from `claim`, waiting for room.
    pub(crate) fn enqueue(
        &self,
        mut inbox: MutexGuard<'_, Inbox<B>>,
        op: Op<B>,
    ) -> Result<(), SchedError> {
        while inbox.queue.len() >= self.opts.mailbox_capacity {
            inbox = loom::wait(&self.space, inbox);
            if self.state.load(Ordering::Acquire) & STOPPED != 0 {
                return Err(SchedError::Stopped { actor: self.index });
            }
        }
        inbox.queue.push_back(op);
        self.state.fetch_or(QUEUED, Ordering::AcqRel);
        drop(inbox);
        self.wake.notify_one();
        Ok(())
    }

    fn stop(&self) {
        let mut inbox = loom::lock(&self.inbox);
        if self.state.fetch_or(STOPPED, Ordering::AcqRel) & STOPPED != 0 {
            return;
        }
        // Past the capacity check on purpose: shutdown must always fit.
        inbox.queue.push_back(Op::Shutdown);
        self.state.fetch_or(QUEUED, Ordering::AcqRel);
        drop(inbox);
        self.wake.notify_one();
        self.space.notify_all();
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
        // The core access ends before `BUSY` is released.
        self.core = None;
        let state = &self.shared.state;
        // Nothing queued meanwhile and nothing to hand over: just release.
        if self.later.is_none()
            && state
                .compare_exchange(BUSY, 0, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            return;
        }
        let mut inbox = loom::lock(&self.shared.inbox);
        if let Some(op) = self.later.take() {
            // It was sent before anything queued while we held the actor.
            inbox.queue.push_front(*op);
            state.fetch_or(QUEUED, Ordering::AcqRel);
        }
        state.fetch_and(!BUSY, Ordering::AcqRel);
        let work = !inbox.queue.is_empty();
        drop(inbox);
        if work {
            self.shared.wake.notify_one();
        }
    }
}
