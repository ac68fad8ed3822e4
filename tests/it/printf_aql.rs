//! HIP device printf (hostcall) on the public-AQL path (issue 31.1): the
//! `hip_printf` fixture (`tests/kernels/hip/hip_printf.hip`, code object
//! v4 against the ROCm device libraries) runs on `sim:gfx1100`'s
//! instruction interpreter, ockl's device side included (the free/ready
//! stacks, 64-bit atomics, the doorbell signal's mailbox and interrupt),
//! and relaunch's hostcall listener serves its printf.

use relaunch::{Access, ErrorClass, Geometry, Gpu, Graph, GraphOptions, LaneKind, Mode};
use relaunch::{NodeSpec, Submission};
use relaunch_testsupport::fixture;

const N: u32 = 64;

fn geometry() -> Geometry {
    Geometry {
        grid: [N, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
    }
}

/// What `hip_printf` prints for `tag`.
fn printed(tag: u32) -> String {
    format!(
        "tag {tag}: hello -7  1.50 0xbeef z|ab  |1.234500e+03\nitem 0 of tag {tag}\nitem 1 of tag {tag}\n"
    )
}

/// `scratch_hog` as a host twin (what `scratch_hog.cl` computes), as in
/// `public_aql.rs`: whichever path the scratch kernel takes, its results
/// are checked.
fn register_scratch_twin() {
    relaunch::twins::register_twin("scratch_hog", |wg| {
        let args = wg.kernarg()?;
        let out = u64::from_le_bytes(args[0..8].try_into().unwrap());
        let seed = u32::from_le_bytes(args[8..12].try_into().unwrap());
        let (id, size) = (wg.workgroup_id()[0], wg.workgroup_size()[0]);
        for local in 0..size {
            let i = id * size + local;
            wg.store_u32(out + 4 * u64::from(i), (seed.wrapping_add(i) & 255) * seed)?;
        }
        Ok(())
    });
}

fn node<'a>(
    module: &'a relaunch::Module,
    symbol: &'a str,
    kernarg: Vec<u8>,
    accesses: Vec<Access>,
    deps: Vec<relaunch::NodeId>,
) -> NodeSpec<'a> {
    NodeSpec {
        module,
        symbol,
        grid: [N, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
        kernarg,
        accesses,
        deps,
    }
}

