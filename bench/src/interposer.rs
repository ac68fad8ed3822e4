//! `interposer`: the adversarial graph shapes built as HIP graphs through
//! the interposer's model (`relaunch-hipgraph`'s shadow: the graph a
//! `hipGraphAdd*` / stream-capture sequence leaves, then its instantiate on
//! `sim:gfx1201`), 100k kernel nodes each. A HIP graph declares no memory
//! accesses, so each shape is its edges: the ordered chain is a stream
//! capture; fan-in is independent nodes joined by one; fan-out is one node
//! read by all, joined again; overlapping ranges are each node ordered
//! after the 16 before it (what small overlapping ranges need).

use std::sync::Arc;
use std::time::Instant;

use relaunch::{CodeObject, Gpu};
use relaunch_hipgraph::model::capture::Capture;
use relaunch_hipgraph::model::reason::Reason;
use relaunch_hipgraph::model::shadow::{
    node_kernel, Function, NodeKernel, ShadowGraph, ShadowModule,
};

use crate::report::Report;

const NODES: usize = 100_000;
/// Runs per shape (median).
const RUNS: usize = 3;
/// Predecessors of each node in the overlapping-ranges shape.
const OVERLAP: usize = 16;

#[derive(Clone, Copy)]
enum Shape {
    Chain,
    FanIn,
    FanOut,
    Overlapping,
}

impl Shape {
    const ALL: [Shape; 4] = [
        Shape::Chain,
        Shape::FanIn,
        Shape::FanOut,
        Shape::Overlapping,
    ];

    fn name(self) -> &'static str {
        match self {
            Shape::Chain => "chain",
            Shape::FanIn => "fan_in",
            Shape::FanOut => "fan_out",
            Shape::Overlapping => "overlapping",
        }
    }

    /// The shadow graph of `n` launches of `k` in this shape (handles 1..).
    fn build(self, k: &NodeKernel, n: usize) -> ShadowGraph {
        let mut g = ShadowGraph::default();
        match self {
            Shape::Chain => {
                let mut capture = Capture::default();
                for _ in 0..n {
                    capture.push(Ok(k.clone()));
                }
                return capture.into_graph();
            }
            Shape::FanIn => {
                for h in 1..n {
                    g.add_node(h, Ok(k.clone()), &[]);
                }
                let all: Vec<usize> = (1..n).collect();
                g.add_node(n, Ok(k.clone()), &all);
            }
            Shape::FanOut => {
                g.add_node(1, Ok(k.clone()), &[]);
                for h in 2..n {
                    g.add_node(h, Ok(k.clone()), &[1]);
                }
                let readers: Vec<usize> = (2..n).collect();
                g.add_node(n, Ok(k.clone()), &readers);
            }
            Shape::Overlapping => {
                for h in 1..=n {
                    let deps: Vec<usize> = (h.saturating_sub(OVERLAP).max(1)..h).collect();
                    g.add_node(h, Ok(k.clone()), &deps);
                }
            }
        }
        g
    }
}

fn counter(gpu_target: &str) -> Result<NodeKernel, String> {
    let bytes = relaunch_testsupport::fixture(gpu_target, "counter");
    let function = Function {
        module: Arc::new(ShadowModule::new(
            CodeObject::parse(&bytes).map_err(Reason::from),
        )),
        symbol: "counter".into(),
    };
    let arg = 0x1000u64.to_le_bytes().to_vec();
    node_kernel(&function, [1, 1, 1], [4, 1, 1], 0, &|_, _| Ok(arg.clone()))
        .map_err(|e| e.to_string())
}

/// Milliseconds to shadow and instantiate one graph of `shape`.
fn time_ms(gpu: &Gpu, k: &NodeKernel, shape: Shape) -> Result<f64, String> {
    let start = Instant::now();
    let graph = shape.build(k, NODES);
    graph
        .instantiate(gpu)
        .map_err(|e| format!("{}: {e}", shape.name()))?;
    Ok(start.elapsed().as_secs_f64() * 1e3)
}

pub fn run(report: &mut Report) -> Result<(), String> {
    let gpu = Gpu::open("sim:gfx1201").map_err(|e| e.to_string())?;
    let k = counter("gfx1201")?;
    for shape in Shape::ALL {
        let mut runs = (0..RUNS)
            .map(|_| time_ms(&gpu, &k, shape))
            .collect::<Result<Vec<_>, _>>()?;
        runs.sort_by(f64::total_cmp);
        println!(
            "interposer {}: {NODES} nodes, runs {:?} ms",
            shape.name(),
            runs.iter().map(|r| r.round()).collect::<Vec<_>>()
        );
        report.metric(
            &format!(
                "instantiate_interposer_adversarial_{}_100k_ms",
                shape.name()
            ),
            runs[RUNS / 2],
            "ms",
            Some((2000.0, true)),
        );
    }
    Ok(())
}
