//! Graphs through the C API: module kernels launched on the simulated
//! device with retained IBs and per-node patches, hazards refused with
//! every pair named, named-only graphs refused on a device.

use std::ptr::{null, null_mut};

use super::{cstr, last_error, load, open_sim, pack_kernargs};
use crate::*;

const N: u32 = 64;

fn pack(module: *mut RlModule, symbol: &str, explicit: &[u8]) -> Vec<u8> {
    pack_kernargs(module, symbol, explicit, [N, 1, 1], [32, 1, 1])
}

fn node(
    graph: *mut RlGraph,
    module: *mut RlModule,
    symbol: &str,
    kernarg: &[u8],
    accesses: &[RlAccess],
    deps: &[u32],
) -> Result<u32, i32> {
    let mut out = 0;
    // SAFETY: live buffers sized as passed; out is writable.
    let rc = unsafe {
        rl_graph_kernel_ex(
            graph,
            module,
            cstr(symbol).as_ptr(),
            N,
            1,
            1,
            32,
            1,
            1,
            0,
            kernarg.as_ptr(),
            kernarg.len(),
            accesses.as_ptr(),
            accesses.len(),
            deps.as_ptr(),
            deps.len(),
            &mut out,
        )
    };
    if rc == RL_OK {
        Ok(out)
    } else {
        Err(rc)
    }
}

fn access(buffer: u32, write: bool) -> RlAccess {
    RlAccess {
        buffer,
        offset: 0,
        len: u64::from(4 * N),
        write: u8::from(write),
    }
}

#[test]
fn a_module_graph_launches_patches_and_relaunches() {
    // The same graph on both paths: PM4 (the default) and public AQL.
    for submission in [RL_SUBMISSION_AUTO, RL_SUBMISSION_AQL] {
        graph_launches_patches_and_relaunches(submission);
    }
}

fn graph_launches_patches_and_relaunches(submission: u32) {
    let gpu = open_sim();
    let module = load(gpu, "produce_consume");
    let graph = rl_graph_new();
    let (mut buf, mut out) = (0, 0);
    // SAFETY: live labels; outs are writable.
    unsafe {
        assert_eq!(
            rl_graph_buffer(graph, cstr("buf").as_ptr(), u64::from(4 * N), &mut buf),
            RL_OK
        );
        assert_eq!(
            rl_graph_buffer(graph, cstr("out").as_ptr(), u64::from(4 * N), &mut out),
            RL_OK
        );
    }
    let mut buf_mem = 0;
    let mut out_mem = 0;
    // SAFETY: outs are writable.
    unsafe {
        assert_eq!(rl_gpu_alloc(gpu, 4 * N as usize, 1, &mut buf_mem), RL_OK);
        assert_eq!(rl_gpu_alloc(gpu, 4 * N as usize, 1, &mut out_mem), RL_OK);
    }
    let mut explicit = buf_mem.to_le_bytes().to_vec();
    explicit.extend_from_slice(&1u32.to_le_bytes());
    let produce = node(
        graph,
        module,
        "produce",
        &pack(module, "produce", &explicit),
        &[access(buf, true)],
        &[],
    )
    .unwrap_or_else(|rc| panic!("{rc}: {}", last_error()));
    let mut explicit = out_mem.to_le_bytes().to_vec();
    explicit.extend_from_slice(&buf_mem.to_le_bytes());
    let consume = node(
        graph,
        module,
        "consume",
        &pack(module, "consume", &explicit),
        &[access(buf, false), access(out, true)],
        &[produce],
    )
    .unwrap_or_else(|rc| panic!("{rc}: {}", last_error()));
    assert_eq!(consume, produce + 1);
    let mut exec = null_mut();
    // SAFETY: exec is writable.
    assert_eq!(
        unsafe { rl_graph_instantiate_ex(graph, submission, &mut exec) },
        RL_OK,
        "{}",
        last_error()
    );
    rl_graph_free(graph);
    rl_module_free(module);
    assert_eq!(rl_graphexec_lane_count(exec), 1);
    let (kind, reason) = lane(exec, 0);
    if submission == RL_SUBMISSION_AQL {
        assert_eq!(kind, RL_LANE_AQL);
        assert!(reason.contains("requested"), "{reason}");
    } else {
        assert_eq!((kind, reason.as_str()), (RL_LANE_PM4, ""));
    }
    assert_eq!(rl_graphexec_launch(gpu, exec), RL_OK, "{}", last_error());
    // SAFETY: 4 readable bytes.
    let rc = unsafe {
        rl_graphexec_set_node_kernargs_at(exec, produce, 8, 3u32.to_le_bytes().as_ptr(), 4)
    };
    assert_eq!(rc, RL_OK, "{}", last_error());
    assert_eq!(rl_graphexec_launch(gpu, exec), RL_OK, "{}", last_error());
    let mut got = vec![0u32; N as usize];
    // SAFETY: got is 4 * N writable bytes.
    let rc = unsafe { rl_gpu_read(gpu, out_mem, got.as_mut_ptr().cast(), 4 * N as usize) };
    assert_eq!(rc, RL_OK);
    // out += i * 1, then out += i * 3.
    let expected: Vec<u32> = (0..N).map(|i| 4 * i).collect();
    assert_eq!(got, expected);
    // SAFETY: 4 readable bytes.
    let rc = unsafe { rl_graphexec_set_node_kernargs_at(exec, 99, 8, [0u8; 4].as_ptr(), 4) };
    assert_eq!(rc, RL_ERR_HANDLE, "{}", last_error());
    let mut fp = [0u8; 32];
    // SAFETY: 32 writable bytes.
    assert_eq!(
        unsafe { rl_graphexec_fingerprint(exec, fp.as_mut_ptr()) },
        RL_OK
    );
    assert_ne!(fp, [0u8; 32]);
    rl_graphexec_free(exec);
    rl_gpu_free(gpu);
}

