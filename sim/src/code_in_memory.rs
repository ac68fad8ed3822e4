//! Kernels the device meets in memory it did not load itself: under a real
//! runtime (ROCr's loader copies code objects into memory, then dispatches
//! by descriptor address or, in relaunch's IBs, by code address).
//!
//! The hardware reads a descriptor only through an AQL packet's
//! `kernel_object`; a PM4 dispatch gives the code address alone. To hold a
//! PM4 dispatch to its kernel's descriptor as strictly as for kernels the
//! simulator loaded, the device looks for the descriptor that names that
//! code: in the allocation holding the code, a 64-byte aligned descriptor
//! (where code objects place them) whose entry offset lands on it. Each
//! lookup re-reads the descriptor, so freed or rewritten memory is never
//! served from a stale entry.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use relaunch_device::codeobj::KernelDescriptor;
use relaunch_facts::Family;

use crate::device::KernelEntry;
use crate::memory::DeviceMemory;

const KD_BYTES: usize = 64;
/// `kernel_code_entry_byte_offset` within the descriptor.
const ENTRY_OFFSET_AT: usize = 16;
/// The largest allocation scanned for a descriptor (a code object's
/// loaded image is far smaller; a larger block is not code).
const MAX_SCAN_BYTES: usize = 64 << 20;

/// A descriptor's bytes as last read and the kernel decoded from them.
type Decoded = ([u8; KD_BYTES], Arc<KernelEntry>);

#[derive(Debug, Default)]
pub(crate) struct CodeInMemory {
    by_kd: Mutex<HashMap<u64, Decoded>>,
    /// Code entry -> descriptor address, as found by a scan.
    kd_of_entry: Mutex<HashMap<u64, u64>>,
}

impl CodeInMemory {
    /// The kernel whose descriptor is at `kd`, as memory holds it now.
    pub(crate) fn at_descriptor(
        &self,
        memory: &DeviceMemory,
        family: Family,
        kd: u64,
    ) -> Result<Arc<KernelEntry>, String> {
        let mut raw = [0u8; KD_BYTES];
        memory
            .read(kd, &mut raw)
            .map_err(|f| format!("reading the kernel descriptor at {kd:#x}: {f}"))?;
        if let Some((bytes, entry)) = self.by_kd.lock().get(&kd) {
            if *bytes == raw {
                return Ok(Arc::clone(entry));
            }
        }
        let descriptor = KernelDescriptor::parse(&raw)
            .map_err(|e| format!("the kernel descriptor at {kd:#x} is malformed: {e}"))?;
        let entry = Arc::new(KernelEntry {
            symbol: format!("kernel@{kd:#x}"),
            kd_addr: kd,
            code_entry: descriptor.code_entry(kd),
            descriptor,
            family,
            kernarg_align: 16,
        });
        self.by_kd.lock().insert(kd, (raw, Arc::clone(&entry)));
        Ok(entry)
    }

    /// The kernel whose first instruction is at `code`: the descriptor in
    /// the same allocation that names it, if exactly one does.
    pub(crate) fn at_entry(
        &self,
        memory: &DeviceMemory,
        family: Family,
        code: u64,
    ) -> Option<Arc<KernelEntry>> {
        let known = self.kd_of_entry.lock().get(&code).copied();
        if let Some(kd) = known {
            match self.at_descriptor(memory, family, kd) {
                Ok(k) if k.code_entry == code => return Some(k),
                _ => {
                    self.kd_of_entry.lock().remove(&code);
                }
            }
        }
        let kd = scan(memory, code)?;
        let kernel = self.at_descriptor(memory, family, kd).ok()?;
        self.kd_of_entry.lock().insert(code, kd);
        Some(kernel)
    }
}

impl CodeInMemory {
    /// Forget kernels whose descriptor or code lay in `[base, base+len)`
    /// (freed): keeps the maps bounded by live code.
    pub(crate) fn forget(&self, base: u64, len: u64) {
        let range = base..base.saturating_add(len);
        self.by_kd
            .lock()
            .retain(|kd, (_, k)| !range.contains(kd) && !range.contains(&k.code_entry));
        self.kd_of_entry
            .lock()
            .retain(|code, kd| !range.contains(code) && !range.contains(kd));
    }
}

/// The one 64-byte aligned descriptor of `code`'s allocation whose entry
/// offset points at `code`; none when zero or several do.
fn scan(memory: &DeviceMemory, code: u64) -> Option<u64> {
    let block = memory.allocation_of(code)?;
    if block.len > MAX_SCAN_BYTES {
        return None;
    }
    let bytes = memory.read_vec(block.base, block.len).ok()?;
    let first = block.base.next_multiple_of(KD_BYTES as u64);
    let mut found = None;
    let mut at = first;
    while at + KD_BYTES as u64 <= block.base + block.len as u64 {
        let i = (at - block.base) as usize + ENTRY_OFFSET_AT;
        let offset = i64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        if offset != 0 && at.checked_add_signed(offset) == Some(code) {
            let raw = &bytes[i - ENTRY_OFFSET_AT..i - ENTRY_OFFSET_AT + KD_BYTES];
            if KernelDescriptor::parse(raw).is_ok() {
                if found.is_some() {
                    return None;
                }
                found = Some(at);
            }
        }
        at += KD_BYTES as u64;
    }
    found
}
