//! The actor's thread (which runs what callers queued) and [`Actor`], the
//! public handle that starts it, installs IBs and shuts it down.

use super::mailbox::{queued, BUSY, ONE};
use super::{ActorOptions, Core, Op, Shared};
use crate::backend::QueueBackend;
use crate::completion::Reply;
use crate::error::SchedError;
use crate::handle::IbHandle;
use crate::loom::{self, channel, thread, Arc, AtomicU32, Condvar, Mutex, Ordering, UnsafeCell};
use crate::slab::Slab;

fn run_actor<B: QueueBackend>(shared: Arc<Shared<B>>, rx: channel::Receiver<Op<B>>) {
    // Received while a deferred operation waited in `Core::first`: runs next.
    let mut held: Option<Op<B>> = None;
    loop {
        let Some(op) = held.take().or_else(|| rx.recv().ok()) else {
            return;
        };
        let wake = matches!(op, Op::Wake);
        if !shared.take_busy(wake) {
            continue;
        }
        // The core is ours from here to the end of this block (the pointer
        // goes with it), before `BUSY` is cleared.
        let (last, counted, retired) = {
            let ptr = shared.core.get_mut();
            // SAFETY: this thread set `BUSY` in `take_busy` and clears it
            // below, after this block: nobody else touches the core meanwhile.
            let core = unsafe { ptr.deref() };
            // A deferred operation was sent before anything queued while its
            // claim held the actor: it runs first.
            let (op, counted) = match core.as_mut().and_then(|core| core.first.take()) {
                Some(first) => {
                    if !wake {
                        held = Some(op);
                    }
                    (*first, true)
                }
                None => (op, !wake),
            };
            let last = matches!(op, Op::Shutdown);
            if last {
                // Senders that reserved before `STOPPED` may still be sending:
                // their operations were sent before the shutdown took effect.
                while queued(shared.state.load(Ordering::Acquire)) > 1 {
                    let Some(next) = held.take().or_else(|| rx.recv().ok()) else {
                        break;
                    };
                    if matches!(next, Op::Wake) {
                        continue;
                    }
                    if let Some(core) = core.as_mut() {
                        shared.run_queued(core, next);
                    }
                    shared.state.fetch_sub(ONE, Ordering::AcqRel);
                }
            }
            if let Some(core) = core.as_mut() {
                shared.run_queued(core, op);
            }
            // Shutdown drops the backend here: the queue goes with the actor.
            let retired = if last { core.take() } else { None };
            (last, counted, retired)
        };
        drop(retired);
        let done = if counted { ONE + BUSY } else { BUSY };
        shared.state.fetch_sub(done, Ordering::AcqRel);
        if last {
            tracing::debug!(actor = shared.index, "queue actor stopped");
            return;
        }
    }
}

struct ActorInner<B: QueueBackend> {
    shared: Arc<Shared<B>>,
    thread: Mutex<Option<thread::JoinHandle<()>>>,
}

impl<B: QueueBackend> Drop for ActorInner<B> {
    fn drop(&mut self) {
        self.shared.stop();
        if let Some(handle) = loom::lock(&self.thread).take() {
            if handle.join().is_err() {
                tracing::error!(actor = self.shared.index, "queue actor thread panicked");
            }
        }
    }
}

/// A handle to one queue actor; clones share it. The actor shuts down when
/// the last handle (including every installed [`IbHandle`]) is dropped,
/// or at [`Actor::shutdown`].
pub struct Actor<B: QueueBackend> {
    inner: Arc<ActorInner<B>>,
}

impl<B: QueueBackend> Clone for Actor<B> {
    fn clone(&self) -> Self {
        Actor {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<B: QueueBackend> Actor<B> {
    /// Starts actor number `index` owning `backend`.
    pub fn spawn(index: usize, backend: B, opts: ActorOptions) -> Result<Self, SchedError> {
        let watch = backend.watch();
        let (tx, rx) = channel::bounded(opts.mailbox_capacity.max(1));
        let shared = Arc::new(Shared {
            index,
            state: AtomicU32::new(0),
            tx,
            handoff: Mutex::new(()),
            released: Condvar::new(),
            core: UnsafeCell::new(Some(Core {
                backend,
                ibs: Slab::default(),
                graveyard: Vec::new(),
                first: None,
            })),
            watch,
            opts: ActorOptions {
                mailbox_capacity: opts.mailbox_capacity.max(1),
                ..opts
            },
        });
        let runner = Arc::clone(&shared);
        let handle = spawn_named(index, move || run_actor(runner, rx))?;
        Ok(Actor {
            inner: Arc::new(ActorInner {
                shared,
                thread: Mutex::new(Some(handle)),
            }),
        })
    }

    pub(crate) fn shared_arc(&self) -> Arc<Shared<B>> {
        Arc::clone(&self.inner.shared)
    }

    /// This actor's number (used in error messages).
    pub fn index(&self) -> usize {
        self.inner.shared.index
    }

    /// Installs `program`; returns once it is installed.
    pub fn install(&self, program: B::Program) -> Result<IbHandle<B>, SchedError> {
        let shared = &*self.inner.shared;
        let installed = match shared.claim()? {
            Ok(mut claimed) => claimed.core()?.install(shared.index, program)?,
            Err(slot) => {
                let (tx, reply) = Reply::pair(shared.index);
                shared.enqueue(slot, Op::Install(Box::new(program), tx))?;
                reply.get(None).unwrap_or(Err(SchedError::Stopped {
                    actor: shared.index,
                }))?
            }
        };
        Ok(IbHandle::new(self.clone(), installed))
    }

    /// Stops taking operations, finishes those already sent and waits for
    /// the thread. Later operations through any handle fail with `Stopped`.
    pub fn shutdown(&self) {
        self.inner.shared.stop();
        if let Some(handle) = loom::lock(&self.inner.thread).take() {
            if handle.join().is_err() {
                tracing::error!(actor = self.index(), "queue actor thread panicked");
            }
        }
    }
}

#[cfg(not(loom))]
fn spawn_named<F: FnOnce() + Send + 'static>(
    index: usize,
    f: F,
) -> Result<thread::JoinHandle<()>, SchedError> {
    thread::Builder::new()
        .name(format!("relaunch-queue-{index}"))
        .spawn(f)
        .map_err(|err| SchedError::Spawn {
            actor: index,
            message: err.to_string(),
        })
}

#[cfg(loom)]
fn spawn_named<F: FnOnce() + Send + 'static>(
    _index: usize,
    f: F,
) -> Result<thread::JoinHandle<()>, SchedError> {
    Ok(thread::spawn(f))
}
