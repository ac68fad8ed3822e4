//! v_fma_mix_f32, v_fma_mixlo_f16 and v_fma_mixhi_f16 (VOP3P): an fma
//! whose sources are each an f32 or an f16 half (op_sel_hi bit i set: an
//! f16, op_sel bit i picking its high half), with neg (neg_lo) and abs
//! (neg_hi) per source. The result is rounded once: to f32 (host fmaf), or
//! to f16 into the low or high half of the destination, the other half
//! kept (the product of two f32 is exact in f64; the sum's error is carried
//! into the f16 rounding). Clamp clamps to [0, 1], NaN to 0. f16
//! denormal flushing and directed rounding are refused by name.

use super::super::fault::IsaFault;
use super::super::operand::{inline_f16, Src};
use super::super::program::Inst;
use super::super::wave::{Wave, MAX_LANES};
use super::float::{self, Denorm};
use super::fp::rounding_refused;
use super::half::f16_clamp;
use super::ops::MixOp;
use super::{src, Prep};

pub(super) fn execute(wave: &mut Wave, inst: &Inst, p: &Prep, op: MixOp) -> Result<(), IsaFault> {
    let m = wave.mode;
    if m & 0xF != 0 {
        return Err(rounding_refused(
            wave,
            inst,
            "mixed-precision fma is only modelled rounded to nearest even",
        ));
    }
    if !Denorm::f16_of(m).keeps_all() {
        return Err(IsaFault::Unimplemented {
            mnemonic: format!(
                "{} with f16 denormals flushed (MODE.FP_DENORM f64/f16 = {})",
                inst.decoded.mnemonic(),
                (m >> 6) & 3
            ),
            family: wave.isa.family,
        });
    }
    let d32 = Denorm::f32_of(m);
    let lanes = wave.lanes;
    let mods = p.mods;
    let mut v = [[0f32; MAX_LANES]; 3];
    let mut wmask = u64::MAX;
    for i in 0..3 {
        let half = mods.opsel_hi >> i & 1 != 0;
        let hi = mods.opsel >> i & 1 != 0;
        let mut raw = [0u32; MAX_LANES];
        match inst.src[i] {
            // An inline float constant read as an f16 is the f16 value.
            Src::Float(b) if half => raw = [u32::from(inline_f16(b)); MAX_LANES],
            s => src::read(wave, p, s, i, false, &mut raw, &mut wmask)?,
        }
        for l in 0..lanes {
            let mut x = if half {
                let h = if hi { raw[l] >> 16 } else { raw[l] & 0xFFFF };
                float::f16_to_f32(h as u16)
            } else if d32.keep_in {
                f32::from_bits(raw[l])
            } else {
                float::flush32(f32::from_bits(raw[l]))
            };
            if mods.neg_hi >> i & 1 != 0 {
                x = x.abs();
            }
            if mods.neg >> i & 1 != 0 {
                x = -x;
            }
            v[i][l] = x;
        }
    }
    let mut d = [0u32; MAX_LANES];
    for l in 0..lanes {
        let (a, b, c) = (v[0][l], v[1][l], v[2][l]);
        d[l] = match op {
            MixOp::F32 => {
                let mut r = a.mul_add(b, c);
                if mods.clamp {
                    r = if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) };
                }
                if !d32.keep_out {
                    r = float::flush32(r);
                }
                r.to_bits()
            }
            MixOp::Lo | MixOp::Hi => {
                let h = float::fma_exact_to_f16(f64::from(a), f64::from(b), f64::from(c));
                f16_clamp(p, u32::from(h))
            }
        };
    }
    match op {
        MixOp::F32 => src::store(wave, inst.dst, &d, wmask),
        MixOp::Lo => src::store16(wave, inst.dst, false, &d, wmask),
        MixOp::Hi => src::store16(wave, inst.dst, true, &d, wmask),
    }
}

#[cfg(test)]
mod tests {
    use super::super::float::f32_to_f16;
    use super::super::tests::{isa, run, set, wave};

