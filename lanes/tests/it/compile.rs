//! Instantiate: hazards in one error, boundary kinds, lanes and modes,
//! fingerprint invariance, lowering, kernarg patches, DOT.

use std::convert::Infallible;

use relaunch_lanes::{
    Access, BoundaryKind, BoundaryReason, CompileError, Graph, GraphOptions, HazardKind,
    KernelNode, LaneSink, LowerError, Mode, NodeId, PatchError, PlannedNode,
};

fn node(name: &str, accesses: Vec<Access>, deps: Vec<NodeId>) -> KernelNode {
    KernelNode {
        accesses,
        deps,
        ..KernelNode::named(name, [64, 1, 1], [64, 1, 1])
    }
}

fn boundaries(g: &Graph) -> Vec<Option<BoundaryKind>> {
    let plan = g.instantiate().unwrap();
    assert_eq!(plan.lane_count(), 1);
    plan.lane(0)
        .unwrap()
        .iter()
        .map(|n| n.boundary_before.map(|b| b.kind))
        .collect()
}

#[test]
fn every_hazard_is_listed_in_one_error() {
    let mut g = Graph::new(GraphOptions::default());
    let x = g.buffer("x", 64).unwrap();
    let y = g.buffer("y", 64).unwrap();
    g.kernel(node(
        "w1",
        vec![Access::write(x, 0, 32), Access::read(y, 0, 8)],
        vec![],
    ))
    .unwrap();
    g.kernel(node("w2", vec![Access::write(x, 16, 32)], vec![]))
        .unwrap();
    g.kernel(node(
        "r",
        vec![Access::read(x, 40, 8), Access::write(y, 4, 4)],
        vec![],
    ))
    .unwrap();
    let CompileError::Hazards { hazards, truncated } = g.instantiate().unwrap_err() else {
        panic!("expected hazards");
    };
    assert!(!truncated);
    let got: Vec<_> = hazards
        .iter()
        .map(|h| (h.first, h.second, h.buffer_label.as_str(), h.range, h.kind))
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 1, "x", (16, 32), HazardKind::Waw),
            (0, 2, "y", (4, 8), HazardKind::War),
            (1, 2, "x", (40, 48), HazardKind::Raw),
        ]
    );
}

#[test]
fn boundaries_are_the_cheapest_sufficient_and_shared() {
    let mut g = Graph::new(GraphOptions::default());
    let b = g.buffer("b", 64).unwrap();
    let c = g.buffer("c", 64).unwrap();
    let r = g
        .kernel(node("read", vec![Access::read(b, 0, 8)], vec![]))
        .unwrap();
    // Write after read: only wait.
    let w = g
        .kernel(node("write", vec![Access::write(b, 0, 8)], vec![r]))
        .unwrap();
    // Dependency carrying no data: nothing.
    let o = g
        .kernel(node("other", vec![Access::write(c, 0, 8)], vec![w]))
        .unwrap();
    // Read after write of both: one rmw covers both producers.
    let rr = g
        .kernel(node(
            "both",
            vec![Access::read(b, 0, 8), Access::read(c, 0, 8)],
            vec![o],
        ))
        .unwrap();
    // Writes after a read that the rmw already ordered: covered.
    g.kernel(node("again", vec![Access::write(c, 32, 8)], vec![rr]))
        .unwrap();
    assert_eq!(
        boundaries(&g),
        vec![
            None,
            Some(BoundaryKind::Wait),
            None,
            Some(BoundaryKind::Rmw),
            None
        ]
    );
}

#[test]
fn covered_needs_are_not_repeated() {
    let mut g = Graph::new(GraphOptions::default());
    let b = g.buffer("b", 64).unwrap();
    let p = g
        .kernel(node(
            "p",
            vec![Access::write(b, 0, 8), Access::write(b, 8, 8)],
            vec![],
        ))
        .unwrap();
    let c1 = g
        .kernel(node("c1", vec![Access::read(b, 0, 8)], vec![p]))
        .unwrap();
    // Also reads what p wrote, but the rmw before c1 already covers it.
    g.kernel(node("c2", vec![Access::read(b, 8, 8)], vec![c1]))
        .unwrap();
    assert_eq!(boundaries(&g), vec![None, Some(BoundaryKind::Rmw), None]);
}

#[test]
fn vmem_only_consumers_get_rmw_vmem_and_others_still_get_rmw() {
    let mut g = Graph::new(GraphOptions::default());
    let b = g.buffer("b", 64).unwrap();
    let p = g
        .kernel(node("p", vec![Access::write(b, 0, 16)], vec![]))
        .unwrap();
    let v = g
        .kernel(KernelNode {
            vmem_only: true,
            ..node("v", vec![Access::read(b, 0, 8)], vec![p])
        })
        .unwrap();
    g.kernel(node("s", vec![Access::read(b, 8, 8)], vec![v]))
        .unwrap();
    assert_eq!(
        boundaries(&g),
        vec![None, Some(BoundaryKind::RmwVmem), Some(BoundaryKind::Rmw)]
    );
}

