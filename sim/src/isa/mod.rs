//! The instruction interpreter: runs a kernel's real machine code (gfx10.3,
//! gfx11, gfx12; wave32 and wave64) on the simulated device.
//!
//! Owns: the wave state (`wave`), operand reading and writing (`operand`),
//! the fault type (`fault`), decoded programs (`program`) with the targets
//! of their PC-relative calls and long branches (`calls`), and the
//! executors per instruction class; `valu` is the vector ALU; `gws` the
//! global wave sync, whose dispatches `cooperative` runs with every wave
//! resident; `coverage` says before a run what a kernel's code would meet
//! that is refused.
//! Refuses: any instruction it does not implement, with an error naming
//! the kernel, byte offset, mnemonic and family (a host twin can stand in).
//! Every memory access goes through the device's checked memory and the
//! dispatch's access trace.

// Per-lane loops index several fixed lane arrays (registers, addresses,
// masks) by the same lane number; iterators over one of them would hide
// that.
#![allow(clippy::needless_range_loop)]

mod atomic;
mod buffer;
mod cache;
mod calls;
mod clock;
mod control;
mod cooperative;
pub mod coverage;
pub mod dispatch;
mod exec;
pub mod fault;
mod growth;
mod gws;
mod lds;
pub mod operand;
pub mod program;
pub mod runner;
mod scalar;
pub mod scratch;
mod smem;
pub mod tracebuf;
pub mod valu;
mod vmem;
pub mod wave;
mod workgroups;

pub use coverage::{coverage, Coverage};
pub use dispatch::{IsaError, Launch};
pub use fault::{Flow, IsaFault};
pub use operand::{Dst, Src};
pub use program::{Inst, Program};
pub use runner::{KernelMode, Runner};
pub use scratch::{scratch_needed, ScratchSetup};
pub use wave::{Lanes, Wave, MAX_LANES};
pub use workgroups::set_workers;

use std::sync::atomic::{AtomicBool, Ordering};

use crate::memory::Pinned;
use tracebuf::TraceBuf;

/// Every mnemonic the interpreter executes on `family`, as LLVM spells it:
/// what the LLVM round-trip test assembles and decodes.
pub fn implemented(family: relaunch_isa::Family) -> Vec<&'static str> {
    let mut v = coverage::implemented_non_valu(family);
    v.extend(valu::implemented(family).iter().copied());
    v
}

/// Whether the interpreter executes the instruction at the start of
/// `bytes` as decoded for `isa`: its mnemonic and the answer, `None` when
/// it does not decode.
pub fn executes(isa: relaunch_isa::Isa, bytes: &[u8]) -> Option<(String, bool)> {
    coverage::executes(isa, bytes)
}

/// What an executing instruction may reach beyond its wave: device memory
/// (checked), the dispatch's access trace and the workgroup's LDS.
pub struct Ctx<'a> {
    /// Device memory, its allocation map held read-locked by the worker.
    pub mem: &'a Pinned<'a>,
    /// Accesses so far, merged into the dispatch's trace at its end.
    pub trace: &'a mut TraceBuf,
    /// A reusable byte buffer of at least 64 lanes x 16 bytes (vector
    /// memory staging; kept here so no instruction allocates or clears one).
    pub scratch: &'a mut [u8],
    pub lds: &'a mut [u8],
    /// The inactivation flag of the queue running the dispatch (`None`
    /// off a queue, e.g. an IB executed directly): see [`Ctx::discarded`].
    pub inactive: Option<&'a AtomicBool>,
    /// Where the wave's interrupts (`s_sendmsg` MSG_INTERRUPT, with M0)
    /// go: the queue's front (`None` off a queue: the interrupt is lost,
    /// as one nobody listens to is).
    pub interrupt: Option<&'a (dyn Fn(u32) + Send + Sync)>,
}

/// A queue's interrupt handler as the interpreter calls it.
pub type InterruptSink = std::sync::Arc<dyn Fn(u32) + Send + Sync>;

thread_local! {
    static INTERRUPTS: std::cell::RefCell<Option<InterruptSink>> =
        const { std::cell::RefCell::new(None) };
}

/// Called by a queue's processor thread first: kernels it runs raise
/// their interrupts through `sink` (the queue's front).
pub fn bind_interrupts(sink: InterruptSink) {
    INTERRUPTS.with(|s| *s.borrow_mut() = Some(sink));
}

/// The sink [`bind_interrupts`] bound to this thread.
pub(crate) fn bound_interrupts() -> Option<InterruptSink> {
    INTERRUPTS.with(|s| s.borrow().clone())
}

impl Ctx<'_> {
    /// True once the queue running this kernel was inactivated: the
    /// execution loop checks it per workgroup and every
    /// `exec::CHECK_EVERY` instructions, and stops the kernel.
    pub fn discarded(&self) -> bool {
        self.inactive.is_some_and(|f| f.load(Ordering::Acquire))
    }
}

// Interface with the vector ALU (`valu/`):
// - at program build, `valu::prepare(isa, &decoded)` is called for every
//   VOP1/VOP2/VOPC/VOP3/VOP3P/VOPD/VINTERP instruction; `Some(prep)` is kept
//   in the `Inst`, `None` makes executing it an `IsaFault::Unimplemented`;
// - the execution loop calls `valu::execute(wave, inst, ctx)`, which reads
//   `inst.src` / `inst.dst` / `inst.sdst` / `inst.words` / `inst.decoded`,
//   reads and writes the wave through `Wave`'s operand helpers (EXEC masks
//   VGPR writes; VCC, EXEC and SGPR lane masks through `read_mask` /
//   `write_mask`), and returns `Flow::Next`;
// - `valu::implemented(family)` lists the LLVM mnemonics it executes, for
//   the LLVM round-trip test. ds_swizzle / ds_permute / ds_bpermute are DS
//   instructions and stay with the LDS executor.
