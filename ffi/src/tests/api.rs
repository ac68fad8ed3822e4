//! The C API's behaviour on the simulated device, called from Rust:
//! lifetimes across frees, async replays, memory helpers, argument
//! validation, graphs with module kernels, and the sim accessors'
//! refusal outside a callback.

use std::ptr::{null, null_mut};

use super::{counter_builder, counter_kernarg, cstr, fixture, last_error, load, open_sim};
use crate::*;

fn alloc(gpu: *mut RlGpu, bytes: usize) -> u64 {
    let mut addr = 0;
    // SAFETY: addr is writable.
    let rc = unsafe { rl_gpu_alloc(gpu, bytes, 1, &mut addr) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    addr
}

fn read_u32(gpu: *mut RlGpu, addr: u64) -> u32 {
    let mut v = 0u32;
    // SAFETY: v is 4 writable bytes.
    let rc = unsafe { rl_gpu_read(gpu, addr, (&mut v as *mut u32).cast(), 4) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    v
}

fn finalize(gpu: *mut RlGpu, b: *mut RlPm4Builder) -> *mut RlPm4Ib {
    let mut ib = null_mut();
    // SAFETY: ib is writable.
    let rc = unsafe { rl_pm4_finalize(gpu, b, &mut ib) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    ib
}

#[test]
fn freeing_the_gpu_and_module_first_keeps_the_ib_working() {
    let gpu = open_sim();
    let module = load(gpu, "counter");
    let counter = alloc(gpu, 4);
    let kernarg = counter_kernarg(module, counter);
    let ib = finalize(gpu, counter_builder(gpu, module, &kernarg, 3));
    assert_eq!(rl_pm4_ib_dispatch_count(ib), 3);
    assert!(rl_pm4_ib_dwords(ib) > 0);
    rl_module_free(module);
    rl_gpu_free(gpu);
    // The counter memory lives on with the IB: a freed allocation would be
    // a VM fault on the simulated device (RL_ERR_REPLAY).
    assert_eq!(rl_pm4_replay(ib), RL_OK, "{}", last_error());
    assert_eq!(rl_pm4_replay(ib), RL_OK, "{}", last_error());
    rl_pm4_ib_free(ib);
}

/// `hsa_executable_destroy` frees code at once: freeing the IB and then its
/// module while a replay runs must not pull the code from under it (the
/// modules are kept until the replay settled).
#[test]
fn freeing_the_ib_then_the_module_with_a_replay_in_flight_is_safe() {
    let gpu = open_sim();
    let module = load(gpu, "counter");
    let counter = alloc(gpu, 4);
    let kernarg = counter_kernarg(module, counter);
    let n = 3000;
    let ib = finalize(gpu, counter_builder(gpu, module, &kernarg, n));
    assert_eq!(rl_pm4_replay_async(ib), RL_OK, "{}", last_error());
    rl_pm4_ib_free(ib);
    rl_module_free(module);
    let at_free = read_u32(gpu, counter);
    let start = std::time::Instant::now();
    while read_u32(gpu, counter) < n as u32 && start.elapsed() < std::time::Duration::from_secs(30)
    {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    println!("counter at the frees: {at_free} of {n}");
    assert_eq!(
        read_u32(gpu, counter),
        n as u32,
        "the replay ran to the end"
    );
    // The GPU is still usable afterwards.
    let module = load(gpu, "counter");
    let ib = finalize(gpu, counter_builder(gpu, module, &kernarg, 1));
    assert_eq!(rl_pm4_replay(ib), RL_OK, "{}", last_error());
    assert_eq!(read_u32(gpu, counter), n as u32 + 1);
    rl_pm4_ib_free(ib);
    rl_module_free(module);
    rl_gpu_free(gpu);
}

#[test]
fn async_replays_and_patches_keep_their_order() {
    let gpu = open_sim();
    let module = load(gpu, "counter");
    let (first, second) = (alloc(gpu, 4), alloc(gpu, 4));
    let ib = finalize(
        gpu,
        counter_builder(gpu, module, &counter_kernarg(module, first), 2),
    );
    assert_eq!(rl_pm4_replay_async(ib), RL_OK, "{}", last_error());
    assert_eq!(rl_pm4_replay_async(ib), RL_OK, "{}", last_error());
    // Redirect both dispatches; applied after the two replays above.
    for d in 0..2 {
        // SAFETY: 8 readable bytes.
        let rc = unsafe { rl_pm4_ib_set_kernargs(ib, d, 0, second.to_le_bytes().as_ptr(), 8) };
        assert_eq!(rc, RL_OK, "{}", last_error());
    }
    assert_eq!(rl_pm4_replay_async(ib), RL_OK);
    assert_eq!(rl_pm4_wait(ib), RL_OK, "{}", last_error());
    assert_eq!(rl_pm4_wait(ib), RL_OK, "nothing pending is fine");
    assert_eq!(read_u32(gpu, first), 4);
    assert_eq!(read_u32(gpu, second), 2);
    // SAFETY: 4 readable bytes.
    let rc = unsafe { rl_pm4_ib_set_kernargs(ib, 2, 0, [0u8; 4].as_ptr(), 4) };
    assert_eq!(rc, RL_ERR_HANDLE, "dispatch 2 does not exist");
    rl_pm4_ib_free(ib);
    rl_module_free(module);
    rl_gpu_free(gpu);
}

#[test]
fn memory_helpers_check_every_address() {
    let gpu = open_sim();
    let addr = alloc(gpu, 16);
    let data = [1u8, 2, 3, 4, 5, 6, 7, 8];
    // SAFETY: data is 8 readable bytes.
    assert_eq!(
        unsafe { rl_gpu_write(gpu, addr + 8, data.as_ptr().cast(), 8) },
        RL_OK
    );
    let mut back = [0u8; 16];
    // SAFETY: back is 16 writable bytes.
    assert_eq!(
        unsafe { rl_gpu_read(gpu, addr, back.as_mut_ptr().cast(), 16) },
        RL_OK
    );
    assert_eq!(&back[..8], &[0; 8], "zero-filled");
    assert_eq!(&back[8..], &data);
    // SAFETY: back is 16 writable bytes.
    let rc = unsafe { rl_gpu_read(gpu, addr + 8, back.as_mut_ptr().cast(), 16) };
    assert_eq!(rc, RL_ERR_HANDLE, "runs past the end");
    assert!(
        last_error().contains("not inside memory allocated"),
        "{}",
        last_error()
    );
    let mut out = 0;
    // SAFETY: out is writable.
    assert_eq!(unsafe { rl_gpu_alloc(gpu, 16, 2, &mut out) }, RL_ERR_RECORD);
    assert!(
        last_error().contains("memory kind 2 is unknown"),
        "{}",
        last_error()
    );
    // SAFETY: out is writable.
    assert_eq!(unsafe { rl_gpu_alloc(gpu, 0, 1, &mut out) }, RL_ERR_RECORD);
    // SAFETY: out is writable.
    let huge = unsafe { rl_gpu_alloc(gpu, 1 << 50, 0, &mut out) };
    assert!(huge < 0, "a 1 PiB allocation is refused: {huge}");
    // SAFETY: NULL out is refused before anything is allocated.
    assert_eq!(unsafe { rl_gpu_alloc(gpu, 16, 1, null_mut()) }, RL_ERR_NULL);
    assert_eq!(
        rl_gpu_free_mem(gpu, addr + 4),
        RL_ERR_HANDLE,
        "inside, not the start"
    );
    assert_eq!(rl_gpu_free_mem(gpu, addr), RL_OK);
    assert_eq!(rl_gpu_free_mem(gpu, addr), RL_ERR_HANDLE, "double free");
    assert!(last_error().contains("already freed"), "{}", last_error());
    rl_gpu_free(gpu);
}

#[test]
fn describe_fits_or_says_how_much_it_needs() {
    let gpu = open_sim();
    let mut buf = [0u8; 256];
    // SAFETY: buf is 256 writable bytes.
    assert_eq!(
        unsafe { rl_gpu_describe(gpu, buf.as_mut_ptr().cast(), 256) },
        RL_OK
    );
    let line = std::ffi::CStr::from_bytes_until_nul(&buf)
        .unwrap()
        .to_str()
        .unwrap();
    assert!(line.starts_with("gfx1201 sim:gfx1201"), "{line}");
    assert!(rl_gpu_simulated(gpu), "a sim: device says it is simulated");
    let mut small = [0xFFu8; 8];
    // SAFETY: small is 8 writable bytes.
    assert_eq!(
        unsafe { rl_gpu_describe(gpu, small.as_mut_ptr().cast(), 8) },
        RL_ERR_RECORD
    );
    assert_eq!(&small, b"gfx1201\0");
    assert!(last_error().contains("needs"), "{}", last_error());
    // SAFETY: NULL buffer is refused.
    assert_eq!(unsafe { rl_gpu_describe(gpu, null_mut(), 0) }, RL_ERR_NULL);
    rl_gpu_free(gpu);
}

#[test]
fn opening_refuses_bad_selectors_with_their_reason() {
    let bad_utf8 = [0xC3u8, 0x28, 0];
    // SAFETY: NUL-terminated bytes.
    assert!(unsafe { rl_gpu_open(bad_utf8.as_ptr().cast()) }.is_null());
    assert!(last_error().contains("not valid UTF-8"), "{}", last_error());
    // SAFETY: a NUL-terminated selector.
    assert!(unsafe { rl_gpu_open(cstr("gfx1201").as_ptr()) }.is_null());
    assert!(
        last_error().starts_with("rl_gpu_open: "),
        "{}",
        last_error()
    );
    // SAFETY: NULL is refused.
    assert!(unsafe { rl_gpu_open(null()) }.is_null());
    assert_eq!(last_error(), "rl_gpu_open: selector is NULL");
    assert!(rl_gpu_new(-1).is_null());
    assert!(last_error().contains("negative"), "{}", last_error());
    assert_eq!(rl_abi_version(), 1);
}

#[test]
fn modules_report_sizes_and_refuse_what_they_lack() {
    let gpu = open_sim();
    let module = load(gpu, "add_scalar");
    // SAFETY: NUL-terminated symbols.
    unsafe {
        assert_eq!(
            rl_module_kernarg_size(module, cstr("add_scalar.kd").as_ptr()),
            272
        );
        assert_eq!(rl_module_kernarg_size(module, cstr("nope").as_ptr()), -1);
    }
    assert!(
        last_error().contains("it has: add_scalar"),
        "{}",
        last_error()
    );
    let code = fixture("counter");
    let mut out = null_mut();
    // SAFETY: live buffers.
    let rc = unsafe {
        rl_gpu_load_module_certified(gpu, code.as_ptr(), code.len(), b"{}".as_ptr(), 2, &mut out)
    };
    assert_eq!(rc, RL_ERR_CERTIFICATION);
    assert!(out.is_null());
    // SAFETY: garbage bytes are refused as a code object.
    let rc = unsafe { rl_gpu_load_module(gpu, b"garbage".as_ptr(), 7, &mut out) };
    assert_eq!(rc, RL_ERR_RECORD, "{}", last_error());
    let mut small = [0u8; 16];
    // SAFETY: live buffers sized as passed.
    let rc = unsafe {
        rl_module_pack_kernargs(
            module,
            cstr("add_scalar").as_ptr(),
            null(),
            0,
            64,
            1,
            1,
            32,
            1,
            1,
            0,
            small.as_mut_ptr(),
            16,
            null_mut(),
        )
    };
    assert_eq!(rc, RL_ERR_RECORD);
    assert!(last_error().contains("needs 272"), "{}", last_error());
    rl_module_free(module);
    rl_gpu_free(gpu);
}

#[test]
fn finalize_always_consumes_the_builder() {
    let gpu = open_sim();
    let empty = rl_pm4_builder_new(gpu);
    let mut ib = null_mut();
    // SAFETY: ib is writable.
    assert_eq!(
        unsafe { rl_pm4_finalize(gpu, empty, &mut ib) },
        RL_ERR_COMPILE
    );
    assert_eq!(live(empty), RL_ERR_HANDLE, "consumed on failure too");
    let b = rl_pm4_builder_new(gpu);
    // SAFETY: a NULL out pointer is refused after consuming.
    assert_eq!(unsafe { rl_pm4_finalize(gpu, b, null_mut()) }, RL_ERR_NULL);
    assert_eq!(live(b), RL_ERR_HANDLE);
    let b = rl_pm4_builder_new(gpu);
    let module = load(gpu, "counter");
    // SAFETY: one NULL of the pair is refused.
    assert_eq!(unsafe { rl_pm4_wait_rmw(b, module, null()) }, RL_ERR_NULL);
    // SAFETY: both NULL is the generic boundary.
    assert_eq!(unsafe { rl_pm4_wait_rmw(b, null(), null()) }, RL_OK);
    let builders = [b, null_mut()];
    let mut multi = null_mut();
    // SAFETY: two readable handles; multi is writable.
    let rc = unsafe { rl_pm4_finalize_multi(gpu, builders.as_ptr(), 2, &mut multi) };
    assert_eq!(rc, RL_ERR_NULL);
    assert!(last_error().contains("builders[1]"), "{}", last_error());
    assert_eq!(live(b), RL_ERR_HANDLE, "valid builders are consumed");
    rl_module_free(module);
    rl_gpu_free(gpu);
}

#[test]
fn queue_policies_are_validated() {
    let gpu = open_sim();
    assert_eq!(
        rl_gpu_pm4_queue_count(gpu, RlQueuePolicyArg(RlQueuePolicy::RlQueueAuto as u32), 4),
        2
    );
    assert_eq!(
        rl_gpu_pm4_queue_count(gpu, RlQueuePolicyArg(RlQueuePolicy::RlQueueOne as u32), 4),
        1
    );
    assert_eq!(
        rl_gpu_pm4_queue_count(gpu, RlQueuePolicyArg(RlQueuePolicy::RlQueueFour as u32), 2),
        2
    );
    assert_eq!(rl_gpu_pm4_queue_count(gpu, RlQueuePolicyArg(5), 4), 0);
    assert!(last_error().contains("RlQueueAuto = 0"), "{}", last_error());
    assert!(rl_graph_new_tuned(2, RlModeArg(3), 1).is_null());
    assert!(
        last_error().contains("graph mode 3 is unknown"),
        "{}",
        last_error()
    );
    rl_gpu_free(gpu);
}

#[test]
fn sim_accessors_refuse_a_workgroup_outside_its_callback() {
    let mut id = [7u32; 3];
    let fake = 0x1000usize as *mut RlSimWorkgroup;
    // SAFETY: id is 3 writable u32s; the fake pointer is never dereferenced.
    unsafe { rl_sim_workgroup_id(fake, id.as_mut_ptr()) };
    assert_eq!(id, [7; 3], "nothing written");
    assert!(
        last_error().contains("not the current kernel callback"),
        "{}",
        last_error()
    );
    let mut v = 0u32;
    // SAFETY: as above.
    let rc = unsafe { rl_sim_load(fake, 0, (&mut v as *mut u32).cast(), 4) };
    assert_eq!(rc, RL_ERR_HANDLE);
    // SAFETY: NULL workgroup.
    assert!(unsafe { rl_sim_kernarg(null_mut(), null_mut()) }.is_null());
    assert_eq!(last_error(), "rl_sim_kernarg: wg is NULL");
    // SAFETY: a NULL callback is refused.
    assert_eq!(
        unsafe { rl_sim_register_kernel(cstr("k").as_ptr(), None, null_mut()) },
        RL_ERR_NULL
    );
}

#[test]
fn racing_replays_patches_and_a_free_never_touch_freed_objects() {
    let gpu = open_sim();
    let module = load(gpu, "counter");
    let counter = alloc(gpu, 4);
    let ib = finalize(
        gpu,
        counter_builder(gpu, module, &counter_kernarg(module, counter), 2),
    );
    let handle = ib as usize;
    let workers: Vec<_> = (0..3)
        .map(|t| {
            std::thread::spawn(move || {
                let ib = handle as *mut RlPm4Ib;
                let mut ok = 0;
                for i in 0..20 {
                    let rc = if (i + t) % 2 == 0 {
                        rl_pm4_replay(ib)
                    } else {
                        // SAFETY: 8 readable bytes.
                        unsafe {
                            rl_pm4_ib_set_kernargs(ib, 1, 0, counter.to_le_bytes().as_ptr(), 8)
                        }
                    };
                    match rc {
                        RL_OK => ok += 1,
                        RL_ERR_HANDLE => {
                            assert!(last_error().contains("stale"), "{}", last_error())
                        }
                        other => panic!("unexpected {other}: {}", last_error()),
                    }
                }
                ok
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(5));
    rl_pm4_ib_free(ib);
    let done: i32 = workers.into_iter().map(|w| w.join().unwrap()).sum();
    assert!(done <= 60);
    assert_eq!(rl_pm4_replay(ib), RL_ERR_HANDLE);
    // Whatever ran counted whole replays: two dispatches each.
    assert_eq!(read_u32(gpu, counter) % 2, 0);
    rl_module_free(module);
    rl_gpu_free(gpu);
}

/// A builder's liveness through a status-returning call (the seed's
/// `rl_pm4_wait_idle` returns nothing).
fn live(b: *mut RlPm4Builder) -> i32 {
    // SAFETY: both NULL is the generic boundary; the handle is checked.
    unsafe { rl_pm4_wait_rmw(b, null(), null()) }
}

/// Issue 30, finding 11: a length past `isize::MAX` once reached
/// `slice::from_raw_parts` (an abort in debug, undefined in release).
#[test]
fn lengths_past_isize_max_are_refused_naming_the_argument() {
    let gpu = open_sim();
    let mut buf = [0u8; 256];
    // SAFETY: buf is 256 writable bytes; the length is refused before use.
    let rc = unsafe { rl_gpu_describe(gpu, buf.as_mut_ptr().cast(), usize::MAX) };
    assert_eq!(rc, RL_ERR_RECORD);
    assert!(last_error().contains("len"), "{}", last_error());
    // A length past the line is fine: only what the line needs is written.
    // SAFETY: the call writes at most the line and its NUL (well under 256).
    let rc = unsafe { rl_gpu_describe(gpu, buf.as_mut_ptr().cast(), isize::MAX as usize) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    let addr = alloc(gpu, 64);
    // SAFETY: refused before the buffer is touched.
    let rc = unsafe { rl_gpu_read(gpu, addr, buf.as_mut_ptr().cast(), usize::MAX) };
    assert_eq!(rc, RL_ERR_RECORD);
    assert!(last_error().contains("len"), "{}", last_error());
    // SAFETY: as above.
    let rc = unsafe { rl_gpu_write(gpu, addr, buf.as_ptr().cast(), usize::MAX) };
    assert_eq!(rc, RL_ERR_RECORD);
    assert!(last_error().contains("len"), "{}", last_error());
    let fake = 0x1000usize as *mut RlSimWorkgroup;
    // SAFETY: refused before the workgroup or the buffer is touched.
    let rc = unsafe { rl_sim_load(fake, 0, buf.as_mut_ptr().cast(), usize::MAX) };
    assert_eq!(rc, RL_ERR_RECORD);
    assert!(last_error().contains("len"), "{}", last_error());
    // SAFETY: as above.
    let rc = unsafe { rl_sim_scalar_load(fake, 0, buf.as_mut_ptr().cast(), usize::MAX) };
    assert_eq!(rc, RL_ERR_RECORD);
    assert!(last_error().contains("len"), "{}", last_error());
    // SAFETY: as above.
    let rc = unsafe { rl_sim_store(fake, 0, buf.as_ptr().cast(), usize::MAX) };
    assert_eq!(rc, RL_ERR_RECORD);
    assert!(last_error().contains("len"), "{}", last_error());
    rl_gpu_free(gpu);
}
