//! The queue actor: one hardware queue (a [`QueueBackend`]), the IBs
//! retained on it, and the protocol that keeps operations in order.
//!
//! Protocol. Operations take effect in the order they were sent. An atomic
//! state word says whether someone is running one (`BUSY`), whether the
//! actor stopped (`STOPPED`) and how many operations are queued and not yet
//! run (the count above the flags). A caller that finds the word all zero
//! claims the actor with one compare-and-swap and runs its operation on its
//! own thread; that is the hot path: a replay goes from the call to the
//! doorbell with no lock, no channel and no thread wake-up, and releasing
//! is one more compare-and-swap. Otherwise the same compare-and-swap loop
//! counts the operation in instead (a reservation), and the caller sends it
//! on the mailbox, a bounded crossbeam-channel the actor thread blocks on;
//! a full mailbox makes the sender wait for room. While the count is not
//! zero nobody can claim, so queued operations are never overtaken. The
//! actor thread takes `BUSY` for each operation it receives; if a caller's
//! claim holds it, the actor waits (`handoff`), and that claim's release,
//! finding the count non-zero, clears `BUSY` and wakes it (`mailbox`).
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
//! On the caller's thread such an operation is not waited for: it is
//! deferred to the actor thread, which waits for the replay, then applies
//! it. It was sent before anything queued while the caller held the actor,
//! so it must run first; a channel has no head to put it at, so it waits
//! in a one-operation slot of the core (`Core::first`, touched only by the
//! holder of `BUSY`), counted like a queued operation, and a `Wake` sent
//! after the release makes sure the actor thread looks. The actor thread
//! runs `first` before anything it received. One slot is enough: while it
//! is full the count is not zero, so no caller can claim and defer another.
//! So a patch sent after a replay lands after that replay completes, and
//! the caller never blocks on the GPU.
//!
//! A patch of an idle IB needs none of this: the handle's `&mut` plus the
//! IB's `track` (operations queued, last replay) prove nothing else can
//! touch its kernargs, and the caller writes them directly (`track`).
//!
//! Shutdown sets `STOPPED` (new operations are refused) and queues a final
//! `Shutdown` after everything already sent. A sender that reserved before
//! `STOPPED` may still be sending; the actor thread runs whatever is still
//! counted before shutting down (those operations were sent before the
//! shutdown took effect), then frees the IBs once their replays finished,
//! and the thread is joined.

use std::time::Duration;

use crate::backend::{CompletionWatch, IbLayout, Published, QueueBackend, Ticket};
use crate::completion::ReplyTx;
use crate::error::{BackendError, SchedError};
use crate::loom::{channel, Arc, AtomicU32, Condvar, Mutex, UnsafeCell};
use crate::slab::Slab;
use crate::track::IbTrack;

mod mailbox;
mod runner;

pub(crate) use mailbox::Claimed;
pub use runner::Actor;

/// Tuning of one actor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActorOptions {
    /// Operations the mailbox holds before senders wait for room.
    pub mailbox_capacity: usize,
    /// How long the actor thread waits for a running replay before a queued
    /// patch gives up (reported by the next replay) or an uninstall keeps
    /// the IB's memory until shutdown.
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
}

impl<B: QueueBackend> Clone for Installed<B> {
    fn clone(&self) -> Self {
        Installed {
            id: self.id,
            layout: self.layout.clone(),
            track: Arc::clone(&self.track),
            writer: self.writer.clone(),
        }
    }
}

/// What goes through the mailbox. `Install` boxes its program: the channel
/// keeps `mailbox_capacity` slots of this size allocated.
pub(crate) enum Op<B: QueueBackend> {
    Install(Box<B::Program>, ReplyTx<Installed<B>>),
    Replay(u64, ReplyTx<Ticket>),
    Patch {
        ib: u64,
        dispatch: usize,
        offset: usize,
        bytes: Vec<u8>,
    },
    Uninstall(u64),
    Shutdown,
    /// Not counted: look at `Core::first` (a released claim deferred an
    /// operation there).
    Wake,
}

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
    /// IBs uninstalled while a replay still ran past `drain_timeout`.
    graveyard: Vec<B::Installed>,
    /// An operation a claim deferred: runs before anything in the mailbox.
    first: Option<Box<Op<B>>>,
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
    /// `BUSY | STOPPED | queued * ONE` (see the module docs and `mailbox`).
    state: AtomicU32,
    pub(crate) index: usize,
    pub(crate) watch: Arc<B::Watch>,
    /// `None` once shutdown dropped the backend (the queue is destroyed).
    /// Only whoever holds `BUSY` touches it (a claim or the actor thread):
    /// the state word is its lock, so no second lock is taken per replay.
    core: UnsafeCell<Option<Core<B>>>,
    /// The mailbox's sending side (the actor thread owns the receiver).
    tx: channel::Sender<Op<B>>,
    /// The actor thread waits here for a claim to release `BUSY`.
    handoff: Mutex<()>,
    released: Condvar,
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
                cause,
            })?;
        let layout = self.backend.layout(&ib);
        let writer = self.backend.writer(&ib);
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
        start: impl FnOnce(&mut B, &B::Installed) -> Result<T, BackendError>,
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
            cause,
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
                cause,
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
        if !entry.track.settled(&*self.watch) {
            tracing::warn!(
                actor,
                ib,
                "IB still running after the drain timeout; its memory is kept until shutdown"
            );
            core.graveyard.push(entry.ib);
            return Step::Done(Ok(()));
        }
        Step::Done(
            core.backend
                .uninstall(entry.ib)
                .map_err(|cause| SchedError::Backend {
                    actor,
                    during: "uninstall",
                    cause,
                }),
        )
    }

    /// Runs `op` on the actor thread (blocking waits allowed).
    fn run_queued(&self, core: &mut Core<B>, op: Op<B>) {
        let actor = self.index;
        match op {
            Op::Install(program, reply) => reply.send(core.install(actor, *program)),
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
                // Still running after every drain wait: leaking the memory
                // is better than freeing it under the GPU.
                let kept = std::mem::take(&mut core.graveyard);
                if !kept.is_empty() {
                    tracing::error!(
                        actor,
                        count = kept.len(),
                        "IBs still running at shutdown are leaked, not freed"
                    );
                }
                kept.into_iter().for_each(std::mem::forget);
            }
            Op::Wake => {}
        }
    }
}
