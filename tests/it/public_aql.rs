//! Automatic per-lane selection (issue 31.1): a graph mixing a kernel the
//! PM4 path refuses (it reads the dispatch id from its SGPRs, which a
//! direct PM4 dispatch cannot deliver; llvm-mc builds it) with PM4 kernels on
//! `sim:gfx1100`. The PM4 lane stays PM4, the refused kernel's lane runs
//! as public AQL with the reason kept, results are exact across a
//! kernarg patch; `Submission::Pm4` refuses the graph naming the kernel.
//! Kernels neither path can run, and printf (hostcall) kernels, are in
//! `printf_aql.rs`.

use relaunch::{Access, ErrorClass, Geometry, Gpu, Graph, GraphOptions, LaneKind, Mode};
use relaunch::{NodeSpec, Submission};
use relaunch_testsupport::{asm, fixture};

const N: u32 = 64;

/// `count_id`: one global pointer argument; every work-item atomically
/// adds 1 at it. Its descriptor enables the dispatch id SGPR pair (s[2:3],
/// after the kernarg pointer) and its code reads it (into v2, unused), so
/// the PM4 verdict refuses it.
fn count_id_kernel(cpu: &str) -> Vec<u8> {
    let sp = asm::spelling(cpu);
    let (load, wait, atomic) = (sp.s_load_b64, sp.wait_scalar, sp.global_atomic_add_u32);
    let text = format!(
        r#"  .amdgcn_target "amdgcn-amd-amdhsa--{cpu}"
  .text
  .globl count_id
  .p2align 8
  .type count_id,@function
count_id:
  {load} s[4:5], s[0:1], 0x0
  v_mov_b32 v0, 0
  v_mov_b32 v1, 1
  v_mov_b32 v2, s2
  {wait}
  {atomic} v0, v1, s[4:5]
  s_endpgm
.Lend:
  .size count_id, .Lend-count_id
  .rodata
  .p2align 6
  .amdhsa_kernel count_id
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_user_sgpr_dispatch_id 1
    .amdhsa_user_sgpr_count 4
    .amdhsa_system_sgpr_workgroup_id_x 1
    .amdhsa_kernarg_size 8
    .amdhsa_next_free_vgpr 8
    .amdhsa_next_free_sgpr 16
    .amdhsa_wavefront_size32 1
  .end_amdhsa_kernel
  .amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: amdgcn-amd-amdhsa--{cpu}
amdhsa.kernels:
  - .name: count_id
    .symbol: count_id.kd
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .sgpr_count: 16
    .vgpr_count: 8
    .max_flat_workgroup_size: 64
    .args:
      - {{ .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }}
...
  .end_amdgpu_metadata
"#
    );
    asm::code_object(cpu, &text)
}

