//! relaunch-encoders: PM4 for RDNA compute queues.
//!
//! Owns: the type-3 packet writer, per-family register tables (read by both
//! the encoder and the decoder), stateful SH-register elision, boundaries,
//! IB segmentation and the decoder. Refuses: kernels whose descriptor the
//! direct PM4 path cannot honour, and families that do not match the kernel.
//! Must not depend on the graph, scheduler, HSA runtime or simulator.

pub mod boundary;

pub use boundary::BoundaryKind;
