//! The reference decode-step graph on a device: one device buffer per graph
//! buffer, weights uploaded, each op given its decode kernel, geometry and
//! packed kernarg, and the list of kernarg sites where the position goes.

use std::cell::RefCell;

use relaunch::{default_graph_options, DeviceBuffer, Geometry, Gpu, Graph, Module};
use relaunch::{KernelRef, NodeId};
use relaunch_lanes::reference::{
    decode_step, decode_step_with, DecodeGraph, OpKernel, OpKind, OpSite,
};

use super::kernels::{self, Value};
use super::model::{self, Weights, CAPACITY, EPS, FFN, HEAD_DIM, HIDDEN, VOCAB};
use crate::Failure;

/// The recorded graph and the memory it runs on.
pub struct DeviceGraph {
    pub graph: Graph,
    pub decode: DecodeGraph,
    /// By raw buffer id.
    pub memory: Vec<DeviceBuffer>,
    /// Kernarg sites holding the per-token position: (node, byte offset).
    pub position_sites: Vec<(NodeId, usize)>,
}

impl DeviceGraph {
    pub fn buffer(&self, id: relaunch::BufferId) -> &DeviceBuffer {
        &self.memory[id.raw() as usize]
    }
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Allocates memory for `layers` x `sequences`, uploads `weights` and
/// records the graph with `module`'s decode kernels (position 0).
pub fn build(
    gpu: &Gpu,
    module: &Module,
    weights: &Weights,
    sequences: usize,
) -> Result<DeviceGraph, Failure> {
    let fail = |m: String| Failure {
        message: format!("demo: {m}"),
        code: 1,
    };
    let shape = model::shape(weights.layers.len(), sequences);
    let options = default_graph_options();
    // A first recording with placeholder kernels fixes the buffers (the
    // same shape declares the same buffers in the same order).
    let probe =
        decode_step(&shape, options).map_err(|e| fail(format!("recording the graph: {e}")))?;
    let mut memory = Vec::with_capacity(probe.graph.buffer_count());
    for raw in 0..probe.graph.buffer_count() as u32 {
        let id = relaunch::BufferId::from_raw(raw);
        let info = probe
            .graph
            .buffer_info(id)
            .ok_or_else(|| fail(format!("buffer {raw} has no info")))?;
        let size = usize::try_from(info.size)
            .map_err(|_| fail(format!("buffer {} is too large", info.label)))?;
        let mem = gpu.alloc(size, true).map_err(Failure::from)?;
        memory.push(mem);
    }
    let upload = |id: relaunch::BufferId, values: &[f32]| -> Result<(), Failure> {
        memory[id.raw() as usize]
            .write(0, &f32_bytes(values))
            .map_err(Failure::from)
    };
    for (w, b) in weights.layers.iter().zip(&probe.buffers.layers) {
        upload(b.attn_norm, &w.attn_norm)?;
        upload(b.wqkv, &w.wqkv)?;
        upload(b.wo, &w.wo)?;
        upload(b.mlp_norm, &w.mlp_norm)?;
        upload(b.w_gate_up, &w.w_gate_up)?;
        upload(b.w_down, &w.w_down)?;
    }
    upload(probe.buffers.final_norm, &weights.final_norm)?;
    upload(probe.buffers.lm_head, &weights.lm_head)?;

    let failure = RefCell::new(None::<String>);
    let decode = decode_step_with(&shape, options, |site| {
        op_kernel(module, &memory, site).unwrap_or_else(|e| {
            failure.borrow_mut().get_or_insert(e);
            // Recording goes on with a placeholder; the error is returned below.
            relaunch_lanes::reference::default_kernel(site, &shape)
        })
    })
    .map_err(|e| fail(format!("recording the graph: {e}")))?;
    if let Some(e) = failure.into_inner() {
        return Err(fail(e));
    }
    if decode.buffers != probe.buffers {
        return Err(fail("the two recordings declared different buffers".into()));
    }
    let position_sites = decode
        .ops
        .iter()
        .filter(|op| op.kind.takes_position())
        .map(|op| {
            let symbol = kernel_symbol(op.kind);
            (op.node, kernels::offset(symbol, "pos"))
        })
        .collect();
    let graph = Graph::from_lanes(decode.graph.clone(), std::slice::from_ref(module));
    Ok(DeviceGraph {
        graph,
        decode,
        memory,
        position_sites,
    })
}

/// The decode kernel each op runs.
fn kernel_symbol(kind: OpKind) -> &'static str {
    match kind {
        OpKind::RmsNormAttn | OpKind::RmsNormMlp => "rmsnorm",
        OpKind::QkvProj | OpKind::OutProj | OpKind::GateUpProj | OpKind::DownProj => "matvec",
        OpKind::Rope => "rope",
        OpKind::KvAppend => "kv_append",
        OpKind::Attention => "attention",
        OpKind::ResidualAttn | OpKind::ResidualMlp => "residual_add",
        OpKind::SiluMul => "silu_mul",
        OpKind::Sampler => "sampler",
    }
}