#[test]
fn pm4_scratch_and_printf_kernels_in_one_graph_each_take_their_path() {
    register_scratch_twin();
    let gpu = Gpu::open("sim:gfx1100").unwrap();
    let capture = gpu.capture_printf();
    let pc = gpu
        .load_module(&fixture("gfx1100", "produce_consume"))
        .unwrap();
    let scratch = gpu.load_module(&fixture("gfx1100", "scratch_hog")).unwrap();
    let printf = gpu.load_module(&fixture("gfx1100", "hip_printf")).unwrap();
    let verdict = relaunch::kernel_verdict(printf.kernel_info("hip_printf").unwrap());
    assert!(
        verdict.to_string().contains("hidden_hostcall_buffer"),
        "{verdict}"
    );
    assert!(verdict.needs_hostcall());
    assert!(verdict.aql_refusals().is_empty(), "{verdict}");

    let bytes = 4 * N as usize;
    let (buf_mem, out_mem) = (
        gpu.alloc(bytes, true).unwrap(),
        gpu.alloc(bytes, true).unwrap(),
    );
    let (scratch_mem, printf_mem) = (
        gpu.alloc(bytes, true).unwrap(),
        gpu.alloc(bytes, true).unwrap(),
    );
    let mut graph = Graph::new(GraphOptions {
        mode: Mode::Latency,
        lanes: 3,
        max_in_flight: 1,
    });
    let (buf, out) = (
        graph.buffer("buf", bytes as u64).unwrap(),
        graph.buffer("out", bytes as u64).unwrap(),
    );
    let mut explicit = buf_mem.address().to_le_bytes().to_vec();
    explicit.extend_from_slice(&2u32.to_le_bytes());
    let kernarg = pc.pack_kernargs("produce", &explicit, &geometry()).unwrap();
    let produce = graph
        .kernel(node(
            &pc,
            "produce",
            kernarg,
            vec![Access::write(buf, 0, bytes as u64)],
            vec![],
        ))
        .unwrap();
    let mut explicit = out_mem.address().to_le_bytes().to_vec();
    explicit.extend_from_slice(&buf_mem.address().to_le_bytes());
    let kernarg = pc.pack_kernargs("consume", &explicit, &geometry()).unwrap();
    let accesses = vec![
        Access::read(buf, 0, bytes as u64),
        Access::write(out, 0, bytes as u64),
    ];
    graph
        .kernel(node(&pc, "consume", kernarg, accesses, vec![produce]))
        .unwrap();
    let s_buf = graph.buffer("scratch_out", bytes as u64).unwrap();
    let mut explicit = scratch_mem.address().to_le_bytes().to_vec();
    explicit.extend_from_slice(&3u32.to_le_bytes());
    let kernarg = scratch
        .pack_kernargs("scratch_hog", &explicit, &geometry())
        .unwrap();
    let scratch_node = graph
        .kernel(node(
            &scratch,
            "scratch_hog",
            kernarg,
            vec![Access::write(s_buf, 0, bytes as u64)],
            vec![],
        ))
        .unwrap();
    let p_buf = graph.buffer("printf_out", bytes as u64).unwrap();
    let mut explicit = printf_mem.address().to_le_bytes().to_vec();
    explicit.extend_from_slice(&5u32.to_le_bytes());
    let kernarg = printf
        .pack_kernargs("hip_printf", &explicit, &geometry())
        .unwrap();
    let printf_node = graph
        .kernel(node(
            &printf,
            "hip_printf",
            kernarg,
            vec![Access::write(p_buf, 0, bytes as u64)],
            vec![],
        ))
        .unwrap();

    // Submission::Pm4 refuses the graph (naming the first kernel it
    // refuses: the scratch kernel, unless the PM4 path takes scratch).
    let err = graph
        .instantiate_with(Submission::Pm4)
        .err()
        .expect("refused");
    assert_eq!(err.class(), ErrorClass::Compile, "{err}");
    assert!(err.message().contains("direct PM4 path"), "{err}");

    let exec = graph.instantiate().unwrap();
    assert_eq!(exec.lane_count(), 3);
    let lane_of = |n| exec.with_plan(|p| p.locate(n).unwrap().lane);
    let lanes = exec.lane_submissions();
    assert_eq!(lanes[lane_of(produce)].kind, LaneKind::Pm4);
    let printf_lane = &lanes[lane_of(printf_node)];
    assert_eq!(printf_lane.kind, LaneKind::Aql);
    let reason = printf_lane.reason.as_deref().unwrap();
    assert!(
        reason.contains("hip_printf") && reason.contains("hostcall"),
        "{reason}"
    );
    // The scratch kernel's lane agrees with its verdict, whichever it is.
    let scratch_verdict = relaunch::kernel_verdict(scratch.kernel_info("scratch_hog").unwrap());
    let scratch_lane = &lanes[lane_of(scratch_node)];
    let expected = if scratch_verdict.accepted() {
        LaneKind::Pm4
    } else {
        LaneKind::Aql
    };
    assert_eq!(
        scratch_lane.kind, expected,
        "{scratch_verdict}: {scratch_lane:?}"
    );

    exec.launch(&gpu).unwrap();
    for i in 0..N as usize {
        assert_eq!(out_mem.read_u32(4 * i).unwrap(), (i as u32) * 2);
        assert_eq!(
            scratch_mem.read_u32(4 * i).unwrap(),
            ((3 + i as u32) & 255) * 3
        );
        assert_eq!(printf_mem.read_u32(4 * i).unwrap(), 3 * i as u32 + 5);
    }
    assert_eq!(capture.take_string(), printed(5));
    assert_eq!(gpu.hostcall_unknown_services(), 0);
}

