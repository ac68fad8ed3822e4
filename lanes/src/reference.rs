//! The reference decode-step graph (TARGETS.md), shared by tests, the bench
//! and the demo.
//!
//! Per layer and sequence: rmsnorm -> qkv projection -> rope -> kv-cache
//! append -> attention -> output projection -> residual add -> rmsnorm ->
//! gate/up projection -> silu-mul -> down projection -> residual add; then
//! one sampler per sequence. Sequences share only the read-only weights, so
//! each sequence is an independent component (a lane candidate). Values are
//! f32; the per-token position is a kernarg (patched between replays).
//!
//! Dependencies are the data flow of the declared accesses, as a careful
//! author would write them: each op depends on the last writer of what it
//! reads, and on the last writer and readers since of what it writes.
//! Kernels default to `KernelRef::Named(op name)`; `decode_step_with` lets a
//! caller (the demo) substitute real kernels, geometry and kernargs per op.

use crate::error::RecordError;
use crate::graph::{Access, BufferId, Graph, GraphOptions, KernelNode, KernelRef, NodeId};
use crate::history::Histories;

const F32: u64 = 4;

/// Size of the model and the batch of independent sequences.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeShape {
    pub layers: usize,
    pub sequences: usize,
    /// Hidden width (elements).
    pub hidden: u64,
    /// MLP inner width (elements).
    pub ffn: u64,
    pub vocab: u64,
    /// KV-cache capacity (positions).
    pub max_positions: u64,
}

impl Default for DecodeShape {
    fn default() -> Self {
        DecodeShape {
            layers: 28,
            sequences: 2,
            hidden: 64,
            ffn: 256,
            vocab: 256,
            max_positions: 128,
        }
    }
}

impl DecodeShape {
    /// Nodes the graph will have.
    pub fn node_count(&self) -> usize {
        self.sequences * (self.layers * OpKind::LAYER_OPS.len() + 1)
    }

    /// The default shape with enough layers for at least `nodes` nodes.
    pub fn scaled(nodes: usize, sequences: usize) -> Self {
        let sequences = sequences.max(1);
        let per_layer = OpKind::LAYER_OPS.len() * sequences;
        let layers = nodes.saturating_sub(sequences).div_ceil(per_layer).max(1);
        DecodeShape {
            layers,
            sequences,
            ..DecodeShape::default()
        }
    }
}

/// What an op computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    RmsNormAttn,
    QkvProj,
    Rope,
    KvAppend,
    Attention,
    OutProj,
    ResidualAttn,
    RmsNormMlp,
    GateUpProj,
    SiluMul,
    DownProj,
    ResidualMlp,
    Sampler,
}

impl OpKind {
    /// The ops of one layer, in data-flow order.
    pub const LAYER_OPS: [OpKind; 12] = [
        OpKind::RmsNormAttn,
        OpKind::QkvProj,
        OpKind::Rope,
        OpKind::KvAppend,
        OpKind::Attention,
        OpKind::OutProj,
        OpKind::ResidualAttn,
        OpKind::RmsNormMlp,
        OpKind::GateUpProj,
        OpKind::SiluMul,
        OpKind::DownProj,
        OpKind::ResidualMlp,
    ];

    /// Kernel name used for `KernelRef::Named` (the two norms and the two
    /// residual adds share a kernel).
    pub fn kernel_name(self) -> &'static str {
        match self {
            OpKind::RmsNormAttn | OpKind::RmsNormMlp => "rmsnorm",
            OpKind::QkvProj => "qkv_proj",
            OpKind::Rope => "rope",
            OpKind::KvAppend => "kv_append",
            OpKind::Attention => "attention",
            OpKind::OutProj => "out_proj",
            OpKind::ResidualAttn | OpKind::ResidualMlp => "residual_add",
            OpKind::GateUpProj => "gate_up_proj",
            OpKind::SiluMul => "silu_mul",
            OpKind::DownProj => "down_proj",
            OpKind::Sampler => "sampler",
        }
    }

    /// True for ops whose kernarg carries the per-token position.
    pub fn takes_position(self) -> bool {
        matches!(self, OpKind::Rope | OpKind::KvAppend | OpKind::Attention)
    }
}

