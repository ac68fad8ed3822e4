//! An IB keeps alive the relaunch allocations its kernargs point into
//! (#15 item 14): dropping the buffer does not free memory a later replay
//! writes, and re-pointing the slot changes what is held.

use relaunch::{Geometry, Gpu};

const N: u32 = 64;

#[test]
fn dropping_a_buffer_an_ib_points_into_keeps_its_memory_for_the_ib() {
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let fixture = relaunch_testsupport::fixture("gfx1201", "add_scalar");
    let module = gpu.load_module(&fixture).unwrap();
    let geometry = Geometry {
        grid: [N, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
    };
    let kernarg = |acc: u64| {
        let mut explicit = acc.to_le_bytes().to_vec();
        explicit.extend_from_slice(&5u32.to_le_bytes());
        module
            .pack_kernargs("add_scalar", &explicit, &geometry)
            .unwrap()
    };
    let acc = gpu.alloc(4 * N as usize, true).unwrap();
    let address = acc.address();
    let mut b = gpu.builder();
    b.dispatch(
        &module,
        "add_scalar",
        [N, 1, 1],
        [32, 1, 1],
        0,
        &kernarg(address),
    )
    .unwrap();
    let mut ib = gpu.finalize(b).unwrap();
    drop(acc);
    let other = gpu.alloc(4 * N as usize, true).unwrap();
    assert_ne!(
        other.address(),
        address,
        "the IB's memory was handed out again"
    );
    ib.replay().unwrap();
    ib.replay().unwrap();
    assert_eq!(other.read_u32(0).unwrap(), 0);
    ib.set_kernargs(0, 0, &other.address().to_le_bytes())
        .unwrap();
    ib.replay().unwrap();
    for i in 0..N as usize {
        assert_eq!(other.read_u32(4 * i).unwrap(), 5, "other[{i}]");
    }
}

/// A graph launched without waiting (what the hipGraph interposer's
/// stream-ordered launches do) and then dropped with its modules while the
/// replay runs: `hsa_executable_destroy` would free the code under it, so
/// the exec keeps its IBs, kernarg allocations and modules until every lane
/// settled. Two lanes of counter chains must each count to the end.
#[test]
fn dropping_a_graph_exec_and_its_module_with_a_launch_in_flight_is_safe() {
    use relaunch::{Access, Graph, GraphOptions, Mode, NodeSpec};
    const CHAIN: u32 = 1500;
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let module = gpu
        .load_module(&relaunch_testsupport::fixture("gfx1201", "counter"))
        .unwrap();
    let one = Geometry {
        grid: [1, 1, 1],
        block: [1, 1, 1],
        dynamic_group_bytes: 0,
    };
    let mut graph = Graph::new(GraphOptions {
        mode: Mode::Latency,
        lanes: 2,
        max_in_flight: 1,
    });
    let mut counters = Vec::new();
    for _ in 0..2 {
        let mem = gpu.alloc(4, true).unwrap();
        let buf = graph.buffer("counter", 4).unwrap();
        let kernarg = module
            .pack_kernargs("counter", &mem.address().to_le_bytes(), &one)
            .unwrap();
        let mut prev = None;
        for _ in 0..CHAIN {
            let node = graph
                .kernel(NodeSpec {
                    module: &module,
                    symbol: "counter",
                    grid: [1, 1, 1],
                    block: [1, 1, 1],
                    dynamic_group_bytes: 0,
                    kernarg: kernarg.clone(),
                    accesses: vec![Access::read(buf, 0, 4), Access::write(buf, 0, 4)],
                    deps: prev.into_iter().collect(),
                })
                .unwrap();
            prev = Some(node);
        }
        counters.push(mem);
    }
    let exec = graph.instantiate().unwrap();
    assert_eq!(exec.lane_count(), 2);
    let flight = exec.launch_async(&gpu).unwrap();
    drop(exec);
    drop(graph);
    drop(module);
    drop(flight);
    let at_drop: Vec<u32> = counters.iter().map(|c| c.read_u32(0).unwrap()).collect();
    let start = std::time::Instant::now();
    while counters.iter().any(|c| c.read_u32(0).unwrap() < CHAIN)
        && start.elapsed() < std::time::Duration::from_secs(60)
    {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    println!("counters at the drops: {at_drop:?} of {CHAIN}");
    for (lane, c) in counters.iter().enumerate() {
        assert_eq!(c.read_u32(0).unwrap(), CHAIN, "lane {lane} ran to the end");
    }
    // The GPU is still usable: nothing faulted.
    let module = gpu
        .load_module(&relaunch_testsupport::fixture("gfx1201", "counter"))
        .unwrap();
    let mut b = gpu.builder();
    let kernarg = module
        .pack_kernargs("counter", &counters[0].address().to_le_bytes(), &one)
        .unwrap();
    b.dispatch(&module, "counter", [1, 1, 1], [1, 1, 1], 0, &kernarg)
        .unwrap();
    gpu.finalize(b).unwrap().replay().unwrap();
    assert_eq!(counters[0].read_u32(0).unwrap(), CHAIN + 1);
}
