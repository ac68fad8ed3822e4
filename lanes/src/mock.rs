//! Mock launch: replays a plan's lanes into a recorder, with no device, so
//! authoring and planning can be tested anywhere.

use std::convert::Infallible;
use std::fmt::Write as _;

use crate::boundary::BoundaryReason;
use crate::error::LowerError;
use crate::graph::NodeId;
use crate::plan::{LaneSink, Plan, PlannedNode};
use crate::BoundaryKind;

/// One recorded step of a lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MockEvent {
    Boundary {
        kind: BoundaryKind,
        reason: BoundaryReason,
    },
    Dispatch {
        node: NodeId,
        kernel: String,
        kernarg: Vec<u8>,
    },
}

/// Records what each lane would replay, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MockRecorder {
    lanes: Vec<Vec<MockEvent>>,
}

impl MockRecorder {
    pub fn new() -> Self {
        MockRecorder::default()
    }

    /// Start recording a new lane; later events go to it.
    pub fn begin_lane(&mut self) {
        self.lanes.push(Vec::new());
    }

    pub fn lane_count(&self) -> usize {
        self.lanes.len()
    }

    pub fn events(&self, lane: usize) -> &[MockEvent] {
        self.lanes.get(lane).map_or(&[], Vec::as_slice)
    }

    /// Node ids dispatched by one lane, in order.
    pub fn dispatch_order(&self, lane: usize) -> Vec<NodeId> {
        self.events(lane)
            .iter()
            .filter_map(|e| match e {
                MockEvent::Dispatch { node, .. } => Some(*node),
                MockEvent::Boundary { .. } => None,
            })
            .collect()
    }

    /// One line per event: `lane 0: dispatch project (node 0)`,
    /// `lane 0: boundary rmw`.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (l, events) in self.lanes.iter().enumerate() {
            for e in events {
                let _ = match e {
                    MockEvent::Boundary { kind, .. } => writeln!(out, "lane {l}: boundary {kind}"),
                    MockEvent::Dispatch { node, kernel, .. } => {
                        writeln!(out, "lane {l}: dispatch {kernel} (node {})", node.raw())
                    }
                };
            }
        }
        out
    }

    fn current(&mut self) -> &mut Vec<MockEvent> {
        if self.lanes.is_empty() {
            self.lanes.push(Vec::new());
        }
        let last = self.lanes.len() - 1;
        &mut self.lanes[last]
    }
}

impl LaneSink for MockRecorder {
    type Error = Infallible;

    fn dispatch(&mut self, node: &PlannedNode<'_>) -> Result<(), Infallible> {
        self.current().push(MockEvent::Dispatch {
            node: node.node,
            kernel: node.kernel.display_name().to_string(),
            kernarg: node.kernarg.to_vec(),
        });
        Ok(())
    }

    fn boundary(&mut self, kind: BoundaryKind, reason: &BoundaryReason) -> Result<(), Infallible> {
        self.current().push(MockEvent::Boundary {
            kind,
            reason: *reason,
        });
        Ok(())
    }
}

impl Plan {
    /// Replay every lane, in lane order, into a new recorder.
    pub fn launch_mock(&self) -> MockRecorder {
        let _span = tracing::debug_span!("launch_mock", lanes = self.lane_count()).entered();
        let mut recorder = MockRecorder::new();
        for lane in 0..self.lane_count() {
            recorder.begin_lane();
            match self.lower_lane(lane, &mut recorder) {
                Ok(()) => {}
                Err(LowerError::Sink(never)) => match never {},
                // `lane` counts up to lane_count, so it always exists.
                Err(LowerError::NoSuchLane { .. }) => {}
            }
        }
        recorder
    }
}
