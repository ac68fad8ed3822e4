//! Host twins written in C for the simulated device: `rl_sim_register_kernel`
//! and the accessors a callback uses on its `RlSimWorkgroup` (kernarg, ids,
//! sizes, checked loads, stores and atomics).
//!
//! A workgroup pointer is valid only inside its callback, on the thread
//! that runs it: each call pushes a frame on a per-thread stack, and every
//! accessor checks the pointer against the top frame before using it. A
//! memory fault seen by an accessor fails the kernel even if the callback
//! ignores the status and returns 0, as the hardware would.

use std::cell::RefCell;
use std::ffi::{c_char, c_void};

use facade::twins::{register_twin, KernelFault, Workgroup};
use facade::{Error, ErrorClass};

use crate::status::{guard, status};
use crate::util::{non_null, null, put, slice, slice_mut, text, MAX_SLICE_BYTES};

/// One workgroup of a simulated dispatch; valid only inside the callback.
pub struct RlSimWorkgroup {
    _opaque: [u8; 0],
}

/// A C twin: called once per workgroup (possibly from a simulator queue
/// thread); return 0 on success, nonzero for a kernel fault.
pub type RlSimKernelFn =
    Option<unsafe extern "C" fn(wg: *mut RlSimWorkgroup, user: *mut c_void) -> i32>;

struct Frame {
    wg: *mut c_void,
    fault: Option<KernelFault>,
}

thread_local! {
    static FRAMES: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

/// The C side's `user` pointer, passed back untouched.
#[derive(Clone, Copy)]
struct User(*mut c_void);
// SAFETY: relaunch never dereferences `user`; rl_sim_register_kernel's
// contract makes the caller responsible for it being usable from the
// simulator's threads.
unsafe impl Send for User {}
// SAFETY: as above; the pointer is only copied.
unsafe impl Sync for User {}

/// Registers `callback` as the simulated device's kernel for `symbol`
/// (with or without `.kd`), process-wide. A symbol that already has a
/// twin (a test kernel's built-in twin too, where a test registered
/// those) is replaced; a symbol without one runs its machine code on the
/// simulator's instruction interpreter. `user` is passed to every call.
///
/// # Safety
/// `symbol` is NULL or NUL-terminated. `callback` must stay callable and
/// `user` valid for the rest of the process, from any thread.
#[no_mangle]
pub unsafe extern "C" fn rl_sim_register_kernel(
    symbol: *const c_char,
    callback: RlSimKernelFn,
    user: *mut c_void,
) -> i32 {
    status("rl_sim_register_kernel", || {
        // SAFETY: forwarded caller contract.
        let symbol = unsafe { text(symbol, "symbol") }?.to_string();
        let callback = callback.ok_or_else(|| null("callback"))?;
        let user = User(user);
        let name = symbol.clone();
        register_twin(&symbol, move |wg: &mut Workgroup<'_>| {
            let user = user;
            let ptr = (wg as *mut Workgroup<'_>).cast::<c_void>();
            FRAMES.with(|f| {
                f.borrow_mut().push(Frame {
                    wg: ptr,
                    fault: None,
                })
            });
            // SAFETY: the registrant promised a callable function; `ptr`
            // is valid until this call returns (checked by the accessors).
            let rc = unsafe { callback(ptr.cast::<RlSimWorkgroup>(), user.0) };
            let frame = FRAMES.with(|f| f.borrow_mut().pop());
            match (frame.and_then(|f| f.fault), rc) {
                (Some(fault), _) => Err(fault),
                (None, 0) => Ok(()),
                (None, rc) => Err(KernelFault::Twin(format!(
                    "the C kernel registered for {name} returned {rc}"
                ))),
            }
        });
        Ok(())
    })
}

/// Runs `f` on the workgroup behind `wg` if it is the current callback's.
fn with_wg<T>(
    wg: *mut RlSimWorkgroup,
    f: impl FnOnce(&mut Workgroup<'_>) -> Result<T, KernelFault>,
) -> Result<T, Error> {
    non_null(wg, "wg")?;
    let current = FRAMES.with(|frames| frames.borrow().last().map(|f| f.wg));
    if current != Some(wg.cast::<c_void>()) {
        return Err(Error::new(
            ErrorClass::Handle,
            "this RlSimWorkgroup is not the current kernel callback's; use it only inside the \
             callback it was passed to, on that thread",
        ));
    }
    // SAFETY: `wg` is the pointer the running callback received, derived
    // from a live `&mut Workgroup` that is not used until the callback
    // returns; the reference does not escape this call.
    let workgroup = unsafe { &mut *wg.cast::<Workgroup<'_>>() };
    f(workgroup).map_err(|fault| {
        let message = fault.to_string();
        FRAMES.with(|frames| {
            if let Some(top) = frames.borrow_mut().last_mut() {
                top.fault.get_or_insert(fault);
            }
        });
        Error::new(ErrorClass::Replay, format!("kernel fault: {message}"))
    })
}

/// The kernarg segment as the dispatch delivered it; its size goes to
/// `*len` (may be NULL). NULL on failure. Valid until the callback returns.
///
/// # Safety
/// `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_sim_kernarg(wg: *mut RlSimWorkgroup, len: *mut usize) -> *const u8 {
    guard("rl_sim_kernarg", std::ptr::null(), || {
        let (ptr, n) = with_wg(wg, |w| w.kernarg().map(|k| (k.as_ptr(), k.len())))?;
        if !len.is_null() {
            // SAFETY: checked non-NULL; caller contract for validity.
            unsafe { put(len, n, "len") }?;
        }
        Ok(ptr)
    })
}

/// # Safety
/// `out` is NULL or valid for 3 `uint32_t` writes.
unsafe fn write3(
    func: &str,
    wg: *mut RlSimWorkgroup,
    out: *mut u32,
    f: fn(&Workgroup<'_>) -> [u32; 3],
) {
    guard(func, (), || {
        let value = with_wg(wg, |w| Ok(f(w)))?;
        non_null(out, "out")?;
        // SAFETY: forwarded caller contract (3 writable u32s).
        unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), out, 3) };
        Ok(())
    })
}

