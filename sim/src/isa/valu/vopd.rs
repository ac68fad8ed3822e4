//! VOPD dual issue (gfx11+): two 32-bit operations in one instruction. Both
//! halves read all their sources before either writes, so a half may read
//! the register the other half writes and still see its old value.

use super::super::fault::IsaFault;
use super::super::operand::{Dst, Src};
use super::super::program::Inst;
use super::super::wave::{Lanes, Wave, MAX_LANES};
use super::float::{self, Denorm};
use super::fp::f32_lane;
use super::ops::{FOp, IOp, Op};
use super::round::{self, Round};
use super::{src, VopdPair};

/// The operations a VOPD half can be here.
pub fn supported(op: Op) -> bool {
    matches!(
        op,
        Op::F(
            FOp::Fmac
                | FOp::Fmaak
                | FOp::Fmamk
                | FOp::Mul
                | FOp::Add
                | FOp::Sub
                | FOp::Subrev
                | FOp::Max
                | FOp::Min
        ) | Op::I(IOp::Mov | IOp::Cndmask | IOp::Add | IOp::Lshlrev | IOp::And)
    )
}

/// One half's result over every lane.
fn half(
    wave: &Wave,
    op: Op,
    src0: Src,
    vsrc1: u16,
    vdst: u16,
    literal: u32,
    out: &mut Lanes,
) -> Result<(), IsaFault> {
    let lanes = wave.lanes;
    let mut a = [0u32; MAX_LANES];
    wave.read_lanes(src0, &mut a)?;
    let uses_b = !matches!(op, Op::I(IOp::Mov));
    let b: &Lanes = if uses_b { wave.v(vsrc1)? } else { &a };
    match op {
        Op::F(f) => {
            let acc = if f == FOp::Fmac {
                *wave.v(vdst)?
            } else {
                [0; MAX_LANES]
            };
            // MODE applies as for the single-issue forms: denormal flush
            // of inputs and outputs, then the f32 rounding mode (every
            // VOPD float op has an exact model, see `round`).
            let dn = Denorm::f32_of(wave.mode);
            let rnd = Round::f32_of(wave.mode);
            let inp = |x: u32| {
                let x = f32::from_bits(x);
                if dn.keep_in {
                    x
                } else {
                    float::flush32(x)
                }
            };
            let k = inp(literal);
            for l in 0..lanes {
                let (x, y, acc) = (inp(a[l]), inp(b[l]), inp(acc[l]));
                let mut r = f32_lane(f, x, y, k, acc, false);
                let third = if f == FOp::Fmac { acc } else { k };
                r = round::f32_directed(f, x, y, third, rnd, r);
                if !dn.keep_out {
                    r = float::flush32(r);
                }
                out[l] = r.to_bits();
            }
        }
        Op::I(IOp::Mov) => *out = a,
        Op::I(IOp::Cndmask) => {
            let vcc = wave.vcc();
            for l in 0..lanes {
                out[l] = if vcc >> l & 1 != 0 { b[l] } else { a[l] };
            }
        }
        Op::I(IOp::Add) => {
            for l in 0..lanes {
                out[l] = a[l].wrapping_add(b[l]);
            }
        }
        Op::I(IOp::Lshlrev) => {
            for l in 0..lanes {
                out[l] = b[l] << (a[l] & 31);
            }
        }
        Op::I(IOp::And) => {
            for l in 0..lanes {
                out[l] = a[l] & b[l];
            }
        }
        _ => {
            return Err(IsaFault::Operand {
                mnemonic: String::new(),
                why: format!("{op:?} is not a VOPD operation"),
            })
        }
    }
    Ok(())
}

pub fn execute(wave: &mut Wave, inst: &Inst, pair: &VopdPair) -> Result<(), IsaFault> {
    let Dst::Vgpr(vdst_x) = inst.dst else {
        return Err(IsaFault::Operand {
            mnemonic: String::new(),
            why: format!("VOPD X destination {:?} is not a VGPR", inst.dst),
        });
    };
    let literal = inst.decoded.literal.unwrap_or(0);
    let mut x = [0u32; MAX_LANES];
    let mut y = [0u32; MAX_LANES];
    half(
        wave,
        pair.x,
        inst.src[0],
        pair.vsrc1_x,
        vdst_x,
        literal,
        &mut x,
    )?;
    half(
        wave,
        pair.y,
        inst.src[1],
        pair.vsrc1_y,
        pair.vdst_y,
        literal,
        &mut y,
    )?;
    src::store(wave, Dst::Vgpr(vdst_x), &x, u64::MAX)?;
    src::store(wave, Dst::Vgpr(pair.vdst_y), &y, u64::MAX)
}
