//! Certification: prove from a kernel's machine code that it reads no
//! mutable data through the scalar cache ("VMEM-only"), so the boundary
//! before it may keep K$ (`rmw_vmem`, GCR 0x300) instead of invalidating it.
//!
//! Owns: the proof per kernel ([`certify_kernel`]) and its evidence. The
//! proof is fail-closed: a kernel is [`ReadCache::VmemOnly`] only when every
//! scalar-memory read reachable from the entry is an `s_load` at an
//! immediate offset, on every path, through one of three pointers no
//! producer kernel writes behind:
//! - the kernarg segment pointer, as the user SGPRs this kernel's
//!   descriptor enables deliver it, unmodified (or copied by `s_mov_b64` /
//!   `s_mov_b32`), reading inside the segment;
//! - the dispatch packet pointer (code object v4's `dispatch_ptr`), the
//!   same way, reading inside the 64-byte AQL packet: the packet processor
//!   or, on relaunch's PM4 path, the host (into the kernarg image, before
//!   the IB's K$-invalidating prologue) writes it before the dispatch;
//! - an address the kernel computes PC-relatively (`s_getpc_b64`, then
//!   `s_add_u32`/`s_addc_u32` of a constant the loader does not relocate),
//!   reading inside a loadable segment of the same code object without
//!   write permission (`.rodata`, `.text`; HIP `__constant__` variables
//!   live in a writable one and stay unproven).
//!
//! Anything else — a pointer from kernargs or from memory, `s_buffer_load`,
//! a register offset, an indirect or unfollowable branch, an instruction
//! the decoder does not know — makes it [`ReadCache::ScalarOrUnknown`]
//! naming the first such instruction. Decoding is `relaunch-isa`'s.
//!
//! The proof's cost is bounded per code object, not per kernel: all its
//! kernels share one budget of [`OBJECT_BUDGET`] instruction visits
//! (counting and walking), each instruction is walked at most a few times
//! before its facts are widened to "nothing known", and kernels with the
//! same entry and extent share one proof. A kernel the budget does not
//! cover is scalar-or-unknown saying so, so a hostile object loads in
//! seconds and costs only its own boundaries.

mod facts;
pub mod inputs;
mod reads;
mod walk;

use std::collections::HashMap;

use relaunch_isa::format::MemoryClass;
use relaunch_isa::{decode, Decoded, Isa};

use super::elf::Elf;
use super::kernel::KernelInfo;
use super::object::CodeObject;
use reads::{Pointers, Read, ReadOnlyImage};

/// What a kernel may read through the scalar cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReadCache {
    /// Proven: scalar loads read only the kernarg segment, the dispatch
    /// packet and the code object's read-only data.
    VmemOnly,
    /// Not proven (or disproven): keep the full boundary.
    ScalarOrUnknown,
}

impl ReadCache {
    /// The manifest spelling (`vmem_only`, `scalar_or_unknown`).
    pub fn as_str(self) -> &'static str {
        match self {
            ReadCache::VmemOnly => "vmem_only",
            ReadCache::ScalarOrUnknown => "scalar_or_unknown",
        }
    }
}

/// Why a kernel is not VMEM-only: the first offending instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    /// Virtual address of the instruction (None: not about one instruction).
    pub address: Option<u64>,
    /// The instruction as decoded (mnemonic and operands), if any.
    pub instruction: Option<String>,
    pub why: String,
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.address, &self.instruction) {
            (Some(a), Some(i)) => write!(f, "0x{a:x} `{i}`: {}", self.why),
            (Some(a), None) => write!(f, "0x{a:x}: {}", self.why),
            _ => f.write_str(&self.why),
        }
    }
}

/// Memory instructions in the kernel's code range, by path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryCounts {
    pub scalar: u32,
    pub vector: u32,
    pub lds: u32,
    /// Instructions decoded in the range.
    pub instructions: u32,
}

