//! A kernel's code decoded once into a program: every instruction reachable
//! from the entry (fall-through, branch targets, direct callees anywhere in
//! the code allocation, and return points of callees that can return), with
//! its operands resolved and its executor chosen. Built at a kernel's first
//! dispatch and cached per loaded kernel (`cache`).

use std::collections::{BTreeMap, HashMap};

use relaunch_isa::{Decoded, Format, Instruction, Isa};

use super::calls;
use super::control::{self, COp};
use super::lds::{self, DOp};
use super::operand::{scalar_code, Dst, Src};
use super::scalar::{self, SOp};
use super::smem::{self, MOp};
use super::valu;
use super::vmem::{self, VOp};

/// One decoded instruction, ready to execute.
#[derive(Debug, Clone)]
pub struct Inst {
    /// Byte offset from the kernel's code entry, wrapping: a callee the
    /// linker placed before the entry has an offset of 2^32 minus its
    /// distance (`from_entry` gives the signed value). The program's
    /// instructions are in this order, the entry first.
    pub offset: u32,
    /// The raw dwords (base encoding, literal / DPP / SDWA words; zero past
    /// the instruction's length), for fields the decoder does not type
    /// (VOP3 modifiers, op_sel, DS offset1, cache policy bits).
    pub words: [u32; 4],
    pub decoded: Instruction,
    /// Src0, Src1, Src2 (the data operand for SMEM/DS/VMEM stays in
    /// `decoded`). SOPK puts its register field in `src[2]`.
    pub src: [Src; 3],
    /// The main destination.
    pub dst: Dst,
    /// The VOP3SD carry-out / VOPC SGPR destination.
    pub sdst: Dst,
    /// The branch target as an instruction index (SOPP branches).
    pub target: u32,
    /// SMEM: the immediate offset (its base is `src[0]`, SOFFSET `src[1]`).
    pub imm: i64,
    /// The instruction after this one, as an index.
    pub next: u32,
    pub(crate) kind: Kind,
    /// The vector ALU form resolved to one function (`valu::fast`), for
    /// the most frequent ones. (Scalar forms resolved the same way ran
    /// slower than the inlined scalar executor: a call per instruction
    /// costs more than their work.)
    pub(crate) fast: Option<Fast>,
}

impl Inst {
    /// The byte offset from the entry, signed: negative for code before
    /// it (a code allocation is far below 2 GiB).
    pub fn from_entry(&self) -> i64 {
        i64::from(self.offset as i32)
    }
}

/// A signed byte offset as `0x40` or `-0x100` (fault messages, traces).
pub(crate) fn signed_hex(v: i64) -> String {
    if v < 0 {
        format!("-{:#x}", v.unsigned_abs())
    } else {
        format!("{v:#x}")
    }
}

/// An instruction form resolved at program build: runs it on the wave.
/// The fault is boxed: the result then comes back in registers, where the
/// large fault type inline made every call return through memory.
pub(crate) type Fast =
    fn(&mut super::wave::Wave, &Inst) -> Result<super::fault::Flow, Box<super::fault::IsaFault>>;

/// Which executor runs an instruction.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    /// Vector ALU: `valu::execute`.
    Valu(valu::Prep),
    Salu(SOp),
    Ctrl(COp),
    Smem(MOp),
    Ds(DOp),
    Vmem(VOp),
    /// s_getpc_b64: the address of the next instruction.
    GetPc,
    /// s_setpc_b64: jump to an address (a function's return).
    SetPc,
    /// s_swappc_b64: save the next instruction's address, jump to an
    /// address (a function call).
    SwapPc,
    /// Decoded but not executed by the interpreter.
    Unimplemented,
    /// A global wave sync instruction (ds_gws_*, GDS set): performed by
    /// the cooperative runner (`gws`, `cooperative`).
    Gws(super::gws::GOp),
    /// Any other DS access with GDS set (gfx10/gfx11): the global data
    /// share (`ds_* gds`, ds_ordered_count), which the simulator does not
    /// model; refused as `<mnemonic> gds`.
    GlobalShare,
    /// Bytes the decoder does not know (dword 0 kept for the error).
    Undecodable(u32),
    /// Control reaches past the code the kernel's allocation holds, or a
    /// branch targets the middle of nowhere.
    OutOfCode,
}