/// Read-only weights of one layer (shared by all sequences).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerWeights {
    pub attn_norm: BufferId,
    pub wqkv: BufferId,
    pub wo: BufferId,
    pub mlp_norm: BufferId,
    pub w_gate_up: BufferId,
    pub w_down: BufferId,
}

/// Activations and caches of one sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SequenceBuffers {
    /// Residual stream (input token embedding in, final hidden out).
    pub hidden: BufferId,
    pub normed: BufferId,
    /// q | k | v, each `hidden` wide.
    pub qkv: BufferId,
    pub attn_out: BufferId,
    pub proj_out: BufferId,
    /// gate | up, each `ffn` wide.
    pub gate_up: BufferId,
    pub act: BufferId,
    /// One u32: the sampled token.
    pub token: BufferId,
    /// Per layer: k cache then v cache, `max_positions * hidden` each.
    pub kv: Vec<BufferId>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeBuffers {
    pub layers: Vec<LayerWeights>,
    pub final_norm: BufferId,
    pub lm_head: BufferId,
    pub sequences: Vec<SequenceBuffers>,
}

/// Where an op sits; handed to the kernel chooser of `decode_step_with`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpSite {
    pub kind: OpKind,
    /// `None` for the sampler.
    pub layer: Option<usize>,
    pub sequence: usize,
    /// Declared accesses, in the order the kernel's arguments take them.
    pub accesses: Vec<Access>,
}

/// The kernel an op dispatches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpKernel {
    pub kernel: KernelRef,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_group_bytes: u32,
    pub kernarg: Vec<u8>,
    pub vmem_only: bool,
}

/// One node of the decode graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeOp {
    pub kind: OpKind,
    pub layer: Option<usize>,
    pub sequence: usize,
    pub node: NodeId,
}

#[derive(Debug, Clone)]
pub struct DecodeGraph {
    pub graph: Graph,
    pub shape: DecodeShape,
    pub ops: Vec<DecodeOp>,
    pub buffers: DecodeBuffers,
}

impl DecodeGraph {
    /// The node of one op (`layer` is `None` for the sampler).
    pub fn node(&self, kind: OpKind, layer: Option<usize>, sequence: usize) -> Option<NodeId> {
        // Ops are recorded sequence by sequence, layer by layer.
        let per_layer = OpKind::LAYER_OPS.len();
        let per_sequence = self.shape.layers * per_layer + 1;
        let within = match layer {
            Some(l) if l < self.shape.layers => {
                l * per_layer + OpKind::LAYER_OPS.iter().position(|&k| k == kind)?
            }
            None if kind == OpKind::Sampler => self.shape.layers * per_layer,
            _ => return None,
        };
        let op = self.ops.get(sequence.checked_mul(per_sequence)? + within)?;
        (op.kind == kind && op.layer == layer && op.sequence == sequence).then_some(op.node)
    }
}

/// The default kernel for an op: its name, one 8-byte slot per access (a
/// pointer, zero here) plus a u32 position where the op takes one, a grid
/// as wide as the op's output and 64-wide workgroups.
pub fn default_kernel(site: &OpSite, shape: &DecodeShape) -> OpKernel {
    let mut kernarg = vec![0u8; 8 * site.accesses.len()];
    if site.kind.takes_position() {
        kernarg.extend_from_slice(&0u32.to_le_bytes());
    }
    let width = match site.kind {
        OpKind::QkvProj => 3 * shape.hidden,
        OpKind::GateUpProj => 2 * shape.ffn,
        OpKind::SiluMul => shape.ffn,
        OpKind::Sampler => 64,
        _ => shape.hidden,
    };
    let grid = u32::try_from(width.max(1)).unwrap_or(u32::MAX);
    OpKernel {
        kernel: KernelRef::Named(site.kind.kernel_name().to_string()),
        grid: [grid, 1, 1],
        block: [64.min(grid), 1, 1],
        dynamic_group_bytes: 0,
        kernarg,
        vmem_only: false,
    }
}

