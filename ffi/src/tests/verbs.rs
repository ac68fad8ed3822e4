//! `rl_pm4_finalize_ex` / `rl_pm4_replay_ex`: the older names are thin
//! calls of them, so each option is checked against its older name, and
//! the options' versioning and refusals are checked by value.

use std::ptr::null_mut;

use super::{counter_builder, counter_kernarg, last_error, load, open_sim};
use crate::verbs::*;
use crate::*;

fn counter_word(gpu: *mut RlGpu) -> u64 {
    let mut addr = 0;
    // SAFETY: addr is writable.
    assert_eq!(unsafe { rl_gpu_alloc(gpu, 4, 1, &mut addr) }, RL_OK);
    addr
}

fn read_u32(gpu: *mut RlGpu, addr: u64) -> u32 {
    let mut v = 0u32;
    // SAFETY: v is 4 writable bytes.
    let rc = unsafe { rl_gpu_read(gpu, addr, (&mut v as *mut u32).cast(), 4) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    v
}

fn finalize_opts(profiling: u32, queue_policy: u32) -> RlPm4FinalizeOptions {
    RlPm4FinalizeOptions {
        struct_size: std::mem::size_of::<RlPm4FinalizeOptions>(),
        profiling,
        queue_policy,
    }
}

fn replay_opts(flags: u32) -> RlPm4ReplayOptions {
    RlPm4ReplayOptions {
        struct_size: std::mem::size_of::<RlPm4ReplayOptions>(),
        flags,
    }
}

#[test]
fn one_ib_replays_plain_async_and_profiled_through_the_ex_verbs() {
    let gpu = open_sim();
    let module = load(gpu, "counter");
    let word = counter_word(gpu);
    let kernarg = counter_kernarg(module, word);
    let builder = counter_builder(gpu, module, &kernarg, 2);
    let mut ib = null_mut();
    let opts = finalize_opts(RL_PROFILE_SPAN, 0);
    // SAFETY: one live builder, live options, writable out.
    let rc = unsafe { rl_pm4_finalize_ex(gpu, &builder, 1, &opts, &mut ib, null_mut()) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    // NULL options: replay and wait.
    // SAFETY: no output for a plain replay.
    assert_eq!(
        unsafe { rl_pm4_replay_ex(ib, null_mut(), std::ptr::null(), null_mut()) },
        RL_OK
    );
    let asynchronous = replay_opts(RL_REPLAY_ASYNC);
    // SAFETY: live options.
    assert_eq!(
        unsafe { rl_pm4_replay_ex(ib, null_mut(), &asynchronous, null_mut()) },
        RL_OK
    );
    assert_eq!(rl_pm4_wait(ib), RL_OK, "{}", last_error());
    let mut gpu_us = -1.0;
    let profiled = replay_opts(RL_REPLAY_PROFILED);
    // SAFETY: live options and a writable double.
    let rc = unsafe { rl_pm4_replay_ex(ib, null_mut(), &profiled, &mut gpu_us) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    assert!(gpu_us > 0.0, "{gpu_us}");
    // The older names are the same verb.
    assert_eq!(rl_pm4_replay(ib), RL_OK);
    assert_eq!(read_u32(gpu, word), 8, "4 replays of 2 dispatches");
    // Profiled without the output: refused before replaying.
    // SAFETY: live options.
    let rc = unsafe { rl_pm4_replay_ex(ib, null_mut(), &profiled, null_mut()) };
    assert_eq!(rc, RL_ERR_NULL);
    assert!(last_error().contains("out_gpu_us"), "{}", last_error());
    assert_eq!(read_u32(gpu, word), 8);
    rl_pm4_ib_free(ib);
    rl_module_free(module);
    rl_gpu_free(gpu);
}

#[test]
fn lanes_take_a_queue_policy_and_report_their_span() {
    let gpu = open_sim();
    let module = load(gpu, "counter");
    let words = [counter_word(gpu), counter_word(gpu)];
    let builders: Vec<_> = words
        .iter()
        .map(|&w| counter_builder(gpu, module, &counter_kernarg(module, w), 3))
        .collect();
    let mut multi = null_mut();
    let opts = finalize_opts(RL_PROFILE_SPAN, RlQueuePolicy::RlQueueTwo as u32);
    // SAFETY: two live builders, live options, writable out.
    let rc =
        unsafe { rl_pm4_finalize_ex(gpu, builders.as_ptr(), 2, &opts, null_mut(), &mut multi) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    let mut gpu_us = -1.0;
    let profiled = replay_opts(RL_REPLAY_PROFILED);
    // SAFETY: live options and a writable double.
    let rc = unsafe { rl_pm4_replay_ex(null_mut(), multi, &profiled, &mut gpu_us) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    assert!(gpu_us > 0.0);
    assert_eq!(rl_pm4_replay_multi(multi), RL_OK);
    for w in words {
        assert_eq!(read_u32(gpu, w), 6);
    }
    // Async is for single IBs.
    let asynchronous = replay_opts(RL_REPLAY_ASYNC);
    // SAFETY: live options.
    let rc = unsafe { rl_pm4_replay_ex(null_mut(), multi, &asynchronous, null_mut()) };
    assert_eq!(rc, RL_ERR_RECORD);
    rl_pm4_multi_ib_free(multi);
    rl_module_free(module);
    rl_gpu_free(gpu);
}

/// Options are versioned by size; every refusal still consumes the
/// builders and names what was wrong.
#[test]
fn options_are_versioned_and_refusals_consume_the_builders() {
    let gpu = open_sim();
    let module = load(gpu, "counter");
    let word = counter_word(gpu);
    let kernarg = counter_kernarg(module, word);
    let finalize = |opts: *const RlPm4FinalizeOptions, one: bool, lanes: bool| {
        let builder = counter_builder(gpu, module, &kernarg, 1);
        let (mut ib, mut multi) = (null_mut(), null_mut());
        let out_ib = if one { &mut ib as *mut _ } else { null_mut() };
        let out_multi = if lanes {
            &mut multi as *mut _
        } else {
            null_mut()
        };
        // SAFETY: a live builder; options live or NULL (each case's size is
        // what it declares); outs writable or NULL.
        let rc = unsafe { rl_pm4_finalize_ex(gpu, &builder, 1, opts, out_ib, out_multi) };
        let message = last_error();
        // Consumed whatever happened.
        // SAFETY: both NULL is the generic boundary; the handle is checked.
        let live = unsafe { rl_pm4_wait_rmw(builder, std::ptr::null(), std::ptr::null()) };
        assert_ne!(live, RL_OK);
        rl_pm4_ib_free(ib);
        rl_pm4_multi_ib_free(multi);
        (rc, message)
    };
    let mut small = finalize_opts(0, 0);
    small.struct_size = 8;
    let (rc, err) = finalize(&small, true, false);
    assert_eq!(rc, RL_ERR_RECORD);
    assert!(err.contains("struct_size is 8"), "{err}");
    // A newer caller's struct: accepted when its extra field is zero.
    #[repr(C)]
    struct Newer {
        v1: RlPm4FinalizeOptions,
        extra: u64,
    }
    let mut newer = Newer {
        v1: finalize_opts(0, 0),
        extra: 0,
    };
    newer.v1.struct_size = std::mem::size_of::<Newer>();
    let (rc, err) = finalize((&newer as *const Newer).cast(), true, false);
    assert_eq!(rc, RL_OK, "{err}");
    newer.extra = 1;
    let (rc, err) = finalize((&newer as *const Newer).cast(), true, false);
    assert_eq!(rc, RL_ERR_RECORD);
    assert!(err.contains("does not know"), "{err}");
    let (rc, err) = finalize(&finalize_opts(7, 0), true, false);
    assert_eq!(rc, RL_ERR_RECORD);
    assert!(err.contains("profiling 7"), "{err}");
    let (rc, err) = finalize(&finalize_opts(0, 2), true, false);
    assert_eq!(rc, RL_ERR_RECORD, "{err}");
    let (rc, _) = finalize(std::ptr::null(), true, true);
    assert_eq!(rc, RL_ERR_RECORD);
    let (rc, _) = finalize(std::ptr::null(), false, false);
    assert_eq!(rc, RL_ERR_NULL);
    // One builder as lanes is fine.
    let (rc, err) = finalize(std::ptr::null(), false, true);
    assert_eq!(rc, RL_OK, "{err}");
    // Replay flags.
    let builder = counter_builder(gpu, module, &kernarg, 1);
    let mut ib = null_mut();
    // SAFETY: a live builder and a writable out.
    let rc = unsafe { rl_pm4_finalize_ex(gpu, &builder, 1, std::ptr::null(), &mut ib, null_mut()) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    for (flags, what) in [
        (
            RL_REPLAY_ASYNC | RL_REPLAY_PROFILED,
            "RL_REPLAY_ASYNC with RL_REPLAY_PROFILED",
        ),
        (0x10, "0x10"),
    ] {
        let mut gpu_us = 0.0;
        // SAFETY: live options and a writable double.
        let rc = unsafe { rl_pm4_replay_ex(ib, null_mut(), &replay_opts(flags), &mut gpu_us) };
        assert_eq!(rc, RL_ERR_RECORD);
        assert!(last_error().contains(what), "{}", last_error());
    }
    // SAFETY: no output for a plain replay.
    let rc = unsafe { rl_pm4_replay_ex(null_mut(), null_mut(), std::ptr::null(), null_mut()) };
    assert_eq!(rc, RL_ERR_NULL);
    assert_eq!(read_u32(gpu, word), 0, "nothing replayed");
    rl_pm4_ib_free(ib);
    rl_module_free(module);
    rl_gpu_free(gpu);
}
