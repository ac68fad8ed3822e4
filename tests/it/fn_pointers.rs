//! Unmodified compiler output calling through function pointers:
//! `tests/kernels/hip/fn_table.hip` (a `__device__` table of three callees
//! in .data, relocated at load; each lane picks one by its input, so every
//! wave runs the compiler's waterfall loop of calls), built by clang++-19
//! for each family and launched through a graph on the simulated device.
//! Its calls need a stack and the implicit arguments, so the graph runs it
//! as public AQL; the callees are reached only through the loaded
//! pointers, so the interpreter decodes them when a wave first jumps
//! there, from many workgroups at once. Checked against the table's
//! definition. Fails when `CI` is set and the tools are missing.

use relaunch::{Access, Geometry, Gpu, Graph, GraphOptions, Mode, NodeSpec};
use relaunch_testsupport::hip::hip_o2_plain;

const N: u32 = 64 * 32;

fn reference(x: u32) -> u32 {
    match x % 3 {
        0 => x.wrapping_mul(2),
        1 => x.wrapping_mul(x),
        _ => x.wrapping_add(7),
    }
}

#[test]
fn a_table_of_function_pointers_calls_each_lanes_callee() {
    for cpu in ["gfx1030", "gfx1100", "gfx1201"] {
        let Some(bytes) = hip_o2_plain("fn_table.hip", cpu) else {
            return;
        };
        let gpu = Gpu::open(&format!("sim:{cpu}")).unwrap();
        let module = gpu.load_module(&bytes).unwrap();
        let len = 4 * N as usize;
        let input: Vec<u32> = (0..N).map(|i| i.wrapping_mul(2_654_435_761) >> 7).collect();
        let (out, inp) = (gpu.alloc(len, true).unwrap(), gpu.alloc(len, true).unwrap());
        let bytes_in: Vec<u8> = input.iter().flat_map(|x| x.to_le_bytes()).collect();
        inp.write(0, &bytes_in).unwrap();
        let mut graph = Graph::new(GraphOptions {
            mode: Mode::Latency,
            lanes: 1,
            max_in_flight: 1,
        });
        let (o, n) = (
            graph.buffer("out", len as u64).unwrap(),
            graph.buffer("in", len as u64).unwrap(),
        );
        let geometry = Geometry {
            grid: [N, 1, 1],
            block: [64, 1, 1],
            dynamic_group_bytes: 0,
        };
        let args = [out.address().to_le_bytes(), inp.address().to_le_bytes()].concat();
        let kernarg = module.pack_kernargs("fn_table", &args, &geometry).unwrap();
        graph
            .kernel(NodeSpec {
                module: &module,
                symbol: "fn_table",
                grid: geometry.grid,
                block: geometry.block,
                dynamic_group_bytes: 0,
                kernarg,
                accesses: vec![
                    Access::read(n, 0, len as u64),
                    Access::write(o, 0, len as u64),
                ],
                deps: vec![],
            })
            .unwrap();
        let exec = graph.instantiate().unwrap();
        exec.launch(&gpu).unwrap();
        for (i, &x) in input.iter().enumerate() {
            assert_eq!(
                out.read_u32(4 * i).unwrap(),
                reference(x),
                "{cpu}: out[{i}] for {x}"
            );
        }
    }
}

/// An assembled kernel whose .data holds `.quad` entries: `entries` (symbol
/// names) after its own code.
fn with_data(cpu: &str, entries: &str) -> Vec<u8> {
    let source = relaunch_testsupport::asm::kernel_source(cpu, "k", "  s_endpgm", "", 1);
    let source = format!("{source}\n  .data\n  .p2align 3\ntable:\n{entries}\n");
    relaunch_testsupport::asm::code_object(cpu, &source)
}

#[test]
fn a_load_time_relocation_is_applied_or_refused_naming_its_symbol() {
    if !relaunch_testsupport::asm::tools() {
        return;
    }
    let gpu = Gpu::open("sim:gfx1030").unwrap();
    // The kernel's own address: RELATIVE64 (a local symbol) resolved
    // against where the module was loaded.
    let bytes = with_data("gfx1030", "  .quad k");
    let object = relaunch::CodeObject::parse(&bytes).unwrap();
    let patches = object.patches(0x1000_0000).unwrap();
    assert_eq!(patches.len(), 1, "{patches:?}");
    let k = object.kernel("k").unwrap().code_entry_offset;
    assert_eq!(patches[0].value, 0x1000_0000 + k);
    assert!(gpu.load_module(&bytes).is_ok());
    // A symbol the object does not define: nothing to resolve it against.
    let bytes = with_data("gfx1030", "  .quad elsewhere");
    let err = gpu.load_module(&bytes).unwrap_err().to_string();
    assert!(
        err.contains("elsewhere") && err.contains("not defined"),
        "{err}"
    );
}
