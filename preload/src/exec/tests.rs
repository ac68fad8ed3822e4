use relaunch::Gpu;

use crate::reason::Reason;
use crate::shadow::{counter_for, node_kernel, Function, NodeKernel, ShadowGraph};

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