/// This workgroup's id (x, y, z) into `out[3]`.
///
/// # Safety
/// `out` is NULL or valid for 3 `uint32_t` writes.
#[no_mangle]
pub unsafe extern "C" fn rl_sim_workgroup_id(wg: *mut RlSimWorkgroup, out: *mut u32) {
    // SAFETY: forwarded caller contract.
    unsafe { write3("rl_sim_workgroup_id", wg, out, |w| w.workgroup_id()) }
}

/// The workgroup size in work-items into `out[3]`.
///
/// # Safety
/// `out` is NULL or valid for 3 `uint32_t` writes.
#[no_mangle]
pub unsafe extern "C" fn rl_sim_workgroup_size(wg: *mut RlSimWorkgroup, out: *mut u32) {
    // SAFETY: forwarded caller contract.
    unsafe { write3("rl_sim_workgroup_size", wg, out, |w| w.workgroup_size()) }
}

/// The grid size in work-items into `out[3]`.
///
/// # Safety
/// `out` is NULL or valid for 3 `uint32_t` writes.
#[no_mangle]
pub unsafe extern "C" fn rl_sim_grid_size(wg: *mut RlSimWorkgroup, out: *mut u32) {
    // SAFETY: forwarded caller contract.
    unsafe { write3("rl_sim_grid_size", wg, out, |w| w.grid_size()) }
}

/// Checked vector load of `len` bytes at device address `addr` into `dst`
/// (a fault fails the kernel and returns `RL_ERR_REPLAY`).
///
/// # Safety
/// `dst` is NULL or valid for `len` bytes of writes.
#[no_mangle]
pub unsafe extern "C" fn rl_sim_load(
    wg: *mut RlSimWorkgroup,
    addr: u64,
    dst: *mut c_void,
    len: usize,
) -> i32 {
    status("rl_sim_load", || {
        // SAFETY: forwarded caller contract.
        let out = unsafe { slice_mut(dst.cast::<u8>(), len, "dst", MAX_SLICE_BYTES) }?;
        with_wg(wg, |w| w.load(addr, out))
    })
}

/// Checked scalar load (through the scalar cache, like `s_load`) of `len`
/// bytes at `addr` into `dst`: the simulator reports it as a stale read
/// when an earlier dispatch wrote the bytes and no boundary since then
/// invalidated the scalar cache (`rmw_vmem` does not).
///
/// # Safety
/// `dst` is NULL or valid for `len` bytes of writes.
#[no_mangle]
pub unsafe extern "C" fn rl_sim_scalar_load(
    wg: *mut RlSimWorkgroup,
    addr: u64,
    dst: *mut c_void,
    len: usize,
) -> i32 {
    status("rl_sim_scalar_load", || {
        // SAFETY: forwarded caller contract.
        let out = unsafe { slice_mut(dst.cast::<u8>(), len, "dst", MAX_SLICE_BYTES) }?;
        with_wg(wg, |w| w.scalar_load(addr, out))
    })
}

/// Checked store of `len` bytes from `src` to device address `addr`.
///
/// # Safety
/// `src` is NULL or valid for `len` bytes of reads.
#[no_mangle]
pub unsafe extern "C" fn rl_sim_store(
    wg: *mut RlSimWorkgroup,
    addr: u64,
    src: *const c_void,
    len: usize,
) -> i32 {
    status("rl_sim_store", || {
        // SAFETY: forwarded caller contract.
        let bytes = unsafe { slice(src.cast::<u8>(), len, "src", MAX_SLICE_BYTES) }?;
        with_wg(wg, |w| w.store(addr, bytes))
    })
}

/// Device-scope atomic add at `addr`; the previous value goes to `*old`
/// (may be NULL).
///
/// # Safety
/// `old` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_sim_atomic_add_u32(
    wg: *mut RlSimWorkgroup,
    addr: u64,
    value: u32,
    old: *mut u32,
) -> i32 {
    status("rl_sim_atomic_add_u32", || {
        let previous = with_wg(wg, |w| w.atomic_add_u32(addr, value))?;
        if !old.is_null() {
            // SAFETY: checked non-NULL; caller contract for validity.
            unsafe { put(old, previous, "old") }?;
        }
        Ok(())
    })
}
