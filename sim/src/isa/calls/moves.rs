//! Where the pair moves between its getpc block and the jump: copies and
//! spills of its halves to VGPR lanes (see the parent module's doc).

use relaunch_isa::{Instruction, Operand};

use super::super::operand::{Dst, Src};
use super::super::program::resolve;
use super::{constant, Loc, State, Step};

/// Whether `d` may write SGPR `r`.
pub(super) fn writes_sgpr(d: &Instruction, r: u8) -> bool {
    d.writes_any_sgpr
        || d.sgpr_writes()
            .any(|(f, c)| (u16::from(f)..u16::from(f) + u16::from(c)).contains(&u16::from(r)))
}

/// Whether `d` writes VGPR `v` (any lanes).
fn writes_vgpr(d: &Instruction, v: u16) -> bool {
    d.writes.iter().any(|w| match *w {
        Operand::Vgpr { first, count } => (first..first + u16::from(count)).contains(&v),
        _ => false,
    })
}

/// A lane select that is a constant (`v_readlane_b32`/`v_writelane_b32`
/// src1), within a wave.
fn lane_of(c: Src) -> Option<u8> {
    constant(c)
        .and_then(|l| u8::try_from(l).ok())
        .filter(|&l| l < 64)
}

/// The effect of `d` on where the pair's halves are held: a copy or a
/// lane spill moves a half (walking backwards: to where it came from); a
/// write to a VGPR holding a half, other than to another lane, makes the
/// pair computed. `None`: `d` moves nothing (the value rules decide).
pub(super) fn relocate(d: &Instruction, s: State) -> Option<Step> {
    let (src, dst, _) = resolve(d);
    let mut n = s;
    let mut moved = false;
    for half in [&mut n.lo, &mut n.hi] {
        match *half {
            Loc::Lane(v, l) if d.name == "v_writelane_b32" && dst == Dst::Vgpr(v) => {
                match (lane_of(src[1]), src[0]) {
                    (Some(k), _) if k != l => {}
                    (Some(_), Src::Sgpr(r)) => {
                        *half = Loc::Sgpr(r);
                        moved = true;
                    }
                    _ => return Some(Step::Computed),
                }
            }
            Loc::Lane(v, _) if writes_vgpr(d, v) => return Some(Step::Computed),
            Loc::Lane(..) => {}
            Loc::Sgpr(r) if writes_sgpr(d, r) => {
                let Dst::Sgpr(first) = dst else { continue };
                let from = match (d.name, src[0]) {
                    ("v_readlane_b32", Src::Vgpr(v)) if first == r => match lane_of(src[1]) {
                        Some(l) => Loc::Lane(v, l),
                        None => return Some(Step::Computed),
                    },
                    ("s_mov_b32", Src::Sgpr(x)) if first == r => Loc::Sgpr(x),
                    ("s_mov_b64", Src::Sgpr(x)) if r.wrapping_sub(first) < 2 => {
                        Loc::Sgpr(x + (r - first))
                    }
                    _ => continue,
                };
                *half = from;
                moved = true;
            }
            Loc::Sgpr(_) => {}
        }
    }
    moved.then_some(Step::Moved(n))
}