/// A decoded kernel.
#[derive(Debug)]
pub struct Program {
    pub isa: Isa,
    /// Device address of the code entry.
    pub entry: u64,
    pub insts: Vec<Inst>,
    /// Where the entry is in the code decoded (the kernel's allocation),
    /// and that code's length: what `extend` decodes more of.
    pub(crate) entry_at: usize,
    pub(crate) code_len: usize,
    /// Offsets in that code of entries the first decoding did not reach
    /// (targets of jumps through pointers met at run time), in the order
    /// met.
    pub(crate) roots: Vec<u32>,
    /// (offset from the entry, index) of every instruction, by offset:
    /// `index_at` (an extended program's indices are not in offset
    /// order).
    lookup: Vec<(u32, u32)>,
    /// It has a global wave sync instruction (`gws::used_by`), so its
    /// dispatches run cooperatively: kept here, not found per dispatch.
    pub(crate) global_sync: bool,
}

/// The raw words of the instruction at the start of `code`.
pub(super) fn words_of(code: &[u8], len: usize) -> [u32; 4] {
    let mut w = [0u32; 4];
    for (i, slot) in w.iter_mut().enumerate() {
        let at = 4 * i;
        if at + 4 <= len.min(code.len()) {
            *slot = u32::from_le_bytes([code[at], code[at + 1], code[at + 2], code[at + 3]]);
        }
    }
    w
}

/// Resolve the fields of a decoded instruction.
pub(super) fn resolve(d: &Instruction) -> ([Src; 3], Dst, Dst) {
    use relaunch_isa::Role;
    let mut src = [Src::Null; 3];
    let mut dst = Dst::None;
    let mut sdst = Dst::None;
    let mut src0_seen = false;
    for f in &d.fields {
        match f.role {
            // VOPD's second Src0 is the Y half's.
            Role::Src0 if !src0_seen => {
                src[0] = Src::from_operand(f.value);
                src0_seen = true;
            }
            Role::Src0 => src[1] = Src::from_operand(f.value),
            Role::Src1 => src[1] = Src::from_operand(f.value),
            Role::Src2 => src[2] = Src::from_operand(f.value),
            Role::Dst => dst = Dst::from_operand(f.value),
            Role::Sdst => sdst = Dst::from_operand(f.value),
            _ => {}
        }
    }
    (src, dst, sdst)
}

/// Choose the executor of a decoded instruction.
pub(super) fn classify(isa: Isa, d: &Instruction, words: &[u32; 4]) -> Kind {
    let name = d.name;
    let found = match d.format {
        Format::Sop1 | Format::Sop2 | Format::Sopc | Format::Sopk | Format::Sopp => {
            match name {
                "s_getpc_b64" => return Kind::GetPc,
                "s_setpc_b64" => return Kind::SetPc,
                "s_swappc_b64" => return Kind::SwapPc,
                _ => {}
            }
            control::prepare(name)
                .map(Kind::Ctrl)
                .or_else(|| scalar::prepare(name).map(Kind::Salu))
        }
        Format::Smem => smem::prepare(name).map(Kind::Smem),
        Format::Ds if gds(isa, words) => {
            return super::gws::prepare(name).map_or(Kind::GlobalShare, Kind::Gws)
        }
        Format::Ds => lds::prepare(name).map(Kind::Ds),
        Format::Global | Format::Flat | Format::Scratch | Format::Mubuf | Format::Vbuffer => {
            vmem::prepare(isa.family, d, words).map(Kind::Vmem)
        }
        Format::Vop1
        | Format::Vop2
        | Format::Vopc
        | Format::Vop3
        | Format::Vop3p
        | Format::Vopd
        | Format::Vinterp => valu::prepare(isa, d, words).map(Kind::Valu),
        Format::Mtbuf
        | Format::Mimg
        | Format::Vimage
        | Format::Vsample
        | Format::Ldsdir
        | Format::Exp => None,
    };
    found.unwrap_or(Kind::Unimplemented)
}

/// Whether a DS instruction's GDS bit is set (families that have one).
fn gds(isa: Isa, words: &[u32; 4]) -> bool {
    isa.family
        .facts()
        .memory
        .ds_gds
        .is_some_and(|bit| bit.get(words) != 0)
}

/// Decode every instruction reachable from offset 0 of `code` (the bytes
/// from the kernel's entry on): [`build_in`] with the entry at the start.
pub fn build(isa: Isa, entry: u64, code: &[u8]) -> Program {
    build_in(isa, entry, code, 0)
}

