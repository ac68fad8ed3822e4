//! relaunch-encoders: PM4 for RDNA compute queues.
//!
//! Owns: the PM4 verdict (which kernels the direct path runs, [`verdict`]),
//! kernarg packing for it ([`kernarg_pack`]), the type-3 packet writer,
//! stateful SH-register elision, boundaries, IB segmentation, CP DMA
//! copies and fills ([`dma`]), timestamps spliced into profiled IBs
//! ([`profile`]) and the decoder; and the public-AQL lowering of a lane
//! into standard kernel-dispatch packets ([`aql`]), for kernels the PM4
//! verdict refuses or when a caller asks for it. The register
//! and packet tables, field layouts and the vendor AQL PM4-IB packet are
//! facts from `relaunch-facts` (users name them there).
//! Refuses: kernels whose descriptor the direct PM4 path cannot honour,
//! launches the hardware cannot express, and families that do not match
//! the kernel. Must not depend on the graph, scheduler, HSA runtime or
//! simulator.

use relaunch_facts::{field, packet, regs};

pub mod aql;
pub mod boundary;
pub mod builder;
pub mod decode;
pub mod dispatch;
pub mod dispatch_packet;
pub mod dma;
pub mod elide;
pub mod emit;
pub mod error;
pub mod ib;
mod kernarg;
pub mod kernarg_pack;
pub mod profile;
pub mod scratch;
pub mod stream_order;
pub mod timestamp;
pub mod verdict;
pub mod writer;

pub use aql::{AqlBuilder, AqlSite, EncodedAql};
pub use boundary::BoundaryKind;
pub use builder::{EncodeOptions, IbBuilder, TemplateId, FULL_STATE_ENV};
pub use decode::{decode, decode_lenient, Packet};
pub use dispatch::{KernelCode, Launch};
pub use dma::DmaOp;
pub use error::{DecodeError, EncodeError};
pub use field::Field;
pub use ib::{
    DispatchId, DispatchSite, EncodedIb, IbStorage, KernargLayout, KernelInfo, PatchError, Segment,
    TRANSFER_KERNEL,
};
pub use kernarg_pack::{pack as pack_kernargs, Geometry, KernargError};
pub use profile::Profile;
pub use regs::{table, Class, Register, RegisterTable};
pub use scratch::{ScratchNeed, ScratchPlan, ScratchRing};
pub use stream_order::StreamWords;
pub use verdict::{Pm4Verdict, Refusal, Verdict};
