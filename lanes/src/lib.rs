//! relaunch-lanes: the graph of kernel nodes with declared memory accesses.
//!
//! Owns: buffers, nodes, dependencies, the hazard check, minimal boundary
//! derivation, the partition into independent lanes and the plan
//! fingerprint. Must not depend on the HSA runtime, the scheduler or the
//! simulator; it talks to the encoders only through boundary kinds and a
//! lowering interface.

pub use relaunch_encoders::BoundaryKind;