#[test]
fn unordered_writers_are_refused_and_named_graphs_stay_off_devices() {
    let graph = rl_graph_new();
    let mut buf = 0;
    // SAFETY: a live label; out is writable.
    assert_eq!(
        unsafe { rl_graph_buffer(graph, cstr("b").as_ptr(), 256, &mut buf) },
        RL_OK
    );
    let write = [RlAccess {
        buffer: buf,
        offset: 0,
        len: 256,
        write: 1,
    }];
    let mut ids = [0u32; 2];
    for (i, name) in ["first", "second"].iter().enumerate() {
        // SAFETY: live name and accesses; out is writable.
        let rc = unsafe {
            rl_graph_kernel(
                graph,
                cstr(name).as_ptr(),
                1,
                1,
                1,
                1,
                1,
                1,
                write.as_ptr(),
                1,
                null(),
                0,
                &mut ids[i],
            )
        };
        assert_eq!(rc, RL_OK, "{}", last_error());
    }
    let mut exec = null_mut();
    // SAFETY: exec is writable.
    assert_eq!(
        unsafe { rl_graph_instantiate(graph, &mut exec) },
        RL_ERR_COMPILE
    );
    assert!(exec.is_null());
    let message = last_error();
    assert!(
        message.contains("first") && message.contains("second"),
        "{message}"
    );
    assert_eq!(
        rl_graph_add_dependency(graph, ids[0], ids[1]),
        RL_OK,
        "{}",
        last_error()
    );
    // SAFETY: exec is writable.
    assert_eq!(
        unsafe { rl_graph_instantiate(graph, &mut exec) },
        RL_OK,
        "{}",
        last_error()
    );
    assert_eq!(rl_graphexec_launch_mock(exec), RL_OK);
    let gpu = open_sim();
    assert!(rl_graphexec_launch(gpu, exec) < 0);
    assert!(last_error().contains("named only"), "{}", last_error());
    let bad = [RlAccess {
        buffer: buf,
        offset: 0,
        len: 8,
        write: 2,
    }];
    let mut id = 0;
    // SAFETY: live name and accesses; out is writable.
    let rc = unsafe {
        rl_graph_kernel(
            graph,
            cstr("third").as_ptr(),
            1,
            1,
            1,
            1,
            1,
            1,
            bad.as_ptr(),
            1,
            null(),
            0,
            &mut id,
        )
    };
    assert_eq!(rc, RL_ERR_RECORD);
    assert!(
        last_error().contains("accesses[0].write is 2"),
        "{}",
        last_error()
    );
    rl_graphexec_free(exec);
    rl_graph_free(graph);
    rl_gpu_free(gpu);
}

