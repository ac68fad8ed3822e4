//! What the proof knows about the SGPRs at one instruction: which hold a
//! half of a pointer it trusts, and how instructions move those halves.
//!
//! Three pointers are trusted: the kernarg segment pointer and the dispatch
//! packet pointer as the user SGPRs deliver them, and addresses inside the
//! code object's own image computed PC-relatively (`s_getpc_b64`, then
//! `s_add_u32`/`s_addc_u32` of a constant offset, the sequence clang emits
//! for `sym@rel32@lo/hi`). The image's load base is unknown, so an image
//! address is kept as its offset `x` from that base: the low dword holds
//! lo32(base + x), which depends only on x mod 2^32; the high dword holds
//! hi32(base + x), which depends on all of x.

use std::collections::HashMap;

use relaunch_isa::{Instruction, Operand, Role};

/// SGPRs s0..s105 (VCC and the rest are never trusted).
pub(super) const SGPRS: usize = 106;

/// One half of a trusted pointer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Fact {
    KernargLo,
    KernargHi,
    PacketLo,
    PacketHi,
    /// lo32(base + x), kept as x mod 2^32.
    ImageLo(u32),
    /// hi32(base + x).
    ImageHi(u64),
}

/// The pointers delivered in user SGPRs, by index into the state's masks.
const DELIVERED: [(Fact, Fact); 2] = [
    (Fact::KernargLo, Fact::KernargHi),
    (Fact::PacketLo, Fact::PacketHi),
];

/// The image facts of one state: (register, fact) sorted by register.
type ImageList = Vec<(u8, Fact)>;

/// Image facts interned per proof: a state names its list by a small id
/// (0: none), so states stay small, copied per step and met with a few
/// ANDs. Past `u16::MAX` distinct lists a new one is "nothing known".
#[derive(Debug, Default)]
pub(super) struct Images {
    lists: Vec<ImageList>,
    ids: HashMap<ImageList, u16>,
}

impl Images {
    fn id(&mut self, list: ImageList) -> u16 {
        if list.is_empty() {
            return 0;
        }
        if let Some(&id) = self.ids.get(&list) {
            return id;
        }
        if self.lists.len() >= usize::from(u16::MAX) {
            return 0;
        }
        self.lists.push(list.clone());
        let id = self.lists.len() as u16;
        self.ids.insert(list, id);
        id
    }

    fn list(&self, id: u16) -> &[(u8, Fact)] {
        match id.checked_sub(1) {
            Some(i) => &self.lists[usize::from(i)],
            None => &[],
        }
    }
}

/// The SGPRs holding each delivered pointer's halves (one bit each), the
/// image facts, and SCC's carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct State {
    lo: [u128; 2],
    hi: [u128; 2],
    image: u16,
    /// SCC holds the carry out of `ImageLo(lo) + add`: the state right
    /// after that `s_add_u32`, for the `s_addc_u32` that must follow it.
    carry: Option<(u32, u32)>,
}

/// SGPR `r`'s bit in a mask (none past s105).
pub(super) fn bit(r: usize) -> u128 {
    if r < SGPRS {
        1 << r
    } else {
        0
    }
}

impl State {
    pub(super) const NOTHING: State = State {
        lo: [0; 2],
        hi: [0; 2],
        image: 0,
        carry: None,
    };

    /// The state on entry: the delivered pointers in their user SGPRs.
    pub(super) fn delivered(kernarg: Option<u8>, packet: Option<u8>) -> State {
        let mut st = State::NOTHING;
        for (k, first) in [kernarg, packet].into_iter().enumerate() {
            if let Some(r) = first {
                st.lo[k] |= bit(r as usize);
                st.hi[k] |= bit(r as usize + 1);
            }
        }
        st
    }

    /// The fact SGPR `r` holds.
    pub(super) fn get(&self, images: &Images, r: usize) -> Option<Fact> {
        let b = bit(r);
        for (k, &(lo, hi)) in DELIVERED.iter().enumerate() {
            if self.lo[k] & b != 0 {
                return Some(lo);
            }
            if self.hi[k] & b != 0 {
                return Some(hi);
            }
        }
        let list = images.list(self.image);
        list.iter().find(|e| usize::from(e.0) == r).map(|e| e.1)
    }

    /// Keeps only the facts `other` shares; true when something was lost.
    pub(super) fn meet(&mut self, other: &State, images: &mut Images) -> bool {
        let before = *self;
        for k in 0..2 {
            self.lo[k] &= other.lo[k];
            self.hi[k] &= other.hi[k];
        }
        if self.carry != other.carry {
            self.carry = None;
        }
        if self.image != other.image {
            let theirs = images.list(other.image);
            let kept = images
                .list(self.image)
                .iter()
                .filter(|e| theirs.contains(e))
                .copied()
                .collect();
            self.image = images.id(kept);
        }
        *self != before
    }
}

/// Where `step` runs: the instruction's address, and whether the dword at
/// an address is the file's own (no relocation rewrites it at load time).
pub(super) struct At<'a> {
    pub(super) address: u64,
    pub(super) fixed: &'a dyn Fn(u64) -> bool,
}

