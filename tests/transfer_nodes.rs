//! Copy and fill nodes in a device graph run inside the IB as DMA_DATA on
//! the simulated device: a fill, a kernel reading it, a copy of the
//! kernel's output and a kernel reading the copy give exact results on
//! every launch, with boundaries from the declared accesses; a copy whose
//! accesses are not declared is caught by the simulator's ordering check.

use relaunch::DmaOp;
use relaunch::{Access, GraphOptions, Mode};
use relaunch::{DeviceBuffer, Geometry, Gpu, Graph, Module, NodeSpec};

const N: u32 = 64;
const BYTES: u64 = 4 * N as u64;

use relaunch_testsupport::fixture;

fn one_lane() -> GraphOptions {
    GraphOptions {
        mode: Mode::Latency,
        lanes: 1,
        max_in_flight: 1,
    }
}

/// consume(out, in): out[i] += in[i].
fn consume<'m>(
    module: &'m Module,
    out: &DeviceBuffer,
    input: &DeviceBuffer,
    accesses: Vec<Access>,
    deps: Vec<relaunch::NodeId>,
) -> NodeSpec<'m> {
    let geometry = Geometry {
        grid: [N, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
    };
    let mut explicit = out.address().to_le_bytes().to_vec();
    explicit.extend_from_slice(&input.address().to_le_bytes());
    NodeSpec {
        module,
        symbol: "consume",
        grid: geometry.grid,
        block: geometry.block,
        dynamic_group_bytes: 0,
        kernarg: module
            .pack_kernargs("consume", &explicit, &geometry)
            .unwrap(),
        accesses,
        deps,
    }
}

/// The tests that launch run one at a time: a strict-mode violation in one
/// simulated GPU's replay was seen failing another test's replay on a
/// different simulated GPU of the same process (see the report of #19).
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn zeroed(gpu: &Gpu) -> DeviceBuffer {
    let b = gpu.alloc(BYTES as usize, true).unwrap();
    b.write(0, &vec![0u8; BYTES as usize]).unwrap();
    b
}

#[test]
fn fill_kernel_copy_kernel_replays_exactly_on_every_family() {
    let _one_at_a_time = serial();
    for target in ["gfx1030", "gfx1100", "gfx1201"] {
        let gpu = Gpu::open(&format!("sim:{target}")).unwrap();
        let module = gpu
            .load_module(&fixture(target, "produce_consume"))
            .unwrap();
        let (a, out, c, out2) = (zeroed(&gpu), zeroed(&gpu), zeroed(&gpu), zeroed(&gpu));
        let mut graph = Graph::new(one_lane());
        let [ba, bout, bc, bout2] =
            ["a", "out", "c", "out2"].map(|l| graph.buffer(l, BYTES).unwrap());
        // The fill is two ops (halves), as a 2-D memset's rows would be.
        let half = BYTES / 2;
        let fill = graph
            .transfer(
                vec![
                    DmaOp::Fill {
                        dst: a.address(),
                        pattern: 5,
                        bytes: half,
                    },
                    DmaOp::Fill {
                        dst: a.address() + half,
                        pattern: 5,
                        bytes: half,
                    },
                ],
                vec![Access::write(ba, 0, BYTES)],
                vec![],
            )
            .unwrap();
        let k1 = graph
            .kernel(consume(
                &module,
                &out,
                &a,
                vec![Access::read(ba, 0, BYTES), Access::write(bout, 0, BYTES)],
                vec![fill],
            ))
            .unwrap();
        let copy = graph
            .transfer(
                vec![DmaOp::Copy {
                    dst: c.address(),
                    src: out.address(),
                    bytes: BYTES,
                }],
                vec![Access::read(bout, 0, BYTES), Access::write(bc, 0, BYTES)],
                vec![k1],
            )
            .unwrap();
        graph
            .kernel(consume(
                &module,
                &out2,
                &c,
                vec![Access::read(bc, 0, BYTES), Access::write(bout2, 0, BYTES)],
                vec![copy],
            ))
            .unwrap();
        let exec = graph.instantiate().unwrap();
        assert_eq!(exec.lane_count(), 1);
        for launch in 1..=3u32 {
            exec.launch(&gpu)
                .unwrap_or_else(|e| panic!("{target} launch {launch}: {e}"));
            for i in 0..N as usize {
                assert_eq!(a.read_u32(4 * i).unwrap(), 5, "{target}");
                assert_eq!(out.read_u32(4 * i).unwrap(), 5 * launch, "{target}");
                assert_eq!(c.read_u32(4 * i).unwrap(), 5 * launch, "{target}");
                let want: u32 = (1..=launch).map(|l| 5 * l).sum();
                assert_eq!(out2.read_u32(4 * i).unwrap(), want, "{target}");
            }
        }
        // A transfer has no kernargs to patch.
        let err = exec.set_node_kernargs(copy, 0, &[0; 4]).unwrap_err();
        assert!(!err.message().is_empty());
    }
}

