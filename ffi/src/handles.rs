//! The handle registry: every object the C side holds lives in one
//! process-wide slot table, and the pointer C gets encodes the slot index,
//! the slot's generation and the object's kind. Nothing C passes in is
//! ever dereferenced, so NULL, freed, foreign (wrong kind) and garbage
//! handles are all told apart and refused with a message.
//!
//! Layout of a handle (64-bit): bits 63..32 generation (never 0), 31..8
//! slot index, 7..4 the tag `0xB`, 3..0 the kind (1..=8).
//!
//! A (slot, generation) pair is handed out at most once: a slot whose
//! generation would wrap is retired instead of reused, so a stale handle
//! can never name a live object. Each slot serves 2^32 - 1 lifetimes and
//! there are 2^24 slots: 2^56 handles, centuries of allocation at any rate
//! a process reaches, before `insert` reports the table exhausted.

use std::any::Any;
use std::sync::Arc;

use facade::{Error, ErrorClass};
use parking_lot::Mutex;

use crate::util::{non_null, put};

/// Most handles alive at once (slot indices are 24 bits).
pub(crate) const MAX_HANDLES: usize = 1 << 24;
const TAG: u64 = 0xB;

/// Kind numbers and the C type names used in messages.
const KIND_NAMES: [&str; 9] = [
    "",
    "RlGpu",
    "RlModule",
    "RlPm4Builder",
    "RlPm4Ib",
    "RlPm4MultiIb",
    "RlGraph",
    "RlGraphExec",
    "RlCatalog",
];

/// An object type that C holds through handles of type `*mut Self::C`.
pub(crate) trait Handled: Any + Send + Sync + Sized {
    /// The opaque C type (`RlGpu`, ...).
    type C;
    /// Index in `KIND_NAMES`.
    const KIND: u8;
}

fn name(kind: u8) -> &'static str {
    KIND_NAMES.get(kind as usize).copied().unwrap_or("?")
}

type Object = Arc<dyn Any + Send + Sync>;

struct Slot {
    generation: u32,
    object: Option<(u8, Object)>,
}