#[test]
fn a_printf_kernel_prints_on_every_replay_in_order_across_patches() {
    let gpu = Gpu::open("sim:gfx1100").unwrap();
    let capture = gpu.capture_printf();
    let module = gpu.load_module(&fixture("gfx1100", "hip_printf")).unwrap();
    let out = gpu.alloc(4 * N as usize, true).unwrap();
    let mut graph = Graph::new(GraphOptions::default());
    let buf = graph.buffer("out", 4 * N as u64).unwrap();
    let mut explicit = out.address().to_le_bytes().to_vec();
    explicit.extend_from_slice(&1u32.to_le_bytes());
    let kernarg = module
        .pack_kernargs("hip_printf", &explicit, &geometry())
        .unwrap();
    let id = graph
        .kernel(node(
            &module,
            "hip_printf",
            kernarg.clone(),
            vec![Access::write(buf, 0, 4 * N as u64)],
            vec![],
        ))
        .unwrap();
    // The PM4 path refuses it, naming hostcall.
    let err = graph
        .instantiate_with(Submission::Pm4)
        .err()
        .expect("refused");
    assert_eq!(err.class(), ErrorClass::Compile, "{err}");
    assert!(err.message().contains("hidden_hostcall_buffer"), "{err}");
    let exec = graph.instantiate().unwrap();
    assert_eq!(exec.lane_submissions()[0].kind, LaneKind::Aql);
    let mut expected = String::new();
    for tag in 1..=3u32 {
        exec.set_node_kernargs(id, 8, &tag.to_le_bytes()).unwrap();
        exec.launch(&gpu).unwrap();
        expected.push_str(&printed(tag));
        assert_eq!(out.read_u32(4 * 7).unwrap(), 21 + tag);
    }
    // A whole-block replace (hidden arguments zero, as packed) keeps the
    // runtime's hostcall buffer in its slot.
    let mut whole = kernarg;
    whole[8..12].copy_from_slice(&9u32.to_le_bytes());
    exec.replace_node_kernargs(id, &whole).unwrap();
    exec.launch(&gpu).unwrap();
    expected.push_str(&printed(9));
    assert_eq!(capture.take_string(), expected);
}

#[test]
fn an_opencl_printf_kernel_is_refused_by_both_paths_naming_the_printf_buffer() {
    let gpu = Gpu::open("sim:gfx1100").unwrap();
    let module = gpu.load_module(&fixture("gfx1100", "uses_printf")).unwrap();
    let info = module.kernels()[0].clone();
    let mut graph = Graph::new(GraphOptions::default());
    let kernarg = vec![0u8; info.kernarg_size as usize];
    graph
        .kernel(NodeSpec {
            module: &module,
            symbol: &info.name,
            grid: [32, 1, 1],
            block: [32, 1, 1],
            dynamic_group_bytes: 0,
            kernarg,
            accesses: vec![],
            deps: vec![],
        })
        .unwrap();
    let Err(err) = graph.instantiate() else {
        panic!("an OpenCL printf kernel instantiated")
    };
    assert_eq!(err.class(), ErrorClass::Compile, "{err}");
    assert!(err.message().contains("either path"), "{err}");
    assert!(err.message().contains("hidden_printf_buffer"), "{err}");
    assert!(
        err.message()
            .contains("no service for OpenCL's printf buffer"),
        "{err}"
    );
}

/// A request for a service relaunch does not serve (`hostcall_unknown`
/// asks for service 9) is answered with -1, so the wave goes on (and
/// prints after it), counted, and fails the launch naming it.
#[test]
fn an_unknown_hostcall_service_is_answered_counted_and_fails_the_launch() {
    let gpu = Gpu::open("sim:gfx1100").unwrap();
    let capture = gpu.capture_printf();
    let module = gpu.load_module(&fixture("gfx1100", "hip_printf")).unwrap();
    let out = gpu.alloc(4 * N as usize, true).unwrap();
    let mut graph = Graph::new(GraphOptions::default());
    let buf = graph.buffer("out", 4).unwrap();
    let kernarg = module
        .pack_kernargs(
            "hostcall_unknown",
            &out.address().to_le_bytes(),
            &geometry(),
        )
        .unwrap();
    graph
        .kernel(node(
            &module,
            "hostcall_unknown",
            kernarg,
            vec![Access::write(buf, 0, 4)],
            vec![],
        ))
        .unwrap();
    let exec = graph.instantiate().unwrap();
    let err = exec.launch(&gpu).unwrap_err();
    assert_eq!(err.class(), ErrorClass::Replay, "{err}");
    assert!(err.message().contains("hostcall service 9"), "{err}");
    assert_eq!(gpu.hostcall_unknown_services(), 1);
    assert_eq!(out.read_u32(0).unwrap(), u32::MAX);
    assert_eq!(capture.take_string(), "after the unknown service\n");
}
