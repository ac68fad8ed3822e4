//! Every entry point that takes a handle, called with NULL, stale (freed)
//! and foreign (another kind's live) handles: each returns its failure
//! value (status, NULL, 0 or -1) and leaves a message naming the function
//! and the problem; nothing crashes and nothing is freed by mistake.

use std::ffi::c_void;
use std::ptr::null_mut;

use super::{counter_builder, counter_kernarg, cstr, last_error, load, open_sim};
use crate::*;

/// One set of handles to pass.
#[derive(Clone, Copy)]
struct H {
    gpu: *mut RlGpu,
    module: *mut RlModule,
    builder: *mut RlPm4Builder,
    ib: *mut RlPm4Ib,
    multi: *mut RlPm4MultiIb,
    graph: *mut RlGraph,
    exec: *mut RlGraphExec,
}

/// What a call returned, normalized: a status, or a failure flag.
enum Got {
    Status(i32),
    /// A value-returning function: true when it returned its failure value.
    Failed(bool),
    /// A `void` function: judged by the last error alone.
    Void,
}

type Call = fn(H) -> Got;

fn sym() -> std::ffi::CString {
    cstr("counter")
}

fn table() -> Vec<(&'static str, Call)> {
    vec![
        ("rl_gpu_describe", |h| {
            let mut buf = [0i8; 64];
            // SAFETY: buf is 64 writable bytes.
            Got::Status(unsafe { rl_gpu_describe(h.gpu, buf.as_mut_ptr().cast(), 64) })
        }),
        ("rl_gpu_simulated", |h| {
            Got::Failed(!rl_gpu_simulated(h.gpu))
        }),
        ("rl_gpu_free", |h| {
            rl_gpu_free(h.gpu);
            Got::Void
        }),
        ("rl_gpu_pm4_queue_count", |h| {
            Got::Failed(rl_gpu_pm4_queue_count(h.gpu, RlQueuePolicyArg(0), 2) == 0)
        }),
        ("rl_gpu_alloc", |h| {
            let mut addr = 0;
            // SAFETY: addr is writable.
            Got::Status(unsafe { rl_gpu_alloc(h.gpu, 64, 1, &mut addr) })
        }),
        ("rl_gpu_free_mem", |h| {
            Got::Status(rl_gpu_free_mem(h.gpu, 0x1000))
        }),
        ("rl_gpu_read", |h| {
            let mut b = [0u8; 4];
            // SAFETY: b is 4 writable bytes.
            Got::Status(unsafe { rl_gpu_read(h.gpu, 0x1000, b.as_mut_ptr().cast(), 4) })
        }),
        ("rl_gpu_write", |h| {
            let b = [0u8; 4];
            // SAFETY: b is 4 readable bytes.
            Got::Status(unsafe { rl_gpu_write(h.gpu, 0x1000, b.as_ptr().cast(), 4) })
        }),
        ("rl_gpu_load_module", |h| {
            let code = super::fixture("counter");
            let mut out = null_mut();
            // SAFETY: live buffer and out pointer.
            let rc = unsafe { rl_gpu_load_module(h.gpu, code.as_ptr(), code.len(), &mut out) };
            assert!(out.is_null(), "no module on failure");
            Got::Status(rc)
        }),
        ("rl_gpu_load_module_certified", |h| {
            let code = super::fixture("counter");
            let mut out = null_mut();
            // SAFETY: live buffers and out pointer.
            Got::Status(unsafe {
                rl_gpu_load_module_certified(
                    h.gpu,
                    code.as_ptr(),
                    code.len(),
                    b"{}".as_ptr(),
                    2,
                    &mut out,
                )
            })
        }),
        ("rl_module_kernarg_size", |h| {
            // SAFETY: a live NUL-terminated symbol.
            Got::Failed(unsafe { rl_module_kernarg_size(h.module, sym().as_ptr()) } == -1)
        }),
        ("rl_module_pack_kernargs", |h| {
            let mut out = [0u8; 512];
            // SAFETY: live buffers sized as passed.
            Got::Status(unsafe {
                rl_module_pack_kernargs(
                    h.module,
                    sym().as_ptr(),
                    [0u8; 8].as_ptr(),
                    8,
                    1,
                    1,
                    1,
                    1,
                    1,
                    1,
                    0,
                    out.as_mut_ptr(),
                    512,
                    null_mut(),
                )
            })
        }),
        ("rl_module_free", |h| {
            rl_module_free(h.module);
            Got::Void
        }),
        ("rl_pm4_builder_new", |h| {
            Got::Failed(rl_pm4_builder_new(h.gpu).is_null())
        }),
        ("rl_pm4_builder_free", |h| {
            rl_pm4_builder_free(h.builder);
            Got::Void
        }),
        ("rl_pm4_dispatch", |h| {
            let k = [0u8; 16];
            // SAFETY: live buffers sized as passed.
            Got::Status(unsafe {
                rl_pm4_dispatch(
                    h.builder,
                    h.module,
                    sym().as_ptr(),
                    1,
                    1,
                    1,
                    1,
                    1,
                    1,
                    0,
                    k.as_ptr(),
                    16,
                )
            })
        }),
        ("rl_pm4_wait_rmw", |h| {
            // SAFETY: a live symbol.
            Got::Status(unsafe { rl_pm4_wait_rmw(h.builder, h.module, sym().as_ptr()) })
        }),
        ("rl_pm4_wait_idle", |h| {
            rl_pm4_wait_idle(h.builder);
            Got::Void
        }),
        ("rl_pm4_finalize", |h| {
            let mut out = null_mut();
            // SAFETY: out is writable.
            Got::Status(unsafe { rl_pm4_finalize(h.gpu, h.builder, &mut out) })
        }),
        ("rl_pm4_replay", |h| Got::Status(rl_pm4_replay(h.ib))),
        ("rl_pm4_replay_async", |h| {
            Got::Status(rl_pm4_replay_async(h.ib))
        }),
        ("rl_pm4_wait", |h| Got::Status(rl_pm4_wait(h.ib))),
        ("rl_pm4_ib_set_kernargs", |h| {
            // SAFETY: 4 readable bytes.
            Got::Status(unsafe { rl_pm4_ib_set_kernargs(h.ib, 0, 8, [1u8; 4].as_ptr(), 4) })
        }),
        ("rl_pm4_ib_dispatch_count", |h| {
            Got::Failed(rl_pm4_ib_dispatch_count(h.ib) == 0)
        }),
        ("rl_pm4_ib_dwords", |h| {
            Got::Failed(rl_pm4_ib_dwords(h.ib) == 0)
        }),
        ("rl_pm4_ib_free", |h| {
            rl_pm4_ib_free(h.ib);
            Got::Void
        }),
        ("rl_pm4_finalize_multi", |h| {
            let builders = [h.builder];
            let mut out = null_mut();
            // SAFETY: one readable builder handle; out is writable.
            Got::Status(unsafe { rl_pm4_finalize_multi(h.gpu, builders.as_ptr(), 1, &mut out) })
        }),
        ("rl_pm4_replay_multi", |h| {
            Got::Status(rl_pm4_replay_multi(h.multi))
        }),
        ("rl_pm4_multi_ib_set_kernargs", |h| {
            // SAFETY: 4 readable bytes.
            Got::Status(unsafe {
                rl_pm4_multi_ib_set_kernargs(h.multi, 0, 0, 8, [1u8; 4].as_ptr(), 4)
            })
        }),
        ("rl_pm4_multi_ib_lane_count", |h| {
            Got::Failed(rl_pm4_multi_ib_lane_count(h.multi) == 0)
        }),
        ("rl_pm4_multi_ib_queue_count", |h| {
            Got::Failed(rl_pm4_multi_ib_queue_count(h.multi) == 0)
        }),
        ("rl_pm4_multi_ib_dispatch_count", |h| {
            Got::Failed(rl_pm4_multi_ib_dispatch_count(h.multi, 0) == 0)
        }),
        ("rl_pm4_multi_ib_free", |h| {
            rl_pm4_multi_ib_free(h.multi);
            Got::Void
        }),
        ("rl_graph_free", |h| {
            rl_graph_free(h.graph);
            Got::Void
        }),
        ("rl_graph_buffer", |h| {
            let mut out = 0;
            // SAFETY: a live label; out is writable.
            Got::Status(unsafe { rl_graph_buffer(h.graph, cstr("b").as_ptr(), 64, &mut out) })
        }),
        ("rl_graph_kernel", |h| {
            let mut out = 0;
            // SAFETY: a live name; no accesses or deps; out is writable.
            Got::Status(unsafe {
                rl_graph_kernel(
                    h.graph,
                    cstr("k").as_ptr(),
                    1,
                    1,
                    1,
                    1,
                    1,
                    1,
                    std::ptr::null(),
                    0,
                    std::ptr::null(),
                    0,
                    &mut out,
                )
            })
        }),
        ("rl_graph_kernel_ex", |h| {
            let mut out = 0;
            let k = [0u8; 16];
            // SAFETY: live symbol and kernarg; out is writable.
            Got::Status(unsafe {
                rl_graph_kernel_ex(
                    h.graph,
                    h.module,
                    sym().as_ptr(),
                    1,
                    1,
                    1,
                    1,
                    1,
                    1,
                    0,
                    k.as_ptr(),
                    16,
                    std::ptr::null(),
                    0,
                    std::ptr::null(),
                    0,
                    &mut out,
                )
            })
        }),
        ("rl_graph_add_dependency", |h| {
            Got::Status(rl_graph_add_dependency(h.graph, 0, 1))
        }),
        ("rl_graph_instantiate", |h| {
            let mut out = null_mut();
            // SAFETY: out is writable.
            Got::Status(unsafe { rl_graph_instantiate(h.graph, &mut out) })
        }),
        ("rl_graph_instantiate_ex", |h| {
            let mut out = null_mut();
            // SAFETY: out is writable.
            Got::Status(unsafe { rl_graph_instantiate_ex(h.graph, RL_SUBMISSION_AQL, &mut out) })
        }),
        ("rl_graphexec_lane_count", |h| {
            Got::Failed(rl_graphexec_lane_count(h.exec) == 0)
        }),
        ("rl_graphexec_lane_submission", |h| {
            Got::Status(rl_graphexec_lane_submission(h.exec, 0))
        }),
        ("rl_graphexec_lane_reason", |h| {
            let mut buf = [0u8; 16];
            // SAFETY: 16 writable bytes.
            Got::Status(unsafe {
                rl_graphexec_lane_reason(h.exec, 0, buf.as_mut_ptr().cast(), buf.len())
            })
        }),
        ("rl_graphexec_fingerprint", |h| {
            let mut fp = [0u8; 32];
            // SAFETY: 32 writable bytes.
            Got::Status(unsafe { rl_graphexec_fingerprint(h.exec, fp.as_mut_ptr()) })
        }),
        ("rl_graphexec_launch_mock", |h| {
            Got::Status(rl_graphexec_launch_mock(h.exec))
        }),
        ("rl_graphexec_launch", |h| {
            Got::Status(rl_graphexec_launch(h.gpu, h.exec))
        }),
        ("rl_graphexec_set_node_kernargs", |h| {
            // SAFETY: 4 readable bytes.
            Got::Status(unsafe { rl_graphexec_set_node_kernargs(h.exec, 0, [1u8; 4].as_ptr(), 4) })
        }),
        ("rl_graphexec_set_node_kernargs_at", |h| {
            // SAFETY: 4 readable bytes.
            Got::Status(unsafe {
                rl_graphexec_set_node_kernargs_at(h.exec, 0, 0, [1u8; 4].as_ptr(), 4)
            })
        }),
        ("rl_graphexec_free", |h| {
            rl_graphexec_free(h.exec);
            Got::Void
        }),
    ]
}

