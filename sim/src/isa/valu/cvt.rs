//! Conversions between f32, f16 and integers, and packing.

use super::super::fault::IsaFault;
use super::super::program::Inst;
use super::super::wave::{Wave, MAX_LANES};
use super::float::{self, Denorm};
use super::fp::{f, omod_clamp};
use super::half::{f16_clamp, h, read16};
use super::ops::{CvtOp, Op};
use super::{exec, src, Prep};

/// f32 to f16 rounding toward zero.
pub(crate) fn f16_rtz(x: f32) -> u32 {
    let hv = float::f32_to_f16(x);
    if x.is_nan() {
        return u32::from(hv);
    }
    let back = float::f16_to_f32(hv);
    if back.abs() > x.abs() {
        u32::from(hv - 1)
    } else {
        u32::from(hv)
    }
}

pub(super) fn convert(wave: &mut Wave, inst: &Inst, p: &Prep, op: CvtOp) -> Result<(), IsaFault> {
    let lanes = wave.lanes;
    let mut s = [[0u32; MAX_LANES]; 3];
    let mut wmask = u64::MAX;
    let mut d = [0u32; MAX_LANES];
    let two = matches!(op, CvtOp::PkRtzF16F32 | CvtOp::PackB32F16);
    let n = if two { 2 } else { 1 };
    if op.reads_f16() {
        read16(wave, inst, p, n, &mut s, &mut wmask)?;
    } else {
        exec::read32(wave, inst, p, n, &mut s, &mut wmask)?;
        if op.reads_f32() {
            for (i, v) in s.iter_mut().enumerate().take(n) {
                src::sign_mods(p, i, 0x8000_0000, v, lanes);
            }
        }
    }
    let dn = Denorm::f32_of(wave.mode);
    for l in 0..lanes {
        let a = s[0][l];
        let fa = if dn.keep_in {
            f(a)
        } else {
            float::flush32(f(a))
        };
        d[l] = match op {
            CvtOp::F32U32 => (a as f32).to_bits(),
            CvtOp::F32I32 => (a as i32 as f32).to_bits(),
            CvtOp::U32F32 => float::cvt_u32(fa),
            CvtOp::I32F32 => float::cvt_i32(fa),
            CvtOp::F16F32 => u32::from(float::f32_to_f16(fa)),
            CvtOp::F32F16 => float::f16_to_f32(a as u16).to_bits(),
            CvtOp::F32Ubyte(k) => (((a >> (8 * k)) & 0xFF) as f32).to_bits(),
            CvtOp::FloorI32F32 => float::cvt_i32(fa.floor()),
            CvtOp::NearestI32F32 => float::cvt_i32((fa + 0.5).floor()),
            CvtOp::PkRtzF16F32 => f16_rtz(fa) | (f16_rtz(f(s[1][l])) << 16),
            CvtOp::PackB32F16 => (a & 0xFFFF) | ((s[1][l] & 0xFFFF) << 16),
            CvtOp::F16U16 => u32::from(float::f64_to_f16(f64::from(a as u16))),
            CvtOp::F16I16 => u32::from(float::f64_to_f16(f64::from(a as u16 as i16))),
            CvtOp::U16F16 => {
                let x = h(a);
                if x.is_nan() {
                    0
                } else {
                    x.clamp(0.0, 65535.0) as u32
                }
            }
            CvtOp::I16F16 => {
                let x = h(a);
                if x.is_nan() {
                    0
                } else {
                    (x.clamp(-32768.0, 32767.0) as i32 as u32) & 0xFFFF
                }
            }
        };
        if op.writes_f32() && (p.mods.omod != 0 || p.mods.clamp) {
            d[l] = omod_clamp(p, f(d[l])).to_bits();
        }
    }
    if Op::Cvt(op).writes_16bit() {
        let (dst, hi) = src::dst16(wave.isa.family, p, inst.dst);
        if p.mods.clamp {
            for v in d.iter_mut().take(lanes) {
                *v = f16_clamp(p, *v);
            }
        }
        return src::store16(wave, dst, hi, &d, wmask);
    }
    src::store(wave, inst.dst, &d, wmask)
}

impl CvtOp {
    fn reads_f16(self) -> bool {
        matches!(
            self,
            CvtOp::F32F16
                | CvtOp::PackB32F16
                | CvtOp::U16F16
                | CvtOp::I16F16
                | CvtOp::F16U16
                | CvtOp::F16I16
        )
    }

    fn reads_f32(self) -> bool {
        matches!(
            self,
            CvtOp::U32F32
                | CvtOp::I32F32
                | CvtOp::F16F32
                | CvtOp::FloorI32F32
                | CvtOp::NearestI32F32
                | CvtOp::PkRtzF16F32
        )
    }

    fn writes_f32(self) -> bool {
        matches!(
            self,
            CvtOp::F32U32 | CvtOp::F32I32 | CvtOp::F32F16 | CvtOp::F32Ubyte(_)
        )
    }
}