fn two_chains(mode: Mode, lanes: usize, max_in_flight: usize, swap: bool) -> Graph {
    let mut g = Graph::new(GraphOptions {
        mode,
        lanes,
        max_in_flight,
    });
    // `swap` declares buffers and nodes in another order: same plan.
    let (first, second) = if swap { ("b", "a") } else { ("a", "b") };
    let mut bufs = std::collections::HashMap::new();
    for label in [first, second] {
        bufs.insert(label, g.buffer(label, 64).unwrap());
    }
    let mut last: std::collections::HashMap<&str, NodeId> = Default::default();
    let lens = [("a", 3), ("b", 2)];
    for step in 0..3 {
        for (label, len) in if swap { [lens[1], lens[0]] } else { lens } {
            if step >= len {
                continue;
            }
            let deps = last.get(label).into_iter().copied().collect();
            let acc = vec![
                Access::read(bufs[label], 0, 8),
                Access::write(bufs[label], 0, 8),
            ];
            let id = g
                .kernel(node(&format!("{label}{step}"), acc, deps))
                .unwrap();
            last.insert(label, id);
        }
    }
    g
}

#[test]
fn lanes_follow_components_and_the_lane_cap() {
    let plan = two_chains(Mode::Latency, 4, 1, false)
        .instantiate()
        .unwrap();
    assert_eq!(plan.lane_count(), 2, "two components, cap 4");
    // The longer chain goes first.
    assert_eq!(plan.lane(0).unwrap().len(), 3);
    let plan = two_chains(Mode::Overlap, 1, 2, false)
        .instantiate()
        .unwrap();
    assert_eq!(plan.lane_count(), 1);
    let names: Vec<_> = plan
        .lane(0)
        .unwrap()
        .iter()
        .map(|n| n.kernel.display_name().to_string())
        .collect();
    assert_eq!(
        names,
        ["a0", "b0", "a1", "b1", "a2"],
        "merged chains interleave"
    );
    assert_eq!(plan.boundary_counts()[0].rmw, 2);
    assert_eq!(
        two_chains(Mode::Throughput, 4, 2, false)
            .instantiate()
            .unwrap()
            .lane_count(),
        2
    );
    assert_eq!(
        two_chains(Mode::Throughput, 4, 3, false)
            .instantiate()
            .unwrap()
            .lane_count(),
        1
    );
}

#[test]
fn meaningless_options_are_refused() {
    for (mode, lanes, in_flight, needle) in [
        (Mode::Latency, 0, 1, "lanes is 0"),
        (Mode::Overlap, 1, 0, "max_in_flight is 0"),
        (Mode::Latency, 1, 2, "use throughput mode"),
    ] {
        let err = two_chains(mode, lanes, in_flight, false)
            .instantiate()
            .unwrap_err();
        assert!(
            matches!(&err, CompileError::Options(m) if m.contains(needle)),
            "{err}"
        );
    }
    let err = Graph::new(GraphOptions::default())
        .instantiate()
        .unwrap_err();
    assert_eq!(err, CompileError::Empty);
}

#[test]
fn fingerprint_ignores_handle_numbering_and_sees_semantic_changes() {
    let a = two_chains(Mode::Latency, 2, 1, false)
        .instantiate()
        .unwrap();
    let b = two_chains(Mode::Latency, 2, 1, true).instantiate().unwrap();
    assert_eq!(a.fingerprint(), b.fingerprint());
    let one_lane = two_chains(Mode::Latency, 1, 1, false)
        .instantiate()
        .unwrap();
    assert_ne!(a.fingerprint(), one_lane.fingerprint());

    let base = || {
        let mut g = Graph::new(GraphOptions::default());
        let x = g.buffer("x", 64).unwrap();
        (g, x)
    };
    let build = |grid: u32, len: u64, kernarg: usize, write: bool| {
        let (mut g, x) = base();
        let p = g
            .kernel(node("p", vec![Access::write(x, 0, 8)], vec![]))
            .unwrap();
        let acc = Access {
            buffer: x,
            offset: 0,
            len,
            write,
        };
        g.kernel(KernelNode {
            grid: [grid, 1, 1],
            kernarg: vec![0; kernarg],
            ..node("c", vec![acc], vec![p])
        })
        .unwrap();
        g.instantiate().unwrap().fingerprint()
    };
    let reference = build(64, 8, 8, false);
    assert_eq!(reference, build(64, 8, 8, false));
    for changed in [
        build(128, 8, 8, false),
        build(64, 4, 8, false),
        build(64, 8, 16, false),
        build(64, 8, 8, true),
    ] {
        assert_ne!(reference, changed);
    }
}

#[derive(Default)]
struct Collect(Vec<String>);

impl LaneSink for Collect {
    type Error = Infallible;
    fn dispatch(&mut self, node: &PlannedNode) -> Result<(), Infallible> {
        self.0.push(node.kernel.display_name().to_string());
        Ok(())
    }
    fn boundary(&mut self, kind: BoundaryKind, reason: &BoundaryReason) -> Result<(), Infallible> {
        self.0.push(format!("{kind}:{}", reason.hazard));
        Ok(())
    }
}

