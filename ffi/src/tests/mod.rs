//! Tests that call the `extern "C"` functions from Rust: every function
//! against NULL, stale and foreign handles (`bad_handles`), and the API's
//! behaviour end to end on the simulated device (`api`).

mod api;
mod bad_handles;
mod certify;
mod error_classes;
mod graph_api;
mod twin_lock;
mod unwaited;
mod verbs;

use std::ffi::{CStr, CString};

use crate::*;

pub(crate) fn last_error() -> String {
    // SAFETY: rl_last_error returns this thread's NUL-terminated message.
    unsafe { CStr::from_ptr(rl_last_error()) }
        .to_string_lossy()
        .into_owned()
}

pub(crate) fn cstr(s: &str) -> CString {
    CString::new(s).unwrap()
}

pub(crate) fn fixture(name: &str) -> Vec<u8> {
    relaunch_testsupport::fixture("gfx1201", name)
}

pub(crate) fn open_sim() -> *mut RlGpu {
    let sel = cstr("sim:gfx1201");
    // SAFETY: a NUL-terminated selector.
    let gpu = unsafe { rl_gpu_open(sel.as_ptr()) };
    assert!(!gpu.is_null(), "{}", last_error());
    gpu
}

pub(crate) fn load(gpu: *mut RlGpu, name: &str) -> *mut RlModule {
    let code = fixture(name);
    let mut module = std::ptr::null_mut();
    // SAFETY: code is a live buffer; module is a valid out pointer.
    let rc = unsafe { rl_gpu_load_module(gpu, code.as_ptr(), code.len(), &mut module) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    module
}

/// The full kernarg segment of `symbol` for a `grid` x `block` launch
/// (work-items, no dynamic LDS) with `explicit` at the front.
pub(crate) fn pack_kernargs(
    module: *mut RlModule,
    symbol: &str,
    explicit: &[u8],
    grid: [u32; 3],
    block: [u32; 3],
) -> Vec<u8> {
    let mut out = vec![0u8; 1024];
    let mut written = 0usize;
    let sym = cstr(symbol);
    // SAFETY: all buffers are live and sized as passed.
    let rc = unsafe {
        rl_module_pack_kernargs(
            module,
            sym.as_ptr(),
            explicit.as_ptr(),
            explicit.len(),
            grid[0],
            grid[1],
            grid[2],
            block[0],
            block[1],
            block[2],
            0,
            out.as_mut_ptr(),
            out.len(),
            &mut written,
        )
    };
    assert_eq!(rc, RL_OK, "{}", last_error());
    out.truncate(written);
    out
}

/// The full counter kernarg segment pointing at `counter`.
pub(crate) fn counter_kernarg(module: *mut RlModule, counter: u64) -> Vec<u8> {
    pack_kernargs(module, "counter", &counter.to_le_bytes(), [1; 3], [1; 3])
}

/// A builder with `n` counter dispatches (RMW boundaries between).
pub(crate) fn counter_builder(
    gpu: *mut RlGpu,
    module: *mut RlModule,
    kernarg: &[u8],
    n: usize,
) -> *mut RlPm4Builder {
    let b = rl_pm4_builder_new(gpu);
    assert!(!b.is_null(), "{}", last_error());
    let sym = cstr("counter");
    for i in 0..n {
        // SAFETY: live strings and buffers.
        unsafe {
            if i > 0 {
                assert_eq!(
                    rl_pm4_wait_rmw(b, module, sym.as_ptr()),
                    RL_OK,
                    "{}",
                    last_error()
                );
            }
            let rc = rl_pm4_dispatch(
                b,
                module,
                sym.as_ptr(),
                1,
                1,
                1,
                1,
                1,
                1,
                0,
                kernarg.as_ptr(),
                kernarg.len(),
            );
            assert_eq!(rc, RL_OK, "{}", last_error());
        }
    }
    b
}
