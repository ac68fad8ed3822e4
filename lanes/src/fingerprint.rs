//! The plan fingerprint: SHA-256 of a canonical serialization of the
//! compiled plan. Equal plans hash equal however their handles were
//! numbered; any change to what would be replayed changes the hash.
//!
//! Format `relaunch.plan.v1` (all integers little-endian):
//! ```text
//! magic        16 bytes "relaunch.plan.v1"
//! mode         u8  (0 latency, 1 overlap, 2 throughput)
//! in_flight    u32 (max_in_flight)
//! lane_count   u32
//! per lane:    u32 node_count, then per node in replay order:
//!   boundary   u8  (0 none, 1 wait, 2 rmw_vmem, 3 rmw) placed before it
//!   kernel     u8 tag; 0 = named: u32 len + UTF-8 name;
//!              1 = module: u64 module identity, u32 len + UTF-8 symbol;
//!              2 = transfer: u32 op count, then per op u8 (0 copy, 1 fill),
//!              u64 dst, u64 src (copy) or fill pattern, u64 bytes
//!   grid       3 x u32 work-items; block 3 x u32 work-items
//!   group      u32 dynamic group bytes
//!   kernarg    u32 length of the kernarg block (its layout identity; the
//!              bytes are per-token values and are patched, so excluded)
//!   vmem_only  u8
//!   accesses   u32 count, then sorted (buffer, offset, len, write):
//!              u32 canonical buffer, u64 offset, u64 len, u8 write
//!   deps       u32 count, then sorted: u32 lane, u32 index in lane
//! buffers      u32 count, then per canonical buffer: u64 size
//! ```
//! Canonical buffers are numbered in order of first reference in the plan
//! (lanes in order, nodes in replay order); a node's not-yet-numbered
//! buffers are numbered by (size, offset, len, write) of their access, and
//! only a full tie there falls back to declaration order. Node order in a
//! lane comes from the graph's structure and node contents (see
//! `schedule`); node handles only break ties between identical nodes.
//! Buffers no node references, and labels, are not part of the plan.

use relaunch_encoders::DmaOp;
use sha2::{Digest, Sha256};

use crate::graph::{KernelRef, Mode};
use crate::plan::Plan;
use crate::BoundaryKind;

pub(crate) const MAGIC: &[u8; 16] = b"relaunch.plan.v1";

/// Serializes into a small buffer flushed into the hash.
struct Writer {
    hasher: Sha256,
    buf: Vec<u8>,
}

impl Writer {
    fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
        if self.buf.len() >= 1 << 16 {
            self.hasher.update(&self.buf);
            self.buf.clear();
        }
    }
    fn u8(&mut self, v: u8) {
        self.bytes(&[v]);
    }
    fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.bytes(s.as_bytes());
    }
    fn finish(mut self) -> [u8; 32] {
        self.hasher.update(&self.buf);
        self.hasher.finalize().into()
    }
}

/// Hash the plan.
pub(crate) fn compute(plan: &Plan) -> [u8; 32] {
    let store = plan.store();
    let options = plan.options();
    let mut w = Writer {
        hasher: Sha256::new(),
        buf: Vec::with_capacity(1 << 16),
    };
    w.bytes(MAGIC);
    w.u8(match options.mode {
        Mode::Latency => 0,
        Mode::Overlap => 1,
        Mode::Throughput => 2,
    });
    w.u32(u32::try_from(options.max_in_flight).unwrap_or(u32::MAX));
    w.u32(plan.lane_count() as u32);
    let mut canon: Vec<u32> = vec![u32::MAX; store.buffers.len()];
    let mut order: Vec<u32> = Vec::new();
    let mut accesses: Vec<(u32, u64, u64, u64, bool, u32)> = Vec::new();
    let mut deps: Vec<(u32, u32)> = Vec::new();
    for lane in plan.slots() {
        w.u32(lane.len() as u32);
        for (n, boundary) in lane {
            w.u8(match boundary {
                None => 0,
                Some(BoundaryKind::Wait) => 1,
                Some(BoundaryKind::RmwVmem) => 2,
                Some(BoundaryKind::Rmw) => 3,
            });
            match store.kernel_of(n) {
                KernelRef::Named(name) => {
                    w.u8(0);
                    w.str(name);
                }
                KernelRef::Module { module, symbol } => {
                    w.u8(1);
                    w.u64(*module);
                    w.str(symbol);
                }
                KernelRef::Transfer(ops) => {
                    w.u8(2);
                    w.u32(ops.len() as u32);
                    for op in ops.iter() {
                        let (kind, dst, src, bytes) = match *op {
                            DmaOp::Copy { dst, src, bytes } => (0, dst, src, bytes),
                            DmaOp::Fill {
                                dst,
                                pattern,
                                bytes,
                            } => (1, dst, u64::from(pattern), bytes),
                        };
                        w.u8(kind);
                        w.u64(dst);
                        w.u64(src);
                        w.u64(bytes);
                    }
                }
            }
            let rec = &store.nodes[n as usize];
            for v in rec.grid.iter().chain(&rec.block) {
                w.u32(*v);
            }
            w.u32(rec.dynamic_group_bytes);
            w.u32(rec.kernarg.1);
            w.u8(u8::from(rec.vmem_only));
            accesses.clear();
            for a in store.accesses_of(n) {
                let b = a.buffer.idx();
                let size = store.buffers[b].size;
                accesses.push((canon[b], size, a.offset, a.len, a.write, b as u32));
            }
            accesses.sort_unstable();
            for acc in accesses.iter_mut() {
                let b = acc.5 as usize;
                if canon[b] == u32::MAX {
                    canon[b] = order.len() as u32;
                    order.push(b as u32);
                }
                acc.0 = canon[b];
            }
            accesses.sort_unstable();
            w.u32(accesses.len() as u32);
            for &(buf, _, offset, len, write, _) in &accesses {
                w.u32(buf);
                w.u64(offset);
                w.u64(len);
                w.u8(u8::from(write));
            }
            deps.clear();
            deps.extend(plan.preds().of(n).iter().map(|&d| plan.location(d)));
            deps.sort_unstable();
            w.u32(deps.len() as u32);
            for &(lane, index) in &deps {
                w.u32(lane);
                w.u32(index);
            }
        }
    }
    w.u32(order.len() as u32);
    for &b in &order {
        w.u64(store.buffers[b as usize].size);
    }
    w.finish()
}
