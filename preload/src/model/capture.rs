//! A stream capture in progress, as the shadow records it: each launch,
//! memset or memcpy captured on the stream becomes a node that depends on
//! the node captured before it (stream order is a chain), and the capture
//! ends as a shadow graph whose node keys are positions (the real node
//! handles of a captured graph are the real HIP's, unseen here). Which
//! calls feed it, and when a capture falls through, is the exports'
//! (`exports/capture.rs`).

use crate::model::reason::Reason;
use crate::model::shadow::{NodeKernel, NodeWork, ShadowGraph};

/// A capture in progress on one stream.
#[derive(Default)]
pub struct Capture {
    graph: ShadowGraph,
    /// The node captured last on the stream: the next one depends on it.
    last: Option<usize>,
}

impl Capture {
    /// Appends a launch captured on the stream. Node keys are positions
    /// (1, 2, ...): the real node handles of a captured graph are not
    /// visible to the interposer, and small integers never equal a real
    /// handle (a pointer).
    pub fn push(&mut self, kernel: Result<NodeKernel, Reason>) {
        self.push_work(kernel.map(NodeWork::Kernel));
    }

    /// Appends a captured launch, memset or memcpy (see [`Capture::push`]).
    pub fn push_work(&mut self, work: Result<NodeWork, Reason>) {
        if let Err(why) = &work {
            tracing::info!(reason = %why, "captured work not replayable; its graph falls through");
        }
        let handle = self.graph.nodes.len() + 1;
        let deps: Vec<usize> = self.last.into_iter().collect();
        self.graph.add_work(handle, work, &deps);
        self.last = Some(handle);
    }

    /// Makes the graph this capture produces fall through (the first
    /// reason is kept).
    pub fn mark_unsupported(&mut self, why: Reason) {
        if self.graph.unsupported.is_none() {
            tracing::info!(reason = %why, "stream capture falls through");
            self.graph.unsupported = Some(why);
        }
    }

    /// The shadow graph of the captured work.
    pub fn into_graph(self) -> ShadowGraph {
        let mut graph = self.graph;
        graph.positional = true;
        graph
    }
}

#[cfg(test)]
mod tests {
    use relaunch::Gpu;

    use super::*;
    use crate::model::shadow::{counter_for, node_kernel};

    fn counter() -> NodeKernel {
        let f = counter_for("gfx1201");
        node_kernel(&f, [2, 1, 1], [4, 1, 1], 0, &|_, _| Ok(vec![0; 8])).unwrap()
    }

    #[test]
    fn captured_launches_form_a_chain_in_stream_order() {
        let mut c = Capture::default();
        for _ in 0..3 {
            c.push(Ok(counter()));
        }
        let g = c.into_graph();
        assert_eq!(g.nodes.len(), 3);
        assert_eq!(g.edges, [(0, 1), (1, 2)]);
        assert!(g.unsupported.is_none());
        let x = g.instantiate(&Gpu::open("sim:gfx1201").unwrap()).unwrap();
        assert_eq!(x.current().exec.lane_count(), 1);
    }

    #[test]
    fn an_unsupported_launch_or_mark_makes_the_capture_fall_through() {
        let gpu = Gpu::open("sim:gfx1201").unwrap();
        let mut c = Capture::default();
        c.push(Ok(counter()));
        c.push(Err(Reason::BothArgForms));
        let err = c.into_graph().instantiate(&gpu).err().unwrap();
        assert!(matches!(err, Reason::BothArgForms), "{err}");

        let mut c = Capture::default();
        c.push(Ok(counter()));
        c.mark_unsupported(Reason::CaptureToGraph);
        c.mark_unsupported(Reason::CaptureStatus { status: 2 });
        let err = c.into_graph().instantiate(&gpu).err().unwrap();
        assert!(matches!(err, Reason::CaptureToGraph), "{err}");
    }
}