/// Lane `lane`'s submission kind and reason through the C API.
fn lane(exec: *mut RlGraphExec, lane: usize) -> (i32, String) {
    let kind = rl_graphexec_lane_submission(exec, lane);
    let mut buf = [0u8; 512];
    // SAFETY: 512 writable bytes.
    let rc = unsafe { rl_graphexec_lane_reason(exec, lane, buf.as_mut_ptr().cast(), buf.len()) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    let end = buf.iter().position(|&b| b == 0).unwrap();
    (kind, String::from_utf8_lossy(&buf[..end]).into_owned())
}

#[test]
fn a_scratch_kernel_lane_is_public_aql_and_says_why() {
    let gpu = open_sim();
    // More scratch per work-item than the PM4 path gives.
    let module = load(gpu, "scratch_huge");
    let graph = rl_graph_new();
    let explicit = [0u8; 12];
    node(
        graph,
        module,
        "scratch_huge",
        &pack(module, "scratch_huge", &explicit),
        &[],
        &[],
    )
    .unwrap_or_else(|rc| panic!("{rc}: {}", last_error()));
    let mut exec = null_mut();
    // SAFETY: exec is writable.
    let rc = unsafe { rl_graph_instantiate_ex(graph, RL_SUBMISSION_PM4, &mut exec) };
    assert_eq!(rc, RL_ERR_COMPILE);
    assert!(last_error().contains("scratch"), "{}", last_error());
    // SAFETY: exec is writable.
    let rc = unsafe { rl_graph_instantiate_ex(graph, 7, &mut exec) };
    assert_eq!(rc, RL_ERR_COMPILE);
    assert!(last_error().contains("RlSubmission"), "{}", last_error());
    // SAFETY: exec is writable.
    let rc = unsafe { rl_graph_instantiate(graph, &mut exec) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    let (kind, reason) = lane(exec, 0);
    assert_eq!(kind, RL_LANE_AQL);
    assert!(
        reason.contains("scratch_huge") && reason.contains("scratch"),
        "{reason}"
    );
    assert_eq!(rl_graphexec_lane_submission(exec, 1), RL_ERR_HANDLE);
    let mut small = [0u8; 8];
    // SAFETY: 8 writable bytes.
    let rc = unsafe { rl_graphexec_lane_reason(exec, 0, small.as_mut_ptr().cast(), 8) };
    assert_eq!(rc, RL_ERR_RECORD);
    assert_eq!(small[7], 0);
    rl_graphexec_free(exec);
    rl_graph_free(graph);
    rl_module_free(module);
    rl_gpu_free(gpu);
}

/// HIP's device printf (hostcall) kernel: its lane runs as public AQL, the
/// C lane inspection names hostcall, and it launches (output to stdout).
#[test]
fn a_printf_kernel_lane_is_public_aql_naming_hostcall() {
    let sel = cstr("sim:gfx1100");
    // SAFETY: a NUL-terminated selector.
    let gpu = unsafe { rl_gpu_open(sel.as_ptr()) };
    assert!(!gpu.is_null(), "{}", last_error());
    let code = relaunch_testsupport::fixture("gfx1100", "hip_printf");
    let mut module = null_mut();
    // SAFETY: code is a live buffer; module is a valid out pointer.
    let rc = unsafe { rl_gpu_load_module(gpu, code.as_ptr(), code.len(), &mut module) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    let mut mem = 0u64;
    // SAFETY: mem is writable.
    let rc = unsafe { rl_gpu_alloc(gpu, 4 * N as usize, 1, &mut mem) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    let mut explicit = mem.to_le_bytes().to_vec();
    explicit.extend_from_slice(&4u32.to_le_bytes());
    let graph = rl_graph_new();
    node(
        graph,
        module,
        "hip_printf",
        &pack(module, "hip_printf", &explicit),
        &[],
        &[],
    )
    .unwrap_or_else(|rc| panic!("{rc}: {}", last_error()));
    let mut exec = null_mut();
    // SAFETY: exec is writable.
    let rc = unsafe { rl_graph_instantiate(graph, &mut exec) };
    assert_eq!(rc, RL_OK, "{}", last_error());
    let (kind, reason) = lane(exec, 0);
    assert_eq!(kind, RL_LANE_AQL);
    assert!(
        reason.contains("hip_printf") && reason.contains("hostcall"),
        "{reason}"
    );
    assert_eq!(rl_graphexec_launch(gpu, exec), RL_OK, "{}", last_error());
    rl_graphexec_free(exec);
    rl_graph_free(graph);
    assert_eq!(rl_gpu_free_mem(gpu, mem), RL_OK);
    rl_module_free(module);
    rl_gpu_free(gpu);
}
