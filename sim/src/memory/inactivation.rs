//! A queue's inactivation as the memory accesses of its threads see it:
//! bound to the queue's processor thread (and, while they work for one
//! of its dispatches, the interpreter's pool threads), it makes every
//! access of those threads fail once the queue is given up.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

thread_local! {
    /// On a queue's processor thread: the queue's inactivation flag.
    static INACTIVATION: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// Called by a queue's processor thread first: once `flag` is set (the
/// queue was inactivated), every memory access this thread makes is
/// refused, so work still running when its queue was given up (a twin that
/// had not returned) changes nothing more.
pub fn bind_inactivation(flag: Arc<AtomicBool>) {
    INACTIVATION.with(|f| *f.borrow_mut() = Some(flag));
}

/// [`bind_inactivation`] for as long as the value lives, then what the
/// thread had before: how an interpreter pool thread works for one
/// dispatch.
pub(crate) struct BindInactivation(Option<Arc<AtomicBool>>);

impl BindInactivation {
    pub(crate) fn new(flag: Arc<AtomicBool>) -> Self {
        BindInactivation(INACTIVATION.with(|f| f.borrow_mut().replace(flag)))
    }
}

impl Drop for BindInactivation {
    fn drop(&mut self) {
        let before = self.0.take();
        INACTIVATION.with(|f| *f.borrow_mut() = before);
    }
}

/// The flag [`bind_inactivation`] bound to this thread (`None` off a
/// queue's processor thread). The interpreter polls it: a kernel looping
/// without touching memory never meets a refused access.
pub(crate) fn bound_inactivation() -> Option<Arc<AtomicBool>> {
    INACTIVATION.with(|f| f.borrow().clone())
}

pub(super) fn thread_inactivated() -> bool {
    INACTIVATION.with(|f| {
        f.borrow()
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Acquire))
    })
}
