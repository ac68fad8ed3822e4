//! 16-bit integer operations (`Op::I16`): sources are 16-bit halves (op_sel
//! or, on gfx11+, VGPR bit 7 picks the high one), the result is written to
//! one half and the other half kept, as gfx10+ writes 16-bit results.
//! Clamp saturates where the ISA says the operation supports it (the adds,
//! subtracts and mads, in their own signedness); elsewhere it is refused
//! at program build.

use super::super::fault::IsaFault;
use super::super::program::Inst;
use super::super::wave::{Wave, MAX_LANES};
use super::ops::I16Op;
use super::{src, Prep};

impl I16Op {
    pub fn sources(self) -> usize {
        use I16Op::*;
        match self {
            Mov | Not => 1,
            Min3U | Max3U | Med3U | Min3I | Max3I | Med3I | MadU | MadI => 3,
            // Cndmask's third source is the lane mask, read whole.
            Cndmask | AddU | SubU | AddI | SubI | Lshlrev | Lshrrev | Ashrrev | MulLo | MinU
            | MaxU | MinI | MaxI | And | Or | Xor => 2,
        }
    }

    /// Whether clamp (saturation) has a documented meaning.
    pub fn saturates(self) -> bool {
        matches!(
            self,
            I16Op::AddU | I16Op::SubU | I16Op::AddI | I16Op::SubI | I16Op::MadU | I16Op::MadI
        )
    }
}

fn med3<T: Ord + Copy>(a: T, b: T, c: T) -> T {
    a.max(b).min(a.min(b).max(c))
}

/// One lane: `a`, `b`, `c` are the 16-bit sources (zero-extended).
pub fn lane(op: I16Op, a: u32, b: u32, c: u32, clamp: bool) -> u32 {
    use I16Op::*;
    let (ua, ub, uc) = (a as u16, b as u16, c as u16);
    let (ia, ib, ic) = (ua as i16, ub as i16, uc as i16);
    // The exact result in i64, saturated to the type when clamping.
    let sat_u = |v: i64| {
        if clamp {
            v.clamp(0, 0xFFFF) as u32
        } else {
            v as u32 & 0xFFFF
        }
    };
    let sat_i = |v: i64| {
        let v = if clamp { v.clamp(-0x8000, 0x7FFF) } else { v };
        v as u32 & 0xFFFF
    };
    let (la, lb, lc) = (i64::from(ua), i64::from(ub), i64::from(uc));
    let (sa, sb, sc) = (i64::from(ia), i64::from(ib), i64::from(ic));
    match op {
        Mov => a & 0xFFFF,
        // The mask is applied by `execute`; here S0 (the mask-clear pick).
        Cndmask => a & 0xFFFF,
        Not => !a & 0xFFFF,
        AddU => sat_u(la + lb),
        SubU => sat_u(la - lb),
        AddI => sat_i(sa + sb),
        SubI => sat_i(sa - sb),
        MadU => sat_u(la * lb + lc),
        MadI => sat_i(sa * sb + sc),
        // The shift count is the low 4 bits of the first source.
        Lshlrev => u32::from(ub << (ua & 15)),
        Lshrrev => u32::from(ub >> (ua & 15)),
        Ashrrev => u32::from((ib >> (ua & 15)) as u16),
        MulLo => u32::from(ua.wrapping_mul(ub)),
        MinU => u32::from(ua.min(ub)),
        MaxU => u32::from(ua.max(ub)),
        MinI => u32::from(ia.min(ib) as u16),
        MaxI => u32::from(ia.max(ib) as u16),
        Min3U => u32::from(ua.min(ub).min(uc)),
        Max3U => u32::from(ua.max(ub).max(uc)),
        Med3U => u32::from(med3(ua, ub, uc)),
        Min3I => u32::from(ia.min(ib).min(ic) as u16),
        Max3I => u32::from(ia.max(ib).max(ic) as u16),
        Med3I => u32::from(med3(ia, ib, ic) as u16),
        And => a & b,
        Or => a | b,
        Xor => a ^ b,
    }
}

