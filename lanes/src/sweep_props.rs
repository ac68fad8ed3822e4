//! Property tests of the near-linear analysis (`sweep`, `boundary`)
//! against simple references on small random graphs: a brute-force
//! pairwise hazard check over the transitive closure, the pairwise sweep
//! (`hazard::check`) for levels, and the per-segment boundary derivation
//! it replaced.

use proptest::prelude::*;

use crate::graph::{Access, BufferId, Graph, GraphOptions, KernelNode, Mode, NodeId};
use crate::reach::Reach;
use crate::{hazard, schedule, sweep};

mod per_segment {
    use crate::boundary::{Boundary, BoundaryReason, Covers, Need};
    use crate::error::HazardKind;
    use crate::graph::{BufferId, NodeId};
    use crate::intervals::IntervalMap;
    use crate::store::Store;
    use crate::BoundaryKind;

    /// Indices in the lane of the last writer and latest reader since it.
    #[derive(Debug, Clone, Copy, Default)]
    struct Last {
        writer: Option<u32>,
        reader: Option<u32>,
    }

    /// Per-buffer maps reused across lanes; only the touched ones are reset.
    struct Scratch {
        maps: Vec<Option<IntervalMap<Last>>>,
        touched: Vec<u32>,
    }

    impl Scratch {
        fn new(buffers: usize) -> Self {
            Scratch {
                maps: vec![None; buffers],
                touched: Vec::new(),
            }
        }
    }

    /// The per-segment derivation `boundary::derive` replaced (quadratic on
    /// a read-all chain), kept as the reference.
    pub(super) fn derive(
        store: &Store,
        written: &[bool],
        lane: &[u32],
        buffers: usize,
    ) -> Vec<Option<Boundary>> {
        let scratch = &mut Scratch::new(buffers);
        for b in scratch.touched.drain(..) {
            scratch.maps[b as usize] = None;
        }
        let maps = &mut scratch.maps;
        let mut covers = Covers::default();
        let mut out = Vec::with_capacity(lane.len());
        for (i, &n) in lane.iter().enumerate() {
            let i = i as u32;
            let accesses = store.accesses_of(n);
            let raw_kind = if store.nodes[n as usize].vmem_only {
                BoundaryKind::RmwVmem
            } else {
                BoundaryKind::Rmw
            };
            let mut need: Need = None;
            let mut consider = |kind: BoundaryKind, p: u32, hazard, buf: u32, range| {
                if covers.met(kind, p) {
                    return;
                }
                if need.is_none_or(|(k, q, ..)| (kind, p) > (k, q)) {
                    need = Some((kind, p, hazard, buf, range));
                }
            };
            for a in accesses.iter().filter(|a| written[a.buffer.idx()]) {
                let buf = a.buffer.0;
                let Some(map) = &maps[buf as usize] else {
                    continue;
                };
                map.visit(a.offset, a.end(), |s, e, last| {
                    if let Some(w) = last.writer {
                        if a.write {
                            consider(BoundaryKind::Wait, w, HazardKind::Waw, buf, (s, e));
                        } else {
                            consider(raw_kind, w, HazardKind::Raw, buf, (s, e));
                        }
                    }
                    if let Some(r) = last.reader.filter(|_| a.write) {
                        consider(BoundaryKind::Wait, r, HazardKind::War, buf, (s, e));
                    }
                });
            }
            let boundary = need.map(|(kind, p, hazard, buf, range)| {
                covers.place(kind, i);
                Boundary {
                    kind,
                    reason: BoundaryReason {
                        hazard,
                        producer: NodeId(lane[p as usize]),
                        consumer: NodeId(n),
                        buffer: BufferId(buf),
                        range,
                    },
                }
            });
            out.push(boundary);
            for a in accesses.iter().filter(|a| written[a.buffer.idx()]) {
                let slot = &mut maps[a.buffer.idx()];
                if slot.is_none() {
                    scratch.touched.push(a.buffer.0);
                }
                let size = store.buffers[a.buffer.idx()].size;
                let map = slot.get_or_insert_with(|| IntervalMap::new(size));
                if !a.write {
                    map.update(a.offset, a.end(), |last| last.reader = Some(i));
                }
            }
            for a in accesses.iter().filter(|a| a.write) {
                if let Some(map) = maps[a.buffer.idx()].as_mut() {
                    let last = Last {
                        writer: Some(i),
                        reader: None,
                    };
                    map.assign(a.offset, a.end(), last);
                }
            }
        }
        out
    }
}