/// The proof's result for one kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Certificate {
    pub kernel: String,
    pub read_cache: ReadCache,
    /// Set when `read_cache` is ScalarOrUnknown.
    pub reason: Option<Reason>,
    pub counts: MemoryCounts,
    /// The first SGPR of the kernarg pointer pair, per the descriptor.
    pub kernarg_sgpr: Option<u8>,
    /// Code range the proof walked: [start, end) virtual addresses.
    pub code_range: (u64, u64),
    /// Scalar loads proven to read the kernarg segment (address, offset).
    pub kernarg_loads: Vec<(u64, i64)>,
    /// The first SGPR of the dispatch packet pointer pair, per the descriptor.
    pub dispatch_sgpr: Option<u8>,
    /// Scalar loads proven to read the dispatch packet (address, offset).
    pub packet_loads: Vec<(u64, i64)>,
    /// Scalar loads proven to read the code object's read-only segments
    /// (address, virtual address read).
    pub read_only_loads: Vec<(u64, u64)>,
}

/// The kernarg pointer's first SGPR: user SGPRs are allocated in a fixed
/// order (private segment buffer 4, dispatch ptr 2, queue ptr 2, kernarg
/// segment ptr 2, ...), so the pair's index follows from what precedes it.
pub fn kernarg_sgpr(kernel: &KernelInfo) -> Option<u8> {
    user_pair(kernel, KERNARG_PTR)
}

/// The dispatch packet pointer's first SGPR (after the private segment
/// buffer, when that is enabled).
pub fn dispatch_sgpr(kernel: &KernelInfo) -> Option<u8> {
    user_pair(kernel, DISPATCH_PTR)
}

/// A kernel's code: (entry, size, bytes), from the symbol that names its
/// function, which must start at the descriptor's entry.
fn kernel_text<'e>(elf: &'e Elf<'_>, kernel: &KernelInfo) -> Result<(u64, u64, &'e [u8]), String> {
    let function = kernel.symbol.strip_suffix(".kd").unwrap_or(&kernel.symbol);
    let symbols = elf
        .defined_symbols(|n| n == function)
        .map_err(|e| format!("symbol table unreadable: {e}"))?;
    let Some(&(value, size)) = symbols.get(function) else {
        return Err(format!(
            "no symbol `{function}` gives the kernel's code extent"
        ));
    };
    let entry = kernel.code_entry_offset;
    if value != entry || size == 0 {
        return Err(format!(
            "symbol `{function}` (0x{value:x}, {size} bytes) does not start at the \
             descriptor's entry 0x{entry:x}"
        ));
    }
    let text = elf
        .bytes_at_vaddr(entry, size)
        .ok_or_else(|| format!("code 0x{entry:x}+{size} is outside the loaded segments"))?;
    Ok((entry, size, text))
}

/// Marks, per kernel asking for an input the direct PM4 path has no value
/// for (the queue pointer, the dispatch id, the hostcall buffer), whether
/// its code provably never reads it ([`inputs`]); one [`OBJECT_BUDGET`]
/// for the object, and nothing is marked for a kernel the proof fails on.
pub(crate) fn mark_unread_inputs(elf: &Elf<'_>, kernels: &mut [KernelInfo]) {
    use super::args::ValueKind;
    let mut budget = Budget::new(OBJECT_BUDGET);
    for k in kernels {
        let d = &k.descriptor;
        let hostcall = k
            .args
            .iter()
            .find(|a| a.value_kind == ValueKind::HiddenHostcallBuffer)
            .map(|a| a.offset..a.offset.saturating_add(a.size));
        if !d.wants_queue_ptr() && !d.wants_dispatch_id() && hostcall.is_none() {
            continue;
        }
        let Some(isa) = isa_of(k) else { continue };
        let watched = inputs::Watched {
            queue_ptr: queue_sgpr(k),
            dispatch_id: dispatch_id_sgpr(k),
            kernarg: kernarg_sgpr(k),
        };
        let proof = kernel_text(elf, k)
            .and_then(|(_, _, text)| inputs::walk(isa, text, watched, &mut budget));
        match proof {
            Ok(reads) => {
                k.unread.queue_ptr = d.wants_queue_ptr() && !reads.queue_ptr;
                k.unread.dispatch_id = d.wants_dispatch_id() && !reads.dispatch_id;
                k.unread.hostcall_buffer = hostcall.is_some_and(|r| !reads.may_read_kernarg(r));
            }
            Err(why) => tracing::debug!(kernel = %k.name, %why, "inputs unproven"),
        }
    }
}