    #[test]
    fn sources_by_op_sel_and_one_rounding() {
        for t in ["gfx1030", "gfx1100", "gfx1201"] {
            let i = isa(t, false);
            let mut w = wave(i);
            let e = f32::EPSILON;
            let h = |x: f32| u32::from(f32_to_f16(x));
            // All f32: (1 + e)(1 - e) - 1 = -e^2 exactly.
            set(&mut w, 1, |_| (1.0 + e).to_bits());
            set(&mut w, 2, |_| (1.0 - e).to_bits());
            set(&mut w, 3, |_| (-1.0f32).to_bits());
            run(i, &[0x00, 0x00, 0x20, 0xcc, 0x01, 0x05, 0x0e, 0x04], &mut w);
            assert_eq!(f32::from_bits(w.vgpr[0][0]), -(e * e), "{t}");
            // op_sel:[1,0,0] op_sel_hi:[1,1,0]: v1.hi * v2.lo (f16) + v3 (f32).
            set(&mut w, 1, |_| h(2.0) << 16 | h(7.0));
            set(&mut w, 2, |_| h(9.0) << 16 | h(3.0));
            set(&mut w, 3, |_| 0.5f32.to_bits());
            run(i, &[0x00, 0x08, 0x20, 0xcc, 0x01, 0x05, 0x0e, 0x1c], &mut w);
            assert_eq!(f32::from_bits(w.vgpr[0][0]), 6.5, "{t}");
            // mixlo, all f16 low halves: 3.0 * 3.0 + 0.25 into v0.lo.
            set(&mut w, 0, |_| 0xABCD_0000);
            set(&mut w, 1, |_| h(3.0));
            set(&mut w, 3, |_| h(0.25));
            run(i, &[0x00, 0x40, 0x21, 0xcc, 0x01, 0x05, 0x0e, 0x1c], &mut w);
            assert_eq!(w.vgpr[0][0], 0xABCD_0000 | h(9.25), "{t}");
            // mixhi, f32 sources: -v1 * |v2| + v3 into v0.hi.
            set(&mut w, 1, |_| 1.5f32.to_bits());
            set(&mut w, 2, |_| (-2.0f32).to_bits());
            set(&mut w, 3, |_| 0.25f32.to_bits());
            run(i, &[0x00, 0x02, 0x22, 0xcc, 0x01, 0x05, 0x0e, 0x24], &mut w);
            assert_eq!(w.vgpr[0][0], h(-2.75) << 16 | h(9.25), "{t}");
            // mixlo clamp: 1 + 2^-11 + 2^-30 rounds once (up) to f16, then
            // clamps to 1.0; without the single rounding it would be a tie.
            set(&mut w, 1, |_| (1.0 + 2f32.powi(-11)).to_bits());
            set(&mut w, 2, |_| 1.0f32.to_bits());
            set(&mut w, 3, |_| 2f32.powi(-30).to_bits());
            run(i, &[0x00, 0x80, 0x21, 0xcc, 0x01, 0x05, 0x0e, 0x04], &mut w);
            assert_eq!(w.vgpr[0][0] & 0xFFFF, 0x3C00, "{t}");
            set(&mut w, 3, |_| (-2f32.powi(-30)).to_bits());
            run(i, &[0x00, 0x80, 0x21, 0xcc, 0x01, 0x05, 0x0e, 0x04], &mut w);
            assert_eq!(w.vgpr[0][0] & 0xFFFF, 0x3C00, "{t}: rounds down to 1.0");
            // 1.0 as an f16 source: 2.5 * 1.0 + 0.5.
            set(&mut w, 1, |_| 2.5f32.to_bits());
            set(&mut w, 3, |_| 0.5f32.to_bits());
            run(i, &[0x00, 0x00, 0x20, 0xcc, 0x01, 0xe5, 0x0d, 0x14], &mut w);
            assert_eq!(f32::from_bits(w.vgpr[0][0]), 3.0, "{t}");
        }
    }

    #[test]
    fn mixlo_rounds_the_exact_sum_once() {
        use super::super::float::fma_exact_to_f16;
        let x = 1.0 + 2f64.powi(-11);
        assert_eq!(fma_exact_to_f16(x, 1.0, 2f64.powi(-30)), 0x3C01);
        assert_eq!(fma_exact_to_f16(x, 1.0, -(2f64.powi(-30))), 0x3C00);
        assert_eq!(fma_exact_to_f16(x, 1.0, 0.0), 0x3C00, "a tie goes to even");
    }
}
