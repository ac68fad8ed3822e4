//! The targets of calls whose address the kernel computes from its own
//! PC: what lets `program::build` decode callees reached only through an
//! `s_swappc_b64`.

use std::collections::BTreeMap;

use relaunch_isa::Instruction;

use super::operand::{Dst, Src};
use super::program::resolve;

/// The byte offset (from the entry) a direct call at `call` (an
/// `s_swappc_b64 s[a:b], s[n:n+1]`) jumps to, when the instructions before
/// it build s[n:n+1] as LLVM's call sequence does: `s_getpc_b64 s[n:n+1]`,
/// `s_add_u32 sn, sn, lo`, `s_addc_u32 sn+1, sn+1, hi` (gfx12:
/// `s_add_co_u32`, `s_add_co_ci_u32`; each a literal or an inline
/// constant): a 64-bit add of a PC-relative constant, so the target does
/// not depend on where the code was loaded. `None` for any other shape (a pointer from memory): the
/// call then faults at run time naming its address.
pub(super) fn call_target(decoded: &BTreeMap<u32, &Instruction>, call: u32) -> Option<i64> {
    let (src, _, _) = resolve(decoded.get(&call)?);
    let Src::Sgpr(n) = src[0] else { return None };
    let (mut lo, mut hi) = (None, None);
    // The sequence sits a few instructions back, or (a pair the compiler
    // keeps for several calls to one function) before earlier calls.
    for (&at, d) in decoded.range(..call).rev().take(256) {
        let (src, dst, _) = resolve(d);
        // The constant: a literal (a relocation) or an inline integer.
        let constant = |c: Src| match c {
            Src::Literal(v) => Some(v),
            Src::Int(v) => Some(i32::from(v) as u32),
            _ => None,
        };
        let literal = match src {
            [Src::Sgpr(a), c, _] | [c, Src::Sgpr(a), _] => constant(c).map(|v| (a, v)),
            _ => None,
        };
        match (d.name, dst, literal) {
            // gfx12 spells them s_add_co_u32 / s_add_co_ci_u32.
            ("s_addc_u32" | "s_add_co_ci_u32", Dst::Sgpr(r), Some((a, v)))
                if r == n + 1 && a == r && hi.is_none() =>
            {
                hi = Some(v);
            }
            ("s_add_u32" | "s_add_co_u32", Dst::Sgpr(r), Some((a, v)))
                if r == n && a == r && lo.is_none() =>
            {
                lo = Some(v);
            }
            ("s_getpc_b64", Dst::Sgpr(r), _) if r == n => {
                let add = (u64::from(hi?) << 32) | u64::from(lo?);
                let next = i64::from(at) + d.len as i64;
                return Some(next.wrapping_add(add as i64));
            }
            // gfx12 sign-extends the PC's bits 47:32 after s_getpc_b64; a
            // code address keeps its value (user addresses are below 2^47).
            ("s_sext_i32_i16", Dst::Sgpr(r), _)
                if r == n + 1 && matches!(src[0], Src::Sgpr(x) if x == r) => {}
            // Anything else writing the pair breaks the pattern.
            (_, Dst::Sgpr(r), _) if r == n || r == n + 1 => return None,
            _ => {}
        }
    }
    None
}
