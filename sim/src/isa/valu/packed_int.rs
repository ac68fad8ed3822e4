//! Packed 16-bit integer operations (VOP3P `v_pk_*_{u16,i16,b16}`): each
//! half of the result is the 16-bit operation (`int16::lane`) on the
//! halves op_sel (low result) and op_sel_hi (high result) pick from each
//! source's 32 bits. An inline constant is read as its 32-bit value
//! (integers sign-extended, floats as their f32 pattern), so op_sel_hi on
//! a constant reads its high half. Clamp saturates the adds, subtracts and
//! mads in their own signedness; neg/neg_hi and clamp elsewhere are
//! refused at program build.

use super::super::fault::IsaFault;
use super::super::program::Inst;
use super::super::wave::{Wave, MAX_LANES};
use super::int16::lane;
use super::ops::{I16Op, Op};
use super::{src, Mods, Prep};

/// The operation of a packed 16-bit integer mnemonic.
pub fn lookup(name: &str) -> Option<Op> {
    use I16Op::*;
    Some(Op::PkI(match name {
        "v_pk_mad_i16" => MadI,
        "v_pk_mad_u16" => MadU,
        "v_pk_mul_lo_u16" => MulLo,
        "v_pk_add_i16" => AddI,
        "v_pk_add_u16" => AddU,
        "v_pk_sub_i16" => SubI,
        "v_pk_sub_u16" => SubU,
        "v_pk_lshlrev_b16" => Lshlrev,
        "v_pk_lshrrev_b16" => Lshrrev,
        "v_pk_ashrrev_i16" => Ashrrev,
        "v_pk_max_i16" => MaxI,
        "v_pk_min_i16" => MinI,
        "v_pk_max_u16" => MaxU,
        "v_pk_min_u16" => MinU,
        _ => return None,
    }))
}

/// Integer halves take no sign modifiers; clamp only where it saturates.
pub fn modifiers_fit(op: I16Op, m: &Mods) -> bool {
    (m.neg | m.neg_hi | m.abs) == 0 && m.omod == 0 && (!m.clamp || op.saturates())
}

/// The half `sel` picks of source `i`'s value `v`.
#[inline]
fn half(v: u32, sel: u8, i: usize) -> u32 {
    if sel >> i & 1 != 0 {
        v >> 16
    } else {
        v & 0xFFFF
    }
}

/// One lane: both halves of the result.
pub fn pair(op: I16Op, m: &Mods, s: [u32; 3]) -> u32 {
    let pick = |sel: u8| [0, 1, 2].map(|i| half(s[i], sel, i));
    let [a, b, c] = pick(m.opsel);
    let lo = lane(op, a, b, c, m.clamp);
    let [a, b, c] = pick(m.opsel_hi);
    let hi = lane(op, a, b, c, m.clamp);
    (lo & 0xFFFF) | (hi << 16)
}