/// The decode step with default kernels.
pub fn decode_step(shape: &DecodeShape, options: GraphOptions) -> Result<DecodeGraph, RecordError> {
    let s = *shape;
    decode_step_with(shape, options, |site| default_kernel(site, &s))
}

/// The decode step, with `kernel_for` choosing each op's kernel.
pub fn decode_step_with(
    shape: &DecodeShape,
    options: GraphOptions,
    mut kernel_for: impl FnMut(&OpSite) -> OpKernel,
) -> Result<DecodeGraph, RecordError> {
    let mut graph = Graph::new(options);
    let h = shape.hidden * F32;
    let buffers = declare_buffers(&mut graph, shape)?;
    let mut ops = Vec::with_capacity(shape.node_count());
    let mut flow = Histories::new(graph.buffer_count());
    for (seq, sb) in buffers.sequences.iter().enumerate() {
        for layer in 0..shape.layers {
            let w = &buffers.layers[layer];
            let kv = sb.kv[layer];
            let kv_len = 2 * shape.max_positions * h;
            for kind in OpKind::LAYER_OPS {
                let accesses = match kind {
                    OpKind::RmsNormAttn => vec![
                        Access::read(sb.hidden, 0, h),
                        Access::read(w.attn_norm, 0, h),
                        Access::write(sb.normed, 0, h),
                    ],
                    OpKind::QkvProj => vec![
                        Access::read(sb.normed, 0, h),
                        Access::read(w.wqkv, 0, 3 * h * shape.hidden),
                        Access::write(sb.qkv, 0, 3 * h),
                    ],
                    OpKind::Rope => vec![
                        Access::read(sb.qkv, 0, 2 * h),
                        Access::write(sb.qkv, 0, 2 * h),
                    ],
                    OpKind::KvAppend => {
                        vec![Access::read(sb.qkv, h, 2 * h), Access::write(kv, 0, kv_len)]
                    }
                    OpKind::Attention => vec![
                        Access::read(sb.qkv, 0, h),
                        Access::read(kv, 0, kv_len),
                        Access::write(sb.attn_out, 0, h),
                    ],
                    OpKind::OutProj => vec![
                        Access::read(sb.attn_out, 0, h),
                        Access::read(w.wo, 0, h * shape.hidden),
                        Access::write(sb.proj_out, 0, h),
                    ],
                    OpKind::ResidualAttn | OpKind::ResidualMlp => vec![
                        Access::read(sb.proj_out, 0, h),
                        Access::read(sb.hidden, 0, h),
                        Access::write(sb.hidden, 0, h),
                    ],
                    OpKind::RmsNormMlp => vec![
                        Access::read(sb.hidden, 0, h),
                        Access::read(w.mlp_norm, 0, h),
                        Access::write(sb.normed, 0, h),
                    ],
                    OpKind::GateUpProj => vec![
                        Access::read(sb.normed, 0, h),
                        Access::read(w.w_gate_up, 0, h * 2 * shape.ffn),
                        Access::write(sb.gate_up, 0, 2 * shape.ffn * F32),
                    ],
                    OpKind::SiluMul => vec![
                        Access::read(sb.gate_up, 0, 2 * shape.ffn * F32),
                        Access::write(sb.act, 0, shape.ffn * F32),
                    ],
                    OpKind::DownProj => vec![
                        Access::read(sb.act, 0, shape.ffn * F32),
                        Access::read(w.w_down, 0, shape.ffn * F32 * shape.hidden),
                        Access::write(sb.proj_out, 0, h),
                    ],
                    OpKind::Sampler => Vec::new(),
                };
                let site = OpSite {
                    kind,
                    layer: Some(layer),
                    sequence: seq,
                    accesses,
                };
                let node = add_op(&mut graph, &mut flow, &site, &mut kernel_for)?;
                ops.push(DecodeOp {
                    kind,
                    layer: Some(layer),
                    sequence: seq,
                    node,
                });
            }
        }
        let site = OpSite {
            kind: OpKind::Sampler,
            layer: None,
            sequence: seq,
            accesses: vec![
                Access::read(sb.hidden, 0, h),
                Access::read(buffers.final_norm, 0, h),
                Access::read(buffers.lm_head, 0, h * shape.vocab),
                Access::write(sb.token, 0, 4),
            ],
        };
        let node = add_op(&mut graph, &mut flow, &site, &mut kernel_for)?;
        ops.push(DecodeOp {
            kind: OpKind::Sampler,
            layer: None,
            sequence: seq,
            node,
        });
    }
    Ok(DecodeGraph {
        graph,
        shape: *shape,
        ops,
        buffers,
    })
}

