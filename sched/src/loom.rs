//! The one door to synchronisation primitives for code loom must see.
//!
//! Under `--cfg loom` everything comes from `loom`, so the models in
//! `tests/loom.rs` explore every interleaving of the mailbox, completion and
//! shutdown protocols; otherwise from `std`. Protocol code imports
//! `crate::loom::*`, never `std::sync` (std's `Mutex`/`Condvar` are used
//! rather than parking_lot's because their API matches loom's exactly).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
#[cfg(loom)]
pub use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(loom)]
pub use loom::thread;

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
#[cfg(not(loom))]
pub use std::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub use std::thread;

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

/// Runs `f` with `guard`'s mutex unlocked, then locks it again into
/// `guard` (parking_lot's `MutexGuard::unlocked`, which std's and loom's
/// guards lack): a submit waiting for ring room lets pollers in meanwhile.
pub(crate) fn unlocked<'a, T>(
    mutex: &'a Mutex<T>,
    guard: &mut MutexGuard<'a, T>,
    f: impl FnOnce(),
) {
    /// Aborts if `f` or the re-lock unwinds: `*guard` is moved out then,
    /// and dropping it again would unlock twice.
    struct AbortOnUnwind;
    impl Drop for AbortOnUnwind {
        fn drop(&mut self) {
            std::process::abort();
        }
    }
    let bomb = AbortOnUnwind;
    // SAFETY: the guard is read out and dropped (unlocking the mutex), and
    // a new guard of the same mutex is written back before `*guard` is
    // used again; should anything in between unwind, `bomb` aborts the
    // process before the moved-out guard could be dropped a second time.
    unsafe {
        drop(std::ptr::read(guard));
        f();
        std::ptr::write(guard, lock(mutex));
    }
    std::mem::forget(bomb);
}
