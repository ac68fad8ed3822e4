//! Decoded programs, one per loaded kernel: built at its first dispatch,
//! kept while the kernel stays loaded (a weak reference tells a reused
//! entry address from the kernel that was decoded there), grown by what
//! its runs reach through pointers (`growth`).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, Weak};

use parking_lot::Mutex;
use relaunch_isa::Isa;

use super::growth::Growing;
use super::program;
use crate::device::KernelEntry;
use crate::memory::{DeviceMemory, VmFault};

/// (the kernel entry's address, wave64).
type Key = (usize, bool);
/// The kernel a program was decoded for, and its program as it grows.
type Slot = (Weak<KernelEntry>, Arc<Growing>);

fn cache() -> &'static Mutex<HashMap<Key, Slot>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Slot>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The program of `kernel` decoded for `isa`, from the code in device
/// memory: its whole allocation, so callees the linker placed before the
/// kernel's entry are reached too.
pub(crate) fn program(
    kernel: &Arc<KernelEntry>,
    isa: Isa,
    mem: &DeviceMemory,
) -> Result<Arc<Growing>, VmFault> {
    let key = (Arc::as_ptr(kernel) as usize, isa.wave64);
    {
        let map = cache().lock();
        if let Some((weak, prog)) = map.get(&key) {
            if weak.upgrade().is_some_and(|k| Arc::ptr_eq(&k, kernel)) {
                return Ok(Arc::clone(prog));
            }
        }
    }
    let info = mem.check(kernel.code_entry, 4, crate::memory::Access::Read)?;
    let code = mem.read_vec(info.base, info.len)?;
    let entry_at = (kernel.code_entry - info.base) as usize;
    let prog = Arc::new(Growing::new(program::build_in(
        isa,
        kernel.code_entry,
        &code,
        entry_at,
    )));
    let mut map = cache().lock();
    map.retain(|_, (w, _)| w.strong_count() > 0);
    map.insert(key, (Arc::downgrade(kernel), Arc::clone(&prog)));
    Ok(prog)
}
