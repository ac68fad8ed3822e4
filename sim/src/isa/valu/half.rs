//! f16 scalar and packed (VOP3P) operations: every result computed
//! exactly in f64 (fma with its error term) and rounded once to f16.

use super::super::fault::IsaFault;
use super::super::program::Inst;
use super::super::wave::{Lanes, Wave, MAX_LANES};
use super::float::{self, Denorm};
use super::fp::f32_sources;
use super::ops::FOp;
use super::{src, Prep};

/// Read 16-bit sources `0..n` (halves selected, abs/neg applied).
pub(super) fn read16(
    wave: &Wave,
    inst: &Inst,
    p: &Prep,
    n: usize,
    s: &mut [Lanes; 3],
    mask: &mut u64,
) -> Result<(), IsaFault> {
    for (i, out) in s.iter_mut().enumerate().take(n) {
        src::read(wave, p, inst.src[i], i, true, out, mask)?;
        src::sign_mods(p, i, 0x8000, out, wave.lanes);
    }
    Ok(())
}

#[inline]
pub(super) fn h(v: u32) -> f64 {
    f64::from(float::f16_to_f32(v as u16))
}

/// One f16 operation on f16 bit patterns (in the low 16 bits).
pub fn f16_lane(op: FOp, a: u32, b: u32, c: u32, acc: u32) -> u32 {
    use FOp::*;
    let r = |x: f64| u32::from(float::f64_to_f16(x));
    match op {
        Add => r(h(a) + h(b)),
        Sub => r(h(a) - h(b)),
        Subrev => r(h(b) - h(a)),
        Mul => r(h(a) * h(b)),
        Fma => u32::from(float::fma_f16(a as u16, b as u16, c as u16)),
        Fmac => u32::from(float::fma_f16(a as u16, b as u16, acc as u16)),
        Fmamk => u32::from(float::fma_f16(a as u16, c as u16, b as u16)),
        Fmaak => u32::from(float::fma_f16(a as u16, b as u16, c as u16)),
        Min | Max | Min3 | Max3 | Minmax | Maxmin | Med3 => {
            let (x, y, z) = (h(a), h(b), h(c));
            let v = match op {
                Min => x.min(y),
                Max => x.max(y),
                Min3 => x.min(y).min(z),
                Max3 => x.max(y).max(z),
                Minmax => x.max(y).min(z),
                Maxmin => x.min(y).max(z),
                _ => x.max(y).min(x.min(y).max(z)),
            };
            // Keep the operand's own bits (signed zeros, NaN payloads).
            if v.to_bits() == x.to_bits() {
                a
            } else if v.to_bits() == y.to_bits() {
                b
            } else if v.to_bits() == z.to_bits() {
                c
            } else {
                r(v)
            }
        }
        Ldexp => {
            let n = (b as u16 as i16 as i32).clamp(-64, 64);
            r(h(a) * 2f64.powi(n))
        }
        Rcp | RcpIflag => r(1.0 / h(a)),
        Rsq => r(1.0 / h(a).sqrt()),
        Sqrt => r(h(a).sqrt()),
        Exp => r(h(a).exp2()),
        Log => r(h(a).log2()),
        Sin => r((h(a) * std::f64::consts::TAU).sin()),
        Cos => r((h(a) * std::f64::consts::TAU).cos()),
        Floor => r(h(a).floor()),
        Ceil => r(h(a).ceil()),
        Trunc => r(h(a).trunc()),
        Rndne => r(h(a).round_ties_even()),
        Fract => {
            let x = h(a);
            if x.is_infinite() {
                r(f64::NAN)
            } else {
                // Below 1.0 by at least one f16 ulp.
                let fr = x - x.floor();
                let v = float::f64_to_f16(fr);
                if v == 0x3C00 {
                    0x3BFF
                } else {
                    u32::from(v)
                }
            }
        }
        FrexpMant | FrexpExp | DivScale | DivFmas | DivFixup => r(f64::NAN),
    }
}

pub(super) fn f16_clamp(p: &Prep, v: u32) -> u32 {
    if !p.mods.clamp {
        return v;
    }
    let x = h(v);
    if x.is_nan() || x <= 0.0 {
        if x == 0.0 {
            v
        } else {
            0
        }
    } else if x >= 1.0 {
        0x3C00
    } else {
        v
    }
}

