//! The reference decode-step graph compiles, lanes follow sequences, and
//! the boundaries are what the data flow needs.

use relaunch_lanes::reference::{
    decode_step, decode_step_with, default_kernel, DecodeShape, OpKind,
};
use relaunch_lanes::{BoundaryKind, GraphOptions, KernelRef, Mode};

fn options(lanes: usize) -> GraphOptions {
    GraphOptions {
        mode: Mode::Latency,
        lanes,
        max_in_flight: 1,
    }
}

#[test]
fn default_decode_step_has_one_lane_per_sequence() {
    let shape = DecodeShape::default();
    let decode = decode_step(&shape, options(4)).unwrap();
    assert_eq!(decode.graph.node_count(), 2 * (28 * 12 + 1));
    assert_eq!(decode.ops.len(), decode.graph.node_count());
    let plan = decode.graph.instantiate().unwrap();
    assert_eq!(plan.lane_count(), 2, "two independent sequences");
    for seq in 0..2 {
        let sampler = decode.node(OpKind::Sampler, None, seq).unwrap();
        let first = decode.node(OpKind::RmsNormAttn, Some(0), seq).unwrap();
        let (a, b) = (plan.locate(first).unwrap(), plan.locate(sampler).unwrap());
        assert_eq!(a.lane, b.lane);
        assert_eq!((a.index, b.index), (0, 28 * 12));
    }
    let total_deps: usize = (0..decode.graph.node_count() as u32)
        .map(|n| {
            decode
                .graph
                .node(relaunch_lanes::NodeId::from_raw(n))
                .unwrap()
                .deps
                .len()
        })
        .sum();
    let counts = plan.boundary_counts();
    let boundaries: usize = counts.iter().map(|c| c.boundaries()).sum();
    // The data flow gives several edges per node; each chain link needs
    // one read-after-write boundary.
    assert_eq!(boundaries, 2 * 28 * 12);
    assert!(
        total_deps > boundaries * 3 / 2,
        "deps {total_deps} boundaries {boundaries}"
    );
    assert_eq!(
        counts.iter().map(|c| c.dependencies).sum::<usize>(),
        total_deps
    );
    assert_eq!(total_deps, decode.graph.edge_count());
    assert!(counts.iter().all(|c| c.rmw == c.boundaries()));
}

#[test]
fn one_lane_interleaves_sequences_so_boundaries_are_shared() {
    let decode = decode_step(&DecodeShape::default(), options(1)).unwrap();
    let plan = decode.graph.instantiate().unwrap();
    assert_eq!(plan.lane_count(), 1);
    let lane = plan.lane(0).unwrap();
    assert_eq!(lane.len(), 2 * 337);
    // Same op of both sequences back to back, one boundary per phase.
    assert_eq!(lane[0].kernel, lane[1].kernel);
    assert!(lane[1].boundary_before.is_none());
    assert_eq!(plan.boundary_counts()[0].boundaries(), 28 * 12);
}

#[test]
fn throughput_mode_splits_the_lane_budget_between_replays() {
    let decode = decode_step(
        &DecodeShape::default(),
        GraphOptions {
            mode: Mode::Throughput,
            lanes: 2,
            max_in_flight: 2,
        },
    )
    .unwrap();
    assert_eq!(decode.graph.instantiate().unwrap().lane_count(), 1);
}

#[test]
fn certified_kernels_get_the_narrower_boundary() {
    let shape = DecodeShape {
        layers: 2,
        ..DecodeShape::default()
    };
    let decode = decode_step_with(&shape, options(2), |site| {
        let mut k = default_kernel(site, &shape);
        k.vmem_only = site.kind == OpKind::Attention;
        if site.kind == OpKind::Attention {
            k.kernel = KernelRef::Module {
                module: 7,
                symbol: "attention.kd".into(),
            };
        }
        k
    })
    .unwrap();
    let plan = decode.graph.instantiate().unwrap();
    let attention = decode.node(OpKind::Attention, Some(1), 0).unwrap();
    let node = plan.node(attention).unwrap();
    assert_eq!(node.boundary_before.unwrap().kind, BoundaryKind::RmwVmem);
    assert_eq!(plan.boundary_counts()[0].rmw_vmem, 2);
}

#[test]
fn scaled_shape_reaches_the_asked_node_count() {
    let shape = DecodeShape::scaled(10_000, 2);
    assert!(shape.node_count() >= 10_000 && shape.node_count() < 10_000 + 24);
    let decode = decode_step(&shape, options(2)).unwrap();
    assert_eq!(decode.graph.node_count(), shape.node_count());
    assert_eq!(decode.graph.instantiate().unwrap().lane_count(), 2);
}

#[test]
fn position_ops_carry_a_position_kernarg() {
    let shape = DecodeShape {
        layers: 1,
        sequences: 1,
        ..DecodeShape::default()
    };
    let decode = decode_step(&shape, options(1)).unwrap();
    let rope = decode.node(OpKind::Rope, Some(0), 0).unwrap();
    let node = decode.graph.node(rope).unwrap();
    assert_eq!(node.kernarg.len(), 8 * node.accesses.len() + 4);
}

#[test]
fn ops_are_found_by_kind_layer_and_sequence() {
    let shape = DecodeShape {
        layers: 3,
        sequences: 2,
        ..DecodeShape::default()
    };
    let decode = decode_step(&shape, options(2)).unwrap();
    for op in &decode.ops {
        assert_eq!(decode.node(op.kind, op.layer, op.sequence), Some(op.node));
    }
    assert_eq!(decode.node(OpKind::Rope, Some(3), 0), None);
    assert_eq!(decode.node(OpKind::Rope, None, 0), None);
    assert_eq!(decode.node(OpKind::Sampler, None, 2), None);
}
