//! relaunch-lanes: the graph of kernel nodes with declared memory accesses.
//!
//! Owns: buffers, nodes, dependencies (`graph`, stored compactly in
//! `store` and shared with plans), the hazard check
//! (`hazard`), the partition into lanes and their replay order
//! (`schedule`), minimal boundaries (`boundary`), the plan and its lowering
//! interface (`plan`), lowering into the PM4 encoder or public-AQL packets (`lower`), lowering
//! every lane of a plan in parallel (`encode`: rayon), the fingerprint (`fingerprint`), mock launch
//! (`mock`), DOT output (`dot`) and the reference decode-step graph
//! (`reference`). Refuses: unordered hazards, cycles, malformed regions.
//! Must not depend on the HSA runtime, the scheduler or the simulator; it
//! talks to the encoders only through boundary kinds and `lower`.
//!
//! ```
//! use relaunch_lanes::{Access, BoundaryKind, Graph, GraphOptions, KernelNode};
//!
//! let mut g = Graph::new(GraphOptions::default());
//! let act = g.buffer("activations", 4096)?;
//! let project = g.kernel(KernelNode {
//!     accesses: vec![Access::read(act, 0, 2048), Access::write(act, 2048, 2048)],
//!     ..KernelNode::named("project", [32, 1, 1], [64, 1, 1])
//! })?;
//! let consume = g.kernel(KernelNode {
//!     accesses: vec![Access::read(act, 2048, 2048)],
//!     deps: vec![project],
//!     ..KernelNode::named("consume", [32, 1, 1], [64, 1, 1])
//! })?;
//! let plan = g.instantiate()?;
//! assert_eq!(plan.lane_count(), 1);
//! let before_consume = plan.node(consume).unwrap().boundary_before.unwrap();
//! assert_eq!(before_consume.kind, BoundaryKind::Rmw);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod boundary;
mod dot;
pub mod encode;
pub mod error;
pub mod fingerprint;
pub mod graph;
mod hazard;
mod history;
mod intervals;
pub mod lower;
pub mod mock;
pub mod plan;
mod reach;
pub mod reference;
mod schedule;
mod segtree;
mod store;
mod sweep;
#[cfg(test)]
mod sweep_props;

pub use boundary::{Boundary, BoundaryReason};
pub use encode::{encode_lanes, lower_plan, LaneFailure, LowerLaneError};
pub use error::{CompileError, Hazard, HazardKind, LowerError, PatchError, RecordError};
pub use graph::{
    Access, BufferId, BufferInfo, Graph, GraphOptions, KernelNode, KernelRef, Mode, NodeId,
    NodeView, Order,
};
pub use lower::{AqlSink, EncoderSink, KernelResolver, ResolvedKernel, SinkError};
pub use mock::{MockEvent, MockRecorder};
pub use plan::{BoundaryCounts, GraphExec, LaneSink, NodeLocation, Plan, PlannedNode};
pub use relaunch_encoders::BoundaryKind;
