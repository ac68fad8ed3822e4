//! An IB keeps alive the relaunch allocations its kernargs point into
//! (#15 item 14): dropping the buffer does not free memory a later replay
//! writes, and re-pointing the slot changes what is held.

use relaunch::{Geometry, Gpu};

const N: u32 = 64;

#[test]
fn dropping_a_buffer_an_ib_points_into_keeps_its_memory_for_the_ib() {
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let fixture = relaunch_testsupport::fixture("gfx1201", "add_scalar");
    let module = gpu.load_module(&fixture).unwrap();
    let geometry = Geometry {
        grid: [N, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
    };
    let kernarg = |acc: u64| {
        let mut explicit = acc.to_le_bytes().to_vec();
        explicit.extend_from_slice(&5u32.to_le_bytes());
        module
            .pack_kernargs("add_scalar", &explicit, &geometry)
            .unwrap()
    };
    let acc = gpu.alloc(4 * N as usize, true).unwrap();
    let address = acc.address();
    let mut b = gpu.builder();
    b.dispatch(
        &module,
        "add_scalar",
        [N, 1, 1],
        [32, 1, 1],
        0,
        &kernarg(address),
    )
    .unwrap();
    let mut ib = gpu.finalize(b).unwrap();
    drop(acc);
    let other = gpu.alloc(4 * N as usize, true).unwrap();
    assert_ne!(
        other.address(),
        address,
        "the IB's memory was handed out again"
    );
    ib.replay().unwrap();
    ib.replay().unwrap();
    assert_eq!(other.read_u32(0).unwrap(), 0);
    ib.set_kernargs(0, 0, &other.address().to_le_bytes())
        .unwrap();
    ib.replay().unwrap();
    for i in 0..N as usize {
        assert_eq!(other.read_u32(4 * i).unwrap(), 5, "other[{i}]");
    }
}
