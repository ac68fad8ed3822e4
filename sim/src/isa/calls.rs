//! The targets of jumps whose address the kernel computes from its own PC:
//! calls (`s_swappc_b64`) and long branches (`s_setpc_b64`) through a pair
//! built as `s_getpc_b64` plus a 64-bit add of a constant, so that
//! `program::build` can decode what they reach.
//!
//! The pair may be set on several paths that join before the jump (Tensile
//! picks its activation function behind a branch on the activation type,
//! each path with its own `s_getpc_b64` block), so the analysis walks the
//! jump's control-flow predecessors backwards (branch edges, fall-through,
//! the return from an earlier call) and collects one constant per path.
//! A path where the pair comes from anything else (memory, a computed VGPR
//! value, the kernel's arguments, a caller) makes the pair *computed*.
//!
//! Between the block and the jump the compiler may move the pair: copies
//! (`s_mov_b32`/`s_mov_b64`) and, under register pressure, spills of its
//! halves to VGPR lanes (`v_writelane_b32` then `v_readlane_b32` with a
//! constant lane; RCCL's kernels keep dozens of callee addresses so), which
//! the walk follows back to the block (any other write to a lane's VGPR on
//! the way makes the pair computed).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use relaunch_isa::{Format, Instruction, Operand, Role};

use super::control;
use super::operand::{Dst, Src};
use super::program::resolve;
use moves::{relocate, writes_sgpr};

/// Instructions one jump's walk may visit before it stops; the pair then
/// counts as computed (a conservative verdict that keeps pathological code
/// fast: a program is built at a kernel's first dispatch). RCCL's calls
/// through spilled pairs need up to about 12 000: their walks cross the
/// kernel's whole switch of collectives back to the spills at its start.
const BUDGET: usize = 1 << 14;

/// What a jump's pair can hold where the jump reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Reach {
    /// The PC-relative constants, as byte offsets in the decoded code (any
    /// value: a target outside the code is the caller's to judge).
    pub targets: BTreeSet<i64>,
    /// Some path sets the pair otherwise, or the walk stopped early.
    pub computed: bool,
}

impl Reach {
    fn merge(&mut self, other: &Reach) {
        self.targets.extend(other.targets.iter().copied());
        self.computed |= other.computed;
    }

    /// A call's verdict: every path gives a constant.
    pub fn direct(&self) -> bool {
        !self.computed && !self.targets.is_empty()
    }
}

/// The jumps of a decoded program, by byte offset.
#[derive(Debug, Default)]
pub(super) struct Jumps {
    /// Every `s_swappc_b64`.
    pub calls: BTreeMap<u32, Reach>,
    /// Every `s_setpc_b64`: a long branch where it has targets, a function
    /// return (left to the run) where it has none.
    pub setpcs: BTreeMap<u32, Reach>,
}

impl Jumps {
    /// Every constant target of a call or long branch.
    pub fn targets(&self) -> impl Iterator<Item = i64> + '_ {
        self.calls
            .values()
            .chain(self.setpcs.values())
            .flat_map(|r| r.targets.iter().copied())
    }
}

/// Analyse every call and `s_setpc_b64` of `decoded` (instructions by byte
/// offset; the PC `s_getpc_b64` gives is its offset plus its length).
pub(super) fn jumps(decoded: &BTreeMap<u32, &Instruction>) -> Jumps {
    let mut flow = Flow::new(decoded);
    let pair_of = |d: &Instruction| match resolve(d).0[0] {
        Src::Sgpr(n) => Some(n),
        _ => None,
    };
    let mut out = Jumps::default();
    let mut long = Vec::new();
    for (i, d) in decoded.values().enumerate() {
        if d.name == "s_setpc_b64" {
            let r = flow.reach(i as u32, pair_of(d));
            long.extend(r.targets.iter().map(|&t| (i as u32, t)));
            out.setpcs.insert(flow.offsets[i], r);
        }
    }
    // A long branch is an edge too: a call (or another long branch) may be
    // reached only through one. The walks above did not see these edges,
    // so their memos go.
    flow.memo.clear();
    for (from, t) in long {
        if let Some(to) = flow.index(t) {
            flow.edges.push((to, from));
        }
    }
    flow.index_edges();
    // In address order: a call's walk then usually meets the previous
    // call on the same pair already answered (Tensile makes hundreds of
    // calls through one pair set once).
    for (i, d) in decoded.values().enumerate() {
        if d.name == "s_swappc_b64" {
            let r = flow.reach(i as u32, pair_of(d));
            out.calls.insert(flow.offsets[i], r);
        }
    }
    out
}

