//! AMDGPU HSA code objects: ELF container, metadata note, kernel descriptors.
//!
//! Owns: reading code object V4/V5/V6 ELF files and clang offload bundles into
//! [`CodeObject`] / [`KernelInfo`] (the descriptor layout itself is a fact,
//! `relaunch_facts::descriptor`; its [`KernelDescriptor`] is re-exported
//! here because [`KernelInfo`] carries one), and the
//! certifier ([`certify`]). Whether the direct PM4 path runs a kernel (the
//! verdict) and packing its kernargs are the encoders'. The length of an image
//! known only by where it starts ([`extent`], within the readers' limits). Refuses: other ELF classes,
//! machines, OS ABIs and code object versions, damaged or oversized tables,
//! compressed bundles that do not decompress to exactly their declared size
//! (at most [`compressed::MAX_UNCOMPRESSED_BYTES`]); each with its own
//! [`CodeObjectError`] variant. Bad
//! input never panics and never allocates more than a small multiple of its
//! own size. Must not import the encoders, the simulated device or anything
//! above this crate.

pub mod args;
pub mod bundle;
pub mod certify;
pub mod compressed;
pub mod elf;
pub mod error;
pub mod extent;
pub mod kernel;
pub mod metadata;
pub mod notes;
pub mod object;
pub mod relocate;

pub use args::{AqlFill, ArgFill, Axis, KernelArg, ValueKind};
pub use certify::{Certificate, ReadCache};
pub use elf::{CodeObjectVersion, LoadSegment};
pub use error::CodeObjectError;
pub use kernel::{KernelInfo, UnreadInputs};
pub use object::CodeObject;
pub use relaunch_facts::descriptor::KernelDescriptor;
