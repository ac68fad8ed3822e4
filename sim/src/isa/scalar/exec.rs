//! Executing a prepared scalar ALU operation (32-bit results here,
//! 64-bit ones in `execute64`).

use super::*;
use crate::isa::fault::Flow;
use crate::isa::operand::{Dst, Src};
use crate::isa::valu::ops::FOp;
use crate::isa::valu::round::{self, Round};
use crate::isa::wave::Wave;

/// Execute one scalar ALU instruction.
pub(crate) fn execute(wave: &mut Wave, inst: &Inst, op: SOp) -> Result<Flow, IsaFault> {
    use SOp::*;
    let [s0, s1, _] = inst.src;
    let d = inst.dst;
    let a = || wave.scalar(s0);
    let b = || wave.scalar(s1);
    let mut scc = wave.scc;
    // 32-bit results; 64-bit ones return early.
    let r: u32 = match op {
        AddU32 => {
            let (v, c) = a()?.overflowing_add(b()?);
            scc = c;
            v
        }
        SubU32 => {
            let (v, c) = a()?.overflowing_sub(b()?);
            scc = c;
            v
        }
        AddI32 => {
            let (v, o) = (a()? as i32).overflowing_add(b()? as i32);
            scc = o;
            v as u32
        }
        SubI32 => {
            let (v, o) = (a()? as i32).overflowing_sub(b()? as i32);
            scc = o;
            v as u32
        }
        AddcU32 => {
            let s = u64::from(a()?) + u64::from(b()?) + u64::from(wave.scc);
            scc = s >> 32 != 0;
            s as u32
        }
        SubbU32 => {
            let (x, y) = (u64::from(a()?), u64::from(b()?) + u64::from(wave.scc));
            scc = y > x;
            x.wrapping_sub(y) as u32
        }
        AbsdiffI32 => {
            let v = (a()? as i32).wrapping_sub(b()? as i32).wrapping_abs() as u32;
            scc = v != 0;
            v
        }
        Lshl32 => set(&mut scc, a()? << (b()? & 31)),
        Lshr32 => set(&mut scc, a()? >> (b()? & 31)),
        Ashr32 => set(&mut scc, ((a()? as i32) >> (b()? & 31)) as u32),
        LshlAdd(n) => {
            let s = (u64::from(a()?) << n) + u64::from(b()?);
            scc = s >> 32 != 0;
            s as u32
        }
        MinI32 => {
            let (x, y) = (a()? as i32, b()? as i32);
            scc = x < y;
            x.min(y) as u32
        }
        MinU32 => {
            let (x, y) = (a()?, b()?);
            scc = x < y;
            x.min(y)
        }
        MaxI32 => {
            let (x, y) = (a()? as i32, b()? as i32);
            scc = x > y;
            x.max(y) as u32
        }
        MaxU32 => {
            let (x, y) = (a()?, b()?);
            scc = x > y;
            x.max(y)
        }
        Logic32(l) => set(&mut scc, l.apply(u64::from(a()?), u64::from(b()?)) as u32),
        BfeU32 | BfeI32 => {
            let (x, c) = (a()?, b()?);
            let (off, width) = (c & 31, (c >> 16) & 0x7F);
            let v = if width == 0 {
                0
            } else if op == BfeU32 {
                ((u64::from(x) >> off) & ((1u64 << width.min(32)) - 1)) as u32
            } else {
                let w = width.min(32);
                let f = (u64::from(x) >> off) & ((1u64 << w) - 1);
                (((f << (64 - w)) as i64) >> (64 - w)) as u32
            };
            set(&mut scc, v)
        }
        Bfm32 => (((1u64 << (a()? & 31)) - 1) as u32).wrapping_shl(b()? & 31),
        MulI32 => (a()? as i32).wrapping_mul(b()? as i32) as u32,
        MulHiU32 => ((u64::from(a()?) * u64::from(b()?)) >> 32) as u32,
        MulHiI32 => ((i64::from(a()? as i32) * i64::from(b()? as i32)) >> 32) as u32,
        Cselect32 => {
            if wave.scc {
                a()?
            } else {
                b()?
            }
        }
        PackLl => (a()? & 0xFFFF) | (b()? << 16),
        PackLh => (a()? & 0xFFFF) | (b()? & 0xFFFF_0000),
        PackHh => (a()? >> 16) | (b()? & 0xFFFF_0000),
        PackHl => (a()? >> 16) | (b()? << 16),
        AddF32 | SubF32 | MulF32 | FmacF32 | MinF32 | MaxF32 => {
            let m = wave.mode;
            let (x, y) = (f32_in(m, a()?), f32_in(m, b()?));
            // Nearest even on the host, then MODE's f32 rounding (min and
            // max are exact).
            let (v, f, acc) = match op {
                AddF32 => (x + y, FOp::Add, 0.0),
                SubF32 => (x - y, FOp::Sub, 0.0),
                MulF32 => (x * y, FOp::Mul, 0.0),
                FmacF32 => {
                    let acc = match d {
                        Dst::Sgpr(n) => f32_in(m, wave.sgpr[n as usize]),
                        _ => f32_in(m, wave.scalar(Src::Null)?),
                    };
                    (x.mul_add(y, acc), FOp::Fmac, acc)
                }
                MinF32 => (fmin(x, y), FOp::Min, 0.0),
                _ => (fmax(x, y), FOp::Max, 0.0),
            };
            f32_out(m, round::f32_directed(f, x, y, acc, Round::f32_of(m), v))
        }
        Mov32 => a()?,
        Cmov32 => {
            if !wave.scc {
                return Ok(Flow::Next);
            }
            a()?
        }
        Not32 => set(&mut scc, !a()?),
        Brev32 => a()?.reverse_bits(),
        Bcnt0_32 => set(&mut scc, a()?.count_zeros()),
        Bcnt1_32 => set(&mut scc, a()?.count_ones()),
        Bcnt0_64 => set(&mut scc, wave.scalar64(s0, false)?.count_zeros()),
        Bcnt1_64 => set(&mut scc, wave.scalar64(s0, false)?.count_ones()),
        Ff0_32 => first_bit(!a()? as u64 & 0xFFFF_FFFF),
        Ff1_32 => first_bit(u64::from(a()?)),
        Ff1_64 => first_bit(wave.scalar64(s0, false)?),
        Clz32 => {
            let x = a()?;
            if x == 0 {
                u32::MAX
            } else {
                x.leading_zeros()
            }
        }
        Clz64 => {
            let x = wave.scalar64(s0, false)?;
            if x == 0 {
                u32::MAX
            } else {
                x.leading_zeros()
            }
        }
        Cls32 => {
            let x = a()? as i32;
            if x == 0 || x == -1 {
                u32::MAX
            } else {
                (if x < 0 { !x } else { x }).leading_zeros()
            }
        }
        Sext8 => a()? as i8 as i32 as u32,
        Sext16 => a()? as i16 as i32 as u32,
        Bitset0_32 | Bitset1_32 => {
            let bit = a()? & 31;
            let cur = match d {
                Dst::Sgpr(n) => wave.sgpr[n as usize],
                _ => 0,
            };
            if op == Bitset0_32 {
                cur & !(1 << bit)
            } else {
                cur | (1 << bit)
            }
        }
        Abs32 => set(&mut scc, (a()? as i32).wrapping_abs() as u32),
        CvtF32I32 | CvtF32U32 | CvtI32F32 | CvtU32F32 => {
            let m = wave.mode;
            if m & 0xF != 0 {
                return Err(rounding_fault(inst, m));
            }
            match op {
                CvtF32I32 => f32_out(m, a()? as i32 as f32),
                CvtF32U32 => f32_out(m, a()? as f32),
                CvtI32F32 => cvt_i32(f32_in(m, a()?)),
                _ => cvt_u32(f32_in(m, a()?)),
            }
        }
        Cmp(c, signed) => {
            let (x, y) = (a()?, b()?);
            wave.scc = if signed {
                compare(c, x as i32, y as i32)
            } else {
                compare(c, x, y)
            };
            return Ok(Flow::Next);
        }
        CmpU64Eq | CmpU64Lg => {
            let eq = wave.scalar64(s0, false)? == wave.scalar64(s1, false)?;
            wave.scc = eq == (op == CmpU64Eq);
            return Ok(Flow::Next);
        }
        Bitcmp(one, wide) => {
            let bit = b()?;
            let v = if wide {
                wave.scalar64(s0, false)? >> (bit & 63) & 1
            } else {
                u64::from(a()? >> (bit & 31) & 1)
            };
            wave.scc = (v == 1) == one;
            return Ok(Flow::Next);
        }
        CmpF32(c) => {
            let m = wave.mode;
            wave.scc = fcompare(c, f32_in(m, a()?), f32_in(m, b()?));
            return Ok(Flow::Next);
        }
        Movk => simm(inst) as u32,
        Cmovk => {
            if !wave.scc {
                return Ok(Flow::Next);
            }
            simm(inst) as u32
        }
        Cmpk(c, signed) => {
            let x = sopk_reg(wave, inst)?;
            let k = simm(inst);
            wave.scc = if signed {
                compare(c, x as i32, k as i32)
            } else {
                compare(c, x, k as u32 & 0xFFFF)
            };
            return Ok(Flow::Next);
        }
        Addk => {
            let x = sopk_reg(wave, inst)? as i32;
            let (v, o) = x.overflowing_add(simm(inst) as i32);
            scc = o;
            v as u32
        }
        Mulk => (sopk_reg(wave, inst)? as i32).wrapping_mul(simm(inst) as i32) as u32,
        F(f) => return super::float::execute(wave, inst, f),
        H(h) => return super::half::execute(wave, inst, h),
        Lshl64 | Lshr64 | Ashr64 | Logic64(_) | BfeU64 | BfeI64 | Bfm64 | Cselect64 | AddNcU64
        | SubNcU64 | MulU64 | Mov64 | Cmov64 | Not64 | Saveexec(..) => {
            return execute64(wave, inst, op)
        }
    };
    wave.write_scalar(d, r)?;
    wave.scc = scc;
    Ok(Flow::Next)
}