/// The successors of the instruction at `at`, as byte offsets.
fn successors(at: u32, d: &Instruction) -> [Option<i64>; 2] {
    let next = i64::from(at) + d.len as i64;
    if d.name == "s_setpc_b64" {
        return [None, None];
    }
    // Only SOPP ends or branches; s_swappc_b64 falls through (its callee
    // returns there).
    let op = match d.format {
        Format::Sopp => control::prepare(d.name),
        _ => None,
    };
    match op {
        Some(op) => {
            let target = match d.field(Role::Simm) {
                Some(Operand::Imm(simm)) if control::branches(op) => {
                    Some(next + 4 * i64::from(simm as u16 as i16))
                }
                _ => None,
            };
            [control::falls_through(op).then_some(next), target]
        }
        None => [Some(next), None],
    }
}

/// A hasher for the walks' small keys (the default SipHash dominated the
/// analysis' time): multiply-rotate, as FxHash does.
#[derive(Default)]
struct Quick(u64);

impl Hasher for Quick {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u8(&mut self, v: u8) {
        self.write_u64(u64::from(v));
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
    fn write_i64(&mut self, v: i64) {
        self.write_u64(v as u64);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type QuickBuild = BuildHasherDefault<Quick>;

/// The control-flow graph backwards (instructions by index in address
/// order), and the answers found so far.
struct Flow<'a> {
    offsets: Vec<u32>,
    insts: Vec<&'a Instruction>,
    /// (to, from) edges.
    edges: Vec<(u32, u32)>,
    /// The edges by `to`: node i's predecessors are
    /// `pred_list[pred_start[i]..pred_start[i + 1]]`.
    pred_start: Vec<u32>,
    pred_list: Vec<u32>,
    /// (jump, pair) -> what the pair holds where that jump reads it.
    memo: HashMap<(u32, u8), Reach, QuickBuild>,
    /// The walk's visited (node, state) pairs, kept for its capacity.
    seen: HashSet<(u32, State), QuickBuild>,
}

/// Where one half of the pair is held at a point of the walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Loc {
    Sgpr(u8),
    /// A lane of a VGPR (an SGPR spilled by `v_writelane_b32`).
    Lane(u16, u8),
}

/// Where a backward walk stands: what the instructions after this point
/// (up to the jump) do to the pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct State {
    /// Where the pair's low and high halves are held here.
    lo: Loc,
    hi: Loc,
    /// Added to the pair's value here to give its value at the jump.
    add: u64,
    /// The high half of a 64-bit add whose low half is still to be met:
    /// (constant, subtracted).
    high: Option<(u32, bool)>,
    /// A register the low half added (or subtracted) whose value is still
    /// to be found, and what was added to it after this point.
    reg: Option<(u8, bool)>,
    reg_add: u32,
    /// The PC `s_getpc_b64` gave, once met.
    pc: Option<i64>,
}

enum Step {
    Same,
    Moved(State),
    Done(i64),
    Computed,
}

impl<'a> Flow<'a> {
    fn new(decoded: &'a BTreeMap<u32, &'a Instruction>) -> Self {
        let mut flow = Flow {
            offsets: decoded.keys().copied().collect(),
            insts: decoded.values().copied().collect(),
            edges: Vec::with_capacity(decoded.len() + decoded.len() / 8),
            pred_start: Vec::new(),
            pred_list: Vec::new(),
            memo: HashMap::default(),
            seen: HashSet::default(),
        };
        for (from, (&at, d)) in decoded.iter().enumerate() {
            for s in successors(at, d).into_iter().flatten() {
                // Mostly the next instruction: no search for it.
                let next = from + 1;
                let to = match flow.offsets.get(next) {
                    Some(&o) if i64::from(o) == s => Some(next as u32),
                    _ => flow.index(s),
                };
                if let Some(to) = to {
                    flow.edges.push((to, from as u32));
                }
            }
        }
        flow.index_edges();
        flow
    }

    /// Group the edges by their head (a counting sort: no comparisons).
    fn index_edges(&mut self) {
        let n = self.insts.len();
        let mut start = vec![0u32; n + 2];
        for &(to, _) in &self.edges {
            start[to as usize + 2] += 1;
        }
        for i in 2..start.len() {
            start[i] += start[i - 1];
        }
        let mut list = vec![0u32; self.edges.len()];
        for &(to, from) in &self.edges {
            let slot = &mut start[to as usize + 1];
            list[*slot as usize] = from;
            *slot += 1;
        }
        start.pop();
        self.pred_start = start;
        self.pred_list = list;
    }

    /// The index of the instruction at byte offset `at`, if decoded.
    fn index(&self, at: i64) -> Option<u32> {
        let at = u32::try_from(at).ok()?;
        self.offsets.binary_search(&at).ok().map(|i| i as u32)
    }