fn u32_of(n: usize) -> Value {
    Value::U32(n as u32)
}

/// The kernel, geometry and kernarg of one op. Pointers are the device
/// addresses of the op's declared accesses (plus their offsets), in the
/// order `lanes::reference` declares them.
fn op_kernel(module: &Module, memory: &[DeviceBuffer], site: &OpSite) -> Result<OpKernel, String> {
    let addr = |k: usize| -> Result<Value, String> {
        let a = site
            .accesses
            .get(k)
            .ok_or_else(|| format!("{:?} declares no access {k}", site.kind))?;
        let mem = memory
            .get(a.buffer.raw() as usize)
            .ok_or_else(|| format!("{:?}: buffer {} has no memory", site.kind, a.buffer.raw()))?;
        Ok(Value::Ptr(mem.address() + a.offset))
    };
    let symbol = kernel_symbol(site.kind);
    let (items, values): (usize, Vec<(&str, Value)>) = match site.kind {
        // [read x, read w, write out]
        OpKind::RmsNormAttn | OpKind::RmsNormMlp => (
            HIDDEN,
            vec![
                ("out", addr(2)?),
                ("x", addr(0)?),
                ("w", addr(1)?),
                ("n", u32_of(HIDDEN)),
                ("eps", Value::F32(EPS)),
            ],
        ),
        // [read x, read w, write out]
        OpKind::QkvProj | OpKind::OutProj | OpKind::GateUpProj | OpKind::DownProj => {
            let (rows, cols) = match site.kind {
                OpKind::QkvProj => (3 * HIDDEN, HIDDEN),
                OpKind::GateUpProj => (2 * FFN, HIDDEN),
                OpKind::DownProj => (HIDDEN, FFN),
                _ => (HIDDEN, HIDDEN),
            };
            (
                rows,
                vec![
                    ("out", addr(2)?),
                    ("x", addr(0)?),
                    ("w", addr(1)?),
                    ("rows", u32_of(rows)),
                    ("cols", u32_of(cols)),
                ],
            )
        }
        // [read qkv[0..2h], write qkv[0..2h]]: one item per (q, k) pair.
        OpKind::Rope => (
            HIDDEN,
            vec![
                ("qk", addr(1)?),
                ("n", u32_of(HIDDEN)),
                ("head_dim", u32_of(HEAD_DIM)),
                ("pos", Value::U32(0)),
            ],
        ),
        // [read qkv[h..3h], write kv]
        OpKind::KvAppend => (
            HIDDEN,
            vec![
                ("kv", addr(1)?),
                ("kv_new", addr(0)?),
                ("n", u32_of(HIDDEN)),
                ("capacity", u32_of(CAPACITY)),
                ("pos", Value::U32(0)),
            ],
        ),
        // [read q, read kv, write out]
        OpKind::Attention => (
            HIDDEN,
            vec![
                ("out", addr(2)?),
                ("q", addr(0)?),
                ("kv", addr(1)?),
                ("n", u32_of(HIDDEN)),
                ("head_dim", u32_of(HEAD_DIM)),
                ("capacity", u32_of(CAPACITY)),
                ("pos", Value::U32(0)),
            ],
        ),
        // [read delta, read x, write x]
        OpKind::ResidualAttn | OpKind::ResidualMlp => (
            HIDDEN,
            vec![("x", addr(2)?), ("delta", addr(0)?), ("n", u32_of(HIDDEN))],
        ),
        // [read gate_up, write out]
        OpKind::SiluMul => (
            FFN,
            vec![("out", addr(1)?), ("gate_up", addr(0)?), ("n", u32_of(FFN))],
        ),
        // [read x, read w, read lm_head, write token]
        OpKind::Sampler => (
            1,
            vec![
                ("token", addr(3)?),
                ("x", addr(0)?),
                ("w", addr(1)?),
                ("lm_head", addr(2)?),
                ("n", u32_of(HIDDEN)),
                ("vocab", u32_of(VOCAB)),
                ("eps", Value::F32(EPS)),
            ],
        ),
    };
    // Element-wise kernels run 64-wide (decode.h); the sampler is one item.
    let block = if site.kind == OpKind::Sampler { 1 } else { 64 };
    let geometry = Geometry {
        grid: [items as u32, 1, 1],
        block: [block, 1, 1],
        dynamic_group_bytes: 0,
    };
    let kernarg = module
        .pack_kernargs(symbol, &kernels::pack(symbol, &values), &geometry)
        .map_err(|e| e.message().to_string())?;
    Ok(OpKernel {
        kernel: KernelRef::Module {
            module: module.graph_id(),
            symbol: symbol.to_string(),
        },
        grid: geometry.grid,
        block: geometry.block,
        dynamic_group_bytes: 0,
        kernarg,
        vmem_only: module.read_cache(symbol) == relaunch::ReadCache::VmemOnly,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::model::start_token;
    use crate::demo::oracle::Oracle;
    use crate::demo::twins;

    fn hidden_of(built: &DeviceGraph, seq: usize) -> Vec<f32> {
        let mut raw = vec![0u8; HIDDEN * 4];
        let id = built.decode.buffers.sequences[seq].hidden;
        built.buffer(id).read(0, &mut raw).unwrap();
        raw.chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    }

    /// The oracle check has teeth: a replay whose position kernargs were
    /// not patched computes a different step than the oracle's.
    #[test]
    fn a_stale_position_is_caught_by_the_oracle() {
        let gpu = Gpu::open("sim:gfx1201").unwrap();
        let module = gpu
            .load_module(kernels::bundled("gfx1201").unwrap())
            .unwrap();
        kernels::check(&module).unwrap();
        twins::register();
        let weights = Weights::generate(1, 3);
        let built = build(&gpu, &module, &weights, 1).unwrap_or_else(|f| panic!("{}", f.message));
        assert_eq!(built.position_sites.len(), 3);
        let exec = built.graph.instantiate().unwrap();
        let mut oracle = Oracle::new(1);
        let seq = &built.decode.buffers.sequences[0];
        let input = weights.embed(start_token(0));
        for pos in 0..2 {
            built
                .buffer(seq.hidden)
                .write(0, &f32_bytes(input))
                .unwrap();
            // Position 1 is left unpatched: the kernels still see 0.
            exec.launch(&gpu).unwrap();
            let want = oracle.step(&weights, input, pos);
            let got = hidden_of(&built, 0);
            if pos == 0 {
                assert_eq!(got, want.hidden);
                let token = built.buffer(seq.token).read_u32(0).unwrap();
                assert_eq!(token, want.token);
            } else {
                assert_ne!(got, want.hidden);
            }
        }
    }
}