fn execute64(wave: &mut Wave, inst: &Inst, op: SOp) -> Result<Flow, IsaFault> {
    use SOp::*;
    let [s0, s1, _] = inst.src;
    let d = inst.dst;
    let a = |w: &Wave| w.scalar64(s0, false);
    let mut scc = wave.scc;
    let r: u64 = match op {
        Lshl64 => set64(&mut scc, a(wave)? << (wave.scalar(s1)? & 63)),
        Lshr64 => set64(&mut scc, a(wave)? >> (wave.scalar(s1)? & 63)),
        Ashr64 => set64(
            &mut scc,
            ((wave.scalar64(s0, true)? as i64) >> (wave.scalar(s1)? & 63)) as u64,
        ),
        Logic64(l) => set64(&mut scc, l.apply(a(wave)?, wave.scalar64(s1, false)?)),
        BfeU64 | BfeI64 => {
            let (x, c) = (a(wave)?, wave.scalar(s1)?);
            let (off, width) = (c & 63, ((c >> 16) & 0x7F).min(64));
            let v = if width == 0 {
                0
            } else {
                let f = (u128::from(x) >> off) as u64;
                let f = if width == 64 {
                    f
                } else {
                    f & ((1u64 << width) - 1)
                };
                if op == BfeI64 && width < 64 {
                    ((f << (64 - width)) as i64 >> (64 - width)) as u64
                } else {
                    f
                }
            };
            set64(&mut scc, v)
        }
        Bfm64 => {
            let (w, o) = (wave.scalar(s0)? & 63, wave.scalar(s1)? & 63);
            (((1u128 << w) - 1) as u64).wrapping_shl(o)
        }
        Cselect64 => {
            if wave.scc {
                a(wave)?
            } else {
                wave.scalar64(s1, false)?
            }
        }
        AddNcU64 => a(wave)?.wrapping_add(wave.scalar64(s1, false)?),
        SubNcU64 => a(wave)?.wrapping_sub(wave.scalar64(s1, false)?),
        MulU64 => a(wave)?.wrapping_mul(wave.scalar64(s1, false)?),
        Mov64 => a(wave)?,
        Cmov64 => {
            if !wave.scc {
                return Ok(Flow::Next);
            }
            a(wave)?
        }
        Not64 => set64(&mut scc, !a(wave)?),
        Saveexec(l, wide) => {
            let old = wave.exec;
            let src = if wide {
                a(wave)?
            } else {
                u64::from(wave.scalar(s0)?)
            };
            wave.set_exec(l.apply(src, old));
            wave.scc = wave.exec != 0;
            if wide {
                wave.write_scalar64(d, old)?;
            } else {
                wave.write_scalar(d, old as u32)?;
            }
            return Ok(Flow::Next);
        }
        _ => unreachable_op(op),
    };
    wave.write_scalar64(d, r)?;
    wave.scc = scc;
    Ok(Flow::Next)
}

