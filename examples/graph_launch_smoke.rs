//! A real retained graph replay: two counter nodes in a chain (each adds
//! one to the same word), launched once; the word must read 2.
//!
//!     RELAUNCH_GRAPH_HSACO=/tmp/relaunch-counter.co RELAUNCH_GRAPH_SYMBOL=ctr_k \
//!         cargo run --release -p relaunch --example graph_launch_smoke
//!
//! Device: $RELAUNCH_DEVICE (e.g. sim:gfx1201), else the first real GPU,
//! else (no ROCm on this machine) sim:gfx1201, said in one line. The kernel
//! (default `ctr_k`, `tests/kernels/hip/ctr_k.hip`) takes the counter's
//! address as its only explicit argument; relaunch fills any hidden
//! arguments. The reference system's names of the two variables
//! (`REDLINE_GRAPH_*`) are read too, with a warning.

use relaunch::migration::setting;
use relaunch::{Access, GraphOptions};
use relaunch::{Error, Gpu, Graph, NodeSpec};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = setting("RELAUNCH_GRAPH_HSACO")
        .ok_or("set RELAUNCH_GRAPH_HSACO to a counter code object")?;
    let symbol = setting("RELAUNCH_GRAPH_SYMBOL").unwrap_or_else(|| "ctr_k".to_string());
    let gpu = Gpu::open_default()?;
    if gpu.is_simulated() && setting(relaunch::DEVICE_ENV).is_none() {
        println!(
            "device: {} -- no ROCm GPU on this machine, running on the simulator \
             (RELAUNCH_DEVICE picks another)",
            gpu.describe()
        );
    }
    let module = gpu.load_module(&std::fs::read(&path)?)?;
    let counter = gpu.alloc(4, true)?;

    let mut graph = Graph::new(GraphOptions {
        lanes: 1,
        ..GraphOptions::default()
    });
    let word = graph.buffer("counter", 4)?;
    let rmw = Access {
        buffer: word,
        offset: 0,
        len: 4,
        write: true,
    };
    let mut previous = Vec::new();
    for _ in 0..2 {
        let node = graph.kernel(NodeSpec {
            module: &module,
            symbol: &symbol,
            grid: [1, 1, 1],
            block: [1, 1, 1],
            dynamic_group_bytes: 0,
            kernarg: counter.address().to_le_bytes().to_vec(),
            accesses: vec![rmw],
            deps: previous.clone(),
        })?;
        previous = vec![node];
    }
    let exec = graph.instantiate()?;
    exec.launch(&gpu)?;
    let observed = counter.read_u32(0)?;
    println!("OBSERVED={observed} EXPECTED=2");
    if observed != 2 {
        return Err(Box::new(Error::new(
            relaunch::ErrorClass::Replay,
            "the counter does not read 2",
        )));
    }
    Ok(())
}
