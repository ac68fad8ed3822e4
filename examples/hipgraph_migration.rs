//! From hipGraph to relaunch: the same create -> add nodes -> instantiate
//! -> replay shape, with each node's buffer accesses declared so relaunch
//! derives the minimal boundaries itself. Runs on the record-only mock (no
//! GPU needed) and prints the compiled plan.
//!
//!     cargo run --release --example hipgraph_migration
//!
//! hipGraph                          relaunch
//! hipGraphCreate                    Graph::new(options)
//! hipGraphAddKernelNode(deps)       Graph::kernel_named / Graph::kernel (+ accesses)
//! hipGraphInstantiate               Graph::instantiate (hazards checked here)
//! hipGraphLaunch                    GraphExec::launch(&gpu) / launch_mock()
//! hipGraphExecKernelNodeSetParams   GraphExec::set_node_kernargs

use relaunch::Graph;
use relaunch::{Access, GraphOptions, KernelNode, Mode};

fn access(buffer: relaunch::BufferId, offset: u64, len: u64, write: bool) -> Access {
    Access {
        buffer,
        offset,
        len,
        write,
    }
}

fn main() -> Result<(), relaunch::Error> {
    // Two independent chains (project -> consume over the activations,
    // norm -> finish over the stats) on up to two overlapping lanes.
    let mut graph = Graph::new(GraphOptions {
        mode: Mode::Overlap,
        lanes: 2,
        max_in_flight: 1,
    });
    let activations = graph.buffer("activations", 4096)?;
    let stats = graph.buffer("stats", 256)?;
    let logits = graph.buffer("logits", 1024)?;
    let node = |name: &str, accesses: Vec<Access>, deps| KernelNode {
        accesses,
        deps,
        ..KernelNode::named(name, [32, 1, 1], [64, 1, 1])
    };
    let project = graph.kernel_named(node(
        "project",
        vec![
            access(activations, 0, 2048, false),
            access(activations, 2048, 2048, true),
        ],
        vec![],
    ))?;
    graph.kernel_named(node(
        "consume",
        vec![access(activations, 2048, 2048, false)],
        vec![project],
    ))?;
    let norm = graph.kernel_named(node("norm", vec![access(stats, 0, 256, true)], vec![]))?;
    let finish = graph.kernel_named(node(
        "finish",
        vec![access(stats, 0, 256, false), access(logits, 0, 1024, true)],
        vec![],
    ))?;
    // An edge added afterwards, as hipGraphAddDependencies would.
    graph.add_dependency(norm, finish)?;

    let exec = graph.instantiate()?;
    println!("nodes: 4, lanes: {}", exec.lane_count());
    exec.with_plan(|plan| {
        for (lane, nodes) in plan.lanes().enumerate() {
            for n in nodes {
                let boundary = n
                    .boundary_before
                    .map(|b| format!(" after a {} boundary", b.kind.name()))
                    .unwrap_or_default();
                println!("  lane {lane}: {}{boundary}", n.kernel.display_name());
            }
        }
    });
    println!("fingerprint: {}", exec.fingerprint_hex());
    let recorder = exec.launch_mock();
    println!(
        "mock launch: {} lanes replayed in order (no GPU work)",
        recorder.lane_count()
    );
    println!("hipgraph migration example OK");
    Ok(())
}