pub(super) fn execute(wave: &mut Wave, inst: &Inst, p: &Prep, op: I16Op) -> Result<(), IsaFault> {
    let mut s = [[0u32; MAX_LANES]; 3];
    let mut wmask = u64::MAX;
    for i in 0..op.sources() {
        src::read(wave, p, inst.src[i], i, true, &mut s[i], &mut wmask)?;
    }
    let mut d = [0u32; MAX_LANES];
    let pick = match op {
        I16Op::Cndmask => wave.read_mask(inst.src[2])?,
        _ => 0,
    };
    for l in 0..wave.lanes {
        d[l] = if pick >> l & 1 != 0 {
            s[1][l] & 0xFFFF
        } else {
            lane(op, s[0][l], s[1][l], s[2][l], p.mods.clamp)
        };
    }
    let (dst, hi) = src::dst16(wave.isa.family, p, inst.dst);
    src::store16(wave, dst, hi, &d, wmask)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_saturates_and_shifts() {
        use I16Op::*;
        assert_eq!(lane(AddU, 0xFFFF, 2, 0, false), 1);
        assert_eq!(lane(AddU, 0xFFFF, 2, 0, true), 0xFFFF);
        assert_eq!(lane(SubU, 1, 2, 0, false), 0xFFFF);
        assert_eq!(lane(SubU, 1, 2, 0, true), 0);
        assert_eq!(lane(AddI, 0x7FFF, 1, 0, false), 0x8000);
        assert_eq!(lane(AddI, 0x7FFF, 1, 0, true), 0x7FFF);
        assert_eq!(lane(SubI, 0x8000, 1, 0, true), 0x8000);
        assert_eq!(lane(MadU, 0x100, 0x100, 5, false), 5);
        assert_eq!(lane(MadU, 0x100, 0x100, 5, true), 0xFFFF);
        assert_eq!(lane(MadI, 0xFFFF, 3, 0, false), 0xFFFD);
        assert_eq!(lane(Lshlrev, 17, 0x0003, 0, false), 6, "count is S0[3:0]");
        assert_eq!(lane(Lshrrev, 4, 0x8000, 0, false), 0x0800);
        assert_eq!(lane(Ashrrev, 4, 0x8000, 0, false), 0xF800);
        assert_eq!(lane(MulLo, 0x1234, 0x100, 0, false), 0x3400);
        assert_eq!(lane(MinI, 0xFFFF, 1, 0, false), 0xFFFF);
        assert_eq!(lane(MinU, 0xFFFF, 1, 0, false), 1);
        assert_eq!(lane(Med3I, 0xFFFE, 5, 0xFFFF, false), 0xFFFF);
        assert_eq!(lane(Not, 0x00F0, 0, 0, false), 0xFF0F);
    }

    #[test]
    fn op_sel_picks_halves_and_the_other_half_is_kept() {
        use super::super::tests::{isa, run, set, wave};
        let i = isa("gfx1030", false);
        let mut w = wave(i);
        set(&mut w, 0, |_| 0xAAAA_BBBB);
        set(&mut w, 1, |_| 0x0005_FFF0);
        set(&mut w, 2, |_| 0x0007_0003);
        // v_add_nc_u16 v0, v1, v2 op_sel:[1,0,1]: v1.hi + v2.lo into v0.hi.
        run(i, &[0x00, 0x48, 0x03, 0xd7, 0x01, 0x05, 0x02, 0x00], &mut w);
        assert_eq!(w.vgpr[0][0], 0x0008_BBBB);
        // v_lshlrev_b16 v0, v1, v2: v2.lo << (v1.lo & 15), v0.hi kept.
        run(i, &[0x00, 0x00, 0x14, 0xd7, 0x01, 0x05, 0x02, 0x00], &mut w);
        assert_eq!(w.vgpr[0][0], 0x0008_0003);
        // v_add_nc_u16 v0, v1, v2 clamp: 0xFFF0 + 3 does not wrap.
        set(&mut w, 2, |_| 0x20);
        run(i, &[0x00, 0x80, 0x03, 0xd7, 0x01, 0x05, 0x02, 0x00], &mut w);
        assert_eq!(w.vgpr[0][0], 0x0008_FFFF);
    }

    /// The 32-bit adds' clamp saturates as the 16-bit ones' does (their
    /// test lives beside them).
    #[test]
    fn u32_add_sub_clamp_saturates() {
        use super::super::tests::{isa, run, set, wave};
        let i = isa("gfx1030", false);
        let mut w = wave(i);
        set(&mut w, 1, |l| [5, u32::MAX][l % 2]);
        set(&mut w, 2, |_| 7);
        // v_sub_nc_u32_e64 v0, v1, v2 clamp
        run(i, &[0x00, 0x80, 0x26, 0xd5, 0x01, 0x05, 0x02, 0x00], &mut w);
        assert_eq!([w.vgpr[0][0], w.vgpr[0][1]], [0, u32::MAX - 7]);
        // v_add_nc_u32_e64 v0, v1, v2 clamp
        run(i, &[0x00, 0x80, 0x25, 0xd5, 0x01, 0x05, 0x02, 0x00], &mut w);
        assert_eq!([w.vgpr[0][0], w.vgpr[0][1]], [12, u32::MAX]);
    }
}