#[cold]
fn unreachable_op(op: SOp) -> ! {
    panic!("scalar op {op:?} routed to the 64-bit executor by mistake")
}

#[inline]
fn set(scc: &mut bool, v: u32) -> u32 {
    *scc = v != 0;
    v
}

#[inline]
fn set64(scc: &mut bool, v: u64) -> u64 {
    *scc = v != 0;
    v
}

#[inline]
fn first_bit(x: u64) -> u32 {
    if x == 0 {
        u32::MAX
    } else {
        x.trailing_zeros()
    }
}

/// SOPK's sign-extended 16-bit immediate.
#[inline]
fn simm(inst: &Inst) -> i64 {
    i64::from(inst.words[0] as u16 as i16)
}

/// The register SOPK compares and adds to (its SDST field).
#[inline]
fn sopk_reg(wave: &Wave, inst: &Inst) -> Result<u32, IsaFault> {
    match inst.dst {
        Dst::None => wave.scalar(inst.src[2]),
        Dst::Sgpr(n) => Ok(wave.sgpr[n as usize]),
        Dst::M0 => Ok(wave.m0),
        Dst::ExecLo => Ok(wave.exec as u32),
        Dst::ExecHi => Ok((wave.exec >> 32) as u32),
        Dst::Null => Ok(0),
        Dst::Vgpr(_) | Dst::Unsupported(_) => Err(IsaFault::Operand {
            mnemonic: inst.decoded.mnemonic(),
            why: "SOPK register field is not a scalar register".into(),
        }),
    }
}