/// Apply an instruction's SGPR writes to the state: copies keep what they
/// copy, `s_getpc_b64` and constant image adds make image facts, every
/// other write forgets.
pub(super) fn step(i: &Instruction, at: &At<'_>, st: &mut State, images: &mut Images) {
    if i.writes_any_sgpr {
        *st = State::NOTHING;
        return;
    }
    let before = *st;
    // The carry is only trusted by the instruction right after its add.
    st.carry = None;
    let mut written = 0u128;
    for (first, count) in i.sgpr_writes() {
        for r in first as usize..first as usize + count as usize {
            written |= bit(r);
        }
    }
    for k in 0..2 {
        st.lo[k] &= !written;
        st.hi[k] &= !written;
    }
    let mut made: Vec<(usize, Fact)> = Vec::new();
    if let Some(Operand::Sgpr { first, count }) = i.field(Role::Dst) {
        let (dst, n) = (first as usize, count as usize);
        make(i, at, &before, images, (dst, n), st, &mut made);
    }
    // What the instruction made replaces what its destination held.
    let replaced = made.iter().fold(written, |m, &(r, _)| m | bit(r));
    let old = images.list(before.image);
    if made.is_empty() && !old.iter().any(|e| replaced & bit(usize::from(e.0)) != 0) {
        return;
    }
    let mut list: ImageList = old
        .iter()
        .filter(|e| replaced & bit(usize::from(e.0)) == 0)
        .copied()
        .collect();
    list.extend(made.into_iter().map(|(r, f)| (r as u8, f)));
    list.sort_unstable();
    st.image = images.id(list);
}

/// The facts an instruction writes to `dst` (first SGPR, count): delivered
/// pointer halves straight into `st`, image facts into `made`.
fn make(
    i: &Instruction,
    at: &At<'_>,
    before: &State,
    images: &mut Images,
    (dst, n): (usize, usize),
    st: &mut State,
    made: &mut Vec<(usize, Fact)>,
) {
    match i.name {
        // s_mov_b64 pairs and s_mov_b32 halves.
        "s_mov_b64" | "s_mov_b32" => {
            let Some(Operand::Sgpr { first: s, .. }) = i.field(Role::Src0) else {
                return;
            };
            for k in 0..n {
                let (from, to) = (bit(s as usize + k), bit(dst + k));
                for p in 0..2 {
                    if before.lo[p] & from != 0 {
                        st.lo[p] |= to;
                    }
                    if before.hi[p] & from != 0 {
                        st.hi[p] |= to;
                    }
                }
                if to != 0 {
                    if let Some(f @ (Fact::ImageLo(_) | Fact::ImageHi(_))) =
                        before.get(images, s as usize + k)
                    {
                        made.push((dst + k, f));
                    }
                }
            }
        }
        // The address of the next instruction (the sim and the ISA agree).
        "s_getpc_b64" if n == 2 && dst + 1 < SGPRS => {
            let next = at.address + i.len as u64;
            made.push((dst, Fact::ImageLo(next as u32)));
            made.push((dst + 1, Fact::ImageHi(next)));
        }
        "s_add_u32" | "s_add_co_u32" if dst < SGPRS => {
            let lo = |f| match f {
                Fact::ImageLo(x) => Some(x),
                _ => None,
            };
            if let Some((x, c)) = image_plus(i, at, before, images, lo) {
                made.push((dst, Fact::ImageLo(x.wrapping_add(c))));
                st.carry = Some((x, c));
            }
        }
        // hi32(base + x) + h + carry(lo32(base + x) + add)
        //   = hi32(base + x + add + (h << 32)), when the carry is that add's.
        "s_addc_u32" | "s_add_co_ci_u32" if dst < SGPRS => {
            let Some((lo, add)) = before.carry else {
                return;
            };
            let hi = |f| match f {
                Fact::ImageHi(x) if x as u32 == lo => Some(x),
                _ => None,
            };
            if let Some((x, h)) = image_plus(i, at, before, images, hi) {
                let y = x
                    .wrapping_add(u64::from(add))
                    .wrapping_add(u64::from(h) << 32);
                made.push((dst, Fact::ImageHi(y)));
            }
        }
        _ => {}
    }
}

/// For a two-source scalar add: the image value `pick` finds in one source
/// SGPR and the constant in the other (either order), if any.
fn image_plus<T>(
    i: &Instruction,
    at: &At<'_>,
    st: &State,
    images: &Images,
    pick: impl Fn(Fact) -> Option<T>,
) -> Option<(T, u32)> {
    let (a, b) = (i.field(Role::Src0)?, i.field(Role::Src1)?);
    let image = |op: Operand| match op {
        Operand::Sgpr { first, .. } => st.get(images, first as usize).and_then(&pick),
        _ => None,
    };
    // SOP2's literal is the dword after the instruction word.
    let constant = |op: Operand| match op {
        Operand::InlineInt(v) => Some(i32::from(v) as u32),
        Operand::Literal(v) => (at.fixed)(at.address + 4).then_some(v),
        _ => None,
    };
    match (image(a), constant(b)) {
        (Some(x), Some(c)) => Some((x, c)),
        _ => Some((image(b)?, constant(a)?)),
    }
}
