//! The path-sensitive part of the proof: which SGPRs hold the kernarg
//! pointer at each instruction, on every path from the entry.

use std::collections::{BTreeMap, HashMap, VecDeque};

use relaunch_isa::format::MemoryClass;
use relaunch_isa::{decode, Decoded, Format, Instruction, Isa, Operand, Role};

use super::{Budget, Reason};

/// What an SGPR is known to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Val {
    KernargLo,
    KernargHi,
    Other,
}

const SGPRS: usize = 106;

/// The SGPRs known to hold the kernarg pointer's low and high halves, one
/// bit each (SGPRS <= 128): a state is 32 bytes and the meet two ANDs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct State {
    lo: u128,
    hi: u128,
}

impl State {
    const NOTHING: State = State { lo: 0, hi: 0 };

    fn get(&self, r: usize) -> Val {
        let bit = 1u128 << r;
        if self.lo & bit != 0 {
            Val::KernargLo
        } else if self.hi & bit != 0 {
            Val::KernargHi
        } else {
            Val::Other
        }
    }

    fn set(&mut self, r: usize, v: Val) {
        let bit = 1u128 << r;
        self.lo &= !bit;
        self.hi &= !bit;
        match v {
            Val::KernargLo => self.lo |= bit,
            Val::KernargHi => self.hi |= bit,
            Val::Other => {}
        }
    }

    /// Keeps only the facts `other` shares; true when something was lost.
    fn meet(&mut self, other: &State) -> bool {
        let before = *self;
        self.lo &= other.lo;
        self.hi &= other.hi;
        *self != before
    }
}

/// How often one instruction is walked before its facts are widened to
/// "nothing known": a loop whose back edge shifts the kernarg copies by one
/// pair loses one pair per trip and would be walked once per pair (~50
/// times). Real kernels settle in two or three visits.
pub(super) const VISITS_BEFORE_WIDENING: u32 = 8;

/// How an instruction continues.
enum Flow {
    Next,
    Jump(i64),
    Branch(i64),
    End,
    Unfollowable,
}

fn flow(i: &Instruction) -> Flow {
    let simm = match i.field(Role::Simm) {
        Some(Operand::Imm(v)) => v,
        _ => 0,
    };
    match i.name {
        "s_endpgm" | "s_endpgm_saved" | "s_endpgm_ordered_ps_done" => Flow::End,
        "s_branch" => Flow::Jump(simm),
        "s_cbranch_g_fork" | "s_cbranch_join" => Flow::Unfollowable,
        n if n.starts_with("s_cbranch_") => Flow::Branch(simm),
        "s_setpc_b64"
        | "s_swappc_b64"
        | "s_call_b64"
        | "s_rfe_b64"
        | "s_trap"
        | "s_subvector_loop_begin"
        | "s_subvector_loop_end" => Flow::Unfollowable,
        _ => Flow::Next,
    }
}

