//! Legal graphs shaped to make hazard analysis and boundary derivation
//! expensive, shared by relaunch-lanes' tests and `relaunch-bench
//! instantiate` (test-only, so not in the shipped lanes crate). Each
//! compiles; a per-pair or per-segment analysis is quadratic on them.

use relaunch_lanes::{Access, Graph, GraphOptions, KernelNode, Mode, NodeId, RecordError};

/// The shapes, by the name the bench prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A fully ordered chain; each node reads all of one buffer and writes
    /// its own slice of it.
    ChainReadAll,
    /// Independent writers of one slice each, then one node reading all of
    /// it that depends on every writer.
    FanIn,
    /// One writer of a whole buffer, readers of all of it that depend on
    /// it, then one writer of all of it that depends on every reader.
    FanOut,
    /// A chain of small overlapping ranges: each node reads the 16 slices
    /// before its own and writes 16 slices from its own on.
    Overlapping,
    /// Two independent read-all chains, interleaved node by node.
    TwoChains,
}

impl Shape {
    pub const ALL: [Shape; 5] = [
        Shape::ChainReadAll,
        Shape::FanIn,
        Shape::FanOut,
        Shape::Overlapping,
        Shape::TwoChains,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Shape::ChainReadAll => "chain_read_all",
            Shape::FanIn => "fan_in",
            Shape::FanOut => "fan_out",
            Shape::Overlapping => "overlapping",
            Shape::TwoChains => "two_chains",
        }
    }
}

const SLICE: u64 = 4;

fn node(name: &str, accesses: Vec<Access>, deps: Vec<NodeId>) -> KernelNode {
    KernelNode {
        accesses,
        deps,
        ..KernelNode::named(name, [64, 1, 1], [64, 1, 1])
    }
}

/// `shape` with `nodes` nodes (at least 3).
pub fn build(shape: Shape, nodes: usize) -> Result<Graph, RecordError> {
    let nodes = nodes.max(3) as u64;
    let mut g = Graph::new(GraphOptions {
        mode: Mode::Latency,
        lanes: 2,
        max_in_flight: 1,
    });
    match shape {
        Shape::ChainReadAll | Shape::TwoChains => {
            let chains = if shape == Shape::TwoChains { 2 } else { 1 };
            let per = nodes / chains;
            let bufs = (0..chains)
                .map(|c| g.buffer(&format!("chain{c}"), per * SLICE))
                .collect::<Result<Vec<_>, _>>()?;
            let mut last: Vec<Option<NodeId>> = vec![None; chains as usize];
            for i in 0..per {
                for (c, &buf) in bufs.iter().enumerate() {
                    let accesses = vec![
                        Access::read(buf, 0, per * SLICE),
                        Access::write(buf, i * SLICE, SLICE),
                    ];
                    last[c] =
                        Some(g.kernel(node("step", accesses, last[c].into_iter().collect()))?);
                }
            }
        }
        Shape::FanIn => {
            let writers = nodes - 1;
            let buf = g.buffer("parts", writers * SLICE)?;
            let mut deps = Vec::with_capacity(writers as usize);
            for i in 0..writers {
                let w = Access::write(buf, i * SLICE, SLICE);
                deps.push(g.kernel(node("part", vec![w], Vec::new()))?);
            }
            let all = Access::read(buf, 0, writers * SLICE);
            g.kernel(node("gather", vec![all], deps))?;
        }
        Shape::FanOut => {
            let size = 1 << 20;
            let buf = g.buffer("shared", size)?;
            let out = g.buffer("out", (nodes - 2) * SLICE)?;
            let first = g.kernel(node("fill", vec![Access::write(buf, 0, size)], Vec::new()))?;
            let mut readers = Vec::with_capacity(nodes as usize);
            for i in 0..nodes - 2 {
                let accesses = vec![
                    Access::read(buf, 0, size),
                    Access::write(out, i * SLICE, SLICE),
                ];
                readers.push(g.kernel(node("use", accesses, vec![first]))?);
            }
            g.kernel(node("refill", vec![Access::write(buf, 0, size)], readers))?;
        }
        Shape::Overlapping => {
            const WIDTH: u64 = 16;
            let size = (nodes + WIDTH) * SLICE;
            let buf = g.buffer("window", size)?;
            let mut last: Option<NodeId> = None;
            for i in 0..nodes {
                let from = i.saturating_sub(WIDTH) * SLICE;
                let mut accesses = vec![Access::write(buf, i * SLICE, WIDTH * SLICE)];
                if i > 0 {
                    accesses.insert(0, Access::read(buf, from, i * SLICE - from));
                }
                last = Some(g.kernel(node("slide", accesses, last.into_iter().collect()))?);
            }
        }
    }
    Ok(g)
}
