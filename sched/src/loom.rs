//! The one door to synchronisation primitives for code loom must see.
//!
//! Under `--cfg loom` everything comes from `loom`, so the models in
//! `tests/loom.rs` explore every interleaving of the mailbox, completion and
//! shutdown protocols; otherwise from `std`. The mailbox channel is
//! crossbeam-channel's, which loom cannot run (its blocking parks a real
//! thread, which a model cannot schedule); under loom `channel` is a small
//! bounded channel on loom's mutex and condvars with the same interface, so
//! the models explore the protocol around the channel (state word, claims,
//! reservations, the deferred slot, the hand-off, shutdown) with a channel
//! that only promises what crossbeam's promises (FIFO per sender, blocking
//! for room, disconnection), not crossbeam's own implementation. Protocol code imports
//! `crate::loom::*`, never `std::sync` (std's `Mutex`/`Condvar` are used
//! rather than parking_lot's because their API matches loom's exactly).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};
#[cfg(loom)]
pub use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(loom)]
pub use loom::thread;

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
#[cfg(not(loom))]
pub use std::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub use std::thread;

#[cfg(not(loom))]
pub(crate) use crossbeam_channel as channel;

#[cfg(not(loom))]
pub(crate) use self::cell::{MutPtr, UnsafeCell};
#[cfg(loom)]
pub(crate) use loom::cell::{MutPtr, UnsafeCell};

/// `std`'s `UnsafeCell` with loom's interface (`get_mut` hands out a
/// `MutPtr`), so code written against it is the code loom checks: under
/// loom two overlapping `MutPtr`s of one cell fail the model.
#[cfg(not(loom))]
mod cell {
    pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        pub(crate) fn new(data: T) -> Self {
            UnsafeCell(std::cell::UnsafeCell::new(data))
        }

        #[inline(always)]
        pub(crate) fn get_mut(&self) -> MutPtr<T> {
            MutPtr(self.0.get())
        }
    }

    pub(crate) struct MutPtr<T>(*mut T);

    impl<T> MutPtr<T> {
        /// # Safety
        /// No other access to the cell overlaps the returned borrow (the
        /// caller names the protocol that guarantees it), and the cell
        /// outlives it.
        #[inline(always)]
        #[allow(clippy::mut_from_ref)]
        pub(crate) unsafe fn deref(&self) -> &mut T {
            // SAFETY: the caller's contract above.
            unsafe { &mut *self.0 }
        }
    }
}

/// Locks `mutex`, taking the data even if a thread panicked while holding
/// it: every critical section here leaves the state consistent before any
/// call that could panic, so poisoning carries no information for us.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Waits on `cv`, with the same poisoning policy as [`lock`].
pub fn wait<'a, T>(cv: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    cv.wait(guard)
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Waits on `cv` for at most `timeout` (loom ignores the duration and
/// treats it as a plain wait, which explores the same orders).
pub fn wait_timeout<'a, T>(
    cv: &Condvar,
    guard: MutexGuard<'a, T>,
    timeout: std::time::Duration,
) -> MutexGuard<'a, T> {
    match cv.wait_timeout(guard, timeout) {
        Ok((guard, _)) => guard,
        Err(poisoned) => poisoned.into_inner().0,
    }
}

/// The mailbox channel under loom (see the module docs): crossbeam's
/// `bounded`, `send`, `try_send`, `recv` and disconnection, on loom's
/// primitives.
#[cfg(loom)]
pub(crate) mod channel {
    use std::collections::VecDeque;

    pub(crate) use crossbeam_channel::{RecvError, SendError, TrySendError};

    use super::{lock, wait, Arc, Condvar, Mutex};

    struct Queue<T> {
        items: VecDeque<T>,
        sender: bool,
        receiver: bool,
    }

    struct Chan<T> {
        queue: Mutex<Queue<T>>,
        ready: Condvar,
        room: Condvar,
        cap: usize,
    }

    pub(crate) struct Sender<T>(Arc<Chan<T>>);
    pub(crate) struct Receiver<T>(Arc<Chan<T>>);

    pub(crate) fn bounded<T>(cap: usize) -> (Sender<T>, Receiver<T>) {
        let chan = Arc::new(Chan {
            queue: Mutex::new(Queue {
                items: VecDeque::new(),
                sender: true,
                receiver: true,
            }),
            ready: Condvar::new(),
            room: Condvar::new(),
            cap: cap.max(1),
        });
        (Sender(Arc::clone(&chan)), Receiver(chan))
    }

    impl<T> Sender<T> {
        pub(crate) fn send(&self, value: T) -> Result<(), SendError<T>> {
            let mut queue = lock(&self.0.queue);
            loop {
                if !queue.receiver {
                    return Err(SendError(value));
                }
                if queue.items.len() < self.0.cap {
                    queue.items.push_back(value);
                    drop(queue);
                    self.0.ready.notify_one();
                    return Ok(());
                }
                queue = wait(&self.0.room, queue);
            }
        }

        pub(crate) fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
            let mut queue = lock(&self.0.queue);
            if !queue.receiver {
                return Err(TrySendError::Disconnected(value));
            }
            if queue.items.len() >= self.0.cap {
                return Err(TrySendError::Full(value));
            }
            queue.items.push_back(value);
            drop(queue);
            self.0.ready.notify_one();
            Ok(())
        }
    }

    impl<T> Receiver<T> {
        pub(crate) fn recv(&self) -> Result<T, RecvError> {
            let mut queue = lock(&self.0.queue);
            loop {
                if let Some(value) = queue.items.pop_front() {
                    drop(queue);
                    self.0.room.notify_all();
                    return Ok(value);
                }
                if !queue.sender {
                    return Err(RecvError);
                }
                queue = wait(&self.0.ready, queue);
            }
        }
    }

    impl<T> Drop for Sender<T> {
        fn drop(&mut self) {
            lock(&self.0.queue).sender = false;
            self.0.ready.notify_all();
        }
    }

    impl<T> Drop for Receiver<T> {
        fn drop(&mut self) {
            let items = {
                let mut queue = lock(&self.0.queue);
                queue.receiver = false;
                std::mem::take(&mut queue.items)
            };
            // Dropped outside the lock (a reply's drop takes other locks).
            drop(items);
            self.0.room.notify_all();
        }
    }
}
