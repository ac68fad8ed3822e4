//! relaunch-kfd-shim: `/dev/kfd` for tools that open it before initialising ROCr (rocminfo
//! checks it can open the device read-write). When the thunk is
//! preloaded by `relaunch sim-rocm`, an open of exactly `/dev/kfd` gets a
//! descriptor of an anonymous file; every other open goes to the C
//! library unchanged. Nothing else ever reaches the descriptor: the
//! thunk, not the device file, is how ROCr talks to the driver here.
//!
//! `open` is variadic in C; on the x86-64 and AArch64 Linux ABIs the mode
//! argument travels in the same register whether declared or variadic,
//! so declaring it is how a non-variadic Rust function receives it.

use std::ffi::{c_char, c_int, c_uint, CStr};
use std::sync::OnceLock;

const KFD: &[u8] = b"/dev/kfd";
/// Set by `relaunch sim-rocm` (the thunk reads the same variable).
const TARGETS_ENV: &str = "RELAUNCH_KFD_TARGETS";

type OpenFn = unsafe extern "C" fn(*const c_char, c_int, c_uint) -> c_int;
type OpenAtFn = unsafe extern "C" fn(c_int, *const c_char, c_int, c_uint) -> c_int;

fn next<T: Copy>(cell: &'static OnceLock<usize>, name: &CStr) -> Option<T> {
    let addr = *cell.get_or_init(|| {
        // SAFETY: dlsym with a valid NUL-terminated name; RTLD_NEXT finds
        // the C library's definition after this one.
        unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) as usize }
    });
    // SAFETY: a non-null dlsym result for these names is a function of
    // the C library with the matching signature (`T`).
    (addr != 0).then(|| unsafe { std::mem::transmute_copy::<usize, T>(&addr) })
}

/// True when `path` is `/dev/kfd` and the launcher asked for the shim.
fn is_kfd(path: *const c_char) -> bool {
    if path.is_null() || std::env::var_os(TARGETS_ENV).is_none() {
        return false;
    }
    // SAFETY: a non-null path from open() is a NUL-terminated string.
    unsafe { CStr::from_ptr(path) }.to_bytes() == KFD
}

fn kfd_fd() -> c_int {
    // SAFETY: memfd_create with a static name creates a new anonymous file.
    unsafe { libc::memfd_create(c"relaunch-kfd".as_ptr(), libc::MFD_CLOEXEC) }
}

macro_rules! open_like {
    ($name:ident, $sym:expr) => {
        /// # Safety
        /// As the C library's function of that name.
        #[no_mangle]
        pub unsafe extern "C" fn $name(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
            if is_kfd(path) {
                return kfd_fd();
            }
            static NEXT: OnceLock<usize> = OnceLock::new();
            match next::<OpenFn>(&NEXT, $sym) {
                // SAFETY: forwarding the caller's arguments unchanged.
                Some(f) => unsafe { f(path, flags, mode) },
                None => {
                    // SAFETY: errno is thread-local.
                    unsafe { *libc::__errno_location() = libc::ENOSYS };
                    -1
                }
            }
        }
    };
}

macro_rules! openat_like {
    ($name:ident, $sym:expr) => {
        /// # Safety
        /// As the C library's function of that name.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            dir: c_int,
            path: *const c_char,
            flags: c_int,
            mode: c_uint,
        ) -> c_int {
            if is_kfd(path) {
                return kfd_fd();
            }
            static NEXT: OnceLock<usize> = OnceLock::new();
            match next::<OpenAtFn>(&NEXT, $sym) {
                // SAFETY: forwarding the caller's arguments unchanged.
                Some(f) => unsafe { f(dir, path, flags, mode) },
                None => {
                    // SAFETY: errno is thread-local.
                    unsafe { *libc::__errno_location() = libc::ENOSYS };
                    -1
                }
            }
        }
    };
}

open_like!(open, c"open");
open_like!(open64, c"open64");
openat_like!(openat, c"openat");
openat_like!(openat64, c"openat64");
