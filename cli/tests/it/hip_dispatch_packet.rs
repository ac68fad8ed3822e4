//! A code object v4 HIP kernel built by clang-19 reads blockDim and gridDim
//! through the dispatch pointer: on the PM4 path relaunch writes a dispatch
//! packet per dispatch and delivers its address; the simulated device
//! checks the packet matches the dispatch, and the kernel's twin reads the
//! two values through the delivered pointer, as the machine code does.

use crate::common;

use relaunch::twins::{register_twin, KernelFault, Workgroup};
use relaunch::Pm4Verdict;
use relaunch::{Geometry, Gpu};

/// The twin does what the machine code does: blockDim.x is the packet's
/// workgroup_size_x (u16 at 4), gridDim.x = ceil(grid_size_x (u32 at 12) /
/// blockDim.x), both read through the dispatch pointer.
fn register_dims_twin() {
    register_twin(
        "dims",
        |wg: &mut Workgroup<'_>| -> Result<(), KernelFault> {
            let packet = wg.dispatch_packet()?;
            let block = u32::from(u16::from_le_bytes([packet[4], packet[5]]));
            let grid = u32::from_le_bytes(packet[12..16].try_into().unwrap());
            let out = wg.arg_u64(0)?;
            let x = u64::from(wg.workgroup_id()[0]);
            wg.store_u32(out + 8 * x, block)?;
            wg.store_u32(out + 8 * x + 4, grid.div_ceil(block))?;
            Ok(())
        },
    );
}

#[test]
fn v4_hip_kernel_reads_block_and_grid_dims_through_the_dispatch_packet() {
    let Some(co) = relaunch_testsupport::hip::dims_v4() else {
        return;
    };
    register_dims_twin();
    let gpu = Gpu::open("sim:gfx1100").unwrap();
    let module = gpu.load_module(&co).unwrap();
    let k = module.kernel("dims").unwrap();
    assert_eq!(
        k.info.pm4_verdict().to_string(),
        "accepted (dispatch packet synthesized)"
    );
    // Two dispatches of different geometry in one IB: each gets its own packet.
    let shapes = [(64u32, 3u32), (32, 5)];
    let outs: Vec<_> = shapes
        .iter()
        .map(|_| gpu.alloc(64, true).unwrap())
        .collect();
    let spare = gpu.alloc(64, true).unwrap();
    let mut b = gpu.builder();
    for ((block, groups), out) in shapes.iter().zip(&outs) {
        let geometry = Geometry {
            grid: [block * groups, 1, 1],
            block: [*block, 1, 1],
            dynamic_group_bytes: 0,
        };
        let kernarg = module
            .pack_kernargs("dims", &out.address().to_le_bytes(), &geometry)
            .unwrap();
        b.dispatch(&module, "dims", geometry.grid, geometry.block, 0, &kernarg)
            .unwrap();
    }
    let mut ib = gpu.finalize(b).unwrap();
    ib.replay().unwrap();
    for ((block, groups), out) in shapes.iter().zip(&outs) {
        for g in 0..*groups as usize {
            assert_eq!(out.read_u32(8 * g).unwrap(), *block, "blockDim.x");
            assert_eq!(out.read_u32(8 * g + 4).unwrap(), *groups, "gridDim.x");
        }
    }
    // A kernarg patch (the output pointer) leaves the packet pointing at
    // the patched block.
    ib.set_kernargs(1, 0, &spare.address().to_le_bytes())
        .unwrap();
    ib.replay().unwrap();
    for g in 0..5 {
        assert_eq!(spare.read_u32(8 * g).unwrap(), 32);
        assert_eq!(spare.read_u32(8 * g + 4).unwrap(), 5);
    }
}

#[test]
fn inspect_says_the_dispatch_packet_is_synthesized() {
    let Some(co) = relaunch_testsupport::hip::dims_v4() else {
        return;
    };
    let path = std::env::temp_dir().join(format!("relaunch-inspect-v4-{}.co", std::process::id()));
    std::fs::write(&path, co).unwrap();
    let (code, out, err) = common::run(common::relaunch("inspect").arg(&path));
    let _ = std::fs::remove_file(&path);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("code object V4"), "{out}");
    assert!(
        out.contains("pm4: accepted (dispatch packet synthesized)"),
        "{out}"
    );
}