/// One instruction while the program is built, keyed by its offset in
/// the code given to [`build_in`].
struct Raw {
    len: u32,
    words: [u32; 4],
    decoded: Option<Instruction>,
    kind: Kind,
    /// Branch target byte offset, if any.
    target: Option<i64>,
    /// Control goes on to the next instruction: a call's return point
    /// only once its callee is known to return (or is unknown).
    falls: bool,
}

/// Decode every instruction reachable from the kernel's entry, byte
/// `entry_at` of `code` (the whole code allocation; its byte 0 is at
/// device address `entry - entry_at`): fall-through, branches, and the
/// callees of direct calls wherever the linker put them in `code`, before
/// the entry too. A call's return point is decoded only if its callee may
/// return (see `may_return`): after a call to a function that never does
/// (a device-side assert) the compiler leaves padding, not code. The
/// instructions are ordered by their offset from the entry as a wrapping
/// u32, so the entry is index 0 and code before it comes last.
pub fn build_in(isa: Isa, entry: u64, code: &[u8], entry_at: usize) -> Program {
    build_from(isa, entry, code, entry_at, &[], None)
}

/// `prev` with the code reached from `root` (an offset in `code`, the
/// bytes `prev` was decoded from) decoded too: a jump through a pointer
/// met at run time. Every instruction keeps its index (a wave mid-kernel
/// goes on in the new program where it was), the new ones come after;
/// fall-through, branches and calls are resolved anew, so an old return
/// point may now lead into new code.
pub(crate) fn extend(prev: &Program, code: &[u8], root: u32) -> Program {
    let mut roots = prev.roots.clone();
    roots.push(root);
    build_from(
        prev.isa,
        prev.entry,
        code,
        prev.entry_at,
        &roots,
        Some(prev),
    )
}