/// SMEM forms that read no memory into registers.
fn smem_reads_nothing(name: &str) -> bool {
    [
        "s_dcache_inv",
        "s_dcache_wb",
        "s_gl1_inv",
        "s_icache_inv",
        "s_memtime",
        "s_memrealtime",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

fn text(i: &Instruction) -> String {
    let ops: Vec<String> = i.fields.iter().map(|f| f.value.to_string()).collect();
    format!("{} {}", i.mnemonic(), ops.join(", "))
}

/// Walk every path from `entry`; Ok with the proven kernarg loads
/// (address, offset), or the first reason it fails.
pub(super) fn prove(
    isa: Isa,
    code: &[u8],
    entry: u64,
    kernarg: Option<u8>,
    kernarg_size: u64,
    budget: &mut Budget,
) -> Result<Vec<(u64, i64)>, Reason> {
    let fail = |off: usize, i: Option<&Instruction>, why: String| Reason {
        address: Some(entry + off as u64),
        instruction: i.map(text),
        why,
    };
    let mut start = State::NOTHING;
    if let Some(k) = kernarg {
        start.set(k as usize, Val::KernargLo);
        start.set(k as usize + 1, Val::KernargHi);
    }
    // Per reached offset: the facts on entry and how often it was walked.
    let mut states: HashMap<usize, (State, u32)> = HashMap::new();
    states.insert(0, (start, 0));
    let mut work = VecDeque::from([0usize]);
    let mut loads = BTreeMap::new();
    // Each state only loses facts and is widened after a few visits, so
    // every offset is walked a bounded number of times; the budget bounds
    // the whole code object's proofs besides.
    while let Some(off) = work.pop_front() {
        if !budget.take() {
            return Err(fail(off, None, budget.exhausted()));
        }
        let entry_state = states.get_mut(&off).expect("queued offsets have a state");
        entry_state.1 += 1;
        if entry_state.1 > VISITS_BEFORE_WIDENING {
            entry_state.0 = State::NOTHING;
        }
        let mut st = entry_state.0;
        let i = match decode(isa, &code[off..]) {
            Decoded::Known(i) => i,
            Decoded::Unknown { dword, .. } => {
                return Err(fail(
                    off,
                    None,
                    format!("instruction 0x{dword:08x} cannot be decoded"),
                ))
            }
        };
        if i.format.memory_class() == MemoryClass::Scalar {
            check_smem(&i, &st, kernarg, kernarg_size).map_err(|why| fail(off, Some(&i), why))?;
            if !smem_reads_nothing(i.name) {
                if let Some(Operand::Imm(o)) = i.field(Role::Offset) {
                    loads.insert(entry + off as u64, o);
                }
            }
        }
        step(&i, &mut st).map_err(|why| fail(off, Some(&i), why))?;
        let next = off + i.len;
        let target = |rel: i64| -> Result<usize, Reason> {
            let t = next as i64 + 4 * rel;
            if t < 0 || t as usize >= code.len() {
                return Err(fail(
                    off,
                    Some(&i),
                    format!("branch target leaves the function (offset {t})"),
                ));
            }
            Ok(t as usize)
        };
        let succ: Vec<usize> = match flow(&i) {
            Flow::End => vec![],
            Flow::Next => vec![next],
            Flow::Jump(r) => vec![target(r)?],
            Flow::Branch(r) => vec![next, target(r)?],
            Flow::Unfollowable => {
                return Err(fail(
                    off,
                    Some(&i),
                    "control flow cannot be followed".into(),
                ))
            }
        };
        for s in succ {
            if s >= code.len() {
                return Err(fail(
                    off,
                    Some(&i),
                    "execution runs past the end of the function".into(),
                ));
            }
            match states.get_mut(&s) {
                None => {
                    states.insert(s, (st, 0));
                    work.push_back(s);
                }
                Some((old, _)) => {
                    if old.meet(&st) {
                        work.push_back(s);
                    }
                }
            }
        }
    }
    Ok(loads.into_iter().collect())
}

fn check_smem(i: &Instruction, st: &State, kernarg: Option<u8>, limit: u64) -> Result<(), String> {
    if smem_reads_nothing(i.name) {
        return Ok(());
    }
    if !i.name.starts_with("s_load_") || i.format != Format::Smem {
        return Err(format!(
            "`{}` is a scalar-memory access other than a kernarg load",
            i.name
        ));
    }
    if kernarg.is_none() {
        return Err("scalar load, but the descriptor enables no kernarg segment pointer".into());
    }
    let Some(Operand::Sgpr { first, .. }) = i.field(Role::Base) else {
        return Err("scalar load whose base is not an SGPR pair".into());
    };
    let (lo, hi) = (first as usize, first as usize + 1);
    if hi >= SGPRS || st.get(lo) != Val::KernargLo || st.get(hi) != Val::KernargHi {
        return Err(format!(
            "base s[{lo}:{hi}] is not the kernarg segment pointer on every path"
        ));
    }
    if let Some(s) = i.field(Role::Soffset) {
        return Err(format!(
            "register offset {s}: not bounded by the kernarg segment"
        ));
    }
    let Some(Operand::Imm(off)) = i.field(Role::Offset) else {
        return Err("scalar load without an immediate offset".into());
    };
    let bytes = i
        .field(Role::Dst)
        .and_then(|d| d.sgprs())
        .map_or(4, |(_, n)| 4 * u64::from(n));
    // Loads are dword-granular and clang widens them; the hardware reads
    // whole dwords of the segment, which the runtime allocates rounded up
    // to 64 bytes (the kernarg alignment relaunch uses).
    let end = limit.div_ceil(64) * 64;
    if off < 0 || off as u64 + bytes > end.max(64) {
        return Err(format!(
            "offset {off} (+{bytes} bytes) is outside the {limit}-byte kernarg segment"
        ));
    }
    Ok(())
}

/// Apply an instruction's SGPR writes (and copies) to the state.
fn step(i: &Instruction, st: &mut State) -> Result<(), String> {
    if i.writes_any_sgpr {
        *st = State::NOTHING;
        return Ok(());
    }
    // Copies keep what they copy: s_mov_b64 pairs and s_mov_b32 halves.
    let copy = match (i.name, i.field(Role::Dst), i.field(Role::Src0)) {
        (
            "s_mov_b64" | "s_mov_b32",
            Some(Operand::Sgpr { first: d, count: n }),
            Some(Operand::Sgpr { first: s, .. }),
        ) => Some((d as usize, s as usize, n as usize)),
        _ => None,
    };
    let before = *st;
    for (first, count) in i.sgpr_writes() {
        let end = (first as usize + count as usize).min(SGPRS);
        for r in first as usize..end {
            st.set(r, Val::Other);
        }
    }
    if let Some((d, s, n)) = copy {
        for k in 0..n {
            if d + k < SGPRS && s + k < SGPRS {
                st.set(d + k, before.get(s + k));
            }
        }
    }
    Ok(())
}
