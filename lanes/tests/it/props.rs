//! Property tests against brute force on small random graphs: a graph
//! either fails with exactly the hazards that really exist, or compiles to
//! lanes whose boundaries order every conflicting pair, with no boundary
//! that could be dropped or weakened.

// Brute force over node-index matrices reads best with index loops.
#![allow(clippy::needless_range_loop)]

use std::collections::BTreeSet;

use proptest::prelude::*;
use relaunch_lanes::{
    Access, BoundaryKind, BufferId, CompileError, Graph, GraphOptions, HazardKind, KernelNode,
    Mode, NodeId, Plan, RecordError,
};

const BUF_SIZE: u64 = 16;

#[derive(Debug, Clone)]
struct NodeSpec {
    accesses: Vec<(u8, u64, u64, bool)>,
    deps: u16,
    vmem_only: bool,
    name: u8,
}

#[derive(Debug, Clone)]
struct GraphSpec {
    buffers: u8,
    nodes: Vec<NodeSpec>,
    extra_edges: Vec<(u8, u8)>,
    dataflow: bool,
    lanes: usize,
    mode: u8,
    in_flight: usize,
}

fn access() -> impl Strategy<Value = (u8, u64, u64, bool)> {
    (0u8..3, 1u64..=8, 0u64..16, any::<bool>())
        .prop_map(|(b, len, off, w)| (b, off % (BUF_SIZE - len + 1), len, w))
}

fn graph_spec() -> impl Strategy<Value = GraphSpec> {
    let node = (
        prop::collection::vec(access(), 0..4),
        any::<u16>(),
        any::<bool>(),
        0u8..3,
    )
        .prop_map(|(accesses, deps, vmem_only, name)| NodeSpec {
            accesses,
            deps,
            vmem_only,
            name,
        });
    (
        1u8..=3,
        prop::collection::vec(node, 1..9),
        prop::collection::vec((0u8..9, 0u8..9), 0..4),
        any::<bool>(),
        1usize..=4,
        0u8..3,
        1usize..=3,
    )
        .prop_map(
            |(buffers, nodes, extra_edges, dataflow, lanes, mode, in_flight)| GraphSpec {
                buffers,
                nodes,
                extra_edges,
                dataflow,
                lanes,
                mode,
                in_flight,
            },
        )
}

fn overlap(a: &Access, b: &Access) -> Option<(u64, u64)> {
    (a.buffer == b.buffer && (a.write || b.write) && a.offset < b.end() && b.offset < a.end())
        .then(|| (a.offset.max(b.offset), a.end().min(b.end())))
}

/// Build the graph; returns it with its reachability matrix.
fn build(spec: &GraphSpec) -> (Graph, Vec<Vec<bool>>) {
    build_declaring(spec, &[0, 1, 2], BUF_SIZE, 0)
}

/// Build with logical buffer `i` declared at position `order[i]`, buffer
/// `i` of size `size + i * grow`.
fn build_declaring(
    spec: &GraphSpec,
    order: &[usize],
    size: u64,
    grow: u64,
) -> (Graph, Vec<Vec<bool>>) {
    let mode = [Mode::Latency, Mode::Overlap, Mode::Throughput][spec.mode as usize];
    let max_in_flight = if mode == Mode::Latency {
        1
    } else {
        spec.in_flight
    };
    let mut graph = Graph::new(GraphOptions {
        mode,
        lanes: spec.lanes,
        max_in_flight,
    });
    let count = spec.buffers as usize;
    let mut declared: Vec<(usize, BufferId)> = Vec::new();
    let mut by_position: Vec<usize> = (0..count).collect();
    by_position.sort_by_key(|&i| order[i]);
    for i in by_position {
        let id = graph
            .buffer(&format!("b{i}"), size + i as u64 * grow)
            .unwrap();
        declared.push((i, id));
    }
    declared.sort();
    let bufs: Vec<BufferId> = declared.into_iter().map(|(_, id)| id).collect();
    let mut all: Vec<Vec<Access>> = Vec::new();
    for (i, n) in spec.nodes.iter().enumerate() {
        let accesses: Vec<Access> = n
            .accesses
            .iter()
            .map(|&(b, off, len, write)| Access {
                buffer: bufs[b as usize % bufs.len()],
                offset: off,
                len,
                write,
            })
            .collect();
        let mut deps: Vec<NodeId> = (0..i)
            .filter(|j| n.deps & (1 << j) != 0 && n.deps % 3 == 0)
            .map(|j| NodeId::from_raw(j as u32))
            .collect();
        if spec.dataflow {
            for (j, earlier) in all.iter().enumerate() {
                if earlier
                    .iter()
                    .any(|a| accesses.iter().any(|b| overlap(a, b).is_some()))
                {
                    deps.push(NodeId::from_raw(j as u32));
                }
            }
        }
        graph
            .kernel(KernelNode {
                accesses: accesses.clone(),
                deps,
                vmem_only: n.vmem_only,
                ..KernelNode::named(["k0", "k1", "k2"][n.name as usize], [64, 1, 1], [64, 1, 1])
            })
            .unwrap();
        all.push(accesses);
    }
    let n = spec.nodes.len();
    for &(from, to) in &spec.extra_edges {
        let (from, to) = (from as usize % n, to as usize % n);
        let reach = closure(&graph);
        let result =
            graph.add_dependency(NodeId::from_raw(from as u32), NodeId::from_raw(to as u32));
        if from == to || reach[to][from] {
            assert!(
                matches!(result, Err(RecordError::Cycle { .. })),
                "{result:?}"
            );
            assert_eq!(
                closure(&graph),
                reach,
                "refused edge must not change the graph"
            );
        } else {
            assert_eq!(result, Ok(()));
        }
    }
    let reach = closure(&graph);
    (graph, reach)
}