#[test]
fn an_undeclared_copy_is_a_race_the_simulator_reports() {
    let _one_at_a_time = serial();
    let gpu = Gpu::open("sim:gfx1100").unwrap();
    let module = gpu
        .load_module(&fixture("gfx1100", "produce_consume"))
        .unwrap();
    let (a, out, c) = (zeroed(&gpu), zeroed(&gpu), zeroed(&gpu));
    let mut graph = Graph::new(one_lane());
    let ba = graph.buffer("a", BYTES).unwrap();
    let bout = graph.buffer("out", BYTES).unwrap();
    graph
        .kernel(consume(
            &module,
            &out,
            &a,
            vec![Access::read(ba, 0, BYTES), Access::write(bout, 0, BYTES)],
            vec![],
        ))
        .unwrap();
    // Reads `out` but declares nothing: no boundary orders it after the kernel.
    graph
        .transfer(
            vec![DmaOp::Copy {
                dst: c.address(),
                src: out.address(),
                bytes: BYTES,
            }],
            vec![],
            vec![],
        )
        .unwrap();
    let exec = graph.instantiate().unwrap();
    let err = exec.launch(&gpu).unwrap_err().to_string();
    assert!(err.contains("race"), "{err}");
    assert!(err.contains("DMA_DATA copy"), "{err}");
}

#[test]
fn malformed_transfers_are_refused_at_record_time() {
    let mut graph = Graph::new(one_lane());
    let cases = [
        (vec![], "no copy or fill"),
        (
            vec![DmaOp::Fill {
                dst: 0x1001,
                pattern: 0,
                bytes: 4,
            }],
            "multiples of 4",
        ),
        (
            vec![DmaOp::Copy {
                dst: 0x1000,
                src: 0x1000,
                bytes: 8,
            }],
            "overlap",
        ),
    ];
    for (ops, why) in cases {
        let err = graph.transfer(ops, vec![], vec![]).unwrap_err();
        assert!(err.message().contains(why), "{err}");
    }
    assert_eq!(graph.inner().node_count(), 0);
}

#[test]
fn a_copy_ordered_without_its_read_declared_reads_stale_data() {
    let _one_at_a_time = serial();
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let module = gpu
        .load_module(&fixture("gfx1201", "produce_consume"))
        .unwrap();
    let (a, out, c) = (zeroed(&gpu), zeroed(&gpu), zeroed(&gpu));
    let mut graph = Graph::new(one_lane());
    let ba = graph.buffer("a", BYTES).unwrap();
    let bout = graph.buffer("out", BYTES).unwrap();
    let k = graph
        .kernel(consume(
            &module,
            &out,
            &a,
            vec![Access::read(ba, 0, BYTES), Access::write(bout, 0, BYTES)],
            vec![],
        ))
        .unwrap();
    // Ordered after the kernel by a declared write-after-read (a wait
    // boundary), but its read of `out` is not declared: no cache
    // invalidate comes between the kernel's write and the copy's read.
    graph
        .transfer(
            vec![DmaOp::Copy {
                dst: c.address(),
                src: out.address(),
                bytes: BYTES,
            }],
            vec![Access::write(ba, 0, 4)],
            vec![k],
        )
        .unwrap();
    let exec = graph.instantiate().unwrap();
    let err = exec.launch(&gpu).unwrap_err().to_string();
    assert!(err.contains("stale read"), "{err}");
    assert!(err.contains("DMA_DATA copy"), "{err}");
}

#[test]
fn a_copy_from_unmapped_memory_is_a_vm_fault() {
    let _one_at_a_time = serial();
    // A VM fault loses that GPU for the process: a target no other test
    // of this binary opens.
    let gpu = Gpu::open("sim:gfx1151").unwrap();
    let c = zeroed(&gpu);
    let mut graph = Graph::new(one_lane());
    graph
        .transfer(
            vec![DmaOp::Copy {
                dst: c.address(),
                src: 0x10_0000,
                bytes: BYTES,
            }],
            vec![],
            vec![],
        )
        .unwrap();
    let exec = graph.instantiate().unwrap();
    let err = exec.launch(&gpu).unwrap_err();
    assert!(err.to_string().to_lowercase().contains("fault"), "{err}");
}