fn geometry() -> Geometry {
    Geometry {
        grid: [N, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
    }
}

#[test]
fn a_refused_kernel_runs_its_lane_as_public_aql_and_pm4_lanes_stay_pm4() {
    if !asm::tools() {
        return;
    }
    let gpu = Gpu::open("sim:gfx1100").unwrap();
    let pc = gpu
        .load_module(&fixture("gfx1100", "produce_consume"))
        .unwrap();
    let ids = gpu.load_module(&count_id_kernel("gfx1100")).unwrap();
    let verdict = relaunch::kernel_verdict(ids.kernel_info("count_id").unwrap());
    assert!(verdict.to_string().contains("dispatch id"), "{verdict}");

    let bytes = 4 * N as usize;
    let buf_mem = gpu.alloc(bytes, true).unwrap();
    let out_mem = gpu.alloc(bytes, true).unwrap();
    let counters = gpu.alloc(64, true).unwrap();
    let mut graph = Graph::new(GraphOptions {
        mode: Mode::Latency,
        lanes: 2,
        max_in_flight: 1,
    });
    // Lane of PM4 kernels: produce (scale 2) then consume.
    let buf = graph.buffer("buf", bytes as u64).unwrap();
    let out = graph.buffer("out", bytes as u64).unwrap();
    let mut explicit = buf_mem.address().to_le_bytes().to_vec();
    explicit.extend_from_slice(&2u32.to_le_bytes());
    let node = |module, symbol, kernarg, accesses, deps| NodeSpec {
        module,
        symbol,
        grid: [N, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
        kernarg,
        accesses,
        deps,
    };
    let produce = graph
        .kernel(node(
            &pc,
            "produce",
            pc.pack_kernargs("produce", &explicit, &geometry()).unwrap(),
            vec![Access::write(buf, 0, bytes as u64)],
            vec![],
        ))
        .unwrap();
    let mut explicit = out_mem.address().to_le_bytes().to_vec();
    explicit.extend_from_slice(&buf_mem.address().to_le_bytes());
    graph
        .kernel(node(
            &pc,
            "consume",
            pc.pack_kernargs("consume", &explicit, &geometry()).unwrap(),
            vec![
                Access::read(buf, 0, bytes as u64),
                Access::write(out, 0, bytes as u64),
            ],
            vec![produce],
        ))
        .unwrap();
    // Lane of the refused kernel: three dependent counts (RMW boundaries).
    let counter = graph.buffer("counter", 64).unwrap();
    let mut prev = Vec::new();
    let mut first = None;
    for _ in 0..3 {
        let id = graph
            .kernel(node(
                &ids,
                "count_id",
                counters.address().to_le_bytes().to_vec(),
                vec![Access::read(counter, 0, 8), Access::write(counter, 0, 8)],
                prev.clone(),
            ))
            .unwrap();
        first.get_or_insert(id);
        prev = vec![id];
    }

    // Submission::Pm4 refuses the graph, naming the kernel and the reason.
    let Err(err) = graph.instantiate_with(Submission::Pm4) else {
        panic!("Submission::Pm4 instantiated a graph with a PM4-refused kernel")
    };
    assert_eq!(err.class(), ErrorClass::Compile, "{err}");
    assert!(
        err.message().contains("count_id") && err.message().contains("dispatch id"),
        "{err}"
    );

    let exec = graph.instantiate().unwrap();
    assert_eq!(exec.lane_count(), 2);
    let lane_of = |n| exec.with_plan(|p| p.locate(n).unwrap().lane);
    let (pm4_lane, aql_lane) = (lane_of(produce), lane_of(first.unwrap()));
    let lanes = exec.lane_submissions();
    assert_eq!(lanes[pm4_lane].kind, LaneKind::Pm4);
    assert_eq!(lanes[pm4_lane].reason, None);
    assert_eq!(lanes[aql_lane].kind, LaneKind::Aql);
    let reason = lanes[aql_lane].reason.as_deref().unwrap();
    assert!(
        reason.contains("count_id") && reason.contains("dispatch id"),
        "{reason}"
    );

    exec.launch(&gpu).unwrap();
    assert_eq!(counters.read_u32(0).unwrap(), 3 * N);
    // Patch the AQL lane's first node onto the second counter word.
    let second = (counters.address() + 4).to_le_bytes();
    exec.set_node_kernargs(first.unwrap(), 0, &second).unwrap();
    exec.launch(&gpu).unwrap();
    assert_eq!(counters.read_u32(0).unwrap(), 3 * N + 2 * N);
    assert_eq!(counters.read_u32(4).unwrap(), N);
    // consume adds buf (i * 2) into out: two launches.
    for i in 0..N as usize {
        assert_eq!(out_mem.read_u32(4 * i).unwrap(), (i as u32) * 2 * 2);
    }
    // A patch past the node's kernarg block is refused as on the PM4 path.
    let err = exec
        .set_node_kernargs(first.unwrap(), 4, &second)
        .unwrap_err();
    assert_eq!(err.class(), ErrorClass::Record, "{err}");
}

/// A scratch kernel (`scratch_hog.cl`: a private array at run-time
/// indices) on `sim:gfx1100`, its machine code on the interpreter: as
/// public AQL when the caller asks for it (the packet processor's scratch,
/// grown on demand as ROCr does), and as PM4 by default now that the PM4
/// path gives scratch (the IB programs the lane's own backing); the same
/// results either way.
#[test]
fn a_scratch_kernel_runs_as_public_aql_when_asked_and_as_pm4_by_default() {
    let gpu = Gpu::open("sim:gfx1100").unwrap();
    let module = gpu.load_module(&fixture("gfx1100", "scratch_hog")).unwrap();
    for (submission, kind) in [
        (Submission::Aql, LaneKind::Aql),
        (Submission::Auto, LaneKind::Pm4),
    ] {
        let out = gpu.alloc(4 * N as usize, true).unwrap();
        let mut explicit = out.address().to_le_bytes().to_vec();
        explicit.extend_from_slice(&3u32.to_le_bytes());
        let mut graph = Graph::new(GraphOptions::default());
        let buf = graph.buffer("out", 4 * N as u64).unwrap();
        graph
            .kernel(NodeSpec {
                module: &module,
                symbol: "scratch_hog",
                grid: [N, 1, 1],
                block: [32, 1, 1],
                dynamic_group_bytes: 0,
                kernarg: module
                    .pack_kernargs("scratch_hog", &explicit, &geometry())
                    .unwrap(),
                accesses: vec![Access::write(buf, 0, 4 * N as u64)],
                deps: vec![],
            })
            .unwrap();
        let exec = graph.instantiate_with(submission).unwrap();
        let lane = &exec.lane_submissions()[0];
        assert_eq!(lane.kind, kind, "{submission:?}: {lane:?}");
        exec.launch(&gpu).unwrap();
        for i in 0..N {
            let want = ((3 + i) & 255) * 3;
            assert_eq!(
                out.read_u32(4 * i as usize).unwrap(),
                want,
                "{submission:?} {i}"
            );
        }
    }
}

/// One lane as public AQL with every boundary shape: none between
/// independent nodes, `wait` (write after write) and `rmw` (read after
/// write); exact across launches, no ordering violation (the simulator
/// fails the replay on one).
#[test]
fn one_aql_lane_with_no_boundary_a_wait_and_an_rmw_is_exact() {
    let gpu = Gpu::open("sim:gfx1100").unwrap();
    let module = gpu.load_module(&fixture("gfx1100", "counter")).unwrap();
    let words = gpu.alloc(64, true).unwrap();
    let mut graph = Graph::new(GraphOptions {
        mode: Mode::Latency,
        lanes: 1,
        max_in_flight: 1,
    });
    let (a, b) = (graph.buffer("a", 4).unwrap(), graph.buffer("b", 4).unwrap());
    let mut add = |buf, word: u64, write_only: bool, deps| {
        let accesses = if write_only {
            vec![Access::write(buf, 0, 4)]
        } else {
            vec![Access::read(buf, 0, 4), Access::write(buf, 0, 4)]
        };
        graph
            .kernel(NodeSpec {
                module: &module,
                symbol: "counter",
                grid: [N, 1, 1],
                block: [32, 1, 1],
                dynamic_group_bytes: 0,
                kernarg: module
                    .pack_kernargs(
                        "counter",
                        &(words.address() + 4 * word).to_le_bytes(),
                        &geometry(),
                    )
                    .unwrap(),
                accesses,
                deps,
            })
            .unwrap()
    };
    let a1 = add(a, 0, true, vec![]);
    add(b, 1, true, vec![]);
    let a2 = add(a, 0, true, vec![a1]);
    add(a, 0, false, vec![a2]);
    let exec = graph.instantiate_with(Submission::Aql).unwrap();
    assert_eq!(exec.lane_count(), 1);
    let kinds: Vec<_> = exec.with_plan(|p| {
        p.lane(0)
            .unwrap()
            .iter()
            .map(|n| n.boundary_before.map(|b| b.kind))
            .collect()
    });
    assert!(
        kinds.contains(&None) && kinds.iter().flatten().count() >= 2,
        "{kinds:?}"
    );
    for launch in 1..=3 {
        exec.launch(&gpu).unwrap();
        assert_eq!(words.read_u32(0).unwrap(), 3 * N * launch);
        assert_eq!(words.read_u32(4).unwrap(), N * launch);
    }
}
