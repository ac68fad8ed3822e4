//! relaunch-encoders: PM4 for RDNA compute queues.
//!
//! Owns: the type-3 packet writer, per-family register tables (read by both
//! the encoder and the decoder), stateful SH-register elision, boundaries,
//! IB segmentation, the vendor AQL PM4-IB packet and the decoder. Refuses:
//! kernels whose descriptor the direct PM4 path cannot honour, launches the
//! hardware cannot express, and families that do not match the kernel.
//! Must not depend on the graph, scheduler, HSA runtime or simulator.

pub mod aql;
pub mod boundary;
pub mod builder;
pub mod decode;
pub mod dispatch;
pub mod dispatch_packet;
pub mod elide;
pub mod emit;
pub mod error;
pub mod field;
pub mod ib;
mod kernarg;
pub mod packet;
pub mod regs;
pub mod stream_order;
pub mod timestamp;
pub mod writer;

pub use boundary::BoundaryKind;
pub use builder::{EncodeOptions, IbBuilder, FULL_STATE_ENV};
pub use decode::{decode, decode_lenient, Packet};
pub use dispatch::{KernelCode, Launch};
pub use error::{DecodeError, EncodeError};
pub use field::Field;
pub use ib::{DispatchId, DispatchSite, EncodedIb, KernargLayout, KernelInfo, PatchError, Segment};
pub use regs::{table, Class, Register, RegisterTable};
pub use stream_order::StreamWords;