    fn preds(&self, i: u32) -> &[u32] {
        let i = i as usize;
        &self.pred_list[self.pred_start[i] as usize..self.pred_start[i + 1] as usize]
    }

    /// What the pair from `pair` holds where the jump `at` (an index)
    /// reads it.
    fn reach(&mut self, at: u32, pair: Option<u8>) -> Reach {
        let mut out = Reach::default();
        // A pair in VCC or the trap registers is not a getpc block's.
        let Some(pair) = pair.filter(|&n| n < 105) else {
            out.computed = true;
            return out;
        };
        let start = State {
            lo: Loc::Sgpr(pair),
            hi: Loc::Sgpr(pair + 1),
            add: 0,
            high: None,
            reg: None,
            reg_add: 0,
            pc: None,
        };
        let mut seen = std::mem::take(&mut self.seen);
        seen.clear();
        let mut stack = Vec::new();
        self.push_preds(at, start, &mut stack, &mut out);
        while let Some((p, s)) = stack.pop() {
            if !seen.insert((p, s)) {
                continue;
            }
            if seen.len() > BUDGET {
                out.computed = true;
                break;
            }
            let s = match step(self.insts[p as usize], self.offsets[p as usize], s) {
                Step::Same => s,
                Step::Moved(n) => n,
                Step::Done(t) => {
                    out.targets.insert(t);
                    continue;
                }
                Step::Computed => {
                    out.computed = true;
                    continue;
                }
            };
            // An earlier jump through the same pair, untouched since: its
            // answer is the rest of this walk.
            if s == start {
                if let Some(m) = self.memo.get(&(p, pair)) {
                    out.merge(m);
                    continue;
                }
            }
            self.push_preds(p, s, &mut stack, &mut out);
        }
        self.seen = seen;
        self.memo.insert((at, pair), out.clone());
        out
    }

    fn push_preds(&self, at: u32, s: State, stack: &mut Vec<(u32, State)>, out: &mut Reach) {
        let preds = self.preds(at);
        // The code's entry or a callee's: the value comes from outside.
        out.computed |= preds.is_empty();
        stack.extend(preds.iter().map(|&p| (p, s)));
    }
}

/// An operand's constant: a literal (a relocation) or an inline integer.
fn constant(c: Src) -> Option<u32> {
    match c {
        Src::Literal(v) => Some(v),
        Src::Int(v) => Some(i32::from(v) as u32),
        _ => None,
    }
}

/// The constant `d` adds to SGPR `r` in place (`r = r + c` or `c + r`).
fn adds_to(src: &[Src; 3], r: u8) -> Option<u32> {
    match *src {
        [Src::Sgpr(a), c, _] | [c, Src::Sgpr(a), _] if a == r => constant(c),
        _ => None,
    }
}

/// The effect of instruction `d` at `at`, met walking backwards in state
/// `s`, on the value of the pair.
fn step(d: &Instruction, at: u32, s: State) -> Step {
    if s.pc.is_none() {
        if let Some(step) = relocate(d, s) {
            return step;
        }
    }
    let writes = |r: u8| writes_sgpr(d, r);
    // The value rules need the pair in SGPRs; a half in a lane is only
    // moved back (above).
    let (lo, hi) = match (s.lo, s.hi) {
        (Loc::Sgpr(lo), Loc::Sgpr(hi)) => (lo, hi),
        (Loc::Sgpr(r), Loc::Lane(..)) | (Loc::Lane(..), Loc::Sgpr(r)) => (r, r),
        (Loc::Lane(..), Loc::Lane(..)) => return Step::Same,
    };
    let split = !matches!((s.lo, s.hi), (Loc::Sgpr(_), Loc::Sgpr(_)));
    let on_pair = s.pc.is_none() && (writes(lo) || writes(hi));
    if on_pair && split {
        return Step::Computed;
    }
    let on_reg = s.reg.is_some_and(|(r, _)| writes(r));
    if !on_pair && !on_reg {
        return Step::Same;
    }
    let (src, dst, _) = resolve(d);
    // Each form below writes exactly its destination (one range).
    let single = d.sgpr_writes().count() == 1 && !d.writes_any_sgpr;
    let Dst::Sgpr(dst) = dst else {
        return Step::Computed;
    };
    match (on_pair, on_reg) {
        _ if !single => Step::Computed,
        (true, false) => pair_write(d, at, &src, dst, lo, hi, s),
        (false, true) => register(d, &src, dst, s),
        _ => Step::Computed,
    }
}

