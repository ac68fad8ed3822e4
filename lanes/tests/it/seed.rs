//! The seed's two-node project/consume graph.

use relaunch_lanes::{
    Access, BoundaryKind, CompileError, Graph, GraphOptions, HazardKind, KernelNode, MockEvent,
    NodeId,
};

fn project_consume(with_dependency: bool) -> (Graph, NodeId, NodeId) {
    let mut graph = Graph::new(GraphOptions::default());
    let activations = graph.buffer("activations", 4096).unwrap();
    let project = graph
        .kernel(KernelNode {
            accesses: vec![
                Access::read(activations, 0, 2048),
                Access::write(activations, 2048, 2048),
            ],
            ..KernelNode::named("project", [32, 1, 1], [64, 1, 1])
        })
        .unwrap();
    let consume = graph
        .kernel(KernelNode {
            accesses: vec![Access::read(activations, 2048, 2048)],
            deps: if with_dependency {
                vec![project]
            } else {
                vec![]
            },
            ..KernelNode::named("consume", [32, 1, 1], [64, 1, 1])
        })
        .unwrap();
    (graph, project, consume)
}

/// Pinned: any change to the canonical serialization or to planning of
/// this graph must be deliberate (and bump the format version).
const SEED_FINGERPRINT: &str = "8ed19af46018b098fa8585069f244ca27457ba526dafffed527fb2c29942eaab";

#[test]
fn seed_graph_compiles_to_one_lane_with_one_rmw_boundary() {
    let (graph, project, consume) = project_consume(true);
    let plan = graph.instantiate().unwrap();
    assert_eq!(plan.lane_count(), 1);
    let lane = plan.lane(0).unwrap();
    assert_eq!(
        lane.iter().map(|n| n.node).collect::<Vec<_>>(),
        vec![project, consume]
    );
    assert_eq!(lane[0].boundary_before, None);
    let b = lane[1]
        .boundary_before
        .expect("consume reads what project wrote");
    assert_eq!(b.kind, BoundaryKind::Rmw);
    assert_eq!(b.reason.hazard, HazardKind::Raw);
    assert_eq!(b.reason.range, (2048, 4096));
    assert_eq!((b.reason.producer, b.reason.consumer), (project, consume));

    assert_eq!(
        plan.explain(&b),
        "rmw before \"consume\" (node 1): RAW on \"activations\" [2048, 4096) after \"project\" (node 0)"
    );
    assert_eq!(plan.lane_node_ids(), vec![vec![project, consume]]);

    let mock = plan.launch_mock();
    assert_eq!(mock.lane_count(), 1);
    assert!(matches!(
        mock.events(0)[1],
        MockEvent::Boundary {
            kind: BoundaryKind::Rmw,
            ..
        }
    ));
    assert_eq!(mock.dispatch_order(0), vec![project, consume]);
    assert_eq!(
        mock.to_text(),
        "lane 0: dispatch project (node 0)\nlane 0: boundary rmw\nlane 0: dispatch consume (node 1)\n"
    );
}

#[test]
fn seed_fingerprint_is_pinned_and_stable() {
    let a = project_consume(true).0.instantiate().unwrap();
    let b = project_consume(true).0.instantiate().unwrap();
    assert_eq!(a.fingerprint(), b.fingerprint());
    assert_eq!(a.fingerprint_hex(), SEED_FINGERPRINT);
}

#[test]
fn seed_graph_without_dependency_is_a_raw_hazard() {
    let (graph, project, consume) = project_consume(false);
    let err = graph.instantiate().unwrap_err();
    let CompileError::Hazards { hazards, truncated } = &err else {
        panic!("expected hazards, got {err}");
    };
    assert!(!truncated);
    assert_eq!(hazards.len(), 1);
    let h = &hazards[0];
    assert_eq!(h.kind, HazardKind::Raw);
    assert_eq!(h.range, (2048, 4096));
    assert_eq!((h.first, h.second), (project.raw(), consume.raw()));
    assert_eq!(h.buffer_label, "activations");
    let msg = err.to_string();
    assert!(msg.contains("\"project\" (node 0) writes"), "{msg}");
    assert!(msg.contains("\"consume\" (node 1) reads"), "{msg}");
    assert!(msg.contains("[2048, 4096)"), "{msg}");
}

/// The documented `relaunch.plan.v1` serialization of the seed plan, byte
/// by byte, hashes to the plan's fingerprint.
#[test]
fn seed_fingerprint_follows_the_documented_format() {
    use sha2::{Digest, Sha256};
    let mut b: Vec<u8> = Vec::new();
    let u32s = |b: &mut Vec<u8>, v: &[u32]| v.iter().for_each(|x| b.extend(x.to_le_bytes()));
    b.extend(b"relaunch.plan.v1");
    b.push(0); // latency
    u32s(&mut b, &[1, 1, 2]); // in flight, lanes, nodes in lane 0
    let node = |b: &mut Vec<u8>, boundary: u8, name: &str| {
        b.push(boundary);
        b.push(0);
        u32s(b, &[name.len() as u32]);
        b.extend(name.as_bytes());
        u32s(b, &[32, 1, 1, 64, 1, 1, 0, 0]);
        b.push(0);
    };
    let access = |b: &mut Vec<u8>, offset: u64, len: u64, write: u8| {
        u32s(b, &[0]);
        b.extend(offset.to_le_bytes());
        b.extend(len.to_le_bytes());
        b.push(write);
    };
    node(&mut b, 0, "project");
    u32s(&mut b, &[2]);
    access(&mut b, 0, 2048, 0);
    access(&mut b, 2048, 2048, 1);
    u32s(&mut b, &[0]);
    node(&mut b, 3, "consume");
    u32s(&mut b, &[1]);
    access(&mut b, 2048, 2048, 0);
    u32s(&mut b, &[1, 0, 0]); // one dep: lane 0 index 0
    u32s(&mut b, &[1]);
    b.extend(4096u64.to_le_bytes());
    let expected: [u8; 32] = Sha256::digest(&b).into();
    let plan = project_consume(true).0.instantiate().unwrap();
    assert_eq!(plan.fingerprint(), expected);
}
