//! HIP multistream fallback: a two-lane graph replayed on HIP streams, for
//! a process where relaunch cannot reach ROCr itself but HIP runs.
//!
//!     cargo run -p relaunch --example hip_streams -- KERNELS.co
//!
//! The code object holds `counter` (every work-item adds 1 to one word)
//! and `add_scalar` (`acc[i] += value`), as `tests/kernels/hip/streams.hip`
//! builds them for the GPU HIP sees (its first lines say how). Lane 0 runs two counters in a
//! chain, lane 1 adds a value patched before each of three replays. On a
//! machine without a GPU, run it on the simulated one through the real
//! ROCm: `relaunch sim-rocm --target gfx1030 -- <this example> KERNELS.co`.

use relaunch::{Access, Graph, GraphOptions, HipDevice, NodeSpec};

const ITEMS: u32 = 64;
const REPLAYS: u32 = 3;

fn main() {
    if let Err(e) = run() {
        eprintln!("hip_streams: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [code_object] = args.as_slice() else {
        return Err("usage: hip_streams KERNELS.co".into());
    };
    let hip = HipDevice::open(0)?;
    let kernels = hip.load_module(&std::fs::read(code_object)?)?;
    let (counter, add) = (&kernels, &kernels);
    let word = hip.alloc(4)?;
    word.write(0, &0u32.to_le_bytes())?;
    let acc = hip.alloc(4 * ITEMS as usize)?;
    acc.write(0, &vec![0u8; 4 * ITEMS as usize])?;

    let mut graph = Graph::new(GraphOptions {
        lanes: 2,
        ..GraphOptions::default()
    });
    let w = graph.buffer("counter", 4)?;
    let a = graph.buffer("acc", 4 * u64::from(ITEMS))?;
    let count = |buffer, len| Access {
        buffer,
        offset: 0,
        len,
        write: true,
    };
    let first = graph.kernel(NodeSpec {
        module: counter,
        symbol: "counter",
        grid: [ITEMS, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
        kernarg: word.address().to_le_bytes().to_vec(),
        accesses: vec![count(w, 4)],
        deps: vec![],
    })?;
    graph.kernel(NodeSpec {
        module: counter,
        symbol: "counter",
        grid: [ITEMS, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
        kernarg: word.address().to_le_bytes().to_vec(),
        accesses: vec![count(w, 4)],
        deps: vec![first],
    })?;
    let explicit = |value: u32| {
        let mut k = acc.address().to_le_bytes().to_vec();
        k.extend(value.to_le_bytes());
        k
    };
    let adder = graph.kernel(NodeSpec {
        module: add,
        symbol: "add_scalar",
        grid: [ITEMS, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
        kernarg: explicit(0),
        accesses: vec![count(a, 4 * u64::from(ITEMS))],
        deps: vec![],
    })?;
    let exec = graph.instantiate()?;
    let kinds: Vec<String> = exec
        .lane_submissions()
        .iter()
        .map(|l| l.kind.to_string())
        .collect();
    println!(
        "lanes: {} ({}): {}",
        exec.lane_count(),
        kinds.join(", "),
        exec.lane_submissions()[0].reason.as_deref().unwrap_or("")
    );
    for value in 1..=REPLAYS {
        exec.replace_node_kernargs(adder, &explicit(value))?;
        exec.launch_hip(&hip)?;
    }
    let mut bytes = [0u8; 4];
    word.read(0, &mut bytes)?;
    let counted = u32::from_le_bytes(bytes);
    let mut sums = vec![0u8; 4 * ITEMS as usize];
    acc.read(0, &mut sums)?;
    let want_sum: u32 = (1..=REPLAYS).sum();
    let right = sums
        .chunks_exact(4)
        .filter(|c| u32::from_le_bytes((*c).try_into().unwrap()) == want_sum)
        .count();
    let want_count = 2 * ITEMS * REPLAYS;
    println!("counter = {counted} / {want_count}, acc right = {right} / {ITEMS}");
    if counted != want_count || right != ITEMS as usize {
        return Err("HIP stream replay gave wrong results".into());
    }
    println!("hip streams example OK");
    Ok(())
}
