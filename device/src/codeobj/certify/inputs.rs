//! Which runtime inputs a kernel's machine code can read: the queue
//! pointer and dispatch id SGPRs, and the kernarg bytes of its hidden
//! arguments. Compilers enable inputs the code never uses (clang at -O0
//! skips the attributor pass that drops them: every HIP kernel then asks
//! for the queue pointer, the dispatch id and the hostcall buffer), and
//! the direct PM4 path has no honest value for them; when this proof says
//! the code never reads one, a zero in its place is never seen.
//!
//! The proof walks every path from the entry (the certifier's control
//! flow: a call, a trap or an indirect branch ends it unproven) with two
//! may-sets per instruction: the watched input SGPRs not yet overwritten
//! on some path, and the SGPRs that may hold a half of the kernarg
//! pointer. Reading a watched SGPR before every path wrote it reads the
//! input. The kernarg pointer may only be copied (`s_mov`) or be the base
//! of an `s_load` at an immediate offset: those loads are the kernarg
//! bytes read; any other use (into a VGPR, pointer arithmetic, a store)
//! leaves the bytes read unknown. Decoder gaps are covered by rule:
//! SOPK's register field counts as read unless the op only writes it,
//! conditional moves and read-modify-write ops read their destination,
//! an indexed read (`s_movrels`) reads every SGPR.

use std::collections::{HashMap, VecDeque};
use std::ops::Range;

use relaunch_isa::format::Format;
use relaunch_isa::operand::source;
use relaunch_isa::{decode, Decoded, Instruction, Isa, Operand, Role};

use super::facts::bit;
use super::walk::successors;
use super::Budget;

/// What the code of one kernel can read of its runtime inputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputReads {
    /// Some path reads the queue pointer SGPRs before writing them.
    pub queue_ptr: bool,
    /// The same for the dispatch id SGPRs.
    pub dispatch_id: bool,
    /// Kernarg bytes the code reads (through scalar loads of the delivered
    /// pointer); `None` when the pointer is used in a way that could read
    /// any of them.
    pub kernarg: Option<Vec<Range<u32>>>,
}

impl InputReads {
    /// True when the code may read any of `range` of the kernarg segment.
    pub fn may_read_kernarg(&self, range: Range<u32>) -> bool {
        match &self.kernarg {
            None => true,
            Some(read) => read
                .iter()
                .any(|r| r.start < range.end && range.start < r.end),
        }
    }
}

/// Where the watched inputs sit: first SGPR of each delivered pair.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Watched {
    pub(super) queue_ptr: Option<u8>,
    pub(super) dispatch_id: Option<u8>,
    pub(super) kernarg: Option<u8>,
}

fn range_mask(first: u8, count: u8) -> u128 {
    (first as usize..first as usize + count as usize).fold(0, |m, r| m | bit(r))
}

fn pair(first: Option<u8>) -> u128 {
    first.map_or(0, |f| range_mask(f, 2))
}

/// The facts on entry to one instruction (may-sets; they only grow).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct State {
    /// Watched SGPRs not yet written on some path.
    unwritten: u128,
    /// SGPRs that may hold the kernarg pointer's low resp. high dword.
    lo: u128,
    hi: u128,
}

impl State {
    /// Joins `other` in; true when something was added.
    fn join(&mut self, other: &State) -> bool {
        let before = *self;
        self.unwritten |= other.unwritten;
        self.lo |= other.lo;
        self.hi |= other.hi;
        *self != before
    }
}

/// SOPK ops whose register field is only written (every other SOPK op
/// reads it: compares, `s_setreg`, `s_addk`, the waitcnt forms, ...).
const SOPK_WRITE_ONLY: [&str; 3] = ["s_movk_i32", "s_getreg_b32", "s_version"];

/// SGPRs `i` may read (`None`: any of them).
fn reads(isa: Isa, i: &Instruction, d0: u32) -> Option<u128> {
    if i.name.starts_with("s_movrels") {
        return None;
    }
    let reads_dst = i.name.starts_with("s_cmov")
        || i.name.starts_with("s_bitset")
        || i.name.starts_with("s_addk_")
        || i.name.starts_with("s_mulk_")
        || i.name.contains("atomic");
    let mut m = 0u128;
    for f in &i.fields {
        let read = match f.role {
            Role::Dst | Role::Sdst => reads_dst,
            _ => true,
        };
        if let (true, Some((first, count))) = (read, f.value.sgprs()) {
            m |= range_mask(first, count);
        }
    }
    if i.format == Format::Sopk && !SOPK_WRITE_ONLY.contains(&i.name) {
        let field = ((d0 >> 16) & 0x7F) as u16;
        if let Some((first, count)) = source(isa.family, field, 2, None).sgprs() {
            m |= range_mask(first, count);
        }
    }
    Some(m)
}