pub(super) fn execute(wave: &mut Wave, inst: &Inst, p: &Prep, op: I16Op) -> Result<(), IsaFault> {
    let mut s = [[0u32; MAX_LANES]; 3];
    let mut wmask = u64::MAX;
    for (i, out) in s.iter_mut().enumerate().take(op.sources()) {
        src::read(wave, p, inst.src[i], i, false, out, &mut wmask)?;
    }
    let mut d = [0u32; MAX_LANES];
    for (l, out) in d.iter_mut().enumerate().take(wave.lanes) {
        *out = pair(op, &p.mods, [s[0][l], s[1][l], s[2][l]]);
    }
    src::store(wave, inst.dst, &d, wmask)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{isa, run, set, wave};
    use super::*;

    /// op_sel_hi set on every source (LLVM's default).
    fn plain() -> Mods {
        Mods {
            opsel_hi: 7,
            ..Mods::default()
        }
    }

    #[test]
    fn halves_wrap_saturate_and_shift() {
        use I16Op::*;
        let m = plain();
        let c = Mods {
            clamp: true,
            ..plain()
        };
        // Low half 0xFFFF + 2 wraps to 1; high half 3 + 4.
        assert_eq!(pair(AddU, &m, [0x0003_FFFF, 0x0004_0002, 0]), 0x0007_0001);
        assert_eq!(pair(AddU, &c, [0x0003_FFFF, 0x0004_0002, 0]), 0x0007_FFFF);
        // i16: 0x7FFF + 1 saturates to 0x7FFF, -0x8000 - 1 to -0x8000.
        assert_eq!(pair(AddI, &c, [0x8000_7FFF, 0xFFFF_0001, 0]), 0x8000_7FFF);
        assert_eq!(pair(SubI, &c, [0x8000_7FFF, 0x0001_FFFF, 0]), 0x8000_7FFF);
        assert_eq!(pair(SubI, &m, [0x8000_7FFF, 0x0001_FFFF, 0]), 0x7FFF_8000);
        // u16 subtract under clamp stops at 0.
        assert_eq!(pair(SubU, &c, [0x0001_0005, 0x0002_0003, 0]), 0x0000_0002);
        // mul_lo keeps the low 16 bits of each product.
        assert_eq!(pair(MulLo, &m, [0x0100_0003, 0x0100_8001, 0]), 0x0000_8003);
        // mad: 0x100 * 0x100 + 1 wraps to 1, saturates to 0xFFFF.
        assert_eq!(
            pair(MadU, &m, [0x0100_0002, 0x0100_0003, 0x0001_0001]),
            0x0001_0007
        );
        assert_eq!(
            pair(MadU, &c, [0x0100_0002, 0x0100_0003, 0x0001_0001]),
            0xFFFF_0007
        );
        assert_eq!(
            pair(MadI, &c, [0x0100_FF00, 0x0100_0100, 0x0000_0000]),
            0x7FFF_8000
        );
        // Shift counts are the low 4 bits of S0's half.
        assert_eq!(
            pair(Lshlrev, &m, [0x0011_0004, 0x0003_0001, 0]),
            0x0006_0010
        );
        assert_eq!(
            pair(Lshrrev, &m, [0x0001_000F, 0x8000_8000, 0]),
            0x4000_0001
        );
        assert_eq!(
            pair(Ashrrev, &m, [0x0001_000F, 0x8000_8000, 0]),
            0xC000_FFFF
        );
        assert_eq!(pair(MaxI, &m, [0x8000_0001, 0x0001_FFFF, 0]), 0x0001_0001);
        assert_eq!(pair(MinU, &m, [0x8000_0001, 0x0001_FFFF, 0]), 0x0001_0001);
    }

    #[test]
    fn op_sel_picks_each_sources_halves() {
        // op_sel:[1,0] op_sel_hi:[0,1]: low = S0.hi + S1.lo, high = S0.lo + S1.hi.
        let m = Mods {
            opsel: 0b01,
            opsel_hi: 0b10,
            ..Mods::default()
        };
        assert_eq!(
            pair(I16Op::AddU, &m, [0x0010_0001, 0x0300_0200, 0]),
            0x0301_0210
        );
    }

    #[test]
    fn runs_the_llvm_encodings() {
        for target in ["gfx1030", "gfx1100", "gfx1201"] {
            let i = isa(target, false);
            let mut w = wave(i);
            set(&mut w, 1, |l| 0x0002_0000 | l as u32);
            set(&mut w, 2, |_| 0x0003_0010);
            // v_pk_mul_lo_u16 v0, v1, v2
            run(i, &[0x00, 0x40, 0x01, 0xcc, 0x01, 0x05, 0x02, 0x18], &mut w);
            assert_eq!(w.vgpr[0][5], 0x0006_0050, "{target}");
            // v_pk_add_u16 v0, v1, -1 (inline constant: 0xFFFFFFFF) clamp
            run(i, &[0x00, 0xc0, 0x0a, 0xcc, 0x01, 0x83, 0x01, 0x18], &mut w);
            assert_eq!(w.vgpr[0][5], 0xFFFF_FFFF, "{target}");
            // v_pk_sub_i16 v0, v1, 1: the constant's high half is 0.
            run(i, &[0x00, 0x40, 0x03, 0xcc, 0x01, 0x03, 0x01, 0x18], &mut w);
            assert_eq!(w.vgpr[0][5], 0x0002_0004, "{target}");
            // op_sel_hi:[1,0]: the high result reads the constant's low half.
            run(i, &[0x00, 0x40, 0x03, 0xcc, 0x01, 0x03, 0x01, 0x08], &mut w);
            assert_eq!(w.vgpr[0][5], 0x0001_0004, "{target}");
            // v_pk_mad_u16 v0, v1, v2, v3
            set(&mut w, 3, |_| 0x0001_0002);
            run(i, &[0x00, 0x40, 0x09, 0xcc, 0x01, 0x05, 0x0e, 0x1c], &mut w);
            assert_eq!(w.vgpr[0][5], 0x0007_0052, "{target}");
        }
    }
}
