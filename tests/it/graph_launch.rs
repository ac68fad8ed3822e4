//! Device graphs: a producer/consumer pair in two independent copies is
//! instantiated into two lanes, launched with retained IBs on the simulated
//! device, patched per launch, and checked exactly.

use relaunch::{Access, GraphOptions, Mode};
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
    let exec = graph.instantiate().unwrap();
    assert_eq!(exec.lane_count(), 2);
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
