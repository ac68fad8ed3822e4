//! Scratch end to end on the direct PM4 path (issue 29.3): a HIP kernel
//! built at -O0 (every local in scratch; `tests/kernels/hip/spill_o0.hip`,
//! `relaunch_testsupport::hip::hip_o0`) in two private sizes, as a
//! four-node graph forced onto PM4 (`Submission::Pm4`), on sim:gfx1030
//! (the private segment buffer V# and flat scratch init in user SGPRs),
//! sim:gfx1100 and sim:gfx1201 (COMPUTE_DISPATCH_SCRATCH_BASE, architected
//! flat scratch); results exact against a host reference, over two
//! launches. The machine code runs on the simulator's interpreter, whose
//! scratch comes only from what the IB programmed. Both builds: with
//! LLVM's implicit-input inference (`hip_o0`) and plain `clang++-19 -O0`
//! (`hip_o0_plain`), whose queue pointer, dispatch id and hostcall buffer
//! the reader proves unread.

use relaunch::{Access, Geometry, Gpu, Graph, GraphOptions, LaneKind, Mode, NodeSpec};
use relaunch::{Pm4Verdict, Submission};
use relaunch_testsupport::hip;

const N: u32 = 250;
const GRID: u32 = 256;
const BLOCK: u32 = 64;

/// What `body<LEN>` computes for work-item `i` with index `j`.
fn reference(len: u32, i: u32, j: u32) -> u32 {
    let a = |k: u32| i.wrapping_mul(3).wrapping_add(k * k);
    let (x, y) = (a(j % len), a((j + 7) % len));
    x.wrapping_mul(31).wrapping_add(y ^ (x >> 3))
}

fn geometry() -> Geometry {
    Geometry {
        grid: [GRID, 1, 1],
        block: [BLOCK, 1, 1],
        dynamic_group_bytes: 0,
    }
}

#[test]
fn an_o0_hip_kernel_runs_from_scratch_on_pm4_on_every_family() {
    for target in ["gfx1030", "gfx1100", "gfx1201"] {
        let Some(co) = hip::hip_o0("spill_o0.hip", target) else {
            return;
        };
        run_on(target, &co);
    }
}

/// The same kernels as plain `clang++-19 -O0` leaves them: the queue
/// pointer, the dispatch id and the hostcall buffer enabled though the
/// code never reads them. The reader proves that, so the PM4 path delivers
/// zeros there instead of refusing the kernels.
#[test]
fn a_plain_o0_build_runs_on_pm4_with_its_unread_inputs_proven() {
    for target in ["gfx1030", "gfx1100", "gfx1201"] {
        let Some(co) = hip::hip_o0_plain("spill_o0.hip", target) else {
            return;
        };
        let gpu = Gpu::open(&format!("sim:{target}")).unwrap();
        let module = gpu.load_module(&co).unwrap();
        for k in ["spill_small", "spill_large"] {
            let info = module.kernel_info(k).unwrap();
            let kd = &info.descriptor;
            assert!(
                kd.wants_queue_ptr() && kd.wants_dispatch_id(),
                "{target} {k}"
            );
            let unread = info.unread;
            assert!(
                unread.queue_ptr && unread.dispatch_id && unread.hostcall_buffer,
                "{target} {k}: {unread:?}"
            );
        }
        run_on(target, &co);
    }
}