struct Table {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

static TABLE: Mutex<Table> = Mutex::new(Table {
    slots: Vec::new(),
    free: Vec::new(),
});

struct Decoded {
    index: usize,
    generation: u32,
    kind: u8,
}

fn encode(index: usize, generation: u32, kind: u8) -> u64 {
    (u64::from(generation) << 32) | ((index as u64) << 8) | (TAG << 4) | u64::from(kind)
}

fn decode<T: Handled>(raw: usize) -> Result<Decoded, Error> {
    let want = name(T::KIND);
    if raw == 0 {
        return Err(Error::new(
            ErrorClass::Null,
            format!("the {want} handle is NULL"),
        ));
    }
    let raw = raw as u64;
    let kind = (raw & 0xF) as u8;
    let generation = (raw >> 32) as u32;
    if (raw >> 4) & 0xF != TAG || kind == 0 || kind as usize >= KIND_NAMES.len() || generation == 0
    {
        return Err(Error::new(
            ErrorClass::Handle,
            format!("{raw:#x} is not a relaunch handle; pass the {want} an rl_* function returned"),
        ));
    }
    if kind != T::KIND {
        return Err(Error::new(
            ErrorClass::Handle,
            format!(
                "an {} handle was passed where an {want} is expected",
                name(kind)
            ),
        ));
    }
    Ok(Decoded {
        index: ((raw >> 8) & 0xFF_FFFF) as usize,
        generation,
        kind,
    })
}

fn stale(kind: u8) -> Error {
    Error::new(
        ErrorClass::Handle,
        format!(
            "stale {} handle: it was freed (or consumed) already",
            name(kind)
        ),
    )
}

/// Inserts `object` and stores its new handle through `out`, refusing a
/// NULL `out` before the object is entered (nothing is left behind).
///
/// # Safety
/// `out` is NULL or valid for a write of a pointer.
pub(crate) unsafe fn insert_into<T: Handled>(out: *mut *mut T::C, object: T) -> Result<(), Error> {
    non_null(out, "out")?;
    let handle = insert(object)?;
    // SAFETY: non-NULL (checked above) and writable per the caller's contract.
    unsafe { put(out, handle, "out") }
}

/// Registers `object` and returns its handle.
pub(crate) fn insert<T: Handled>(object: T) -> Result<*mut T::C, Error> {
    let object: Object = Arc::new(object);
    let mut table = TABLE.lock();
    let index = match table.free.pop() {
        Some(i) => i as usize,
        None => {
            if table.slots.len() >= MAX_HANDLES {
                return Err(Error::new(
                    ErrorClass::Record,
                    format!(
                        "all {MAX_HANDLES} handle slots are alive or retired; free some \
                         before making more"
                    ),
                ));
            }
            table.slots.push(Slot {
                generation: 1,
                object: None,
            });
            table.slots.len() - 1
        }
    };
    let slot = &mut table.slots[index];
    slot.object = Some((T::KIND, object));
    Ok(encode(index, slot.generation, T::KIND) as usize as *mut T::C)
}

fn lookup<T: Handled>(handle: *const T::C, take: bool) -> Result<Arc<T>, Error> {
    let d = decode::<T>(handle as usize)?;
    let mut table = TABLE.lock();
    let Some(slot) = table.slots.get_mut(d.index) else {
        return Err(stale(d.kind));
    };
    let live = matches!(&slot.object, Some((kind, _)) if *kind == d.kind);
    if slot.generation != d.generation || !live {
        return Err(stale(d.kind));
    }
    let object = if take {
        let (_, object) = slot.object.take().ok_or_else(|| stale(d.kind))?;
        // Past the last generation the slot is retired, not reused: a
        // wrapped generation would revive handles from its first lives.
        if let Some(next) = slot.generation.checked_add(1) {
            slot.generation = next;
            table.free.push(d.index as u32);
        }
        object
    } else {
        let (_, object) = slot.object.as_ref().ok_or_else(|| stale(d.kind))?;
        Arc::clone(object)
    };
    object.downcast::<T>().map_err(|_| {
        Error::new(
            ErrorClass::Internal,
            format!("handle table holds another type under {}", name(d.kind)),
        )
    })
}

/// The object behind `handle` (shared; the handle stays valid).
pub(crate) fn get<T: Handled>(handle: *const T::C) -> Result<Arc<T>, Error> {
    lookup(handle, false)
}

/// Invalidates `handle` and returns its object. The object lives on while
/// anything else (an IB, a running call) still holds it.
pub(crate) fn remove<T: Handled>(handle: *const T::C) -> Result<Arc<T>, Error> {
    lookup(handle, true)
}

/// Frees `handle` for a `void rl_*_free` function: NULL is a no-op (like
/// `free`), a bad handle is recorded for `rl_last_error`.
pub(crate) fn free<T: Handled>(func: &str, handle: *const T::C) {
    if handle.is_null() {
        return;
    }
    crate::status::guard(func, (), || remove::<T>(handle).map(drop));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct A(u32);
    #[derive(Debug)]
    struct B;
    pub struct CA;
    pub struct CB;
    impl Handled for A {
        type C = CA;
        const KIND: u8 = 1;
    }
    impl Handled for B {
        type C = CB;
        const KIND: u8 = 2;
    }

    #[test]
    fn null_stale_foreign_and_garbage_are_refused() {
        let a = insert(A(7)).unwrap();
        assert_eq!(get::<A>(a).unwrap().0, 7);
        let err = get::<A>(std::ptr::null()).unwrap_err();
        assert_eq!(err.class(), ErrorClass::Null);
        assert_eq!(err.message(), "the RlGpu handle is NULL");
        let err = get::<B>(a as usize as *const CB).unwrap_err();
        assert_eq!(err.class(), ErrorClass::Handle);
        assert!(err
            .message()
            .contains("RlGpu handle was passed where an RlModule"));
        let err = get::<A>(0x1234 as *const CA).unwrap_err();
        assert!(err.message().contains("not a relaunch handle"), "{err}");
        let held = remove::<A>(a).unwrap();
        assert_eq!(held.0, 7, "the object outlives its handle");
        let err = get::<A>(a).unwrap_err();
        assert_eq!(err.class(), ErrorClass::Handle);
        assert!(err.message().contains("stale RlGpu"), "{err}");
        assert!(remove::<A>(a).is_err(), "double free is refused");
    }

    /// #15.15: a slot at its last generation is retired when freed, so the
    /// handles of its first lives (generation 1, ...) stay stale for good.
    #[test]
    fn a_slot_past_its_last_generation_is_retired_not_wrapped() {
        let live = insert(A(1)).unwrap();
        let index = decode::<A>(live as usize).unwrap().index;
        // As if 2^32 - 2 lifetimes of this slot had passed.
        TABLE.lock().slots[index].generation = u32::MAX;
        let last = encode(index, u32::MAX, A::KIND) as usize as *const CA;
        assert!(get::<A>(live).is_err());
        assert_eq!(get::<A>(last).unwrap().0, 1);
        remove::<A>(last).unwrap();
        let first_life = encode(index, 1, A::KIND) as usize as *const CA;
        let fresh: Vec<_> = (0..8).map(|i| insert(A(100 + i)).unwrap()).collect();
        assert!(
            get::<A>(first_life).is_err(),
            "a handle of the slot's first life names a live object again"
        );
        assert!(get::<A>(last).is_err());
        for h in fresh {
            assert_ne!(
                decode::<A>(h as usize).unwrap().index,
                index,
                "retired slot reused"
            );
            remove::<A>(h).unwrap();
        }
    }

    #[test]
    fn a_reused_slot_does_not_revive_old_handles() {
        let old = insert(A(1)).unwrap();
        remove::<A>(old).unwrap();
        let new = insert(A(2)).unwrap();
        assert_ne!(old as usize, new as usize);
        assert!(get::<A>(old).is_err());
        assert_eq!(get::<A>(new).unwrap().0, 2);
        let b = insert(B).unwrap();
        assert!(get::<B>(b).is_ok());
        free::<B>("rl_test_free", b);
        free::<B>("rl_test_free", std::ptr::null());
        assert!(get::<B>(b).is_err());
    }
}