/// `reach[a][b]`: a dependency path leads from a to b.
fn closure(graph: &Graph) -> Vec<Vec<bool>> {
    let n = graph.node_count();
    let mut reach = vec![vec![false; n]; n];
    for b in 0..n {
        for d in &graph.node(NodeId::from_raw(b as u32)).unwrap().deps {
            reach[d.raw() as usize][b] = true;
        }
    }
    for k in 0..n {
        for a in 0..n {
            if reach[a][k] {
                for b in 0..n {
                    if reach[k][b] {
                        reach[a][b] = true;
                    }
                }
            }
        }
    }
    reach
}

fn accesses(graph: &Graph, n: usize) -> &[Access] {
    graph.node(NodeId::from_raw(n as u32)).unwrap().accesses
}

/// Every unordered conflicting pair, keyed like the error reports it.
fn brute_hazards(
    graph: &Graph,
    reach: &[Vec<bool>],
) -> BTreeSet<(u32, u32, u32, u64, u64, HazardKind)> {
    let mut out = BTreeSet::new();
    let n = graph.node_count();
    for a in 0..n {
        for b in a + 1..n {
            if reach[a][b] || reach[b][a] {
                continue;
            }
            for x in accesses(graph, a) {
                for y in accesses(graph, b) {
                    if let Some((s, e)) = overlap(x, y) {
                        let kind = match (x.write, y.write) {
                            (true, true) => HazardKind::Waw,
                            (true, false) => HazardKind::Raw,
                            _ => HazardKind::War,
                        };
                        out.insert((a as u32, b as u32, x.buffer.raw(), s, e, kind));
                    }
                }
            }
        }
    }
    out
}

/// The boundary kind `c` needs after `p` (p runs first), if they conflict.
fn need(graph: &Graph, p: usize, c: usize) -> Option<BoundaryKind> {
    let vmem = graph.node(NodeId::from_raw(c as u32)).unwrap().vmem_only;
    let mut best = None;
    for x in accesses(graph, p) {
        for y in accesses(graph, c) {
            if overlap(x, y).is_some() {
                let k = match (x.write, y.write) {
                    (true, false) if vmem => BoundaryKind::RmwVmem,
                    (true, false) => BoundaryKind::Rmw,
                    _ => BoundaryKind::Wait,
                };
                best = best.max(Some(k));
            }
        }
    }
    best
}

