//! A real retained graph replay: two counter nodes in a chain (each adds
//! one to the same word), launched once; the word must read 2.
//!
//!     RELAUNCH_GRAPH_HSACO=/tmp/counter.co RELAUNCH_GRAPH_SYMBOL=ctr_k \
//!         cargo run --release --example graph_launch_smoke
//!
//! Device: $RELAUNCH_DEVICE (e.g. sim:gfx1201), else the first real GPU,
//! else sim:gfx1201. The kernel takes the counter's address as its only
//! explicit argument; relaunch fills any hidden arguments.

use relaunch::{Access, GraphOptions};
use relaunch::{Error, Gpu, Graph, NodeSpec};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::var("RELAUNCH_GRAPH_HSACO")
        .map_err(|_| "set RELAUNCH_GRAPH_HSACO to a counter code object")?;
    let symbol = std::env::var("RELAUNCH_GRAPH_SYMBOL").unwrap_or_else(|_| "ctr_k".to_string());
    let gpu = Gpu::open_default()?;
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
