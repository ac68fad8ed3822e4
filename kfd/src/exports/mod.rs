//! The `hsaKmt*` functions ROCr 5.2.3 imports (it asks for version
//! HSAKMT_1; see `build.rs` for why they are unversioned), each a thin
//! translation to the driver model. No panic crosses back into C: every
//! body runs under [`guard`]. The helpers are here, the functions in one
//! file per area.

#![allow(non_snake_case)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use relaunch_sim::driver::{EventError, EventKind, MemFlags, Origin, QueueKind};

use crate::abi::*;
use crate::process::{self, with};
use crate::topology;

/// `RELAUNCH_KFD_TRACE=1` prints every failing call.
fn trace(call: &str, status: Status, why: &str) {
    if std::env::var_os("RELAUNCH_KFD_TRACE").is_some() {
        eprintln!("relaunch-kfd: {call} -> {status}: {why}");
    }
}

fn guard(call: &str, f: impl FnOnce() -> Result<(), (Status, String)>) -> Status {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => SUCCESS,
        Ok(Err((status, why))) => {
            trace(call, status, &why);
            status
        }
        Err(_) => {
            eprintln!("relaunch-kfd: internal error (panic) in {call}");
            ERROR
        }
    }
}

fn not_open() -> (Status, String) {
    (
        KERNEL_IO_CHANNEL_NOT_OPENED,
        "hsaKmtOpenKFD was not called".into(),
    )
}

/// Write `value` through `out`, refusing null.
///
/// # Safety
/// `out` is null or valid for a write of `T`.
unsafe fn put<T>(out: *mut T, value: T) -> Result<(), (Status, String)> {
    if out.is_null() {
        return Err((INVALID_PARAMETER, "null output pointer".into()));
    }
    // SAFETY: non-null, and valid for writes by the caller's contract;
    // unaligned since the thunk's structs are packed to 4 bytes.
    unsafe { out.write_unaligned(value) };
    Ok(())
}

/// Copy `items` to the caller's array of `n` entries.
///
/// # Safety
/// `out` is valid for `n` writes of `T`.
unsafe fn put_all<T: Copy>(out: *mut T, n: u32, items: &[T]) -> Result<(), (Status, String)> {
    if out.is_null() {
        return Err((INVALID_PARAMETER, "null output array".into()));
    }
    for (i, item) in items.iter().take(n as usize).enumerate() {
        // SAFETY: i < n, inside the caller's array.
        unsafe { out.add(i).write_unaligned(*item) };
    }
    Ok(())
}

fn gpu_index(node: u32) -> Result<usize, (Status, String)> {
    let gpus = process::driver().ok_or_else(not_open)?.gpus().len();
    match (node as usize).checked_sub(1) {
        Some(i) if i < gpus => Ok(i),
        _ => Err((INVALID_NODE_UNIT, format!("node {node} is not a GPU node"))),
    }
}

mod events;
mod memory;
mod queues;
mod system;
