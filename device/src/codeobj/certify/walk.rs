//! The path-sensitive part of the proof: which SGPRs hold a trusted
//! pointer at each instruction, on every path from the entry.

use std::collections::{BTreeMap, HashMap, VecDeque};

use relaunch_isa::format::MemoryClass;
use relaunch_isa::{decode, Decoded, Instruction, Isa, Operand, Role};

use super::facts::{step, At, Images, State};
use super::reads::{check_smem, Pointers, Read};
use super::{Budget, Reason};

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

/// The offsets execution may continue at after `i` at `off` in a function
/// of `len` bytes; Err with why when it cannot be followed or leaves the
/// function.
pub(super) fn successors(i: &Instruction, off: usize, len: usize) -> Result<Vec<usize>, String> {
    let next = off + i.len;
    let target = |rel: i64| -> Result<usize, String> {
        let t = next as i64 + 4 * rel;
        if t < 0 || t as usize >= len {
            return Err(format!("branch target leaves the function (offset {t})"));
        }
        Ok(t as usize)
    };
    let succ = match flow(i) {
        Flow::End => vec![],
        Flow::Next => vec![next],
        Flow::Jump(r) => vec![target(r)?],
        Flow::Branch(r) => vec![next, target(r)?],
        Flow::Unfollowable => return Err("control flow cannot be followed".into()),
    };
    if succ.iter().any(|&s| s >= len) {
        return Err("execution runs past the end of the function".into());
    }
    Ok(succ)
}

fn text(i: &Instruction) -> String {
    let ops: Vec<String> = i.fields.iter().map(|f| f.value.to_string()).collect();
    format!("{} {}", i.mnemonic(), ops.join(", "))
}

/// Walk every path from `entry`; Ok with the proven loads (address,
/// what each reads), or the first reason it fails.
pub(super) fn prove(
    isa: Isa,
    code: &[u8],
    entry: u64,
    p: &Pointers<'_>,
    budget: &mut Budget,
) -> Result<Vec<(u64, Read)>, Reason> {
    let fail = |off: usize, i: Option<&Instruction>, why: String| Reason {
        address: Some(entry + off as u64),
        instruction: i.map(text),
        why,
    };
    let mut images = Images::default();
    let start = State::delivered(p.kernarg, p.packet);
    let fixed = |a: u64| p.image.fixed(a);
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
        let address = entry + off as u64;
        if i.format.memory_class() == MemoryClass::Scalar {
            let read = check_smem(&i, &st, &images, p).map_err(|why| fail(off, Some(&i), why))?;
            if let Some(read) = read {
                loads.insert(address, read);
            }
        }
        let at = At {
            address,
            fixed: &fixed,
        };
        step(&i, &at, &mut st, &mut images);
        for s in successors(&i, off, code.len()).map_err(|why| fail(off, Some(&i), why))? {
            match states.get_mut(&s) {
                None => {
                    states.insert(s, (st, 0));
                    work.push_back(s);
                }
                Some((old, _)) => {
                    if old.meet(&st, &mut images) {
                        work.push_back(s);
                    }
                }
            }
        }
    }
    Ok(loads.into_iter().collect())
}