/// A write to the pair: one of the getpc block's instructions, or the end
/// of the pattern.
fn pair_write(d: &Instruction, at: u32, src: &[Src; 3], dst: u8, lo: u8, hi: u8, s: State) -> Step {
    let mut n = s;
    match d.name {
        // The 64-bit add's high half (gfx12 spells it s_add_co_ci_u32),
        // met before its low half walking backwards.
        "s_addc_u32" | "s_add_co_ci_u32" if dst == hi && s.high.is_none() => {
            let Some(y) = adds_to(src, hi) else {
                return Step::Computed;
            };
            n.high = Some((y, false));
        }
        "s_subb_u32" | "s_sub_co_ci_u32" if dst == hi && s.high.is_none() => {
            let (Src::Sgpr(a), Some(y)) = (src[0], constant(src[1])) else {
                return Step::Computed;
            };
            if a != hi {
                return Step::Computed;
            }
            n.high = Some((y, true));
        }
        // The low half: a constant, or a register holding one (Tensile's
        // `s_add_i32 s8, lit, 4` before `s_add_u32 s12, s12, s8`).
        "s_add_u32" | "s_add_co_u32" | "s_sub_u32" | "s_sub_co_u32" if dst == lo => {
            let sub = d.name.starts_with("s_sub");
            let Some((y, high_sub)) = s.high else {
                return Step::Computed;
            };
            let other = match *src {
                [Src::Sgpr(a), x, _] if a == lo => x,
                [x, Src::Sgpr(a), _] if a == lo && !sub => x,
                _ => return Step::Computed,
            };
            if high_sub != sub {
                return Step::Computed;
            }
            let high = u64::from(y) << 32;
            n.high = None;
            match (constant(other), other) {
                (Some(x), _) => n.add = offset(n.add, high | u64::from(x), sub),
                (None, Src::Sgpr(r)) if s.reg.is_none() && r != lo && r != hi => {
                    n.add = offset(n.add, high, sub);
                    n.reg = Some((r, sub));
                }
                _ => return Step::Computed,
            }
        }
        "s_getpc_b64" if dst == lo && hi == lo.wrapping_add(1) && s.high.is_none() => {
            let pc = i64::from(at) + d.len as i64;
            if s.reg.is_none() {
                return Step::Done(pc.wrapping_add(s.add as i64));
            }
            n.pc = Some(pc);
        }
        // gfx12 sign-extends the PC's bits 47:32 after s_getpc_b64; a code
        // address keeps its value (user addresses are below 2^47).
        "s_sext_i32_i16" if dst == hi && src[0] == Src::Sgpr(hi) => {}
        _ => return Step::Computed,
    }
    Step::Moved(n)
}

/// A write to the register the low half added: its constant value.
fn register(d: &Instruction, src: &[Src; 3], dst: u8, s: State) -> Step {
    let Some((r, sub)) = s.reg else {
        return Step::Computed;
    };
    if dst != r {
        return Step::Computed;
    }
    let mut n = s;
    let value = match d.name {
        "s_add_i32" | "s_add_u32" | "s_add_co_i32" | "s_add_co_u32" => {
            match (constant(src[0]), constant(src[1])) {
                (Some(a), Some(b)) => Some(a.wrapping_add(b)),
                _ => {
                    let Some(c) = adds_to(src, r) else {
                        return Step::Computed;
                    };
                    n.reg_add = n.reg_add.wrapping_add(c);
                    None
                }
            }
        }
        "s_sub_i32" | "s_sub_u32" | "s_sub_co_i32" | "s_sub_co_u32" => {
            match (src[0], constant(src[0]), constant(src[1])) {
                (_, Some(a), Some(b)) => Some(a.wrapping_sub(b)),
                (Src::Sgpr(a), None, Some(b)) if a == r => {
                    n.reg_add = n.reg_add.wrapping_sub(b);
                    None
                }
                _ => return Step::Computed,
            }
        }
        "s_mov_b32" => match constant(src[0]) {
            Some(v) => Some(v),
            None => return Step::Computed,
        },
        "s_movk_i32" => match d.field(Role::Simm) {
            Some(Operand::Imm(v)) => Some(i32::from(v as u16 as i16) as u32),
            _ => return Step::Computed,
        },
        _ => return Step::Computed,
    };
    let Some(v) = value else {
        return Step::Moved(n);
    };
    n.add = offset(n.add, u64::from(v.wrapping_add(n.reg_add)), sub);
    n.reg = None;
    n.reg_add = 0;
    match n.pc {
        Some(pc) => Step::Done(pc.wrapping_add(n.add as i64)),
        None => Step::Moved(n),
    }
}

fn offset(add: u64, by: u64, sub: bool) -> u64 {
    if sub {
        add.wrapping_sub(by)
    } else {
        add.wrapping_add(by)
    }
}

mod moves;
#[cfg(test)]
mod tests;