fn declare_buffers(graph: &mut Graph, shape: &DecodeShape) -> Result<DecodeBuffers, RecordError> {
    let h = shape.hidden * F32;
    let mut layers = Vec::with_capacity(shape.layers);
    for l in 0..shape.layers {
        layers.push(LayerWeights {
            attn_norm: graph.buffer(&format!("w{l}.attn_norm"), h)?,
            wqkv: graph.buffer(&format!("w{l}.qkv"), 3 * h * shape.hidden)?,
            wo: graph.buffer(&format!("w{l}.o"), h * shape.hidden)?,
            mlp_norm: graph.buffer(&format!("w{l}.mlp_norm"), h)?,
            w_gate_up: graph.buffer(&format!("w{l}.gate_up"), h * 2 * shape.ffn)?,
            w_down: graph.buffer(&format!("w{l}.down"), shape.ffn * F32 * shape.hidden)?,
        });
    }
    let final_norm = graph.buffer("w.final_norm", h)?;
    let lm_head = graph.buffer("w.lm_head", h * shape.vocab)?;
    let mut sequences = Vec::with_capacity(shape.sequences);
    for s in 0..shape.sequences {
        let kv = (0..shape.layers)
            .map(|l| graph.buffer(&format!("s{s}.kv{l}"), 2 * shape.max_positions * h))
            .collect::<Result<Vec<_>, _>>()?;
        sequences.push(SequenceBuffers {
            hidden: graph.buffer(&format!("s{s}.hidden"), h)?,
            normed: graph.buffer(&format!("s{s}.normed"), h)?,
            qkv: graph.buffer(&format!("s{s}.qkv"), 3 * h)?,
            attn_out: graph.buffer(&format!("s{s}.attn_out"), h)?,
            proj_out: graph.buffer(&format!("s{s}.proj_out"), h)?,
            gate_up: graph.buffer(&format!("s{s}.gate_up"), 2 * shape.ffn * F32)?,
            act: graph.buffer(&format!("s{s}.act"), shape.ffn * F32)?,
            token: graph.buffer(&format!("s{s}.token"), 4)?,
            kv,
        });
    }
    Ok(DecodeBuffers {
        layers,
        final_norm,
        lm_head,
        sequences,
    })
}

fn add_op(
    graph: &mut Graph,
    flow: &mut Histories,
    site: &OpSite,
    kernel_for: &mut impl FnMut(&OpSite) -> OpKernel,
) -> Result<NodeId, RecordError> {
    let n = graph.node_count() as u32;
    let mut deps = Vec::new();
    for a in &site.accesses {
        let size = graph.buffer_info(a.buffer).map_or(a.end(), |b| b.size);
        flow.must_follow(a, size, n, |d| deps.push(NodeId::from_raw(d)));
    }
    let k = kernel_for(site);
    let node = graph.kernel(KernelNode {
        kernel: k.kernel,
        grid: k.grid,
        block: k.block,
        dynamic_group_bytes: k.dynamic_group_bytes,
        kernarg: k.kernarg,
        accesses: site.accesses.clone(),
        deps,
        vmem_only: k.vmem_only,
    })?;
    // Every reader is kept: a later writer depends on each of them.
    flow.record(&site.accesses, node.raw(), |_| false);
    Ok(node)
}
