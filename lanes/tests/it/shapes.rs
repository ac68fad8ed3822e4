//! Shapes that would make a naive hazard check quadratic: they compile
//! (quickly) to the expected boundaries.

use relaunch_lanes::{Access, BoundaryKind, Graph, GraphOptions, KernelNode, NodeId};

fn node(name: &str, accesses: Vec<Access>, deps: Vec<NodeId>) -> KernelNode {
    KernelNode {
        accesses,
        deps,
        ..KernelNode::named(name, [64, 1, 1], [64, 1, 1])
    }
}

/// One write read by a long chain of nodes that do other work in between.
#[test]
fn a_long_chain_reading_one_early_write() {
    let mut g = Graph::new(GraphOptions::default());
    let p = g.buffer("positions", 64).unwrap();
    let work = g.buffer("work", 64).unwrap();
    let mut last = g
        .kernel(node("init", vec![Access::write(p, 0, 64)], vec![]))
        .unwrap();
    for i in 0..20_000 {
        let acc = if i % 3 == 0 {
            vec![Access::read(p, 0, 64), Access::write(work, 0, 8)]
        } else {
            vec![Access::read(work, 0, 8), Access::write(work, 0, 8)]
        };
        last = g.kernel(node("step", acc, vec![last])).unwrap();
    }
    let plan = g.instantiate().unwrap();
    assert_eq!(plan.lane_count(), 1);
    let c = plan.boundary_counts()[0];
    assert_eq!(c.dispatches, 20_001);
    // Every step reads or overwrites what the previous one wrote.
    assert_eq!(c.boundaries(), 20_000);
}

/// Many independent readers joined before one writer: the writer needs a
/// single wait, and the readers run with no boundary between them.
#[test]
fn wide_fan_out_and_join() {
    let mut g = Graph::new(GraphOptions::default());
    let x = g.buffer("x", 1 << 20).unwrap();
    let out = g.buffer("out", 1 << 20).unwrap();
    let w = g
        .kernel(node("fill", vec![Access::write(x, 0, 1 << 20)], vec![]))
        .unwrap();
    let readers: Vec<NodeId> = (0..5_000u64)
        .map(|i| {
            let acc = vec![Access::read(x, 0, 1 << 20), Access::write(out, i * 16, 16)];
            g.kernel(node("read", acc, vec![w])).unwrap()
        })
        .collect();
    let join = g.kernel(node("join", vec![], readers)).unwrap();
    g.kernel(node("overwrite", vec![Access::write(x, 0, 64)], vec![join]))
        .unwrap();
    let plan = g.instantiate().unwrap();
    let lane = plan.lane(0).unwrap();
    let kinds: Vec<_> = lane
        .iter()
        .filter_map(|n| n.boundary_before.map(|b| b.kind))
        .collect();
    assert_eq!(kinds, vec![BoundaryKind::Rmw, BoundaryKind::Wait]);
    assert_eq!(lane.last().unwrap().kernel.display_name(), "overwrite");
}

/// Many components are merged into the lanes the cap allows.
#[test]
fn many_components_share_few_lanes() {
    let mut g = Graph::new(GraphOptions {
        lanes: 3,
        ..GraphOptions::default()
    });
    for i in 0..1_000 {
        let b = g.buffer(&format!("b{i}"), 8).unwrap();
        let a = g
            .kernel(node("a", vec![Access::write(b, 0, 8)], vec![]))
            .unwrap();
        g.kernel(node("b", vec![Access::read(b, 0, 8)], vec![a]))
            .unwrap();
    }
    let plan = g.instantiate().unwrap();
    assert_eq!(plan.lane_count(), 3);
    let counts = plan.boundary_counts();
    // Interleaved: every "a" of a lane, one rmw, then every "b".
    assert!(counts.iter().all(|c| c.boundaries() == 1), "{counts:?}");
    assert_eq!(counts.iter().map(|c| c.dispatches).sum::<usize>(), 2_000);
    assert!(counts.iter().all(|c| c.dispatches >= 666));
}

/// One missing dependency in a long chain over one buffer: the error comes
/// back quickly, lists the hazard the chain's first access exposes and says
/// the list is cut short.
#[test]
fn a_stray_writer_in_a_long_chain_is_reported_quickly() {
    let mut g = Graph::new(GraphOptions::default());
    let hidden = g.buffer("hidden", 256).unwrap();
    let rw = || vec![Access::read(hidden, 0, 256), Access::write(hidden, 0, 256)];
    let first = g.kernel(node("step", rw(), vec![])).unwrap();
    let mut last = first;
    for _ in 0..20_000 {
        last = g.kernel(node("step", rw(), vec![last])).unwrap();
    }
    let stray = g
        .kernel(node("stray", vec![Access::write(hidden, 0, 4)], vec![]))
        .unwrap();
    let start = std::time::Instant::now();
    let err = g.instantiate().unwrap_err();
    let relaunch_lanes::CompileError::Hazards { hazards, truncated } = err else {
        panic!("expected hazards");
    };
    assert!(truncated);
    assert!(!hazards.is_empty() && hazards.len() <= relaunch_lanes::error::MAX_REPORTED_HAZARDS);
    assert!(hazards
        .iter()
        .all(|h| h.second == stray.raw() && h.range == (0, 4)));
    // Not a benchmark: a generous bound that only a quadratic listing misses.
    assert!(start.elapsed().as_secs() < 60);
}

/// Each adversarial shape at 20k nodes compiles in well under the time a
/// per-pair analysis needs (the read-all chain took 4.3 s at 8k nodes in
/// a release build, quadratic); the bound is loose for debug builds on a
/// shared machine. Boundaries stay minimal: one per node in the chain.
#[test]
fn adversarial_shapes_compile_in_near_linear_time() {
    use relaunch_testsupport::adversarial::{build, Shape};
    for shape in Shape::ALL {
        let g = build(shape, 20_000).unwrap();
        let start = std::time::Instant::now();
        let plan = g.instantiate().unwrap();
        let took = start.elapsed();
        assert!(
            took < std::time::Duration::from_secs(20),
            "{}: {took:?}",
            shape.name()
        );
        let boundaries: usize = plan.boundary_counts().iter().map(|c| c.boundaries()).sum();
        match shape {
            Shape::ChainReadAll | Shape::Overlapping | Shape::TwoChains => {
                assert_eq!(
                    boundaries,
                    plan.node_count() - plan.lane_count(),
                    "{}",
                    shape.name()
                )
            }
            Shape::FanIn => assert_eq!(boundaries, 1),
            Shape::FanOut => assert_eq!(boundaries, 2),
        }
    }
}
