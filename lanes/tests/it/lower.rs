//! Lowering a plan into real PM4: the seed graph becomes one IB whose
//! decoded packets hold both dispatches with an RMW acquire between them.

use relaunch_device::codeobj::KernelDescriptor;
use relaunch_device::Family;
use relaunch_encoders::decode::{decode, Packet};
use relaunch_encoders::{EncodeOptions, IbBuilder};
use relaunch_lanes::{
    Access, EncoderSink, Graph, GraphOptions, KernelNode, KernelRef, ResolvedKernel,
};

fn resolver(kernel: &KernelRef) -> Result<ResolvedKernel, String> {
    let kd_address = match kernel {
        KernelRef::Named(name) if name == "project" => 0x10_0000,
        KernelRef::Named(name) if name == "consume" => 0x20_0000,
        other => return Err(format!("no kernel loaded for {other:?}")),
    };
    Ok(ResolvedKernel {
        descriptor: KernelDescriptor {
            kernel_code_entry_byte_offset: 0x100,
            compute_pgm_rsrc1: 0x6000_0000,
            ..relaunch_testsupport::counter_descriptor()
        },
        kd_address,
        kernarg_align: 8,
        unread: Default::default(),
    })
}

fn seed_graph(consume_kernel: &str) -> Graph {
    let mut g = Graph::new(GraphOptions::default());
    let act = g.buffer("activations", 4096).unwrap();
    let project = g
        .kernel(KernelNode {
            accesses: vec![Access::read(act, 0, 2048), Access::write(act, 2048, 2048)],
            kernarg: vec![1; 8],
            ..KernelNode::named("project", [32, 1, 1], [32, 1, 1])
        })
        .unwrap();
    g.kernel(KernelNode {
        accesses: vec![Access::read(act, 2048, 2048)],
        deps: vec![project],
        kernarg: vec![2; 8],
        ..KernelNode::named(consume_kernel, [32, 1, 1], [32, 1, 1])
    })
    .unwrap();
    g
}

#[test]
fn seed_graph_lowers_to_two_dispatches_with_an_rmw_between() {
    let plan = seed_graph("consume").instantiate().unwrap();
    let mut sink = EncoderSink::new(
        IbBuilder::new(Family::Gfx12, EncodeOptions::default()),
        resolver,
    );
    plan.lower_lane(0, &mut sink).unwrap();
    assert_eq!(sink.boundary_dwords(), 10);
    let ib = sink.into_builder().finish(0x4000_0000).unwrap();
    assert_eq!(ib.dispatch_count(), 2);
    assert_eq!(
        &ib.kernarg_image[ib.kernarg_range(0).unwrap()][..8],
        &[1; 8]
    );
    assert_eq!(
        &ib.kernarg_image[ib.kernarg_range(1).unwrap()][..8],
        &[2; 8]
    );

    let packets = decode(&ib.segments[0].dwords, Family::Gfx12).unwrap();
    let dispatches: Vec<usize> = packets
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(p, Packet::DispatchDirect { .. }))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(dispatches.len(), 2);
    let between = &packets[dispatches[0]..dispatches[1]];
    assert!(
        between.iter().any(|p| matches!(
            p,
            Packet::AcquireMem {
                gcr_cntl: 0x380,
                ..
            }
        )),
        "no K$/V$/GL1 invalidate between producer and consumer: {between:?}"
    );
}

#[test]
fn an_unknown_kernel_fails_lowering_naming_it() {
    let plan = seed_graph("missing").instantiate().unwrap();
    let mut sink = EncoderSink::new(
        IbBuilder::new(Family::Gfx12, EncodeOptions::default()),
        resolver,
    );
    let err = plan.lower_lane(0, &mut sink).unwrap_err().to_string();
    assert!(err.contains("missing"), "{err}");
}
