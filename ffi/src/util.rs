//! Reading C arguments: strings, byte ranges, typed arrays and out
//! pointers, each checked for NULL and bounded before it is touched.

use std::ffi::c_char;

use facade::{Error, ErrorClass};

/// Longest C string read (labels, symbols, selectors); a longer or
/// unterminated one is refused instead of scanned without end.
pub(crate) const MAX_STRING_BYTES: usize = 64 * 1024;

pub(crate) fn null(what: &str) -> Error {
    Error::new(ErrorClass::Null, format!("{what} is NULL"))
}

pub(crate) fn record(message: impl Into<String>) -> Error {
    Error::new(ErrorClass::Record, message)
}

/// Longest byte range any C argument may span: a Rust slice cannot be
/// longer than `isize::MAX` bytes (`slice::from_raw_parts`' precondition,
/// an abort in debug builds and undefined behaviour in release).
pub(crate) const MAX_SLICE_BYTES: usize = isize::MAX as usize;

/// Refuses a length of `len` items of `size` bytes past [`MAX_SLICE_BYTES`]
/// or past `max` items, naming the argument (`len`) and what it measures.
pub(crate) fn bounded(len: usize, size: usize, what: &str, max: usize) -> Result<(), Error> {
    let bytes = len.checked_mul(size.max(1));
    if bytes.is_none_or(|b| b > MAX_SLICE_BYTES) {
        return Err(record(format!(
            "len {len} for {what} is larger than any buffer can be ({MAX_SLICE_BYTES} bytes); \
             pass the buffer's real length"
        )));
    }
    if len > max {
        return Err(record(format!(
            "len {len} for {what}: more than the {max} items accepted"
        )));
    }
    Ok(())
}

/// The UTF-8 text of a NUL-terminated C string.
///
/// # Safety
/// `p` is NULL or points to readable memory up to its NUL or to
/// `MAX_STRING_BYTES` bytes, whichever comes first.
pub(crate) unsafe fn text<'a>(p: *const c_char, what: &str) -> Result<&'a str, Error> {
    if p.is_null() {
        return Err(null(what));
    }
    let mut len = 0;
    // SAFETY: the caller guarantees readable bytes up to the NUL; we stop
    // at the first NUL or at the bound.
    while len < MAX_STRING_BYTES && unsafe { *p.add(len) } != 0 {
        len += 1;
    }
    if len == MAX_STRING_BYTES {
        return Err(record(format!(
            "{what} has no NUL within {MAX_STRING_BYTES} bytes; pass a NUL-terminated string"
        )));
    }
    // SAFETY: `len` bytes were just read from `p`.
    let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
    std::str::from_utf8(bytes)
        .map_err(|e| Error::new(ErrorClass::Utf8, format!("{what} is not valid UTF-8 ({e})")))
}

/// `len` items at `p`; NULL is allowed only for `len == 0`, and more than
/// `max` items are refused before the memory is touched.
///
/// # Safety
/// When `len > 0` and `len <= max`, `p` points to `len` readable `T`s that
/// are not written during the call.
pub(crate) unsafe fn slice<'a, T>(
    p: *const T,
    len: usize,
    what: &str,
    max: usize,
) -> Result<&'a [T], Error> {
    if len == 0 {
        return Ok(&[]);
    }
    bounded(len, size_of::<T>(), what, max)?;
    if p.is_null() {
        return Err(null(what));
    }
    // SAFETY: non-NULL, bounded, and readable per the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// `len` writable bytes at `p` (NULL only for `len == 0`); more than
/// `max` bytes are refused before the memory is touched.
///
/// # Safety
/// When `len > 0` and `len <= max`, `p` points to `len` writable bytes not
/// aliased during the call.
pub(crate) unsafe fn slice_mut<'a>(
    p: *mut u8,
    len: usize,
    what: &str,
    max: usize,
) -> Result<&'a mut [u8], Error> {
    if len == 0 {
        return Ok(&mut []);
    }
    bounded(len, 1, what, max)?;
    if p.is_null() {
        return Err(null(what));
    }
    // SAFETY: non-NULL and writable per the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
}

/// Refuses a NULL out pointer before any work whose result it would
/// receive is done (`put` checks again when it stores).
pub(crate) fn non_null<T>(out: *const T, what: &str) -> Result<(), Error> {
    if out.is_null() {
        return Err(null(what));
    }
    Ok(())
}

/// Stores `value` through an out pointer, refusing NULL.
///
/// # Safety
/// `out` is NULL or valid for a write of `T`.
pub(crate) unsafe fn put<T>(out: *mut T, value: T, what: &str) -> Result<(), Error> {
    if out.is_null() {
        return Err(null(what));
    }
    // SAFETY: non-NULL and writable per the caller's contract.
    unsafe { out.write(value) };
    Ok(())
}

/// Clears an out-handle (to NULL) so a failed call never leaves garbage.
///
/// # Safety
/// `out` is NULL or valid for a write of a pointer.
pub(crate) unsafe fn clear<T>(out: *mut *mut T) {
    if !out.is_null() {
        // SAFETY: non-NULL and writable per the caller's contract.
        unsafe { out.write(std::ptr::null_mut()) };
    }
}

/// Locks an IB's (or multi-IB's) state for `call`. Inside a kernel twin a
/// busy lock is refused at once: its holder may be a replay waiting for the
/// very queue thread that runs the twin, and waiting for it would last
/// until the replay timeout (then misreported as a hung kernel).
pub(crate) fn lock_state<'a, T>(
    state: &'a parking_lot::Mutex<T>,
    call: &str,
) -> Result<parking_lot::MutexGuard<'a, T>, Error> {
    if !facade::twins::inside_twin() {
        return Ok(state.lock());
    }
    state.try_lock().ok_or_else(|| {
        Error::new(
            ErrorClass::Replay,
            format!(
                "{call} called from inside a kernel twin while the IB is being replayed or \
                 patched (the replay may be waiting for this twin: it would deadlock); ask \
                 before the replay or after it has finished"
            ),
        )
    })
}

/// Grid or block from three C arguments.
pub(crate) fn dims(x: u32, y: u32, z: u32) -> [u32; 3] {
    [x, y, z]
}
