//! Generic code objects (`gfx11-generic`, code object V6; llvm-mc builds
//! them): loaded on a processor they cover they run as its code, on the
//! direct PM4 path, with exact results; on a processor they do not cover,
//! or read without naming a processor, they are refused naming what they
//! cover. Fails when `CI` is set and the tools are missing.

use relaunch::{Access, CodeObject, Geometry, Gpu, Graph, GraphOptions, Mode, NodeSpec};
use relaunch_testsupport::asm;

const N: u32 = 64;

/// `triple`: out[i] = 3 * i for the work-items of one workgroup, one global pointer argument, built for the
/// generic target `generic` (its instructions spelled as `like`'s).
fn triple(generic: &str, like: &str) -> Vec<u8> {
    let sp = asm::spelling(like);
    let (load, wait, store) = (sp.s_load_b64, sp.wait_scalar, sp.global_store_b32);
    let body = format!(
        "  {load} s[2:3], s[0:1], 0x0\n  v_lshlrev_b32 v1, 2, v0\n  v_mul_u32_u24 v2, 3, v0\n  \
         {wait}\n  {store} v1, v2, s[2:3]\n  s_endpgm"
    );
    let source = asm::kernel_source(generic, "triple", &body, "", 1);
    asm::code_object(
        generic,
        &format!("  .amdhsa_code_object_version 6\n{source}"),
    )
}

fn run(gpu: &Gpu, bytes: &[u8]) -> Vec<u32> {
    let module = gpu.load_module(bytes).unwrap();
    let len = 4 * N as usize;
    let mem = gpu.alloc(len, true).unwrap();
    let mut graph = Graph::new(GraphOptions {
        mode: Mode::Latency,
        lanes: 1,
        max_in_flight: 1,
    });
    let out = graph.buffer("out", len as u64).unwrap();
    let geometry = Geometry {
        grid: [N, 1, 1],
        block: [N, 1, 1],
        dynamic_group_bytes: 0,
    };
    let kernarg = module
        .pack_kernargs("triple", &mem.address().to_le_bytes(), &geometry)
        .unwrap();
    graph
        .kernel(NodeSpec {
            module: &module,
            symbol: "triple",
            grid: geometry.grid,
            block: geometry.block,
            dynamic_group_bytes: 0,
            kernarg,
            accesses: vec![Access::write(out, 0, len as u64)],
            deps: vec![],
        })
        .unwrap();
    let exec = graph.instantiate().unwrap();
    exec.launch(gpu).unwrap();
    (0..N as usize)
        .map(|i| mem.read_u32(4 * i).unwrap())
        .collect()
}

#[test]
fn generic_code_runs_on_every_family_it_covers() {
    if !asm::tools() {
        return;
    }
    let want: Vec<u32> = (0..N).map(|i| 3 * i).collect();
    for (generic, like, on) in [
        ("gfx10-3-generic", "gfx1030", "gfx1030"),
        ("gfx11-generic", "gfx1100", "gfx1101"),
        ("gfx12-generic", "gfx1200", "gfx1201"),
    ] {
        let bytes = triple(generic, like);
        let gpu = Gpu::open(&format!("sim:{on}")).unwrap();
        assert_eq!(run(&gpu, &bytes), want, "{generic} on {on}");
        let code = CodeObject::parse_for(&bytes, Some(gpu.target())).unwrap();
        assert_eq!(code.target().processor(), on);
        assert_eq!(code.generic().unwrap().processor(), generic);
        assert_eq!(code.target_label(), format!("{on} ({generic} code)"));
    }
}

#[test]
fn generic_code_is_refused_where_it_does_not_run() {
    if !asm::tools() {
        return;
    }
    let bytes = triple("gfx11-generic", "gfx1100");
    let err = CodeObject::parse(&bytes).unwrap_err().to_string();
    assert!(
        err.contains("generic target gfx11-generic") && err.contains("gfx1100, gfx1101"),
        "{err}"
    );
    let gpu = Gpu::open("sim:gfx1030").unwrap();
    let err = gpu.load_module(&bytes).unwrap_err().to_string();
    assert!(
        err.contains("gfx11-generic") && err.contains("not gfx1030"),
        "{err}"
    );
}
