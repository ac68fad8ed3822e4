//! relaunch-facts: what relaunch knows about AMD GPUs, declared once.
//!
//! Owns: the supported targets and one facts row per target ([`rows`]:
//! family, wave sizes, limits, cache model, automatic queue width, ELF
//! machine id), the generic targets whose code runs on a range of them
//! ([`generic`]), target-name parsing ([`target`]), the families and their
//! shared facts ([`family`]: one `FamilyFacts` row each: user-SGPR layout,
//! scratch, dispatch rules, SGPR codes, memory field positions, V# fields,
//! cache model, runtime behaviour), which user SGPRs a kernel
//! is given ([`sgprs`]), the PM4 register tables with their fields
//! ([`regs`], [`field`]), what the hardware does with a dispatch's state
//! ([`dispatch`]: initiator bits, resource limits, RSRC fields, LDS
//! granules), packet facts and layouts ([`packet`]), framing a PM4 stream by them
//! ([`frame`]) and reading their bodies ([`body`]), the kernel
//! descriptor layout ([`descriptor`]), the scratch ring's register values
//! and V# ([`scratch`]), the one builder of the vendor PM4-IB
//! AQL packet ([`aql`]), the machine-code encoding tables ([`isa`])
//! the decoder in `relaunch-isa` reads, and the copy engine's packets
//! ([`sdma`]).
//!
//! Holds facts, not policy: what the direct PM4 path accepts is the
//! encoders' verdict, how many queues to use is the scheduler's. Facts come
//! from public sources (LLVM's AMDGPUUsage and disassembler, the Linux
//! amdgpu headers; `scripts/check-registers` compares the register tables
//! with the headers). Must not depend on any other relaunch crate: it is
//! the bottom of the workspace.

pub mod aql;
pub mod body;
pub mod descriptor;
pub mod dispatch;
pub mod family;
pub mod field;
pub mod frame;
pub mod generic;
pub mod isa;
pub mod packet;
pub mod regs;
pub mod rows;
pub mod scratch;
pub mod sdma;
pub mod sgprs;
pub mod target;

pub use descriptor::KernelDescriptor;
pub use family::{CacheModel, Family, FamilyFacts};
pub use field::Field;
pub use generic::GenericFacts;
pub use rows::{Limits, TargetFacts, WaveSizes};
pub use target::{FeatureSetting, GfxTarget, TargetError};