/// The queue pointer's first SGPR (after the private segment buffer and
/// the dispatch pointer, when enabled).
pub fn queue_sgpr(kernel: &KernelInfo) -> Option<u8> {
    user_pair(kernel, QUEUE_PTR)
}

/// The dispatch id's first SGPR (after the kernarg pointer, when enabled).
pub fn dispatch_id_sgpr(kernel: &KernelInfo) -> Option<u8> {
    user_pair(kernel, DISPATCH_ID)
}

/// Indices of the user SGPR pairs in [`user_sgprs`]' order.
const DISPATCH_PTR: usize = 1;
const QUEUE_PTR: usize = 2;
const KERNARG_PTR: usize = 3;
const DISPATCH_ID: usize = 4;

/// The user SGPRs up to the dispatch id in AMDGPUUsage's order, as
/// (enabled, SGPRs): private segment buffer, dispatch ptr, queue ptr,
/// kernarg segment ptr, dispatch id.
fn user_sgprs(kernel: &KernelInfo) -> [(bool, u32); 5] {
    let d = &kernel.descriptor;
    [
        (d.wants_private_segment_buffer(), 4),
        (d.wants_dispatch_ptr(), 2),
        (d.wants_queue_ptr(), 2),
        (d.wants_kernarg_segment_ptr(), 2),
        (d.wants_dispatch_id(), 2),
    ]
}

/// The first SGPR of pair `which` of [`user_sgprs`], when it is enabled
/// and among the SGPRs the hardware loads.
fn user_pair(kernel: &KernelInfo, which: usize) -> Option<u8> {
    let order = user_sgprs(kernel);
    if !order[which].0 {
        return None;
    }
    let at: u32 = order[..which]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| n)
        .sum();
    (at + 2 <= kernel.descriptor.user_sgpr_count()).then_some(at as u8)
}

/// The decoder settings for a kernel.
pub fn isa_of(kernel: &KernelInfo) -> Option<Isa> {
    Isa::from_processor(kernel.target.processor(), kernel.wavefront_size == 64)
}

fn unknown(kernel: &KernelInfo, why: String) -> Certificate {
    Certificate {
        kernel: kernel.name.clone(),
        read_cache: ReadCache::ScalarOrUnknown,
        reason: Some(Reason {
            address: None,
            instruction: None,
            why,
        }),
        counts: MemoryCounts::default(),
        kernarg_sgpr: kernarg_sgpr(kernel),
        code_range: (kernel.code_entry_offset, kernel.code_entry_offset),
        kernarg_loads: Vec::new(),
        dispatch_sgpr: dispatch_sgpr(kernel),
        packet_loads: Vec::new(),
        read_only_loads: Vec::new(),
    }
}

/// Instruction visits (decodes while counting, steps while walking) one
/// code object's proofs may take in all: one to three seconds of
/// release-build work on a loaded two-core machine, and far above what real
/// kernels need (one visit per instruction to count, one to three to walk).
pub const OBJECT_BUDGET: u64 = 1 << 22;

/// The work left for one code object's proofs.
#[derive(Debug)]
struct Budget {
    left: u64,
    total: u64,
}

impl Budget {
    fn new(total: u64) -> Self {
        Budget { left: total, total }
    }

    /// Takes one visit; false once none is left.
    fn take(&mut self) -> bool {
        let ok = self.left > 0;
        self.left = self.left.saturating_sub(1);
        ok
    }

    fn exhausted(&self) -> String {
        format!(
            "the certifier's budget for this code object ({} instruction visits) ran out before \
             this kernel's proof ended; it keeps the full boundary (split the code object, or \
             certify it offline with `relaunch certify`)",
            self.total
        )
    }
}

/// What a proof depends on besides the bytes and the code object's image:
/// (decoder, entry, size, kernarg pair, kernarg size, packet pair); equal
/// keys, equal proofs.
type ProofKey = (Isa, u64, u64, Option<u8>, u64, Option<u8>);
type Proof = (MemoryCounts, Result<Vec<(u64, Read)>, Reason>);

