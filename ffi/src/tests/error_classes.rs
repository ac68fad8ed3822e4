//! Which call returns which class for the reference guide's troubleshooting
//! rows (#31.5): a kernel the PM4 path refuses ("PM4 compilation rejects
//! the kernel") is `RL_ERR_COMPILE` wherever it is met (`rl_pm4_dispatch`,
//! `rl_pm4_wait_rmw`, `rl_graph_kernel_ex`), with the reason; a symbol the
//! module lacks ("Module or symbol lookup fails") and a kernarg block of
//! the wrong size ("Kernarg recording fails") stay `RL_ERR_RECORD`.

use std::ptr::null;

use super::{cstr, last_error, load, open_sim};
use crate::*;

/// `rl_pm4_dispatch` of `symbol` (1 work-item) with `kernarg`.
fn dispatch(
    builder: *mut RlPm4Builder,
    module: *mut RlModule,
    symbol: &str,
    kernarg: &[u8],
) -> i32 {
    let sym = cstr(symbol);
    // SAFETY: live handles, a NUL-terminated symbol and a live buffer.
    unsafe {
        rl_pm4_dispatch(
            builder,
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
        )
    }
}

/// `rl_graph_kernel_ex` of `symbol` (1 work-item, no accesses) with `kernarg`.
fn graph_kernel(module: *mut RlModule, symbol: &str, kernarg: &[u8]) -> i32 {
    let graph = rl_graph_new();
    let sym = cstr(symbol);
    let mut node = 0;
    // SAFETY: live handles and buffers; no accesses or deps.
    let rc = unsafe {
        rl_graph_kernel_ex(
            graph,
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
            null(),
            0,
            null(),
            0,
            &mut node,
        )
    };
    rl_graph_free(graph);
    rc
}

#[test]
fn a_kernel_the_pm4_path_refuses_is_a_compile_error_at_every_pm4_call() {
    let gpu = open_sim();
    for (fixture, why) in [
        ("scratch_huge", "scratch"),
        ("uses_printf", "hidden_printf_buffer"),
    ] {
        let module = load(gpu, fixture);
        let sym = cstr(fixture);
        // SAFETY: a live module and a NUL-terminated symbol.
        let size = unsafe { rl_module_kernarg_size(module, sym.as_ptr()) };
        assert!(size > 0, "{fixture}: {}", last_error());
        let kernarg = vec![0u8; size as usize];
        let builder = rl_pm4_builder_new(gpu);
        let expect_compile = |call: &str, rc: i32| {
            let message = last_error();
            assert_eq!(rc, RL_ERR_COMPILE, "{fixture}: {call}: {message}");
            assert!(
                message.starts_with(&format!("{call}: "))
                    && message.contains(fixture)
                    && message.contains(why),
                "{fixture}: {call}: {message}"
            );
        };
        expect_compile(
            "rl_pm4_dispatch",
            dispatch(builder, module, fixture, &kernarg),
        );
        // SAFETY: live handles and a NUL-terminated symbol.
        let rc = unsafe { rl_pm4_wait_rmw(builder, module, sym.as_ptr()) };
        expect_compile("rl_pm4_wait_rmw", rc);
        // A graph records it: the PM4 path's refusal is met at
        // instantiate, where the lane runs as public AQL or, when neither
        // path can run the kernel (printf), is refused (issue 31.1).
        let rc = graph_kernel(module, fixture, &kernarg);
        assert_eq!(rc, 0, "{fixture}: {}", last_error());
        rl_pm4_builder_free(builder);
        rl_module_free(module);
    }
    rl_gpu_free(gpu);
}

#[test]
fn lookup_and_kernarg_mistakes_stay_record_errors() {
    let gpu = open_sim();
    let module = load(gpu, "counter");
    let builder = rl_pm4_builder_new(gpu);
    let rc = dispatch(builder, module, "nope", &[0; 8]);
    assert_eq!(rc, RL_ERR_RECORD, "{}", last_error());
    assert!(last_error().contains("it has: counter"), "{}", last_error());
    let rc = dispatch(builder, module, "counter", &[0; 3]);
    assert_eq!(rc, RL_ERR_RECORD, "{}", last_error());
    assert_eq!(
        graph_kernel(module, "nope", &[0; 8]),
        RL_ERR_RECORD,
        "{}",
        last_error()
    );
    // The accepted kernel still records after the refusals.
    assert_eq!(
        dispatch(builder, module, "counter", &[0; 8]),
        RL_OK,
        "{}",
        last_error()
    );
    rl_pm4_builder_free(builder);
    rl_module_free(module);
    rl_gpu_free(gpu);
}