/// [`build_in`] from the entry and `roots` too, keeping `prev`'s indices.
fn build_from(
    isa: Isa,
    entry: u64,
    code: &[u8],
    entry_at: usize,
    roots: &[u32],
    prev: Option<&Program>,
) -> Program {
    let mut found: BTreeMap<u32, Raw> = BTreeMap::new();
    // The previous program's instructions are roots too: whatever it held
    // is held again, whatever the analyses now say.
    let at_of = |i: &Inst| (entry_at as i64).wrapping_add(i.from_entry()) as u32;
    // The previous program's slots in index order (`None`: its
    // past-the-code placeholder).
    let kept: Vec<Option<u32>> = prev.map_or_else(Vec::new, |p| {
        p.insts
            .iter()
            .map(|i| (!matches!(i.kind, Kind::OutOfCode)).then(|| at_of(i)))
            .collect()
    });
    let mut work: Vec<i64> = std::iter::once(entry_at as i64)
        .chain(
            roots
                .iter()
                .chain(kept.iter().flatten())
                .map(|&r| i64::from(r)),
        )
        .collect();
    let mut outside: Vec<i64> = Vec::new();
    loop {
        // Callees and long-branch targets are reached through computed
        // addresses: follow the PC-relative constants `calls::jumps` finds
        // until no new code turns up (a target outside the code is left to
        // coverage and to the run's fault).
        if work.is_empty() {
            let decoded: BTreeMap<u32, &Instruction> = found
                .iter()
                .filter_map(|(&at, r)| r.decoded.as_ref().map(|d| (at, d)))
                .collect();
            let jumps = calls::jumps(&decoded);
            let in_code = |t: i64| u32::try_from(t).is_ok_and(|t| (t as usize) < code.len());
            for t in jumps.targets() {
                if in_code(t) {
                    work.extend((!found.contains_key(&(t as u32))).then_some(t));
                } else {
                    // Outside the code: noted, never work (pushed each
                    // round, it would keep the fixed point from ending).
                    outside.push(t);
                }
            }
            // Return points of calls whose callee turned out to return;
            // more code decoded can make more callees return, hence the
            // fixed point with the callees above.
            let mut verdicts: HashMap<u32, bool> = HashMap::new();
            for (&at, reach) in &jumps.calls {
                if found[&at].falls {
                    continue;
                }
                // A pointer from memory on some path, or code outside the
                // bytes given: nothing known, so assume it returns.
                let returns = !reach.direct()
                    || reach.targets.iter().any(|&t| {
                        !in_code(t)
                            || *verdicts
                                .entry(t as u32)
                                .or_insert_with(|| may_return(&found, t as u32))
                    });
                if returns {
                    let raw = found.get_mut(&at).expect("a call found above");
                    raw.falls = true;
                    work.push(i64::from(at) + i64::from(raw.len));
                }
            }
            if work.is_empty() {
                break;
            }
        }
        while let Some(at) = work.pop() {
            if at < 0 || at as usize >= code.len() {
                outside.push(at);
                continue;
            }
            let at = at as u32;
            if found.contains_key(&at) {
                continue;
            }
            let bytes = &code[at as usize..];
            let raw = match relaunch_isa::decode(isa, bytes) {
                Decoded::Known(d) => {
                    let kind = classify(isa, &d, &words_of(bytes, d.len));
                    let (target, falls) = match kind {
                        // A call's return point waits for its callee's
                        // verdict (above).
                        Kind::SetPc | Kind::SwapPc => (None, false),
                        Kind::Ctrl(op) => {
                            let simm = i64::from(words_of(bytes, 4)[0] as u16 as i16);
                            let t = control::branches(op).then_some(i64::from(at) + 4 + 4 * simm);
                            (t, control::falls_through(op))
                        }
                        _ => (None, true),
                    };
                    Raw {
                        len: d.len as u32,
                        words: words_of(bytes, d.len),
                        decoded: Some(d),
                        kind,
                        target,
                        falls,
                    }
                }
                Decoded::Unknown { dword, .. } => Raw {
                    len: 4,
                    words: words_of(bytes, 4),
                    decoded: None,
                    kind: Kind::Undecodable(dword),
                    target: None,
                    falls: false,
                },
            };
            if let Some(t) = raw.target {
                work.push(t);
            }
            if raw.falls {
                work.push(i64::from(at) + i64::from(raw.len));
            }
            found.insert(at, raw);
        }
    }
    // Indices in order of the offset from the entry (wrapping: the entry
    // first, code before it last), then a past-the-code instruction; an
    // extension keeps the previous order and placeholder and adds its new
    // code after them.
    let from_entry = |at: i64| at.wrapping_sub(entry_at as i64) as u32;
    let old: std::collections::HashSet<u32> = kept.iter().flatten().copied().collect();
    let mut fresh: Vec<u32> = found.keys().copied().filter(|a| !old.contains(a)).collect();
    fresh.sort_by_key(|&at| from_entry(i64::from(at)));
    let slots: Vec<Option<u32>> = if prev.is_some() {
        kept.into_iter()
            .chain(fresh.into_iter().map(Some))
            .collect()
    } else {
        fresh.into_iter().map(Some).chain([None]).collect()
    };
    let out_of_code = slots.iter().position(Option::is_none).unwrap_or(0) as u32;
    let index: HashMap<u32, u32> = slots
        .iter()
        .enumerate()
        .filter_map(|(i, o)| o.map(|o| (o, i as u32)))
        .collect();
    let placeholder = || relaunch_isa::Instruction {
        len: 4,
        format: Format::Sopp,
        opcode: 0,
        name: "<no instruction>",
        name_y: None,
        fields: Vec::new(),
        literal: None,
        modifier: None,
        writes: Vec::new(),
        writes_any_sgpr: false,
    };
    let idx = |o: i64| {
        u32::try_from(o)
            .ok()
            .and_then(|o| index.get(&o).copied())
            .unwrap_or(out_of_code)
    };
    let mut insts = Vec::with_capacity(found.len() + 1);
    let end = outside.iter().copied().max().unwrap_or(code.len() as i64);
    let past_the_code = Inst {
        offset: from_entry(end),
        words: [0; 4],
        decoded: placeholder(),
        src: [Src::Null; 3],
        dst: Dst::None,
        sdst: Dst::None,
        target: out_of_code,
        imm: 0,
        next: out_of_code,
        kind: Kind::OutOfCode,
        fast: None,
    };
    for slot in slots {
        let Some(at) = slot else {
            insts.push(past_the_code.clone());
            continue;
        };
        let raw = &found[&at];
        let decoded = raw.decoded.clone().unwrap_or_else(placeholder);
        let (mut src, dst, sdst) = resolve(&decoded);
        let mut imm = 0;
        match decoded.format {
            Format::Sopk => {
                src[2] = scalar_code(isa.family, ((raw.words[0] >> 16) & 0x7F) as u8);
            }
            Format::Smem => {
                use relaunch_isa::{Operand, Role};
                src[0] = decoded
                    .field(Role::Base)
                    .map_or(Src::Null, Src::from_operand);
                src[1] = decoded
                    .field(Role::Soffset)
                    .map_or(Src::Null, Src::from_operand);
                if let Some(Operand::Imm(v)) = decoded.field(Role::Offset) {
                    imm = v;
                }
            }
            _ => {}
        }
        let mut inst = Inst {
            offset: from_entry(i64::from(at)),
            words: raw.words,
            src,
            dst,
            sdst,
            target: raw.target.map_or(out_of_code, idx),
            imm,
            next: idx(i64::from(at) + i64::from(raw.len)),
            kind: raw.kind,
            decoded,
            fast: None,
        };
        inst.fast = valu::fast::choose(isa.wave64, &inst);
        insts.push(inst);
    }
    let mut lookup: Vec<(u32, u32)> = insts
        .iter()
        .enumerate()
        .filter(|(_, i)| !matches!(i.kind, Kind::OutOfCode))
        .map(|(n, i)| (i.offset, n as u32))
        .collect();
    lookup.sort_unstable();
    let global_sync = super::gws::used_by(&insts);
    Program {
        isa,
        entry,
        insts,
        entry_at,
        code_len: code.len(),
        roots: roots.to_vec(),
        lookup,
        global_sync,
    }
}

