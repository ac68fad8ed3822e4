//! Explicitly ordered dependencies: the boundary derived from the stated
//! order, lanes joined only along them, hazards still checked.

use relaunch_lanes::{
    Access, BoundaryKind, CompileError, Graph, GraphOptions, HazardKind, KernelNode, Order,
};

fn named(name: &str) -> KernelNode {
    KernelNode::named(name, [64, 1, 1], [64, 1, 1])
}

fn kinds(g: &Graph) -> Vec<Vec<Option<BoundaryKind>>> {
    let plan = g.instantiate().unwrap();
    plan.lanes()
        .map(|lane| {
            lane.iter()
                .map(|n| n.boundary_before.map(|b| b.kind))
                .collect()
        })
        .collect()
}

#[test]
fn the_boundary_kind_follows_the_order_and_the_consumer() {
    for (order, vmem_only, want) in [
        (Order::Execution, false, BoundaryKind::Wait),
        (Order::Execution, true, BoundaryKind::Wait),
        (Order::Memory, false, BoundaryKind::Rmw),
        (Order::Memory, true, BoundaryKind::RmwVmem),
    ] {
        let mut g = Graph::new(GraphOptions::default());
        let a = g.kernel(named("a")).unwrap();
        let b = g
            .kernel(KernelNode {
                vmem_only,
                ..named("b")
            })
            .unwrap();
        g.add_ordered_dependency(a, b, order).unwrap();
        assert_eq!(kinds(&g), vec![vec![None, Some(want)]], "{order:?}");
        let plan = g.instantiate().unwrap();
        let boundary = plan.node(b).unwrap().boundary_before.unwrap();
        assert_eq!(boundary.reason.hazard, HazardKind::Order);
        assert_eq!(boundary.reason.buffer, None);
        assert_eq!((boundary.reason.producer, boundary.reason.consumer), (a, b));
        let why = plan.explain(&boundary);
        assert!(why.contains("ordered dependency after \"a\""), "{why}");
    }
}

#[test]
fn a_plain_dependency_still_places_nothing() {
    let mut g = Graph::new(GraphOptions::default());
    let a = g.kernel(named("a")).unwrap();
    let b = g.kernel(named("b")).unwrap();
    g.add_dependency(a, b).unwrap();
    assert_eq!(kinds(&g), vec![vec![None, None]]);
}

#[test]
fn the_stronger_of_two_orders_and_of_declared_accesses_wins() {
    let mut g = Graph::new(GraphOptions::default());
    let a = g.kernel(named("a")).unwrap();
    let b = g.kernel(named("b")).unwrap();
    g.add_ordered_dependency(a, b, Order::Memory).unwrap();
    g.add_ordered_dependency(a, b, Order::Execution).unwrap();
    assert_eq!(kinds(&g), vec![vec![None, Some(BoundaryKind::Rmw)]]);

    // An execution order over a read-after-write of declared bytes: rmw.
    let mut g = Graph::new(GraphOptions::default());
    let x = g.buffer("x", 64).unwrap();
    let a = g
        .kernel(KernelNode {
            accesses: vec![Access::write(x, 0, 64)],
            ..named("a")
        })
        .unwrap();
    let b = g
        .kernel(KernelNode {
            accesses: vec![Access::read(x, 0, 64)],
            ..named("b")
        })
        .unwrap();
    g.add_ordered_dependency(a, b, Order::Execution).unwrap();
    let plan = g.instantiate().unwrap();
    let boundary = plan.node(b).unwrap().boundary_before.unwrap();
    assert_eq!(boundary.kind, BoundaryKind::Rmw);
    assert_eq!(boundary.reason.hazard, HazardKind::Raw);
}

#[test]
fn an_order_already_covered_adds_no_boundary() {
    // a -> b (memory) and a -> c (memory), c after b in the lane: the rmw
    // before b already covers a for c.
    let mut g = Graph::new(GraphOptions::default());
    let a = g.kernel(named("a")).unwrap();
    let b = g.kernel(named("b")).unwrap();
    let c = g.kernel(named("c")).unwrap();
    g.add_ordered_dependency(a, b, Order::Memory).unwrap();
    g.add_ordered_dependency(a, c, Order::Memory).unwrap();
    g.add_dependency(b, c).unwrap();
    assert_eq!(kinds(&g), vec![vec![None, Some(BoundaryKind::Rmw), None]]);
}

#[test]
fn ordered_edges_join_lanes_and_only_their_nodes() {
    let mut g = Graph::new(GraphOptions {
        lanes: 4,
        ..GraphOptions::default()
    });
    let a = g.kernel(named("a")).unwrap();
    let b = g.kernel(named("b")).unwrap();
    let c = g.kernel(named("c")).unwrap();
    let d = g.kernel(named("d")).unwrap();
    g.add_ordered_dependency(a, b, Order::Memory).unwrap();
    g.add_ordered_dependency(c, d, Order::Execution).unwrap();
    let plan = g.instantiate().unwrap();
    assert_eq!(plan.lane_count(), 2);
    for (first, second) in [(a, b), (c, d)] {
        let (p, q) = (plan.locate(first).unwrap(), plan.locate(second).unwrap());
        assert_eq!(p.lane, q.lane);
        assert!(p.index < q.index);
    }
    assert_ne!(plan.locate(a).unwrap().lane, plan.locate(c).unwrap().lane);
}

#[test]
fn ordered_edges_order_hazards_and_refuse_cycles() {
    // Two writers of the same bytes are a hazard unless ordered.
    let mut g = Graph::new(GraphOptions::default());
    let x = g.buffer("x", 64).unwrap();
    let w = |g: &mut Graph, name: &str| {
        g.kernel(KernelNode {
            accesses: vec![Access::write(x, 0, 64)],
            ..named(name)
        })
        .unwrap()
    };
    let a = w(&mut g, "a");
    let b = w(&mut g, "b");
    assert!(matches!(g.instantiate(), Err(CompileError::Hazards { .. })));
    g.add_ordered_dependency(a, b, Order::Memory).unwrap();
    let plan = g.instantiate().unwrap();
    // The stated memory order is stronger than the WAW's wait.
    let boundary = plan.node(b).unwrap().boundary_before.unwrap();
    assert_eq!(boundary.kind, BoundaryKind::Rmw);
    let err = g
        .add_ordered_dependency(b, a, Order::Execution)
        .unwrap_err();
    assert!(err.to_string().contains("cycle"), "{err}");
    // The refused edge left no order behind.
    assert_eq!(g.instantiate().unwrap().fingerprint(), plan.fingerprint());
}
