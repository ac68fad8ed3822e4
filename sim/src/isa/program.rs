//! A kernel's code decoded once into a program: every instruction reachable
//! from the entry (fall-through and branch targets), with its operands
//! resolved and its executor chosen. Built at a kernel's first dispatch and
//! cached per loaded kernel (`cache`).

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
    /// Byte offset from the kernel's code entry.
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
}

/// The raw words of the instruction at the start of `code`.
fn words_of(code: &[u8], len: usize) -> [u32; 4] {
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
fn classify(isa: Isa, d: &Instruction, words: &[u32; 4]) -> Kind {
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

/// Decode every instruction reachable from offset 0 of `code` (the bytes
/// from the kernel's entry to the end of its allocation), callees of
/// direct calls included.
pub fn build(isa: Isa, entry: u64, code: &[u8]) -> Program {
    struct Raw {
        len: u32,
        words: [u32; 4],
        decoded: Option<Instruction>,
        kind: Kind,
        /// Branch target byte offset, if any.
        target: Option<i64>,
        falls: bool,
    }
    let mut found: BTreeMap<u32, Raw> = BTreeMap::new();
    let mut work = vec![0i64];
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
            let within = |t: &i64| u32::try_from(*t).is_ok_and(|t| (t as usize) < code.len());
            work.extend(
                calls::jumps(&decoded)
                    .targets()
                    .filter(|t| within(t) && !found.contains_key(&(*t as u32))),
            );
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
                        Kind::SetPc => (None, false),
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
    // Indices in address order; a past-the-code instruction at the end.
    let index: HashMap<u32, u32> = found
        .keys()
        .enumerate()
        .map(|(i, &o)| (o, i as u32))
        .collect();
    let out_of_code = found.len() as u32;
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
    for (&at, raw) in &found {
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
            offset: at,
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
    let end = outside.iter().copied().max().unwrap_or(code.len() as i64);
    insts.push(Inst {
        offset: u32::try_from(end.max(0)).unwrap_or(u32::MAX),
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
    });
    Program { isa, entry, insts }
}

impl Program {
    /// The index of the instruction starting at device address `addr`
    /// (an indirect jump's target), if one was decoded there.
    pub(crate) fn index_at(&self, addr: u64) -> Option<u32> {
        let offset = u32::try_from(addr.checked_sub(self.entry)?).ok()?;
        let code = &self.insts[..self.insts.len().saturating_sub(1)];
        code.binary_search_by_key(&offset, |i| i.offset)
            .ok()
            .map(|i| i as u32)
    }

    /// Mnemonics of decoded instructions the interpreter does not execute.
    pub fn unimplemented(&self) -> Vec<String> {
        self.insts
            .iter()
            .filter(|i| matches!(i.kind, Kind::Unimplemented))
            .map(|i| i.decoded.mnemonic())
            .collect()
    }
}

/// The mnemonics (as LLVM's disassembler spells them) of the scalar,
/// memory and control formats the interpreter executes on `family` (the
/// vector ALU lists its own: `valu::implemented`).
pub fn implemented_non_valu(family: relaunch_isa::Family) -> Vec<&'static str> {
    let mut out = Vec::new();
    for format in [
        Format::Sop1,
        Format::Sop2,
        Format::Sopc,
        Format::Sopk,
        Format::Sopp,
        Format::Smem,
        Format::Ds,
        Format::Flat,
        Format::Global,
        Format::Scratch,
        Format::Mubuf,
    ] {
        for row in relaunch_isa::opcodes(family, format) {
            let n = row.name;
            let ok = match format {
                Format::Smem => smem::prepare(n).is_some(),
                Format::Ds => lds::prepare(n).is_some(),
                Format::Flat | Format::Global | Format::Scratch | Format::Mubuf => {
                    vmem::prepare_kind(format, n).is_some()
                }
                _ => {
                    matches!(n, "s_getpc_b64" | "s_setpc_b64" | "s_swappc_b64")
                        || control::prepare(n).is_some()
                        || scalar::prepare(n).is_some()
                }
            };
            if ok && !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

/// See [`super::executes`].
pub(crate) fn executes(isa: Isa, bytes: &[u8]) -> Option<(String, bool)> {
    match relaunch_isa::decode(isa, bytes) {
        Decoded::Known(d) => {
            let k = classify(isa, &d, &words_of(bytes, d.len));
            let name = match d.name_y {
                Some(y) => format!("{} :: {y}", d.mnemonic()),
                None => d.mnemonic(),
            };
            Some((name, !matches!(k, Kind::Unimplemented)))
        }
        Decoded::Unknown { .. } => None,
    }
}
