//! `hipGraphLaunch`: a supported exec replays through relaunch, ordered
//! with the stream's work by the stream's memory operations without
//! waiting (`model/ordered.rs`), or, where the real HIP has none, after the real
//! `hipStreamSynchronize`, waiting. Everything else goes to the real
//! launch. Every launch is counted for the inspection API
//! (`state/counters.rs`, `inspect.rs`).

use std::sync::Arc;

use crate::exports::forward;
use crate::hip::{key, real_is_capturing, Handle, HipError, HIP_ERROR_LAUNCH_FAILURE, HIP_SUCCESS};
use crate::model::events::record_after_replay;
use crate::model::exec::ShadowExec;
use crate::model::launches::Launched;
use crate::model::reason::Reason;
use crate::state::counters;
use crate::state::{guarded, with_state};

/// # Safety
/// HIP's `hipGraphLaunch` contract.
#[no_mangle]
pub unsafe extern "C" fn hipGraphLaunch(exec: Handle, stream: Handle) -> HipError {
    // The exec's shadow, and whether a capture of the shadow's runs; an
    // exec without one is counted where its reason is kept.
    let found = with_state("hipGraphLaunch", |s| {
        let k = key(exec);
        if let Some(on_hip) = s.on_hip.get_mut(&k) {
            on_hip.launches += 1;
        }
        (s.execs.get(&k).cloned(), !s.captures.is_empty())
    });
    let Some((Some(shadow), capturing)) = found else {
        counters::count(Launched::OnHip);
        return forward!(hipGraphLaunch(exec, stream));
    };
    // SAFETY: the caller's contract, passed on.
    let launched = unsafe { replay(&shadow, stream, capturing) };
    shadow.launches.count(launched);
    counters::count(launched);
    match launched {
        Launched::Replayed(rc) | Launched::Failed(rc) => rc,
        Launched::OnHip => forward!(hipGraphLaunch(exec, stream)),
    }
}

/// Replay `shadow` on `stream`, or say it goes to the real launch.
///
/// # Safety
/// `stream` is the application's, as given to `hipGraphLaunch`.
unsafe fn replay(shadow: &Arc<ShadowExec>, stream: Handle, capturing: bool) -> Launched {
    if shadow.fallen().is_some() {
        return Launched::OnHip;
    }
    if !counters::replay_enabled() {
        return Launched::OnHip;
    }
    // During a capture the launch must become part of the captured graph,
    // and synchronising a capturing stream would invalidate the capture
    // (under global capture mode, synchronising any stream may): the real
    // launch runs whenever a capture is in progress.
    if capturing || real_is_capturing(stream) {
        tracing::info!("a stream capture is in progress: the real hipGraphLaunch runs");
        return Launched::OnHip;
    }
    // The build this launch replays (a later geometry change makes another;
    // this one stays alive until its replay finished).
    let build = shadow.current();
    let order = build.stream_order.get_or_init(|| {
        guarded("hipGraphLaunch", || crate::model::ordered::StreamOrder::new(&build.exec))
            .unwrap_or(Err(Reason::Panicked("setting up the stream words")))
            .inspect_err(|why| {
                tracing::info!(reason = %why, "replays of this exec synchronise the stream instead")
            })
    });
    if let Ok(order) = order {
        // SAFETY: the application's stream, as given to hipGraphLaunch.
        let launched = guarded("hipGraphLaunch", || unsafe {
            crate::model::ordered::launch(shadow, &build, order, stream)
        });
        return match launched {
            Some(Ok(rc)) => {
                record_after_replay(&shadow.events, stream);
                Launched::Replayed(rc)
            }
            // A memory fault lost the GPU for relaunch before this launch
            // reached the stream: the graph is HIP's from now on.
            Some(Err(why @ Reason::DeviceLost(_))) => {
                shadow.fall_back(why);
                Launched::OnHip
            }
            Some(Err(e)) => {
                tracing::error!(error = %e, "relaunch replay of a hipGraphExec failed");
                Launched::Failed(HIP_ERROR_LAUNCH_FAILURE)
            }
            None => Launched::OnHip,
        };
    }
    // Stream order: the graph runs after everything queued before it. A
    // stream that cannot be synchronised gets the real launch.
    let synced = match crate::hip::real::hipStreamSynchronize() {
        // SAFETY: the application's stream.
        Some(f) => unsafe { f(stream) },
        None => crate::hip::HIP_ERROR_SYMBOL_NOT_FOUND,
    };
    if synced != HIP_SUCCESS {
        tracing::info!(
            status = synced,
            "hipStreamSynchronize refused the launch stream; the real hipGraphLaunch runs"
        );
        return Launched::OnHip;
    }
    match guarded("hipGraphLaunch", || build.exec.launch(&shadow.gpu)) {
        Some(Ok(())) => {
            record_after_replay(&shadow.events, stream);
            Launched::Replayed(HIP_SUCCESS)
        }
        // A memory fault lost the GPU for relaunch: the graph is HIP's from
        // now on (HIP reports the loss its own way).
        Some(Err(e)) if e.class() == relaunch::ErrorClass::DeviceLost => {
            shadow.fall_back(e.into());
            Launched::OnHip
        }
        Some(Err(e)) => {
            tracing::error!(error = %e, "relaunch replay of a hipGraphExec failed");
            Launched::Failed(HIP_ERROR_LAUNCH_FAILURE)
        }
        None => Launched::OnHip,
    }
}