/// Live handles of every kind (the objects are real).
fn live() -> H {
    let gpu = open_sim();
    let module = load(gpu, "counter");
    let mut counter = 0;
    // SAFETY: counter is writable.
    assert_eq!(unsafe { rl_gpu_alloc(gpu, 4, 1, &mut counter) }, RL_OK);
    let kernarg = counter_kernarg(module, counter);
    let mut ib = null_mut();
    // SAFETY: out is writable.
    let rc = unsafe { rl_pm4_finalize(gpu, counter_builder(gpu, module, &kernarg, 1), &mut ib) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    let lanes = [counter_builder(gpu, module, &kernarg, 1)];
    let mut multi = null_mut();
    // SAFETY: one readable builder; out is writable.
    let rc = unsafe { rl_pm4_finalize_multi(gpu, lanes.as_ptr(), 1, &mut multi) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    let graph = rl_graph_new();
    let mut node = 0;
    // SAFETY: a live name and out pointer.
    let rc = unsafe {
        rl_graph_kernel(
            graph,
            cstr("k").as_ptr(),
            1,
            1,
            1,
            1,
            1,
            1,
            std::ptr::null(),
            0,
            std::ptr::null(),
            0,
            &mut node,
        )
    };
    assert_eq!(rc, RL_OK, "{}", last_error());
    let mut exec = null_mut();
    // SAFETY: out is writable.
    assert_eq!(unsafe { rl_graph_instantiate(graph, &mut exec) }, RL_OK);
    let builder = counter_builder(gpu, module, &kernarg, 1);
    H {
        gpu,
        module,
        builder,
        ib,
        multi,
        graph,
        exec,
    }
}

fn free_all(h: H) {
    rl_graphexec_free(h.exec);
    rl_graph_free(h.graph);
    rl_pm4_multi_ib_free(h.multi);
    rl_pm4_ib_free(h.ib);
    rl_pm4_builder_free(h.builder);
    rl_module_free(h.module);
    rl_gpu_free(h.gpu);
}

/// Runs the table with `h`; `expect` is the status and message fragment.
fn check_all(h: H, case: &str, code: i32, fragment: &str) {
    for (name, call) in table() {
        let before = format!("(before {name} in {case})");
        crate::status::status("rl_marker", || {
            Err(facade::Error::new(
                facade::ErrorClass::Record,
                before.clone(),
            ))
        });
        let got = call(h);
        let message = last_error();
        match got {
            Got::Status(rc) => assert_eq!(rc, code, "{case}: {name} returned {rc}: {message}"),
            Got::Failed(failed) => assert!(failed, "{case}: {name} did not fail: {message}"),
            // rl_pm4_wait_idle returns void (as in the seed) but, unlike a
            // free, records why it did nothing.
            Got::Void if case == "NULL" && name != "rl_pm4_wait_idle" => {
                // Freeing NULL is a no-op; the accessors that return void
                // are covered by the sim tests.
                assert!(
                    message.contains("rl_marker"),
                    "{case}: {name} recorded {message}"
                );
                continue;
            }
            Got::Void => {}
        }
        assert!(
            message.starts_with(&format!("{name}: ")),
            "{case}: {name}: {message}"
        );
        assert!(message.contains(fragment), "{case}: {name}: {message}");
    }
}

#[test]
fn null_handles_are_refused_by_every_function() {
    let null = H {
        gpu: null_mut(),
        module: null_mut(),
        builder: null_mut(),
        ib: null_mut(),
        multi: null_mut(),
        graph: null_mut(),
        exec: null_mut(),
    };
    check_all(null, "NULL", RL_ERR_NULL, "handle is NULL");
}

#[test]
fn stale_handles_are_refused_by_every_function() {
    let h = live();
    free_all(h);
    check_all(h, "stale", RL_ERR_HANDLE, "stale");
}

#[test]
fn foreign_handles_are_refused_and_free_nothing() {
    let h = live();
    let foreign = H {
        gpu: h.graph.cast(),
        module: h.gpu.cast(),
        builder: h.ib.cast(),
        ib: h.builder.cast(),
        multi: h.exec.cast(),
        graph: h.module.cast(),
        exec: h.multi.cast(),
    };
    check_all(
        foreign,
        "foreign",
        RL_ERR_HANDLE,
        "handle was passed where an",
    );
    // Every real object is still alive and usable.
    assert_eq!(rl_pm4_replay(h.ib), RL_OK, "{}", last_error());
    assert_eq!(rl_pm4_replay_multi(h.multi), RL_OK, "{}", last_error());
    assert_eq!(rl_graphexec_launch_mock(h.exec), RL_OK, "{}", last_error());
    // SAFETY: both NULL is the generic boundary.
    let rc = unsafe { rl_pm4_wait_rmw(h.builder, std::ptr::null(), std::ptr::null()) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    free_all(h);
}

#[test]
fn garbage_pointers_are_not_dereferenced() {
    // A real address (so dereferencing it would not crash), aligned so its
    // low byte is 0: an arbitrary stack address can carry a handle's tag
    // and kind bits by chance and be reported as the wrong kind instead.
    #[repr(align(256))]
    struct Aligned(#[allow(dead_code)] u64);
    let mut x = Aligned(0);
    let garbage: *mut c_void = (&mut x as *mut Aligned).cast();
    assert_eq!(rl_pm4_replay(garbage.cast()), RL_ERR_HANDLE);
    assert!(
        last_error().contains("is not a relaunch handle"),
        "{}",
        last_error()
    );
    let zero_generation = 0xB7usize as *const RlGraphExec;
    assert_eq!(rl_graphexec_launch_mock(zero_generation), RL_ERR_HANDLE);
    assert!(
        last_error().contains("is not a relaunch handle"),
        "{}",
        last_error()
    );
    let never_issued = ((1usize << 32) | (0xFF_FFFF << 8) | 0xB7) as *const RlGraphExec;
    assert_eq!(rl_graphexec_launch_mock(never_issued), RL_ERR_HANDLE);
    assert!(
        last_error().contains("stale RlGraphExec"),
        "{}",
        last_error()
    );
}

proptest::proptest! {
    /// Any bit pattern passed as a handle is refused, never dereferenced.
    #[test]
    fn random_handle_values_are_refused(raw in proptest::prelude::any::<usize>()) {
        let rc = rl_pm4_replay(raw as *mut RlPm4Ib);
        let expected = if raw == 0 { RL_ERR_NULL } else { RL_ERR_HANDLE };
        proptest::prop_assert_eq!(rc, expected, "{}", last_error());
        proptest::prop_assert_eq!(rl_graphexec_lane_count(raw as *const RlGraphExec), 0);
        rl_module_free(raw as *mut RlModule);
    }
}
