//! The most frequent scalar ALU forms run inline in the execution loop:
//! the 32-bit adds with and without carry and the equality compares, on
//! SGPR or constant sources into an SGPR. Plain tests rather than a
//! match over every operation, and no call: for these the call and the
//! jump through the general executor's table cost more than the work.
//! Same results as `exec`; anything else is left to it.

use super::{Cmp, SOp};
use crate::isa::operand::{Dst, Src};
use crate::isa::program::Inst;
use crate::isa::wave::Wave;

/// A source that cannot fault: an SGPR or a constant.
#[inline(always)]
fn plain(wave: &Wave, src: Src) -> Option<u32> {
    if let Src::Sgpr(n) = src {
        return Some(wave.sgpr[n as usize]);
    }
    if let Src::Int(v) = src {
        return Some(v as i32 as u32);
    }
    if let Src::Literal(v) | Src::Float(v) = src {
        return Some(v);
    }
    None
}

/// Run `inst` (scalar operation `op`) if it is one of the forms above;
/// false leaves the wave untouched for the general executor.
#[inline(always)]
pub(crate) fn quick(wave: &mut Wave, inst: &Inst, op: SOp) -> bool {
    let (Some(a), Some(b)) = (plain(wave, inst.src[0]), plain(wave, inst.src[1])) else {
        return false;
    };
    // `matches!`, not `==`: the derived comparison of an enum with data
    // is a call.
    if matches!(op, SOp::Cmp(Cmp::Eq, false)) {
        wave.scc = a == b;
        return true;
    }
    if matches!(op, SOp::Cmp(Cmp::Lg, false)) {
        wave.scc = a != b;
        return true;
    }
    let Dst::Sgpr(d) = inst.dst else {
        return false;
    };
    let (v, scc) = if matches!(op, SOp::AddU32) {
        a.overflowing_add(b)
    } else if matches!(op, SOp::AddcU32) {
        let s = u64::from(a) + u64::from(b) + u64::from(wave.scc);
        (s as u32, s >> 32 != 0)
    } else if matches!(op, SOp::AddI32) {
        let (v, o) = (a as i32).overflowing_add(b as i32);
        (v as u32, o)
    } else {
        return false;
    };
    wave.sgpr[d as usize] = v;
    wave.scc = scc;
    true
}
