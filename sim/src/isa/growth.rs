//! A kernel's program as it grows at run time. The builder decodes what it
//! can reach from the entry (`program::build_in`), but a call through a
//! function pointer loaded from memory (RCCL's table of collective
//! implementations, a HIP function pointer) can only be followed when a
//! wave makes it: the jump then faults as `IsaFault::Undecoded`, the
//! workgroup's runner asks [`Growing::reach`] for the program extended
//! with the code at the target (`program::extend`: every index stays
//! valid, so the wave goes on where it was) and runs the jump again. One
//! `Growing` per loaded kernel (`cache`), shared by every dispatch and
//! worker, so each target is decoded once.

use std::sync::Arc;

use parking_lot::Mutex;

use super::fault::IsaFault;
use super::program::{self, Program};
use crate::memory::Pinned;

/// The latest program of one kernel.
#[derive(Debug)]
pub struct Growing {
    latest: Mutex<Arc<Program>>,
}

impl Growing {
    pub fn new(prog: Program) -> Self {
        Growing {
            latest: Mutex::new(Arc::new(prog)),
        }
    }

    /// The program as decoded so far.
    pub fn latest(&self) -> Arc<Program> {
        Arc::clone(&self.latest.lock())
    }

    /// The program with an instruction at device address `to` (an
    /// indirect jump's target): the latest if it has one, else the latest
    /// extended with the code reached from there, read from the kernel's
    /// code allocation through `mem`. A target outside that allocation is
    /// a fault naming it: the simulator decodes only the kernel's own code.
    pub(crate) fn reach(&self, mem: &Pinned<'_>, to: u64) -> Result<Arc<Program>, IsaFault> {
        // Held while decoding: another worker after the same target waits
        // and then finds it, rather than decoding it again.
        let mut latest = self.latest.lock();
        if latest.index_at(to).is_some() {
            return Ok(Arc::clone(&latest));
        }
        let (base, len) = latest.code_span();
        let at = to.wrapping_sub(base);
        if at >= len as u64 {
            return Err(IsaFault::Control(format!(
                "indirect jump to {to:#x}, outside the kernel's code allocation \
                 ({base:#x}, {len:#x} bytes; entry {:#x}): the simulator runs only code loaded \
                 with the kernel",
                latest.entry
            )));
        }
        let mut code = vec![0u8; len];
        mem.read(base, &mut code)?;
        let grown = Arc::new(program::extend(&latest, &code, at as u32));
        tracing::debug!(
            entry = latest.entry,
            target = to,
            added = grown.insts.len() - latest.insts.len(),
            "decoded code reached through a pointer at run time"
        );
        *latest = Arc::clone(&grown);
        Ok(grown)
    }
}