const SIZE: u64 = 24;

/// (buffer, offset, len, write).
type AccessSpec = (u8, u64, u64, bool);

#[derive(Debug, Clone)]
struct Spec {
    /// Accesses, dependency picks, vmem_only.
    nodes: Vec<(Vec<AccessSpec>, Vec<u8>, bool)>,
    lanes: usize,
}

fn spec() -> impl Strategy<Value = Spec> {
    let access = (0u8..2, 0u64..SIZE, 1u64..=12, any::<bool>())
        .prop_map(|(b, off, len, w)| (b, off.min(SIZE - len), len, w));
    let node = (
        prop::collection::vec(access, 0..4),
        prop::collection::vec(0u8..12, 0..4),
        any::<bool>(),
    );
    (prop::collection::vec(node, 1..12), 1usize..=3)
        .prop_map(|(nodes, lanes)| Spec { nodes, lanes })
}

fn build(spec: &Spec) -> Graph {
    let mut g = Graph::new(GraphOptions {
        mode: Mode::Latency,
        lanes: spec.lanes,
        max_in_flight: 1,
    });
    let bufs: Vec<BufferId> = (0..2)
        .map(|i| g.buffer(&format!("b{i}"), SIZE).unwrap())
        .collect();
    for (i, (accesses, deps, vmem)) in spec.nodes.iter().enumerate() {
        let accesses = accesses
            .iter()
            .map(|&(b, offset, len, write)| Access {
                buffer: bufs[b as usize],
                offset,
                len,
                write,
            })
            .collect();
        // Dependencies on earlier nodes only (no cycles); often the
        // previous node, so many graphs compile.
        let mut d: Vec<NodeId> = deps
            .iter()
            .filter(|_| i > 0)
            .map(|&k| NodeId((k as usize % i) as u32))
            .collect();
        if i > 0 && deps.len() % 2 == 0 {
            d.push(NodeId(i as u32 - 1));
        }
        d.sort();
        d.dedup();
        g.kernel(KernelNode {
            accesses,
            deps: d,
            vmem_only: *vmem,
            ..KernelNode::named("k", [64, 1, 1], [64, 1, 1])
        })
        .unwrap();
    }
    g
}

/// Brute force: does some conflicting pair lack a dependency path?
#[allow(clippy::needless_range_loop)] // matrix closure reads best with indices
fn has_hazard(g: &Graph) -> bool {
    let store = &g.store;
    let n = store.len();
    let mut reach = vec![vec![false; n]; n];
    for v in 0..n {
        for &p in store.preds().of(v as u32) {
            reach[p as usize][v] = true;
        }
    }
    for k in 0..n {
        for i in 0..n {
            if reach[i][k] {
                for j in 0..n {
                    if reach[k][j] {
                        reach[i][j] = true;
                    }
                }
            }
        }
    }
    (0..n).any(|i| {
        (i + 1..n).any(|j| {
            let conflict = store.accesses_of(i as u32).iter().any(|a| {
                store.accesses_of(j as u32).iter().any(|b| {
                    a.buffer == b.buffer
                        && (a.write || b.write)
                        && a.offset < b.end()
                        && b.offset < a.end()
                })
            });
            conflict && !reach[i][j] && !reach[j][i]
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn near_linear_analysis_matches_the_references(spec in spec()) {
        let g = build(&spec);
        let store = &g.store;
        let preds = store.preds();
        let succs = preds.transpose();
        let order = schedule::topo_order(&preds, &succs);
        let mut pos = vec![0u32; store.len()];
        for (i, &v) in order.iter().enumerate() {
            pos[v as usize] = i as u32;
        }
        let fast = sweep::check(store, &preds, &succs, &order);
        let pairwise = hazard::check(store, &order, &preds, &mut Reach::new(&preds, &pos));
        prop_assert_eq!(fast.is_none(), has_hazard(&g));
        prop_assert_eq!(fast.is_none(), pairwise.is_err());
        if let (Some(fast), Ok(pairwise)) = (fast, pairwise) {
            prop_assert_eq!(&fast.level, &pairwise.level);
            let plan = g.instantiate().unwrap();
            for ids in plan.lane_node_ids() {
                let ids: Vec<u32> = ids.iter().map(|n| n.0).collect();
                let want = per_segment::derive(store, &fast.written, &ids, store.buffers.len());
                let got: Vec<_> = ids.iter().map(|&n| plan.node(NodeId(n)).unwrap().boundary_before).collect();
                prop_assert_eq!(got, want);
            }
        }
    }
}
