//! Device graphs: a producer/consumer pair in two independent copies is
//! instantiated into two lanes, launched with retained IBs on the simulated
//! device, patched per launch, and checked exactly.

use relaunch::{Access, GraphOptions, LaneKind, Mode, Submission};
use relaunch::{Geometry, Gpu, Graph, NodeSpec};
use relaunch_testsupport::fixture;

const N: u32 = 64;

fn geometry() -> Geometry {
    Geometry {
        grid: [N, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
    }
}

#[test]
fn two_independent_pipelines_launch_as_two_lanes_and_patch_per_launch() {
    // The same graph and checks on both paths.
    for submission in [Submission::Pm4, Submission::Aql] {
        two_pipelines_with(submission);
    }
}

fn two_pipelines_with(submission: Submission) {
    let gpu = Gpu::open("sim:gfx1100").unwrap();
    let module = gpu
        .load_module(&fixture("gfx1100", "produce_consume"))
        .unwrap();
    let bytes = 4 * N as u64;
    let mut graph = Graph::new(GraphOptions {
        mode: Mode::Latency,
        lanes: 2,
        max_in_flight: 1,
    });
    let mut outs = Vec::new();
    let mut producers = Vec::new();
    for _ in 0..2 {
        let buf_mem = gpu.alloc(bytes as usize, true).unwrap();
        let out_mem = gpu.alloc(bytes as usize, true).unwrap();
        let buf = graph.buffer("buf", bytes).unwrap();
        let out = graph.buffer("out", bytes).unwrap();
        let mut explicit = buf_mem.address().to_le_bytes().to_vec();
        explicit.extend_from_slice(&1u32.to_le_bytes());
        let produce = graph
            .kernel(NodeSpec {
                module: &module,
                symbol: "produce",
                grid: [N, 1, 1],
                block: [32, 1, 1],
                dynamic_group_bytes: 0,
                kernarg: module
                    .pack_kernargs("produce", &explicit, &geometry())
                    .unwrap(),
                accesses: vec![Access::write(buf, 0, bytes)],
                deps: vec![],
            })
            .unwrap();
        let mut explicit = out_mem.address().to_le_bytes().to_vec();
        explicit.extend_from_slice(&buf_mem.address().to_le_bytes());
        graph
            .kernel(NodeSpec {
                module: &module,
                symbol: "consume",
                grid: [N, 1, 1],
                block: [32, 1, 1],
                dynamic_group_bytes: 0,
                kernarg: module
                    .pack_kernargs("consume", &explicit, &geometry())
                    .unwrap(),
                accesses: vec![Access::read(buf, 0, bytes), Access::write(out, 0, bytes)],
                deps: vec![produce],
            })
            .unwrap();
        producers.push(produce);
        outs.push((buf_mem, out_mem));
    }
    let exec = graph.instantiate_with(submission).unwrap();
    assert_eq!(exec.lane_count(), 2);
    let kind = match submission {
        Submission::Aql => LaneKind::Aql,
        _ => LaneKind::Pm4,
    };
    assert!(exec.lane_submissions().iter().all(|l| l.kind == kind));
    exec.launch(&gpu).unwrap();
    assert_eq!(exec.queues_used(), Some(2));
    // Second launch with scale 3 in the first pipeline only.
    exec.set_node_kernargs(producers[0], 8, &3u32.to_le_bytes())
        .unwrap();
    exec.launch(&gpu).unwrap();
    for i in 0..N as usize {
        let (_, out0) = &outs[0];
        let (_, out1) = &outs[1];
        assert_eq!(out0.read_u32(4 * i).unwrap(), (i as u32) * (1 + 3));
        assert_eq!(out1.read_u32(4 * i).unwrap(), (i as u32) * 2);
    }
}

#[test]
fn named_nodes_instantiate_but_refuse_to_launch() {
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let mut graph = Graph::new(GraphOptions::default());
    let act = graph.buffer("activations", 4096).unwrap();
    graph
        .kernel_named(relaunch::KernelNode {
            accesses: vec![Access::write(act, 0, 4096)],
            ..relaunch::KernelNode::named("project", [32, 1, 1], [32, 1, 1])
        })
        .unwrap();
    let exec = graph.instantiate().unwrap();
    assert_eq!(exec.launch_mock().lane_count(), 1);
    let err = exec.launch(&gpu).unwrap_err();
    assert!(err.message().contains("project"), "{err}");
}

/// Two producer/consumer pipelines that declare no accesses at all, only
/// an ordered memory dependency each: two lanes, an rmw (rmw_vmem for the
/// certified consumer) before each consumer, and exact results (the simulator checks the boundaries).
#[test]
fn ordered_dependencies_without_accesses_get_their_boundary_and_keep_lanes_apart() {
    use relaunch::{BoundaryKind, HazardKind, Order};
    let gpu = Gpu::open("sim:gfx1100").unwrap();
    let module = gpu
        .load_module(&fixture("gfx1100", "produce_consume"))
        .unwrap();
    let bytes = 4 * N as usize;
    let mut graph = Graph::new(GraphOptions {
        mode: Mode::Latency,
        lanes: 2,
        max_in_flight: 1,
    });
    let spec = |symbol: &'static str, explicit: Vec<u8>| NodeSpec {
        module: &module,
        symbol,
        grid: [N, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
        kernarg: module
            .pack_kernargs(symbol, &explicit, &geometry())
            .unwrap(),
        accesses: vec![],
        deps: vec![],
    };
    let mut outs = Vec::new();
    let mut pairs = Vec::new();
    for scale in [2u32, 5] {
        let buf_mem = gpu.alloc(bytes, true).unwrap();
        let out_mem = gpu.alloc(bytes, true).unwrap();
        let mut explicit = buf_mem.address().to_le_bytes().to_vec();
        explicit.extend_from_slice(&scale.to_le_bytes());
        let produce = graph.kernel(spec("produce", explicit)).unwrap();
        let mut explicit = out_mem.address().to_le_bytes().to_vec();
        explicit.extend_from_slice(&buf_mem.address().to_le_bytes());
        let consume = graph.kernel(spec("consume", explicit)).unwrap();
        graph
            .add_ordered_dependency(produce, consume, Order::Memory)
            .unwrap();
        pairs.push((produce, consume));
        outs.push((buf_mem, out_mem, scale));
    }
    // An ordered edge back from a consumer to its producer is a cycle.
    let err = graph
        .add_ordered_dependency(pairs[0].1, pairs[0].0, Order::Execution)
        .unwrap_err();
    assert_eq!(err.class(), relaunch::ErrorClass::Record);
    let exec = graph.instantiate().unwrap();
    assert_eq!(exec.lane_count(), 2);
    exec.with_plan(|plan| {
        for &(produce, consume) in &pairs {
            let (p, c) = (plan.locate(produce).unwrap(), plan.locate(consume).unwrap());
            assert_eq!(p.lane, c.lane);
            let boundary = plan.node(consume).unwrap().boundary_before.unwrap();
            // The narrow boundary when the consumer is proven VMEM-only.
            let want = match module.read_cache("consume") {
                relaunch::ReadCache::VmemOnly => BoundaryKind::RmwVmem,
                relaunch::ReadCache::ScalarOrUnknown => BoundaryKind::Rmw,
            };
            assert_eq!(boundary.kind, want);
            assert_eq!(boundary.reason.hazard, HazardKind::Order);
        }
        let lanes: Vec<usize> = pairs
            .iter()
            .map(|p| plan.locate(p.0).unwrap().lane)
            .collect();
        assert_ne!(lanes[0], lanes[1]);
    });
    exec.launch(&gpu).unwrap();
    for (_, out, scale) in &outs {
        for i in 0..N as usize {
            assert_eq!(out.read_u32(4 * i).unwrap(), (i as u32) * scale);
        }
    }
}