/// SGPRs `i` certainly writes (a conditional move writes nothing certain).
fn writes(i: &Instruction) -> u128 {
    if i.name.starts_with("s_cmov") {
        return 0;
    }
    i.sgpr_writes()
        .fold(0, |m, (first, count)| m | range_mask(first, count))
}

/// The kernarg bytes an `s_load` through the kernarg pointer reads, when
/// `i` is one whose only use of the pointer is its base.
fn kernarg_load(i: &Instruction, st: &State, uses: u128) -> Option<Range<u32>> {
    if i.format != Format::Smem || !i.name.starts_with("s_load") {
        return None;
    }
    let Some(Operand::Sgpr { first, count: 2 }) = i.field(Role::Base) else {
        return None;
    };
    let (lo, hi) = (bit(first as usize), bit(first as usize + 1));
    let exact = st.lo & lo != 0 && st.hi & hi != 0 && (st.lo | st.hi) & uses == lo | hi;
    // Only the low half may be kernarg-low and the high half kernarg-high.
    if !exact || st.hi & lo != 0 || st.lo & hi != 0 || i.field(Role::Soffset).is_some() {
        return None;
    }
    let Some(Operand::Imm(offset)) = i.field(Role::Offset) else {
        return None;
    };
    let Some(Operand::Sgpr { count, .. }) = i.field(Role::Dst) else {
        return None;
    };
    let start = u32::try_from(offset).ok()?;
    Some(start..start.saturating_add(4 * u32::from(count)))
}

/// Moves kernarg-pointer halves through `s_mov_b32`/`s_mov_b64`.
fn copy_halves(i: &Instruction, before: &State, st: &mut State) -> bool {
    if !matches!(i.name, "s_mov_b32" | "s_mov_b64") {
        return false;
    }
    let (Some(Operand::Sgpr { first: s, count }), Some(Operand::Sgpr { first: d, .. })) =
        (i.field(Role::Src0), i.field(Role::Dst))
    else {
        return false;
    };
    for k in 0..count as usize {
        let (from, to) = (bit(s as usize + k), bit(d as usize + k));
        if before.lo & from != 0 {
            st.lo |= to;
        }
        if before.hi & from != 0 {
            st.hi |= to;
        }
    }
    true
}

/// Walk `code` (the kernel's extent, entry at offset 0) for the reads of
/// `watched`; Err with why when a path cannot be followed.
pub(super) fn walk(
    isa: Isa,
    code: &[u8],
    watched: Watched,
    budget: &mut Budget,
) -> Result<InputReads, String> {
    let (qp, id) = (pair(watched.queue_ptr), pair(watched.dispatch_id));
    let start = State {
        unwritten: qp | id,
        lo: watched.kernarg.map_or(0, |k| bit(k as usize)),
        hi: watched.kernarg.map_or(0, |k| bit(k as usize + 1)),
    };
    let mut found = InputReads {
        queue_ptr: false,
        dispatch_id: false,
        kernarg: Some(Vec::new()),
    };
    let mut states: HashMap<usize, State> = HashMap::from([(0, start)]);
    let mut work = VecDeque::from([0usize]);
    while let Some(off) = work.pop_front() {
        if !budget.take() {
            return Err(budget.exhausted());
        }
        let st = states[&off];
        let i = match decode(isa, &code[off..]) {
            Decoded::Known(i) => i,
            Decoded::Unknown { dword, .. } => {
                return Err(format!(
                    "instruction 0x{dword:08x} at +0x{off:x} cannot be decoded"
                ))
            }
        };
        let d0 = u32::from_le_bytes(code[off..off + 4].try_into().expect("decoded 4 bytes"));
        let read = reads(isa, &i, d0).unwrap_or(u128::MAX);
        let early = read & st.unwritten;
        found.queue_ptr |= early & qp != 0;
        found.dispatch_id |= early & id != 0;
        let uses = read & (st.lo | st.hi);
        let mut next_st = st;
        let written = writes(&i);
        next_st.unwritten &= !written;
        next_st.lo &= !written;
        next_st.hi &= !written;
        if i.writes_any_sgpr {
            // The pointer may now sit anywhere: later uses of any SGPR
            // count as uses of it.
            next_st.lo = u128::MAX;
            next_st.hi = u128::MAX;
        }
        if uses != 0 {
            if let Some(r) = kernarg_load(&i, &st, uses) {
                if let Some(list) = found.kernarg.as_mut() {
                    list.push(r);
                }
            } else if !copy_halves(&i, &st, &mut next_st) {
                found.kernarg = None;
            }
        }
        let succ = successors(&i, off, code.len())
            .map_err(|why| format!("`{}` at +0x{off:x}: {why}", i.mnemonic()))?;
        for s in succ {
            match states.get_mut(&s) {
                None => {
                    states.insert(s, next_st);
                    work.push_back(s);
                }
                Some(old) => {
                    if old.join(&next_st) {
                        work.push_back(s);
                    }
                }
            }
        }
    }
    Ok(found)
}