/// Whether the function at `callee` (an offset `found` holds) may return
/// to its caller: an `s_setpc_b64` is reachable from it through the code
/// decoded so far (branches, fall-through, and the return points of the
/// calls it makes that were found to return). One that only ends the
/// program, traps or loops never returns. Any s_setpc counts, a tail call
/// or long jump included: the verdict errs towards decoding a return point.
fn may_return(found: &BTreeMap<u32, Raw>, callee: u32) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![callee];
    while let Some(at) = stack.pop() {
        let Some(raw) = found.get(&at) else { continue };
        if !seen.insert(at) {
            continue;
        }
        if matches!(raw.kind, Kind::SetPc) {
            return true;
        }
        stack.extend(raw.target.and_then(|t| u32::try_from(t).ok()));
        if raw.falls {
            stack.push(at + raw.len);
        }
    }
    false
}

impl Program {
    /// The device address of `inst`.
    pub fn address_of(&self, inst: &Inst) -> u64 {
        self.entry.wrapping_add_signed(inst.from_entry())
    }

    /// The index of the instruction starting at device address `addr`
    /// (an indirect jump's target), if one was decoded there.
    pub(crate) fn index_at(&self, addr: u64) -> Option<u32> {
        // Offsets wrap as u32 (see `Inst::offset`): code before the entry
        // sorts after the rest, and the search keys agree.
        let offset = i32::try_from(addr.wrapping_sub(self.entry) as i64).ok()? as u32;
        self.lookup
            .binary_search_by_key(&offset, |&(o, _)| o)
            .ok()
            .map(|i| self.lookup[i].1)
    }

    /// The device address of the first byte of the code decoded (the
    /// kernel's allocation), and its length.
    pub(crate) fn code_span(&self) -> (u64, usize) {
        (self.entry.wrapping_sub(self.entry_at as u64), self.code_len)
    }

    /// Mnemonics of decoded instructions the interpreter does not execute.
    pub fn unimplemented(&self) -> Vec<String> {
        self.insts
            .iter()
            .filter(|i| matches!(i.kind, Kind::Unimplemented | Kind::GlobalShare))
            .map(Inst::refused_name)
            .collect()
    }
}

impl Inst {
    /// The name a refusal gives this instruction ([`listed_name`]).
    pub fn refused_name(&self) -> String {
        listed_name(&self.decoded, self.kind)
    }
}

/// The name the interpreter lists `d` by (classified as `kind`): its
/// mnemonic as LLVM prints it (`X :: Y` for VOPD), with ` gds` for a GDS
/// access.
pub(super) fn listed_name(d: &Instruction, kind: Kind) -> String {
    let name = match d.name_y {
        Some(y) => format!("{} :: {y}", d.mnemonic()),
        None => d.mnemonic(),
    };
    match kind {
        Kind::GlobalShare | Kind::Gws(_) => name + " gds",
        _ => name,
    }
}

#[cfg(test)]
#[path = "program_tests.rs"]
mod tests;
