//! The Rust API end to end on the simulated device: modules, kernarg
//! packing, retained IBs patched per token, multi-lane replays, errors.

use relaunch::{Geometry, Gpu, QueuePolicy};
use relaunch_testsupport::fixture;

const N: u32 = 64;

fn add_scalar_kernarg(gpu_module: &relaunch::Module, acc: u64, value: u32) -> Vec<u8> {
    let mut explicit = acc.to_le_bytes().to_vec();
    explicit.extend_from_slice(&value.to_le_bytes());
    let geometry = Geometry {
        grid: [N, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
    };
    gpu_module
        .pack_kernargs("add_scalar", &explicit, &geometry)
        .unwrap()
}

#[test]
fn patching_one_value_per_token_matches_rebuilding_every_token() {
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let module = gpu.load_module(&fixture("gfx1201", "add_scalar")).unwrap();
    let patched = gpu.alloc(4 * N as usize, true).unwrap();
    let rebuilt = gpu.alloc(4 * N as usize, true).unwrap();

    let mut b = gpu.builder();
    let kernarg = add_scalar_kernarg(&module, patched.address(), 0);
    b.dispatch(&module, "add_scalar", [N, 1, 1], [32, 1, 1], 0, &kernarg)
        .unwrap();
    let mut ib = gpu.finalize(b).unwrap();
    const T: u32 = 20;
    for token in 1..=T {
        ib.set_kernargs(0, 8, &token.to_le_bytes()).unwrap();
        ib.replay().unwrap();

        let mut b = gpu.builder();
        let kernarg = add_scalar_kernarg(&module, rebuilt.address(), token);
        b.dispatch(&module, "add_scalar", [N, 1, 1], [32, 1, 1], 0, &kernarg)
            .unwrap();
        gpu.finalize(b).unwrap().replay().unwrap();
    }
    let expected = T * (T + 1) / 2;
    for i in 0..N as usize {
        assert_eq!(patched.read_u32(4 * i).unwrap(), expected, "patched[{i}]");
        assert_eq!(rebuilt.read_u32(4 * i).unwrap(), expected, "rebuilt[{i}]");
    }
}

#[test]
fn a_patch_sent_after_an_async_replay_lands_after_it() {
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let module = gpu.load_module(&fixture("gfx1201", "add_scalar")).unwrap();
    let acc = gpu.alloc(4 * N as usize, true).unwrap();
    let mut b = gpu.builder();
    b.dispatch(
        &module,
        "add_scalar",
        [N, 1, 1],
        [32, 1, 1],
        0,
        &add_scalar_kernarg(&module, acc.address(), 5),
    )
    .unwrap();
    let mut ib = gpu.finalize(b).unwrap();
    let first = ib.replay_async().unwrap();
    ib.set_kernargs(0, 8, &7u32.to_le_bytes()).unwrap();
    let second = ib.replay_async().unwrap();
    first.wait(relaunch::REPLAY_TIMEOUT).unwrap();
    second.wait(relaunch::REPLAY_TIMEOUT).unwrap();
    assert_eq!(acc.read_u32(0).unwrap(), 12);
}

#[test]
fn independent_builders_replay_as_lanes() {
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let module = gpu.load_module(&fixture("gfx1201", "counter")).unwrap();
    let counters: Vec<_> = (0..3).map(|_| gpu.alloc(4, true).unwrap()).collect();
    let builders = counters
        .iter()
        .enumerate()
        .map(|(lane, c)| {
            let mut b = gpu.builder();
            for i in 0..=lane {
                if i > 0 {
                    b.wait_rmw(None).unwrap();
                }
                b.dispatch(
                    &module,
                    "counter",
                    [1, 1, 1],
                    [1, 1, 1],
                    0,
                    &c.address().to_le_bytes(),
                )
                .unwrap();
            }
            b
        })
        .collect();
    let multi = gpu.finalize_multi(builders, QueuePolicy::Auto).unwrap();
    assert_eq!(multi.lane_count(), 3);
    assert_eq!(multi.queues_used(), 2, "gfx12 Auto width is 2");
    multi.replay().unwrap();
    for (lane, c) in counters.iter().enumerate() {
        assert_eq!(c.read_u32(0).unwrap(), lane as u32 + 1);
    }
}

#[test]
fn refusals_are_named() {
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let err = gpu.load_module(&fixture("gfx1100", "counter")).unwrap_err();
    assert!(err.message().contains("gfx1100"), "{err}");
    let module = gpu.load_module(&fixture("gfx1201", "scratch_hog")).unwrap();
    let err = module.kernel("scratch_hog").unwrap_err();
    assert!(err.message().contains("scratch"), "{err}");
    // "PM4 compilation rejects the kernel" (the reference guide).
    assert_eq!(err.class(), relaunch::ErrorClass::Compile);
    let err = module.kernel("nope").unwrap_err();
    assert_eq!(err.class(), relaunch::ErrorClass::Record);
    assert!(
        err.message().contains("scratch_hog"),
        "lists kernels: {err}"
    );
    let empty = gpu.builder();
    assert!(gpu.finalize(empty).is_err());
    let err = gpu
        .load_module_certified(&fixture("gfx1201", "counter"), b"{}")
        .unwrap_err();
    assert_eq!(err.class(), relaunch::ErrorClass::Certification);
}

#[test]
fn device_local_memory_is_zero_filled_read_and_written_through_the_runtime() {
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    // Odd lengths too: whole dwords are filled by hsa_amd_memory_fill, the
    // 1-3 byte tail through the runtime's copy; reads and writes of any
    // length and offset go through hsa_memory_copy.
    for bytes in [4096, 64, 10, 7, 3, 1] {
        let buf = gpu.alloc(bytes, false).unwrap();
        assert_eq!(buf.len(), bytes);
        assert!(buf.host_ptr().is_none(), "{bytes}: device-local memory");
        let mut back = vec![0xAAu8; bytes];
        buf.read(0, &mut back).unwrap();
        assert!(back.iter().all(|&b| b == 0), "{bytes}: {back:?}");
        let pattern: Vec<u8> = (0..bytes).map(|i| (i as u8).wrapping_mul(7) | 1).collect();
        buf.write(0, &pattern).unwrap();
        buf.read(0, &mut back).unwrap();
        assert_eq!(back, pattern, "{bytes}: whole buffer");
        if bytes > 2 {
            // An odd range at an odd offset leaves its neighbours alone.
            let len = bytes - 2;
            buf.write(1, &vec![0x5A; len]).unwrap();
            let mut part = vec![0u8; len + 1];
            buf.read(1, &mut part).unwrap();
            assert!(part[..len].iter().all(|&b| b == 0x5A), "{bytes}: {part:?}");
            assert_eq!(part[len], pattern[bytes - 1], "{bytes}");
            buf.read(0, &mut back[..1]).unwrap();
            assert_eq!(back[0], pattern[0], "{bytes}");
        }
        let err = buf.read(bytes - 1, &mut [0u8; 2]).unwrap_err();
        assert!(err.message().contains("outside"), "{bytes}: {err}");
        let err = buf.write(bytes, &[1]).unwrap_err();
        assert!(err.message().contains("outside"), "{bytes}: {err}");
    }
    assert!(gpu.alloc(0, false).is_err());
}

#[test]
fn a_kernel_named_counter_runs_its_own_machine_code_on_the_simulator() {
    // A user's kernel that happens to share a test kernel's name: its
    // code adds 7 per work-item, the counter twin would add 1. No twin is
    // registered unless asked for, so the interpreter runs the code.
    if !relaunch_testsupport::asm::tools() {
        return;
    }
    for target in ["gfx1100", "gfx1201"] {
        let gpu = Gpu::open(&format!("sim:{target}")).unwrap();
        let co = relaunch_testsupport::asm::counter_adding(target, 7, false);
        let module = gpu.load_module(&co).unwrap();
        let counter = gpu.alloc(4, true).unwrap();
        let mut b = gpu.builder();
        b.dispatch(
            &module,
            "counter",
            [64, 1, 1],
            [32, 1, 1],
            0,
            &counter.address().to_le_bytes(),
        )
        .unwrap();
        gpu.finalize(b).unwrap().replay().unwrap();
        assert_eq!(counter.read_u32(0).unwrap(), 7 * 64, "{target}");
    }
}

/// `Submission::Hip` (HIP multistream fallback) takes only modules loaded
/// through HIP; with modules loaded on a GPU it is refused, naming the
/// loader to use, and such a graph still runs its own way.
#[test]
fn hip_submission_of_rocr_modules_is_refused_by_name() {
    use relaunch::{Graph, GraphOptions, NodeSpec, Submission};
    let gpu = Gpu::open("sim:gfx1030").unwrap();
    let module = gpu.load_module(&fixture("gfx1030", "counter")).unwrap();
    let word = gpu.alloc(4, true).unwrap();
    let mut graph = Graph::new(GraphOptions::default());
    let buf = graph.buffer("word", 4).unwrap();
    graph
        .kernel(NodeSpec {
            module: &module,
            symbol: "counter",
            grid: [32, 1, 1],
            block: [32, 1, 1],
            dynamic_group_bytes: 0,
            kernarg: word.address().to_le_bytes().to_vec(),
            accesses: vec![relaunch::Access::write(buf, 0, 4)],
            deps: vec![],
        })
        .unwrap();
    let err = graph.instantiate_with(Submission::Hip).err().unwrap();
    assert_eq!(err.class(), relaunch::ErrorClass::Compile);
    assert!(err.message().contains("HipDevice::load_module"), "{err}");
    let exec = graph.instantiate().unwrap();
    let hip_device = relaunch::HipDevice::open(0);
    // No HIP GPU here (or no HIP at all): opening says so; either way a
    // graph of ROCr modules is not launched on HIP streams.
    if let Ok(device) = hip_device {
        let err = exec.launch_hip(&device).unwrap_err();
        assert!(err.message().contains("GraphExec::launch"), "{err}");
    }
    exec.launch(&gpu).unwrap();
    assert_eq!(word.read_u32(0).unwrap(), 32);
    assert_eq!(Submission::parse("hip"), Some(Submission::Hip));
}
