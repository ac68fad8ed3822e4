use relaunch::Gpu;

use crate::model::reason::Reason;
use crate::model::shadow::{counter_for, node_kernel, Function, NodeKernel, ShadowGraph};

fn launch_at(f: &Function, addr: u64, groups: u32, block: u32) -> NodeKernel {
    node_kernel(f, [groups, 1, 1], [block, 1, 1], 0, &|_, _| {
        Ok(addr.to_le_bytes().to_vec())
    })
    .unwrap()
}

fn chain(kernels: &[NodeKernel]) -> ShadowGraph {
    let mut g = ShadowGraph::default();
    for (i, k) in kernels.iter().enumerate() {
        let deps: Vec<usize> = (i > 0).then_some(i).into_iter().collect();
        g.add_node(i + 1, Ok(k.clone()), &deps);
    }
    g
}

#[test]
fn an_exec_update_patches_kernargs_rebuilds_geometry_and_falls_back_on_a_kernel_change() {
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let f = counter_for("gfx1201");
    let at = |addr: u64, groups: u32| launch_at(&f, addr, groups, 4);
    let x = chain(&[at(0x1000, 1), at(0x1000, 1)])
        .instantiate(&gpu)
        .unwrap();
    // Other node handles (a re-capture), new kernargs: patched in place.
    let mut update = chain(&[at(0x2000, 1), at(0x1000, 1)]);
    update.nodes.iter_mut().for_each(|(h, _)| *h += 100);
    let before = x.current();
    x.update_from(&update);
    assert!(x.fallen().is_none());
    assert!(
        std::sync::Arc::ptr_eq(&before, &x.current()),
        "patched, not rebuilt"
    );
    assert_eq!(x.nodes.lock()[&1].kernarg[..8], 0x2000u64.to_le_bytes());

    // A new geometry: built again, nothing falls back.
    x.update_from(&chain(&[at(0x2000, 1), at(0x1000, 2)]));
    assert!(x.fallen().is_none());
    assert!(!std::sync::Arc::ptr_eq(&before, &x.current()), "rebuilt");
    assert_eq!(x.nodes.lock()[&2].grid, [8, 1, 1]);

    x.update_from(&chain(&[at(0x2000, 1)]));
    let why = x.fallen().unwrap().to_string();
    assert!(why.contains("another topology (1 nodes, 0 edges"), "{why}");

    // Another kernel (a module loaded again): refused whole.
    let x = chain(&[at(0x1000, 1), at(0x1000, 1)])
        .instantiate(&gpu)
        .unwrap();
    let other = counter_for("gfx1201");
    x.update_from(&chain(&[at(0x3000, 1), launch_at(&other, 0x1000, 1, 4)]));
    let why = x.fallen().unwrap();
    assert!(
        matches!(why, Reason::UpdateChangesKernel { node: 1 }),
        "{why}"
    );
    // Node 0 was not patched either.
    assert_eq!(x.nodes.lock()[&1].kernarg[..8], 0x1000u64.to_le_bytes());
}

#[test]
fn a_patched_geometry_replays_with_the_new_grid() {
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let f = counter_for("gfx1201");
    let counter = gpu.alloc(64, true).unwrap();
    let addr = counter.address();
    let x = chain(&[launch_at(&f, addr, 2, 4)])
        .instantiate(&gpu)
        .unwrap();
    x.current().exec.launch(&gpu).unwrap();
    assert_eq!(counter.read_u32(0).unwrap(), 8);
    // 3 groups of 8: 24 work-items from now on.
    x.set_params(1, Ok(launch_at(&f, addr, 3, 8)));
    assert!(x.fallen().is_none(), "{:?}", x.fallen());
    x.current().exec.launch(&gpu).unwrap();
    assert_eq!(counter.read_u32(0).unwrap(), 32);
    // A kernarg-only patch of the rebuilt exec lands in the new build.
    let other = gpu.alloc(64, true).unwrap();
    x.set_params(1, Ok(launch_at(&f, other.address(), 3, 8)));
    x.current().exec.launch(&gpu).unwrap();
    assert_eq!(
        (counter.read_u32(0).unwrap(), other.read_u32(0).unwrap()),
        (32, 24)
    );
    // Another kernel: falls back with the reason.
    x.set_params(1, Ok(launch_at(&counter_for("gfx1201"), addr, 1, 4)));
    assert!(matches!(
        x.fallen(),
        Some(Reason::PatchChangesKernel { .. })
    ));
}

/// Issue 30, finding 6: a captured chain of 100k launches and a fan-in of
/// 100k edges once took minutes to shadow and instantiate (each edge
/// searched for in a Vec of all edges, every edge scanned per node).
#[test]
fn a_100k_captured_chain_and_fan_in_instantiate_in_near_linear_time() {
    const N: usize = 100_000;
    let ceiling = std::time::Duration::from_secs(if cfg!(debug_assertions) { 40 } else { 4 });
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let f = counter_for("gfx1201");
    let k = launch_at(&f, 0x1000, 1, 4);
    let t = std::time::Instant::now();
    let mut capture = crate::model::capture::Capture::default();
    for _ in 0..N {
        capture.push(Ok(k.clone()));
    }
    let chain = capture.into_graph();
    assert_eq!(chain.real_counts(), (N, N - 1));
    chain.instantiate(&gpu).unwrap();
    let mut fan_in = ShadowGraph::default();
    for i in 1..N {
        fan_in.add_node(i, Ok(k.clone()), &[]);
    }
    let writers: Vec<usize> = (1..N).collect();
    fan_in.add_node(N, Ok(k.clone()), &writers);
    fan_in.add_node(N + 1, Ok(k.clone()), &writers);
    assert_eq!(fan_in.real_counts(), (N + 1, 2 * (N - 1)));
    fan_in.instantiate(&gpu).unwrap();
    let took = t.elapsed();
    eprintln!("100k chain + 100k fan-in through the shadow: {took:?}");
    assert!(took < ceiling, "took {took:?}");
}
