//! The committed header `include/relaunch.h` is what cbindgen generates
//! from the sources now; a stale header fails here. `RELAUNCH_BLESS=1`
//! rewrites it.

use std::path::Path;

#[test]
fn committed_header_matches_the_sources() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("ffi/cbindgen.toml parses");
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("the header is UTF-8");
    let path = crate_dir.join("include/relaunch.h");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if generated == committed {
        return;
    }
    if std::env::var_os("RELAUNCH_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write include/relaunch.h");
        return;
    }
    let first = generated
        .lines()
        .zip(committed.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| generated.lines().count().min(committed.lines().count()));
    panic!(
        "ffi/include/relaunch.h is stale (first difference at line {}); regenerate it with \
         RELAUNCH_BLESS=1 cargo test -p relaunch-capi --test header",
        first + 1
    );
}

#[test]
fn every_api_function_is_declared() {
    let header = include_str!("../include/relaunch.h");
    for name in [
        "rl_last_error",
        "rl_abi_version",
        "rl_gpu_open",
        "rl_gpu_new",
        "rl_gpu_describe",
        "rl_gpu_free",
        "rl_gpu_load_module",
        "rl_gpu_load_module_certified",
        "rl_gpu_load_module_radiowave",
        "rl_module_radiowave_certified",
        "rl_module_scheduler_profile",
        "rl_module_wavefront_size",
        "rl_module_kernel_read_cache",
        "rl_sim_scalar_load",
        "rl_module_kernarg_size",
        "rl_module_free",
        "rl_gpu_alloc",
        "rl_gpu_free_mem",
        "rl_gpu_read",
        "rl_gpu_write",
        "rl_sim_register_kernel",
        "rl_sim_kernarg",
        "rl_sim_workgroup_id",
        "rl_sim_workgroup_size",
        "rl_sim_grid_size",
        "rl_sim_load",
        "rl_sim_store",
        "rl_sim_atomic_add_u32",
        "rl_pm4_builder_new",
        "rl_pm4_builder_free",
        "rl_pm4_dispatch",
        "rl_pm4_wait_rmw",
        "rl_pm4_wait_idle",
        "rl_pm4_finalize",
        "rl_pm4_replay",
        "rl_pm4_replay_async",
        "rl_pm4_wait",
        "rl_pm4_ib_set_kernargs",
        "rl_pm4_ib_dispatch_count",
        "rl_pm4_ib_dwords",
        "rl_pm4_ib_free",
        "rl_gpu_pm4_queue_count",
        "rl_pm4_finalize_multi",
        "rl_pm4_replay_multi",
        "rl_pm4_multi_ib_set_kernargs",
        "rl_pm4_multi_ib_lane_count",
        "rl_pm4_multi_ib_dispatch_count",
        "rl_pm4_multi_ib_free",
        "rl_graph_new",
        "rl_graph_new_tuned",
        "rl_graph_free",
        "rl_graph_buffer",
        "rl_graph_kernel",
        "rl_graph_kernel_ex",
        "rl_graph_add_dependency",
        "rl_graph_instantiate",
        "rl_graphexec_lane_count",
        "rl_graphexec_fingerprint",
        "rl_graphexec_launch_mock",
        "rl_graphexec_launch",
        "rl_graphexec_set_node_kernargs",
        "rl_graphexec_set_node_kernargs_at",
        "rl_pm4_finalize_ex",
        "rl_pm4_replay_ex",
        "rl_pm4_finalize_profiled",
        "rl_pm4_replay_profiled",
        "rl_pm4_finalize_multi_profiled",
        "rl_pm4_replay_multi_profiled",
        "rl_pm4_finalize_profiled_dispatches",
        "rl_pm4_ib_dispatch_times",
        "rl_pm4_finalize_multi_profiled_dispatches",
        "rl_pm4_multi_ib_dispatch_times",
        "rl_graphexec_free",
        "rl_catalog_open",
        "rl_catalog_module",
        "rl_catalog_free",
    ] {
        let declared = [" ", "*"]
            .iter()
            .any(|before| header.contains(&format!("{before}{name}(")));
        assert!(declared, "{name} is missing from relaunch.h");
    }
    for constant in [
        "RL_OK 0",
        "RL_ERR_NULL -1",
        "RL_ERR_UTF8 -2",
        "RL_ERR_RECORD -3",
        "RL_ERR_COMPILE -4",
        "RL_ERR_REPLAY -5",
        "RL_ERR_HANDLE -6",
        "RL_ERR_CERTIFICATION -7",
        "RL_ERR_DEVICE -8",
        "RL_ERR_INTERNAL -9",
    ] {
        assert!(
            header.contains(&format!("#define {constant}")),
            "{constant} is missing"
        );
    }
    assert!(header.contains("RlQueueAuto = 0"), "queue policy enum");
    // The seed header's spellings (SEED-ABI.md).
    for fact in [
        "typedef struct RlAccess {",
        "Latency = 0,",
        "Overlap = 1,",
        "Throughput = 2,",
        "RlMode mode",
        "RlQueuePolicy policy",
        "int32_t rl_graphexec_launch(const struct RlGpu *gpu, const struct RlGraphExec *exec);",
        "void rl_pm4_wait_idle(struct RlPm4Builder *builder);",
    ] {
        assert!(header.contains(fact), "{fact:?} is missing from relaunch.h");
    }
}