pub(super) fn f16_op(wave: &mut Wave, inst: &Inst, p: &Prep, op: FOp) -> Result<(), IsaFault> {
    let n = f32_sources(op);
    let lanes = wave.lanes;
    let mut s = [[0u32; MAX_LANES]; 3];
    let mut wmask = u64::MAX;
    read16(wave, inst, p, n, &mut s, &mut wmask)?;
    let dn = Denorm::f16_of(wave.mode);
    if !dn.keeps_all() {
        return Err(IsaFault::Unimplemented {
            mnemonic: format!(
                "{} with f16 denormals flushed (MODE.FP_DENORM f64/f16 = {})",
                inst.decoded.mnemonic(),
                (wave.mode >> 6) & 3
            ),
            family: wave.isa.family,
        });
    }
    let (dst, hi) = src::dst16(wave.isa.family, p, inst.dst);
    let mut acc = [0u32; MAX_LANES];
    if op == FOp::Fmac {
        if let super::super::operand::Dst::Vgpr(r) = dst {
            acc = *wave.v(r)?;
            if hi {
                for v in acc.iter_mut() {
                    *v >>= 16;
                }
            }
        }
    }
    let mut d = [0u32; MAX_LANES];
    for l in 0..lanes {
        d[l] = f16_clamp(p, f16_lane(op, s[0][l], s[1][l], s[2][l], acc[l] & 0xFFFF));
    }
    src::store16(wave, dst, hi, &d, wmask)
}

pub(super) fn packed(wave: &mut Wave, inst: &Inst, p: &Prep, op: FOp) -> Result<(), IsaFault> {
    let n = match op {
        FOp::Fma => 3,
        _ => 2,
    };
    let lanes = wave.lanes;
    let mut s = [[0u32; MAX_LANES]; 3];
    let mut wmask = u64::MAX;
    for (i, out) in s.iter_mut().enumerate().take(n) {
        let sr = inst.src[i];
        match sr {
            // An inline float constant is the f16 value in both halves.
            super::super::operand::Src::Float(b) => {
                let c = u32::from(super::super::operand::inline_f16(b));
                *out = [c | (c << 16); MAX_LANES];
            }
            _ => src::read(wave, p, sr, i, false, out, &mut wmask)?,
        }
    }
    let m = &p.mods;
    let mut d = [0u32; MAX_LANES];
    for l in 0..lanes {
        let mut lo = [0u32; 3];
        let mut hi = [0u32; 3];
        for i in 0..n {
            let v = s[i][l];
            let pick = |sel: u8| {
                if sel >> i & 1 != 0 {
                    v >> 16
                } else {
                    v & 0xFFFF
                }
            };
            lo[i] = pick(m.opsel) ^ if m.neg >> i & 1 != 0 { 0x8000 } else { 0 };
            hi[i] = pick(m.opsel_hi) ^ if m.neg_hi >> i & 1 != 0 { 0x8000 } else { 0 };
        }
        let rl = f16_clamp(p, f16_lane(op, lo[0], lo[1], lo[2], 0));
        let rh = f16_clamp(p, f16_lane(op, hi[0], hi[1], hi[2], 0));
        d[l] = (rl & 0xFFFF) | (rh << 16);
    }
    src::store(wave, inst.dst, &d, wmask)
}

#[cfg(test)]
mod tests {
    use super::super::float::f32_to_f16;
    use super::super::tests::{isa, run, set, wave};

    #[test]
    fn min3_med3_max3_of_halves() {
        let i = isa("gfx1030", false);
        let mut w = wave(i);
        let h = |x: f32| u32::from(f32_to_f16(x));
        set(&mut w, 0, |_| 0xABCD_0000);
        set(&mut w, 1, |_| h(2.0));
        set(&mut w, 2, |l| if l == 0 { 0x7E00 } else { h(-1.0) });
        set(&mut w, 3, |_| h(0.5));
        // v_min3_f16 v0, v1, v2, v3: a NaN operand is passed over.
        run(i, &[0x00, 0x00, 0x51, 0xd7, 0x01, 0x05, 0x0e, 0x04], &mut w);
        assert_eq!(w.vgpr[0][0], 0xABCD_0000 | h(0.5));
        assert_eq!(w.vgpr[0][1], 0xABCD_0000 | h(-1.0));
        // v_med3_f16 v0, v1, v2, v3
        run(i, &[0x00, 0x00, 0x57, 0xd7, 0x01, 0x05, 0x0e, 0x04], &mut w);
        assert_eq!(w.vgpr[0][1] & 0xFFFF, h(0.5));
        // v_max3_f16 v0, v1, v2, v3 op_sel:[0,0,0,1]: into the high half.
        run(i, &[0x00, 0x40, 0x54, 0xd7, 0x01, 0x05, 0x0e, 0x04], &mut w);
        assert_eq!(w.vgpr[0][1], h(2.0) << 16 | h(0.5));
    }
}