fn run_on(target: &str, co: &[u8]) {
    let gpu = Gpu::open(&format!("sim:{target}")).unwrap();
    let module = gpu.load_module(co).unwrap();
    let (small, large) = ("spill_small", "spill_large");
    let sizes: Vec<u32> = [small, large]
        .iter()
        .map(|k| {
            let info = module.kernel_info(k).unwrap();
            assert!(
                info.pm4_verdict().accepted(),
                "{target} {k}: {}",
                info.pm4_verdict()
            );
            info.private_segment_size
        })
        .collect();
    assert!(sizes[0] > 0 && sizes[1] > sizes[0], "{target}: {sizes:?}");

    let bytes = 4 * GRID as usize;
    let idx = gpu.alloc(bytes, true).unwrap();
    let host_idx: Vec<u32> = (0..GRID)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
        .collect();
    let le: Vec<u8> = host_idx.iter().flat_map(|v| v.to_le_bytes()).collect();
    idx.write(0, &le).unwrap();
    let outs: Vec<_> = (0..4).map(|_| gpu.alloc(bytes, true).unwrap()).collect();

    let mut graph = Graph::new(GraphOptions {
        mode: Mode::Latency,
        lanes: 1,
        max_in_flight: 1,
    });
    let idx_buf = graph.buffer("idx", bytes as u64).unwrap();
    let bufs: Vec<_> = (0..4)
        .map(|k| graph.buffer(&format!("out{k}"), bytes as u64).unwrap())
        .collect();
    let mut node = |symbol, input: (&relaunch::DeviceBuffer, _), out: usize, deps| {
        let mut explicit = input.0.address().to_le_bytes().to_vec();
        explicit.extend_from_slice(&outs[out].address().to_le_bytes());
        explicit.extend_from_slice(&N.to_le_bytes());
        graph
            .kernel(NodeSpec {
                module: &module,
                symbol,
                grid: [GRID, 1, 1],
                block: [BLOCK, 1, 1],
                dynamic_group_bytes: 0,
                kernarg: module
                    .pack_kernargs(symbol, &explicit, &geometry())
                    .unwrap(),
                accesses: vec![
                    Access::read(input.1, 0, bytes as u64),
                    Access::write(bufs[out], 0, bytes as u64),
                ],
                deps,
            })
            .unwrap()
    };
    // Both sizes from idx, then each size reading the other's output.
    let a = node(small, (&idx, idx_buf), 0, vec![]);
    let b = node(large, (&idx, idx_buf), 1, vec![]);
    node(small, (&outs[1], bufs[1]), 2, vec![b]);
    node(large, (&outs[0], bufs[0]), 3, vec![a]);
    let exec = graph.instantiate_with(Submission::Pm4).unwrap();
    assert!(
        exec.lane_submissions()
            .iter()
            .all(|l| l.kind == LaneKind::Pm4),
        "{target}"
    );
    for launch in 0..2 {
        exec.launch(&gpu).unwrap();
        let read = |k: usize| -> Vec<u32> {
            (0..N as usize)
                .map(|i| outs[k].read_u32(4 * i).unwrap())
                .collect()
        };
        let (o0, o1) = (read(0), read(1));
        for i in 0..N {
            let (iu, j) = (i as usize, host_idx[i as usize]);
            let what = format!("{target} launch {launch} item {i}");
            assert_eq!(o0[iu], reference(8, i, j), "{what}: small");
            assert_eq!(o1[iu], reference(40, i, j), "{what}: large");
        }
        let (o2, o3) = (read(2), read(3));
        for i in 0..N {
            let iu = i as usize;
            let what = format!("{target} launch {launch} item {i}");
            assert_eq!(o2[iu], reference(8, i, o1[iu]), "{what}: small of large");
            assert_eq!(o3[iu], reference(40, i, o0[iu]), "{what}: large of small");
        }
    }
}

/// A plain -O0 kernel that does read the queue pointer stays refused by
/// the PM4 verdict, naming the input (it runs as public AQL, where the
/// packet processor delivers it).
#[test]
fn a_plain_o0_kernel_reading_an_input_is_refused_naming_it() {
    for target in ["gfx1030", "gfx1100", "gfx1201"] {
        let Some(co) = hip::hip_o0_plain("inputs_o0.hip", target) else {
            return;
        };
        let gpu = Gpu::open(&format!("sim:{target}")).unwrap();
        let module = gpu.load_module(&co).unwrap();
        let (k, input) = ("reads_queue_ptr", "queue ptr");
        let verdict = module.kernel_info(k).unwrap().pm4_verdict();
        let text = verdict.to_string();
        assert!(!verdict.accepted(), "{target} {k}: {text}");
        assert!(text.contains(input), "{target} {k}: {text}");
        let err = module.kernel(k).err().unwrap().to_string();
        assert!(err.contains(input), "{target} {k}: {err}");
    }
}