#[test]
fn lowering_mock_launch_and_patches() {
    let mut plan = two_chains(Mode::Latency, 2, 1, false)
        .instantiate()
        .unwrap();
    let mut sink = Collect::default();
    plan.lower_lane(1, &mut sink).unwrap();
    assert_eq!(sink.0, ["b0", "rmw:RAW", "b1"]);
    assert!(matches!(
        plan.lower_lane(2, &mut sink),
        Err(LowerError::NoSuchLane { lane: 2, count: 2 })
    ));

    let mock = plan.launch_mock();
    assert_eq!(mock.lane_count(), 2);
    assert_eq!(mock.dispatch_order(0), [0, 2, 4].map(NodeId::from_raw));
    assert_eq!(mock.dispatch_order(1), [1, 3].map(NodeId::from_raw));

    let b1 = NodeId::from_raw(3);
    let at = plan.locate(b1).unwrap();
    assert_eq!((at.lane, at.index), (1, 1));
    assert_eq!(
        plan.set_node_kernargs(b1, 0, &[1]),
        Err(PatchError::OutOfBounds {
            node: 3,
            offset: 0,
            len: 1,
            size: 0
        })
    );
    assert!(matches!(
        plan.set_node_kernargs(NodeId::from_raw(9), 0, &[]),
        Err(PatchError::UnknownNode { .. })
    ));
}

#[test]
fn kernarg_patches_reach_the_mock() {
    let mut g = Graph::new(GraphOptions::default());
    let n = g
        .kernel(KernelNode {
            kernarg: vec![0; 8],
            ..node("k", vec![], vec![])
        })
        .unwrap();
    let mut plan = g.instantiate().unwrap();
    plan.set_node_kernargs(n, 4, &7u32.to_le_bytes()).unwrap();
    let events = plan.launch_mock().events(0).to_vec();
    assert_eq!(
        events,
        vec![relaunch_lanes::MockEvent::Dispatch {
            node: n,
            kernel: "k".into(),
            kernarg: vec![0, 0, 0, 0, 7, 0, 0, 0]
        }]
    );
    assert!(plan.set_node_kernargs(n, usize::MAX, &[1]).is_err());
}

#[test]
fn dot_has_one_cluster_per_lane_and_labelled_boundaries() {
    let plan = two_chains(Mode::Latency, 2, 1, false)
        .instantiate()
        .unwrap();
    let dot = plan.to_dot();
    assert!(dot.starts_with("digraph relaunch_plan {"));
    assert_eq!(dot.matches("subgraph cluster_lane").count(), 2);
    assert!(dot.contains("subgraph cluster_lane0 {\n    label=\"lane 0\";"));
    assert!(
        dot.contains("n0 -> n2 [label=\"rmw (RAW a [0, 8) from #0)\", style=bold];"),
        "{dot}"
    );
    assert!(
        dot.contains("n1 [label=\"b0\\n#1 grid 64x1x1 block 64x1x1\"];"),
        "{dot}"
    );
    assert!(dot.trim_end().ends_with('}'));
}

#[test]
fn kernel_identity_enters_the_fingerprint() {
    let fp = |node: KernelNode| {
        let mut g = Graph::new(GraphOptions::default());
        g.kernel(node).unwrap();
        g.instantiate().unwrap().fingerprint()
    };
    let named = fp(KernelNode::named("k", [64, 1, 1], [64, 1, 1]));
    let module1 = fp(KernelNode::module(1, "k", [64, 1, 1], [64, 1, 1]));
    let module2 = fp(KernelNode::module(2, "k", [64, 1, 1], [64, 1, 1]));
    assert_ne!(named, module1);
    assert_ne!(module1, module2);
    assert_eq!(
        module1,
        fp(KernelNode::module(1, "k", [64, 1, 1], [64, 1, 1]))
    );
}

#[test]
fn a_plan_is_a_snapshot_shareable_across_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<relaunch_lanes::Plan>();

    let mut g = Graph::new(GraphOptions::default());
    let n = g
        .kernel(KernelNode {
            kernarg: vec![1, 2, 3, 4],
            ..node("k", vec![], vec![])
        })
        .unwrap();
    let mut plan = g.instantiate().unwrap();
    plan.set_node_kernargs(n, 0, &[9]).unwrap();
    // The graph keeps its bytes and can still be edited; the plan does not
    // see later edits.
    assert_eq!(g.node(n).unwrap().kernarg, &[1, 2, 3, 4]);
    let m = g.kernel(node("later", vec![], vec![n])).unwrap();
    assert_eq!(plan.node_count(), 1);
    assert!(plan.locate(m).is_none());
    assert_eq!(plan.node(n).unwrap().kernarg, &[9, 2, 3, 4]);
    let again = g.instantiate().unwrap();
    assert_eq!(again.node_count(), 2);
    assert_ne!(again.fingerprint(), plan.fingerprint());
    assert_eq!(again.deps(m), vec![n]);
}
