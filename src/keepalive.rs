//! An IB keeps alive every relaunch allocation its kernargs point into.
//!
//! The kernel metadata says which kernarg slots are global pointers
//! (`global_buffer` arguments). When a dispatch is recorded, each such
//! slot's value is looked up among the GPU's live allocations; the IB holds
//! what it finds, so dropping a `DeviceBuffer` (or a Python `Buffer`, or
//! freeing a C buffer) whose address an IB still replays does not free the
//! memory under it. Patching a pointer slot re-resolves what it holds.
//! Copy/fill nodes hold the allocations their source and destination lie
//! in. Pointers into memory relaunch did not allocate are left to the
//! caller.

use std::collections::BTreeMap;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use relaunch_device::codeobj::{KernelInfo, ValueKind};
use relaunch_device::hsa::Allocation;

/// One allocation, shared by its buffer and the IBs that point into it;
/// freed when the last of them drops.
pub(crate) struct Held {
    pub(crate) mem: Mutex<Allocation>,
}

/// The GPU's live allocations by start address.
#[derive(Default)]
pub(crate) struct Registry {
    live: Mutex<BTreeMap<u64, (u64, Weak<Held>)>>,
}

impl Registry {
    pub(crate) fn register(&self, addr: u64, len: usize, held: &Arc<Held>) {
        let mut live = self.live.lock();
        // Entries of freed allocations are dropped here and on lookup.
        live.retain(|_, (_, w)| w.strong_count() > 0);
        live.insert(addr, (len as u64, Arc::downgrade(held)));
    }

    /// The live allocation containing `ptr`, if relaunch made it.
    fn find(&self, ptr: u64) -> Option<Arc<Held>> {
        let mut live = self.live.lock();
        let (&start, (len, weak)) = live.range(..=ptr).next_back()?;
        if ptr - start >= *len {
            return None;
        }
        match weak.upgrade() {
            Some(held) => Some(held),
            None => {
                live.remove(&start);
                None
            }
        }
    }
}

/// One global-pointer kernarg slot of a dispatch.
struct Slot {
    offset: usize,
    value: [u8; 8],
    held: Option<Arc<Held>>,
}

/// What each dispatch of one IB keeps alive, by dispatch index.
#[derive(Default)]
pub(crate) struct KeptAlive {
    dispatches: Vec<Vec<Slot>>,
    /// Allocations copy/fill nodes read or write (their addresses are
    /// fixed at record time, never patched).
    transfers: Vec<Arc<Held>>,
}

impl KeptAlive {
    /// Dispatch `index` of `kernel` with these kernarg bytes.
    pub(crate) fn record(
        &mut self,
        registry: &Registry,
        index: usize,
        kernel: &KernelInfo,
        kernarg: &[u8],
    ) {
        let slots = kernel
            .args
            .iter()
            .filter(|a| a.value_kind == ValueKind::GlobalBuffer && a.size == 8)
            .filter_map(|a| {
                let offset = a.offset as usize;
                let value: [u8; 8] = kernarg.get(offset..offset + 8)?.try_into().ok()?;
                let held = registry.find(u64::from_le_bytes(value));
                Some(Slot {
                    offset,
                    value,
                    held,
                })
            })
            .collect();
        if self.dispatches.len() <= index {
            self.dispatches.resize_with(index + 1, Vec::new);
        }
        self.dispatches[index] = slots;
    }

    /// A copy/fill node: hold every relaunch allocation its ops touch.
    pub(crate) fn record_transfer(
        &mut self,
        registry: &Registry,
        ops: &[relaunch_encoders::DmaOp],
    ) {
        for op in ops {
            let src = op.src().map(|(a, _)| a);
            for addr in std::iter::once(op.dst().0).chain(src) {
                if let Some(held) = registry.find(addr) {
                    self.transfers.push(held);
                }
            }
        }
    }

    /// `bytes` were written at `byte_offset` of dispatch `index`'s
    /// kernargs: re-resolve every pointer slot they touched.
    pub(crate) fn patch(
        &mut self,
        registry: &Registry,
        index: usize,
        byte_offset: usize,
        bytes: &[u8],
    ) {
        let Some(slots) = self.dispatches.get_mut(index) else {
            return;
        };
        let end = byte_offset.saturating_add(bytes.len());
        for slot in slots
            .iter_mut()
            .filter(|s| s.offset < end && byte_offset < s.offset + 8)
        {
            for (i, b) in slot.value.iter_mut().enumerate() {
                if let Some(at) = (slot.offset + i).checked_sub(byte_offset) {
                    if let Some(&new) = bytes.get(at) {
                        *b = new;
                    }
                }
            }
            slot.held = registry.find(u64::from_le_bytes(slot.value));
        }
    }
}
