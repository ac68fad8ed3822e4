//! Scratch through an AQL queue: the packet processor reads the queue's
//! scratch at each dispatch and, when a dispatch needs more than the
//! queue's slots hold (or the queue has none), stops with "scratch
//! needed", has the queue's owner grow it and retries the same packet.
//! On the simulator's own queues the owner is its HSA table (as ROCr is
//! for its queues; the ROCr protocol itself runs in
//! `cli/tests/it/sim_rocm.rs`). Kernels built by clang-19 (fails under `CI`
//! when it is missing).

use std::time::Duration;

use relaunch_hsa_sys::KernelDispatchPacket;
use relaunch_sim::memory::MemKind;
use relaunch_sim::signal::Condition;
use relaunch_sim::{SimConfig, SimDevice};
use relaunch_testsupport::simkit::{one_group_dispatch, packet_bytes, Lane};

use super::scratch::{opencl, private_array_ref, PRIVATE_ARRAY, TARGETS};

#[test]
fn an_aql_dispatch_gets_scratch_from_the_queues_owner_and_grows_it() {
    for (cpu, flags) in TARGETS {
        let mut f = vec!["-O2"];
        f.extend(flags);
        let Some(co) = opencl(cpu, PRIVATE_ARRAY, &f) else {
            return;
        };
        let dev = SimDevice::new(SimConfig::new(cpu)).unwrap();
        let image = dev.load_code_object(&co).unwrap();
        let k = image
            .kernels
            .iter()
            .find(|k| k.symbol == "priv_array")
            .unwrap();
        let fixed = k.descriptor.private_segment_fixed_size;
        assert!(
            fixed > 0 && k.descriptor.scratch_enabled(),
            "{cpu}: no scratch"
        );
        let lane = Lane::new(&dev);
        let queue = &lane.queue;
        let (grid, block) = (256u32, 128u32);
        let mem = &dev.memory;
        let out = mem.allocate(4 * grid as usize, MemKind::Device).unwrap();
        let idx = mem.allocate(4 * grid as usize, MemKind::Device).unwrap();
        let idx_vals: Vec<u8> = (0..grid)
            .flat_map(|i| (i.wrapping_mul(2_654_435_761) >> 7).to_le_bytes())
            .collect();
        mem.write(idx, &idx_vals).unwrap();
        let ka = mem.allocate(64, MemKind::Device).unwrap();
        let mut args = Vec::new();
        args.extend(out.to_le_bytes());
        args.extend(idx.to_le_bytes());
        args.extend(block.to_le_bytes());
        mem.write(ka, &args).unwrap();
        // The first dispatch asks for the kernel's size, the second for
        // four times as much: the queue's scratch grows between them.
        for (n, private) in [fixed, 4 * fixed].into_iter().enumerate() {
            mem.write(out, &vec![0u8; 4 * grid as usize]).unwrap();
            let (handle, signal) = dev.signals.create(1);
            lane.publish_raw(packet_bytes(KernelDispatchPacket {
                workgroup_size_x: block as u16,
                grid_size_x: grid,
                private_segment_size: private,
                ..one_group_dispatch(k.kd_addr, ka, handle)
            }));
            let left = signal.wait(Condition::Eq, 0, Duration::from_secs(60));
            assert_eq!(left, 0, "{cpu} dispatch {n}: {:?}", queue.errors());
            for g in 0..grid {
                let got = mem.read_u32(out + 4 * u64::from(g)).unwrap();
                let idx = g.wrapping_mul(2_654_435_761) >> 7;
                assert_eq!(
                    got,
                    private_array_ref(g, idx),
                    "{cpu} dispatch {n} item {g}"
                );
            }
        }
        queue.destroy();
    }
}

#[test]
fn a_packet_asking_less_private_memory_than_its_kernel_is_refused() {
    let (cpu, flags) = TARGETS[0];
    let mut f = vec!["-O2"];
    f.extend(flags);
    let Some(co) = opencl(cpu, PRIVATE_ARRAY, &f) else {
        return;
    };
    let dev = SimDevice::new(SimConfig::new(cpu)).unwrap();
    let image = dev.load_code_object(&co).unwrap();
    let k = image
        .kernels
        .iter()
        .find(|k| k.symbol == "priv_array")
        .unwrap();
    let lane = Lane::new(&dev);
    let queue = &lane.queue;
    let ka = dev.memory.allocate(64, MemKind::Device).unwrap();
    let (handle, _signal) = dev.signals.create(1);
    lane.publish_raw(packet_bytes(KernelDispatchPacket {
        private_segment_size: k.descriptor.private_segment_fixed_size - 4,
        ..one_group_dispatch(k.kd_addr, ka, handle)
    }));
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while queue.errors().is_empty() {
        assert!(std::time::Instant::now() < deadline, "no error");
        std::thread::sleep(Duration::from_millis(5));
    }
    let e = &queue.errors()[0];
    assert!(e.message.contains("private_segment_size"), "{e}");
    queue.destroy();
}
