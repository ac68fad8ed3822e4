//! Status codes, the per-thread last error, and the guard every entry
//! point runs under: it turns a facade error into its class's code and a
//! panic into `RL_ERR_INTERNAL`, keeping the message for `rl_last_error`.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use facade::{Error, ErrorClass};

/// Success.
pub const RL_OK: i32 = 0;
/// A required pointer argument was NULL.
pub const RL_ERR_NULL: i32 = -1;
/// A string argument was not valid UTF-8.
pub const RL_ERR_UTF8: i32 = -2;
/// Recording was refused (bad argument, unknown kernel, bad kernarg size).
pub const RL_ERR_RECORD: i32 = -3;
/// Compiling or finalizing was refused (hazards, encoder refusals).
pub const RL_ERR_COMPILE: i32 = -4;
/// A replay failed (queue fault, timeout, simulator violation).
pub const RL_ERR_REPLAY: i32 = -5;
/// A handle was stale (freed), foreign (another kind) or not a handle.
pub const RL_ERR_HANDLE: i32 = -6;
/// Certification of a module was refused.
pub const RL_ERR_CERTIFICATION: i32 = -7;
/// No device, a denied device, or an ambiguous selector.
pub const RL_ERR_DEVICE: i32 = -8;
/// A bug inside relaunch (a caught panic); the message says where.
pub const RL_ERR_INTERNAL: i32 = -9;

/// The status code of an error class.
pub(crate) fn code(class: ErrorClass) -> i32 {
    match class {
        ErrorClass::Null => RL_ERR_NULL,
        ErrorClass::Utf8 => RL_ERR_UTF8,
        ErrorClass::Record => RL_ERR_RECORD,
        ErrorClass::Compile => RL_ERR_COMPILE,
        ErrorClass::Replay => RL_ERR_REPLAY,
        ErrorClass::Handle => RL_ERR_HANDLE,
        ErrorClass::Certification => RL_ERR_CERTIFICATION,
        ErrorClass::Device | ErrorClass::DeviceLost => RL_ERR_DEVICE,
        ErrorClass::Internal => RL_ERR_INTERNAL,
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: String) {
    // Interior NULs would cut the C string short; show them instead.
    let text = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    // During thread teardown the slot may be gone; the status still holds.
    let _ = LAST_ERROR.try_with(|cell| *cell.borrow_mut() = text);
}

/// Records `err` (prefixed with the function name) and returns its code.
pub(crate) fn fail(func: &str, err: Error) -> i32 {
    tracing::debug!(func, class = err.class().name(), "{}", err.message());
    let status = code(err.class());
    set_last_error(format!("{func}: {}", err.message()));
    status
}

/// Runs `f` for `func`: its value, or the failure's status code after
/// recording the message. Panics are caught and reported as internal errors.
pub(crate) fn run<T>(func: &str, f: impl FnOnce() -> Result<T, Error>) -> Result<T, i32> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(fail(func, err)),
        Err(payload) => {
            let message = format!(
                "internal error (a bug in relaunch, please report it): {}",
                facade::panic_message(payload.as_ref())
            );
            tracing::error!(func, "{message}");
            Err(fail(func, Error::new(ErrorClass::Internal, message)))
        }
    }
}

/// `run` for entry points returning a value: `on_error` on failure.
pub(crate) fn guard<T>(func: &str, on_error: T, f: impl FnOnce() -> Result<T, Error>) -> T {
    run(func, f).unwrap_or(on_error)
}

/// `run` for entry points returning a status code.
pub(crate) fn status(func: &str, f: impl FnOnce() -> Result<(), Error>) -> i32 {
    match run(func, f) {
        Ok(()) => RL_OK,
        Err(code) => code,
    }
}

/// The last failure's message on this thread as one line (for stderr).
pub(crate) fn last_error_line() -> String {
    LAST_ERROR
        .try_with(|cell| cell.borrow().to_string_lossy().replace(['\n', '\r'], " "))
        .unwrap_or_default()
}

/// The message of the last failed call on this thread ("" if none). The
/// pointer stays valid until the next failing `rl_*` call on this thread;
/// successful calls (size queries with NULL buffers included) never
/// change or invalidate it.
#[no_mangle]
pub extern "C" fn rl_last_error() -> *const c_char {
    LAST_ERROR
        .try_with(|cell| cell.borrow().as_ptr())
        .unwrap_or(c"".as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn last() -> String {
        // SAFETY: rl_last_error returns a NUL-terminated string owned by
        // this thread's slot, unchanged until the next failure.
        unsafe { CStr::from_ptr(rl_last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_panic_becomes_internal_with_its_message() {
        let rc = status("rl_test", || panic!("boom at the boundary"));
        assert_eq!(rc, RL_ERR_INTERNAL);
        let value = guard("rl_test", 7usize, || -> Result<usize, Error> {
            panic!("boom at the boundary")
        });
        assert_eq!(value, 7, "the fallback value is returned");
        assert!(last().contains("rl_test: internal error"), "{}", last());
        assert!(last().contains("boom at the boundary"), "{}", last());
    }

    #[test]
    fn classes_map_to_codes_and_messages_are_kept() {
        let rc = status("rl_x", || Err(Error::new(ErrorClass::Handle, "stale")));
        assert_eq!(rc, RL_ERR_HANDLE);
        assert_eq!(last(), "rl_x: stale");
        assert_eq!(status("rl_y", || Ok(())), RL_OK);
        assert_eq!(last(), "rl_x: stale", "success leaves the last failure");
        let all = [
            (ErrorClass::Null, -1),
            (ErrorClass::Utf8, -2),
            (ErrorClass::Record, -3),
            (ErrorClass::Compile, -4),
            (ErrorClass::Replay, -5),
            (ErrorClass::Handle, -6),
            (ErrorClass::Certification, -7),
            (ErrorClass::Device, -8),
            (ErrorClass::DeviceLost, -8),
            (ErrorClass::Internal, -9),
        ];
        for (class, expected) in all {
            assert_eq!(code(class), expected, "{class:?}");
        }
    }

    #[test]
    fn the_last_error_is_per_thread() {
        status("rl_main", || Err(Error::new(ErrorClass::Record, "here")));
        std::thread::spawn(|| {
            assert_eq!(last(), "");
            status("rl_other", || Err(Error::new(ErrorClass::Replay, "there")));
            assert_eq!(last(), "rl_other: there");
        })
        .join()
        .unwrap();
        assert_eq!(last(), "rl_main: here");
    }
}