/// Certify every kernel of a code object, within one [`OBJECT_BUDGET`].
pub fn certify(code: &CodeObject) -> Vec<Certificate> {
    let elf = Elf::parse(code.bytes());
    let image = elf.as_ref().map(ReadOnlyImage::of).unwrap_or_default();
    let mut budget = Budget::new(OBJECT_BUDGET);
    let mut proofs = HashMap::new();
    code.kernels()
        .iter()
        .map(|k| match &elf {
            Ok(elf) => certify_in(elf, &image, k, &mut budget, &mut proofs),
            Err(e) => unknown(k, format!("code object unreadable: {e}")),
        })
        .collect()
}

/// Certify one kernel of a parsed image (with a budget of its own).
pub fn certify_kernel(elf: &Elf<'_>, kernel: &KernelInfo) -> Certificate {
    certify_in(
        elf,
        &ReadOnlyImage::of(elf),
        kernel,
        &mut Budget::new(OBJECT_BUDGET),
        &mut HashMap::new(),
    )
}

fn certify_in(
    elf: &Elf<'_>,
    image: &ReadOnlyImage,
    kernel: &KernelInfo,
    budget: &mut Budget,
    proofs: &mut HashMap<ProofKey, Proof>,
) -> Certificate {
    let Some(isa) = isa_of(kernel) else {
        return unknown(
            kernel,
            format!("no decoder for {}", kernel.target.processor()),
        );
    };
    let (entry, size, text) = match kernel_text(elf, kernel) {
        Ok(t) => t,
        Err(why) => return unknown(kernel, why),
    };
    let pointers = Pointers {
        kernarg: kernarg_sgpr(kernel),
        kernarg_size: u64::from(kernel.kernarg_size),
        packet: dispatch_sgpr(kernel),
        image,
    };
    let key = (
        isa,
        entry,
        size,
        pointers.kernarg,
        pointers.kernarg_size,
        pointers.packet,
    );
    let (counts, proof) = proofs
        .entry(key)
        .or_insert_with(|| match count(isa, text, budget) {
            Some(counts) => {
                let proof = walk::prove(isa, text, entry, &pointers, budget);
                (counts, proof)
            }
            None => (
                MemoryCounts::default(),
                Err(Reason {
                    address: None,
                    instruction: None,
                    why: budget.exhausted(),
                }),
            ),
        })
        .clone();
    let mut cert = Certificate {
        kernel: kernel.name.clone(),
        read_cache: ReadCache::ScalarOrUnknown,
        reason: None,
        counts,
        kernarg_sgpr: pointers.kernarg,
        code_range: (entry, entry + size),
        kernarg_loads: Vec::new(),
        dispatch_sgpr: pointers.packet,
        packet_loads: Vec::new(),
        read_only_loads: Vec::new(),
    };
    match proof {
        Ok(loads) => {
            cert.read_cache = ReadCache::VmemOnly;
            for (at, read) in loads {
                match read {
                    Read::Kernarg(off) => cert.kernarg_loads.push((at, off)),
                    Read::Packet(off) => cert.packet_loads.push((at, off)),
                    Read::Image(addr) => cert.read_only_loads.push((at, addr)),
                }
            }
        }
        Err(reason) => cert.reason = Some(reason),
    }
    tracing::debug!(
        kernel = %cert.kernel,
        verdict = cert.read_cache.as_str(),
        reason = ?cert.reason.as_ref().map(|r| r.to_string()),
        "certified"
    );
    cert
}

/// The memory instructions of `text`; None when the budget runs out.
/// Decodes one instruction per visit taken (as `decode_all` would, without
/// decoding the whole range first).
fn count(isa: Isa, text: &[u8], budget: &mut Budget) -> Option<MemoryCounts> {
    let mut c = MemoryCounts::default();
    let mut at = 0;
    while at < text.len() {
        if !budget.take() {
            return None;
        }
        let len = match decode(isa, &text[at..]) {
            Decoded::Known(i) => {
                c.instructions += 1;
                match i.format.memory_class() {
                    MemoryClass::Scalar => c.scalar += 1,
                    MemoryClass::Vector => c.vector += 1,
                    MemoryClass::Lds => c.lds += 1,
                    MemoryClass::None => {}
                }
                Some(i.len)
            }
            Decoded::Unknown { len, .. } => len,
        };
        match len {
            Some(n) if n > 0 && at + n <= text.len() => at += n,
            _ => break,
        }
    }
    Some(c)
}
