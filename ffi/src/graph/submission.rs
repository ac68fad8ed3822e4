//! How a graph's lanes are submitted (issue 31.1): `rl_graph_instantiate_ex`
//! chooses (`RlSubmission`: auto, PM4, public AQL), and
//! `rl_graphexec_lane_submission` / `rl_graphexec_lane_reason` say per
//! lane which path it takes and, for public AQL, why (the kernel the PM4
//! path refuses and its reasons).

use std::ffi::c_char;

use facade::{LaneKind, Submission};

use super::{exec_obj, instantiate, RlGraph, RlGraphExec};
use crate::status::{run, status};
use crate::util::{bounded, null, record, slice_mut, MAX_SLICE_BYTES};

/// `RlSubmission`: how `rl_graph_instantiate_ex` submits lanes. Auto (0,
/// what `rl_graph_instantiate` does): PM4, except lanes with a kernel the
/// PM4 path refuses, which run as public-AQL dispatches. Pm4 (1): every
/// lane PM4 (a refused kernel fails with `RL_ERR_COMPILE`). Aql (2):
/// every lane as public-AQL kernel-dispatch packets.
pub const RL_SUBMISSION_AUTO: u32 = 0;
pub const RL_SUBMISSION_PM4: u32 = 1;
pub const RL_SUBMISSION_AQL: u32 = 2;

/// `rl_graphexec_lane_submission` results.
pub const RL_LANE_PM4: i32 = 0;
pub const RL_LANE_AQL: i32 = 1;
/// A HIP stream (only for graphs of modules loaded through HIP, which the
/// Rust API makes; listed so every lane kind has a value).
pub const RL_LANE_HIP: i32 = 2;

/// [`super::rl_graph_instantiate`] choosing how lanes are submitted
/// (`RL_SUBMISSION_*`; another value is refused with `RL_ERR_COMPILE`).
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_graph_instantiate_ex(
    graph: *mut RlGraph,
    submission: u32,
    out: *mut *mut RlGraphExec,
) -> i32 {
    let submission = match submission {
        RL_SUBMISSION_AUTO => Submission::Auto,
        RL_SUBMISSION_PM4 => Submission::Pm4,
        RL_SUBMISSION_AQL => Submission::Aql,
        other => {
            return status("rl_graph_instantiate_ex", || {
                Err(facade::Error::new(
                    facade::ErrorClass::Compile,
                    format!("submission {other} is not an RlSubmission (0 auto, 1 pm4, 2 aql)"),
                ))
            })
        }
    };
    // SAFETY: forwarded caller contract.
    unsafe { instantiate("rl_graph_instantiate_ex", graph, submission, out) }
}

/// `RL_LANE_PM4`, `RL_LANE_AQL` or `RL_LANE_HIP` for lane `lane`; a negative class on a
/// bad handle or a lane past the count (`RL_ERR_HANDLE`).
#[no_mangle]
pub extern "C" fn rl_graphexec_lane_submission(exec: *const RlGraphExec, lane: usize) -> i32 {
    match run("rl_graphexec_lane_submission", || {
        let e = exec_obj(exec)?;
        let lanes = e.exec.lane_submissions();
        let l = lanes.get(lane).ok_or_else(|| no_lane(lane, lanes.len()))?;
        Ok(match l.kind {
            LaneKind::Pm4 => RL_LANE_PM4,
            LaneKind::Aql => RL_LANE_AQL,
            LaneKind::Hip => RL_LANE_HIP,
        })
    }) {
        Ok(kind) => kind,
        Err(class) => class,
    }
}

/// Writes why lane `lane` runs as public AQL into `buf` (empty for a PM4
/// lane), always NUL-terminated when `len > 0`. When the text does not
/// fit it is cut at `len - 1` bytes and `RL_ERR_RECORD` says how many
/// were needed.
///
/// # Safety
/// `buf` is NULL or valid for `len` bytes of writes.
#[no_mangle]
pub unsafe extern "C" fn rl_graphexec_lane_reason(
    exec: *const RlGraphExec,
    lane: usize,
    buf: *mut c_char,
    len: usize,
) -> i32 {
    status("rl_graphexec_lane_reason", || {
        let e = exec_obj(exec)?;
        let lanes = e.exec.lane_submissions();
        let l = lanes.get(lane).ok_or_else(|| no_lane(lane, lanes.len()))?;
        if buf.is_null() || len == 0 {
            return Err(null("buf (or len 0)"));
        }
        bounded(len, 1, "buf", MAX_SLICE_BYTES)?;
        let text = l.reason.as_deref().unwrap_or("");
        let want = len.min(text.len() + 1);
        // SAFETY: forwarded caller contract (want <= len).
        let out = unsafe { slice_mut(buf.cast::<u8>(), want, "buf", MAX_SLICE_BYTES) }?;
        let mut n = text.len().min(len - 1);
        while n > 0 && !text.is_char_boundary(n) {
            n -= 1;
        }
        out[..n].copy_from_slice(&text.as_bytes()[..n]);
        out[n] = 0;
        if n < text.len() {
            return Err(record(format!(
                "the reason needs {} bytes with its NUL, the buffer has {len}; it was cut",
                text.len() + 1
            )));
        }
        Ok(())
    })
}

fn no_lane(lane: usize, count: usize) -> facade::Error {
    facade::Error::new(
        facade::ErrorClass::Handle,
        format!("lane {lane} does not exist; the graph exec has {count} lanes"),
    )
}
