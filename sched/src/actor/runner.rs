//! The actor's thread (which runs what callers queued) and [`Actor`], the
//! public handle that starts it, installs IBs and shuts it down.

use std::collections::VecDeque;

use super::{ActorOptions, Core, Inbox, Op, Shared, BUSY, QUEUED};
use crate::backend::QueueBackend;
use crate::completion::Reply;
use crate::error::SchedError;
use crate::handle::IbHandle;
use crate::loom::{self, thread, Arc, AtomicU8, Condvar, Mutex, Ordering, UnsafeCell};
use crate::slab::Slab;

fn run_actor<B: QueueBackend>(shared: Arc<Shared<B>>) {
    loop {
        let op = {
            let mut inbox = loom::lock(&shared.inbox);
            let op = loop {
                // Nobody can claim meanwhile: QUEUED is set while the
                // mailbox holds work, and we hold its lock.
                if shared.state.load(Ordering::Acquire) & BUSY == 0 {
                    if let Some(op) = inbox.queue.pop_front() {
                        break op;
                    }
                }
                inbox = loom::wait(&shared.wake, inbox);
            };
            let clear = if inbox.queue.is_empty() { QUEUED } else { 0 };
            shared.state.fetch_or(BUSY, Ordering::AcqRel);
            shared.state.fetch_and(!clear, Ordering::AcqRel);
            op
        };
        shared.space.notify_all();
        let last = matches!(op, Op::Shutdown);
        let retired = {
            let ptr = shared.core.get_mut();
            // SAFETY: this thread set `BUSY` above (only with the mailbox
            // lock held and `BUSY` clear) and clears it below, after `ptr`
            // is gone: nobody else touches the core meanwhile.
            let core = unsafe { ptr.deref() };
            if let Some(core) = core.as_mut() {
                shared.run_queued(core, op);
            }
            // Shutdown drops the backend here: the queue goes with the actor.
            if last {
                core.take()
            } else {
                None
            }
        };
        drop(retired);
        {
            let _inbox = loom::lock(&shared.inbox);
            shared.state.fetch_and(!BUSY, Ordering::AcqRel);
        }
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
        let shared = Arc::new(Shared {
            index,
            state: AtomicU8::new(0),
            inbox: Mutex::new(Inbox {
                queue: VecDeque::new(),
            }),
            wake: Condvar::new(),
            space: Condvar::new(),
            core: UnsafeCell::new(Some(Core {
                backend,
                ibs: Slab::default(),
                graveyard: Vec::new(),
            })),
            watch,
            opts: ActorOptions {
                mailbox_capacity: opts.mailbox_capacity.max(1),
                ..opts
            },
        });
        let runner = Arc::clone(&shared);
        let handle = spawn_named(index, move || run_actor(runner))?;
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
    pub fn install(&self, program: impl Into<B::Program>) -> Result<IbHandle<B>, SchedError> {
        let program = program.into();
        let shared = &*self.inner.shared;
        let installed = match shared.claim()? {
            Ok(mut claimed) => claimed.core()?.install(shared.index, program)?,
            Err(inbox) => {
                let (tx, reply) = Reply::pair(shared.index);
                shared.enqueue(inbox, Op::Install(program, tx))?;
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
