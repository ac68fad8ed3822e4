//! Record-time errors: each refused call says what was wrong and leaves
//! the graph unchanged and usable.

use relaunch_lanes::{
    Access, BufferId, Graph, GraphOptions, KernelNode, KernelRef, NodeId, RecordError,
};

fn node(name: &str) -> KernelNode {
    KernelNode::named(name, [64, 1, 1], [64, 1, 1])
}

#[test]
fn buffers_need_a_label_and_bytes() {
    let mut g = Graph::new(GraphOptions::default());
    assert_eq!(
        g.buffer("x", 0),
        Err(RecordError::ZeroSizeBuffer { label: "x".into() })
    );
    assert_eq!(
        g.buffer("", 4),
        Err(RecordError::EmptyName {
            what: "buffer label"
        })
    );
    let long = "x".repeat(2000);
    assert!(matches!(
        g.buffer(&long, 4),
        Err(RecordError::NameTooLong { len: 2000, .. })
    ));
    assert_eq!(g.buffer_count(), 0);
}

#[test]
fn bad_handles_are_refused() {
    let mut g = Graph::new(GraphOptions::default());
    let err = g
        .kernel(KernelNode {
            accesses: vec![Access::read(BufferId::from_raw(3), 0, 4)],
            ..node("k")
        })
        .unwrap_err();
    assert_eq!(
        err,
        RecordError::UnknownBuffer {
            buffer: 3,
            count: 0
        }
    );
    assert!(err.to_string().contains("unknown buffer handle 3"));
    let err = g
        .kernel(KernelNode {
            deps: vec![NodeId::from_raw(9)],
            ..node("k")
        })
        .unwrap_err();
    assert_eq!(err, RecordError::UnknownNode { node: 9, count: 0 });
    let a = g.kernel(node("a")).unwrap();
    assert_eq!(
        g.add_dependency(a, NodeId::from_raw(5)),
        Err(RecordError::UnknownNode { node: 5, count: 1 })
    );
    assert_eq!(g.node_count(), 1);
}

#[test]
fn regions_must_be_nonempty_and_inside_the_buffer() {
    let mut g = Graph::new(GraphOptions::default());
    let b = g.buffer("act", 100).unwrap();
    let with = |a: Access| KernelNode {
        accesses: vec![a],
        ..node("k")
    };
    let mut g2 = g.clone();
    assert!(matches!(
        g2.kernel(with(Access::read(b, 10, 0))),
        Err(RecordError::ZeroLengthAccess { offset: 10, .. })
    ));
    assert!(matches!(
        g2.kernel(with(Access::write(b, u64::MAX, 2))),
        Err(RecordError::AccessOverflow { .. })
    ));
    let err = g.kernel(with(Access::read(b, 90, 20))).unwrap_err();
    assert!(matches!(
        err,
        RecordError::AccessOutOfBounds { size: 100, .. }
    ));
    assert!(
        err.to_string()
            .contains("outside buffer \"act\" of 100 bytes"),
        "{err}"
    );
    assert!(g.kernel(with(Access::read(b, 90, 10))).is_ok());
}

#[test]
fn geometry_and_sizes_are_checked() {
    let mut g = Graph::new(GraphOptions::default());
    let err = g
        .kernel(KernelNode::named("k", [0, 1, 1], [64, 1, 1]))
        .unwrap_err();
    assert!(matches!(err, RecordError::ZeroGeometry { .. }));
    assert!(err.to_string().contains("at least 1 work-item"));
    assert!(matches!(
        g.kernel(KernelNode::named("k", [64, 1, 1], [64, 1, 0])),
        Err(RecordError::ZeroGeometry { .. })
    ));
    let err = g
        .kernel(KernelNode::named("big", [1 << 31, 1 << 31, 4], [1, 1, 1]))
        .unwrap_err();
    assert!(matches!(err, RecordError::GridTooLarge { .. }), "{err}");
    assert!(err.to_string().contains("\"big\""), "{err}");
    assert!(matches!(
        g.kernel(KernelNode::named("k", [64, 1, 1], [64, 32, 1])),
        Err(RecordError::BlockTooLarge { items: 2048, .. })
    ));
    assert!(matches!(
        g.kernel(KernelNode {
            kernarg: vec![0; 70_000],
            ..node("k")
        }),
        Err(RecordError::KernargTooLarge { len: 70_000, .. })
    ));
    assert!(matches!(
        g.kernel(KernelNode {
            dynamic_group_bytes: 1 << 20,
            ..node("k")
        }),
        Err(RecordError::GroupMemoryTooLarge { .. })
    ));
    assert!(matches!(
        g.kernel(KernelNode {
            kernel: KernelRef::Module {
                module: 1,
                symbol: String::new()
            },
            ..node("k")
        }),
        Err(RecordError::EmptyName { .. })
    ));
    assert_eq!(g.node_count(), 0);
}

#[test]
fn an_edge_closing_a_cycle_is_refused_and_the_graph_stays_usable() {
    let mut g = Graph::new(GraphOptions::default());
    let a = g.kernel(node("a")).unwrap();
    let b = g
        .kernel(KernelNode {
            deps: vec![a],
            ..node("b")
        })
        .unwrap();
    let c = g.kernel(node("c")).unwrap();
    g.add_dependency(b, c).unwrap();
    let err = g.add_dependency(c, a).unwrap_err();
    assert_eq!(
        err,
        RecordError::Cycle {
            from: 2,
            from_name: "c".into(),
            to: 0,
            to_name: "a".into()
        }
    );
    assert!(err
        .to_string()
        .contains("would close a cycle; it was not added"));
    assert!(matches!(
        g.add_dependency(a, a),
        Err(RecordError::Cycle { .. })
    ));
    assert!(g.node(a).unwrap().deps.is_empty());
    // Repeating an existing edge is fine; a backward edge without a cycle too.
    g.add_dependency(a, b).unwrap();
    let d = g.kernel(node("d")).unwrap();
    g.add_dependency(d, a).unwrap();
    assert!(matches!(
        g.add_dependency(c, d),
        Err(RecordError::Cycle { .. })
    ));
    let plan = g.instantiate().unwrap();
    let order: Vec<NodeId> = plan.lane(0).unwrap().iter().map(|n| n.node).collect();
    assert_eq!(order, vec![d, a, b, c]);
}