fn check_plan(graph: &Graph, reach: &[Vec<bool>], plan: &Plan) {
    let n = graph.node_count();
    let opts = graph.options();
    assert!(plan.lane_count() >= 1 && plan.lane_count() <= opts.lanes);
    let mut seen = vec![false; n];
    for (l, lane) in plan.lanes().enumerate() {
        assert!(
            lane[0].boundary_before.is_none(),
            "a lane never starts with a boundary"
        );
        for (i, node) in lane.iter().enumerate() {
            let id = node.node.raw() as usize;
            assert!(!seen[id], "node {id} planned twice");
            seen[id] = true;
            let at = plan.locate(node.node).unwrap();
            assert_eq!((at.lane, at.index), (l, i));
        }
    }
    assert!(seen.iter().all(|&s| s), "every node is planned");
    let loc = |x: usize| plan.locate(NodeId::from_raw(x as u32)).unwrap();
    let kind_at =
        |lane: usize, i: usize| plan.lane(lane).unwrap()[i].boundary_before.map(|b| b.kind);
    for a in 0..n {
        for b in 0..n {
            if reach[a][b] {
                assert_eq!(loc(a).lane, loc(b).lane, "dependent nodes share a lane");
                assert!(loc(a).index < loc(b).index, "lane order is topological");
            }
            let Some(k) = (a != b).then(|| need(graph, a, b)).flatten() else {
                continue;
            };
            if !reach[a][b] {
                continue; // the pair is ordered the other way round
            }
            let (la, lb) = (loc(a), loc(b));
            let covered =
                (la.index + 1..=lb.index).any(|j| kind_at(la.lane, j).is_some_and(|x| x.covers(k)));
            assert!(covered, "{a} -> {b} needs {k} in lane {}", la.lane);
        }
    }
    // Minimality: every boundary is needed by its node against some earlier
    // node, at its kind, and no other boundary in between already covers it.
    for (l, lane) in plan.lanes().enumerate() {
        for (j, node) in lane.iter().enumerate() {
            let Some(b) = node.boundary_before else {
                continue;
            };
            let c = node.node.raw() as usize;
            let justified = (0..j).any(|i| {
                let p = lane[i].node.raw() as usize;
                need(graph, p, c).is_some_and(|k| k >= b.kind)
                    && !(i + 1..j).any(|m| kind_at(l, m).is_some_and(|x| x.covers(b.kind)))
            });
            assert!(
                justified,
                "boundary {} before node {c} in lane {l} is not needed",
                b.kind
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_graphs_fail_with_real_hazards_or_compile_safely(spec in graph_spec()) {
        let (graph, reach) = build(&spec);
        let expected = brute_hazards(&graph, &reach);
        match graph.instantiate() {
            Ok(plan) => {
                prop_assert!(expected.is_empty(), "missed hazards {expected:?}");
                check_plan(&graph, &reach, &plan);
                let again = graph.instantiate().unwrap();
                prop_assert_eq!(plan.fingerprint(), again.fingerprint());
            }
            Err(CompileError::Hazards { hazards, truncated }) => {
                prop_assert!(!truncated);
                let got: BTreeSet<_> = hazards
                    .iter()
                    .map(|h| (h.first, h.second, h.buffer, h.range.0, h.range.1, h.kind))
                    .collect();
                prop_assert_eq!(got.len(), hazards.len(), "hazards listed once each");
                prop_assert_eq!(got, expected);
            }
            Err(other) => prop_assert!(false, "unexpected error {other}"),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Declaring the buffers in another order (other handle numbers) gives
    /// the same plan fingerprint, or the same hazards.
    #[test]
    fn fingerprint_does_not_depend_on_buffer_numbering(
        spec in graph_spec(),
        order in Just(vec![0usize, 1, 2]).prop_shuffle(),
    ) {
        let (a, _) = build_declaring(&spec, &[0, 1, 2], BUF_SIZE, 1);
        let (b, _) = build_declaring(&spec, &order, BUF_SIZE, 1);
        match (a.instantiate(), b.instantiate()) {
            (Ok(pa), Ok(pb)) => prop_assert_eq!(pa.fingerprint(), pb.fingerprint()),
            (Err(CompileError::Hazards { hazards: ha, .. }), Err(CompileError::Hazards { hazards: hb, .. })) => {
                let key = |h: &relaunch_lanes::Hazard| (h.first, h.second, h.buffer_label.clone(), h.range, h.kind);
                let mut ka: Vec<_> = ha.iter().map(key).collect();
                let mut kb: Vec<_> = hb.iter().map(key).collect();
                ka.sort();
                kb.sort();
                prop_assert_eq!(ka, kb);
            }
            (x, y) => prop_assert!(false, "outcomes differ: {:?} vs {:?}", x.is_ok(), y.is_ok()),
        }
    }
}

/// The generator reaches both outcomes, multi-lane plans and every
/// boundary kind, so the property above is not vacuous.
#[test]
fn generator_exercises_every_outcome() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut ok, mut hazards, mut multi_lane) = (0, 0, 0);
    let mut kinds = BTreeSet::new();
    for _ in 0..400 {
        let spec = graph_spec().new_tree(&mut runner).unwrap().current();
        let (graph, _) = build(&spec);
        match graph.instantiate() {
            Ok(plan) => {
                ok += 1;
                multi_lane += usize::from(plan.lane_count() > 1);
                for lane in plan.lanes() {
                    kinds.extend(
                        lane.iter()
                            .filter_map(|n| n.boundary_before.map(|b| b.kind)),
                    );
                }
            }
            Err(_) => hazards += 1,
        }
    }
    assert!(
        ok > 50 && hazards > 50 && multi_lane > 20,
        "ok {ok} hazards {hazards} multi {multi_lane}"
    );
    assert_eq!(kinds.len(), 3, "{kinds:?}");
}
