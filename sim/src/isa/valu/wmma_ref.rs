//! WMMA against a CPU reference of D = A x B + C written from the matrix
//! definition: random matrices placed in the registers by the layouts AMD's
//! matrix instruction calculator prints (its element-to-register formulas,
//! written out here independently of `wmma`'s), the instruction run through
//! the decoder and interpreter, and every D element compared bit for bit
//! with an exact fixed-point sum rounded to nearest even.

use relaunch_isa::Family;

use super::super::wave::Wave;
use super::float::f16_to_f32;
use super::tests::isa;
use super::wmma::{fp8_e4m3, fp8_e5m2, Acc, Elem, WmmaOp};

/// Tiny deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

pub(super) const A: u16 = 8;
pub(super) const B: u16 = 16;
pub(super) const C: u16 = 24;
pub(super) const D: u16 = 32;

/// The VOP3P encoding of `op` with D=v32, A=v8, B=v16, C=v24.
pub(super) fn encode(opcode: u32, neg: u32, neg_hi: u32, opsel: u32, clamp: bool) -> Vec<u8> {
    let d0 = u32::from(D)
        | neg_hi << 8
        | opsel << 11
        | 1 << 14
        | u32::from(clamp) << 15
        | opcode << 16
        | 0xCC << 24;
    let d1 = (256 + u32::from(A))
        | (256 + u32::from(B)) << 9
        | (256 + u32::from(C)) << 18
        | 3 << 27
        | neg << 29;
    [d0.to_le_bytes(), d1.to_le_bytes()].concat()
}

pub(super) fn opcode(op: WmmaOp) -> u32 {
    use WmmaOp::*;
    match op {
        F32F16 => 64,
        F32Bf16 => 65,
        F16F16 => 66,
        Bf16Bf16 => 67,
        I32Iu8 => 68,
        I32Iu4 => 69,
        F32Fp8Fp8 => 70,
        F32Fp8Bf8 => 71,
        F32Bf8Fp8 => 72,
        F32Bf8Bf8 => 73,
        I32Iu4K32 => 74,
    }
}

fn bits(e: Elem) -> usize {
    e.bits()
}

/// The calculator's element-to-register mapping of A[i][k] (B[k][j] is the
/// same with j for i): every (vgpr, lane, bit) holding it.
fn input_regs(
    f: Family,
    w64: bool,
    e: Elem,
    kdim: usize,
    i: usize,
    k: usize,
) -> Vec<(usize, usize, usize)> {
    let b = bits(e);
    match (f, w64, b, kdim) {
        (Family::Gfx11, false, _, _) => {
            let per = 32 / b;
            vec![
                (k / per, i, b * (k % per)),
                (k / per, i + 16, b * (k % per)),
            ]
        }
        (Family::Gfx11, true, _, _) => {
            let per = 32 / b;
            (0..4)
                .map(|g| (k / per, i + 16 * g, b * (k % per)))
                .collect()
        }
        (Family::Gfx12, false, 16, _) => {
            vec![(
                2 * (k / 8) + (k / 2) % 2,
                16 * ((k / 4) % 2) + i,
                16 * (k % 2),
            )]
        }
        (Family::Gfx12, true, 16, _) => {
            vec![(
                (k / 2) % 2,
                32 * ((k / 8) % 2) + 16 * ((k / 4) % 2) + i,
                16 * (k % 2),
            )]
        }
        (Family::Gfx12, false, 8, _) => vec![((k / 4) % 2, 16 * (k / 8) + i, 8 * (k % 4))],
        (Family::Gfx12, true, 8, _) => {
            vec![(0, 32 * ((k / 4) % 2) + 16 * ((k / 8) % 2) + i, 8 * (k % 4))]
        }
        (Family::Gfx12, _, 4, 16) => vec![(0, 16 * (k / 8) + i, 4 * (k % 8))],
        (Family::Gfx12, false, 4, 32) => vec![((k / 8) % 2, 16 * (k / 16) + i, 4 * (k % 8))],
        (Family::Gfx12, true, 4, 32) => {
            vec![(0, 32 * ((k / 8) % 2) + 16 * ((k / 16) % 2) + i, 4 * (k % 8))]
        }
        other => panic!("no layout for {other:?}"),
    }
}

/// The calculator's mapping of C[i][j] / D[i][j]: (vgpr, lane, bit).
fn acc_reg(
    f: Family,
    w64: bool,
    acc: Acc,
    i: usize,
    j: usize,
    opsel_hi: bool,
) -> (usize, usize, usize) {
    let wide = matches!(acc, Acc::F32 | Acc::I32);
    let h = if opsel_hi { 16 } else { 0 };
    match (f, w64, wide) {
        (Family::Gfx11, false, _) => (i / 2, (16 * i) % 32 + j, h),
        (Family::Gfx11, true, _) => (i / 4, (16 * i) % 64 + j, h),
        (Family::Gfx12, false, true) => (i % 8, 16 * (i / 8) + j, 0),
        (Family::Gfx12, true, true) => (i % 4, 32 * ((i / 4) % 2) + 16 * (i / 8) + j, 0),
        (Family::Gfx12, false, false) => ((i / 2) % 4, 16 * (i / 8) + j, 16 * (i % 2)),
        (Family::Gfx12, true, false) => (
            (i / 2) % 2,
            32 * ((i / 4) % 2) + 16 * (i / 8) + j,
            16 * (i % 2),
        ),
        other => panic!("no layout for {other:?}"),
    }
}

fn put(w: &mut Wave, base: u16, (v, l, b): (usize, usize, usize), width: usize, val: u32) {
    let mask = if width == 32 {
        u32::MAX
    } else {
        ((1u32 << width) - 1) << b
    };
    let r = &mut w.vgpr[base as usize + v][l];
    *r = (*r & !mask) | ((val << b) & mask);
}

fn get(w: &Wave, base: u16, (v, l, b): (usize, usize, usize), width: usize) -> u32 {
    let x = w.vgpr[base as usize + v][l] >> b;
    if width == 32 {
        x
    } else {
        x & ((1 << width) - 1)
    }
}

/// A random element of type `e` (floats kept where the fixed-point
/// reference is exact: f16 anywhere, bf16 with exponents within +-12).
fn random_elem(r: &mut Rng, e: Elem) -> u32 {
    let x = r.next() as u32;
    match e {
        Elem::F16 => {
            let h = x & 0xffff;
            // No infinities or NaNs in the random part.
            if (h >> 10) & 0x1f != 0x1f {
                h
            } else {
                0x3c00
            }
        }
        Elem::Bf16 => {
            let exp = 127 - 12 + (x >> 8) % 25;
            (x & 0x807f) | exp << 7
        }
        Elem::Fp8 => {
            let v = x & 0xff;
            if v & 0x7f == 0x7f {
                0x38
            } else {
                v
            }
        }
        Elem::Bf8 => {
            let v = x & 0xff;
            if (v >> 2) & 0x1f == 0x1f {
                0x3c
            } else {
                v
            }
        }
        Elem::Iu8 => x & 0xff,
        Elem::Iu4 => x & 0xf,
    }
}

fn random_acc(r: &mut Rng, acc: Acc) -> u32 {
    let x = r.next() as u32;
    match acc {
        // Exponents -50..=20.
        Acc::F32 => (x & 0x807f_ffff) | (127 - 50 + (x >> 8) % 71) << 23,
        Acc::F16 => {
            let h = x & 0xffff;
            if (h >> 10) & 0x1f == 0x1f {
                0xbc00
            } else {
                h
            }
        }
        Acc::Bf16 => (x & 0x807f) | (127 - 20 + (x >> 8) % 41) << 7,
        Acc::I32 => x,
    }
}

/// An element's value as a fixed-point integer in units of 2^-SCALE.
const SCALE: i32 = 90;

fn fixed(x: f64) -> i128 {
    let scaled = x * 2f64.powi(SCALE);
    assert_eq!(scaled, scaled.trunc(), "{x} is not exact at 2^-{SCALE}");
    scaled as i128
}

fn value(e: Elem, v: u32) -> f64 {
    match e {
        Elem::F16 => f64::from(f16_to_f32(v as u16)),
        Elem::Bf16 => f64::from(f32::from_bits(v << 16)),
        Elem::Fp8 => fp8_e4m3(v as u8),
        Elem::Bf8 => fp8_e5m2(v as u8),
        Elem::Iu8 | Elem::Iu4 => unreachable!(),
    }
}

/// `n * 2^-SCALE` rounded to nearest even to `p` significant bits with
/// the smallest normal exponent `emin`, as an f64 (exact).
fn round_fixed(n: i128, p: u32, emin: i32) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let neg = n < 0;
    let m = n.unsigned_abs();
    let top = 127 - m.leading_zeros() as i32; // value's exponent + SCALE
    let e = (top - SCALE).max(emin);
    let drop = e - (p as i32 - 1) + SCALE; // bits below the last kept one
    let q = if drop <= 0 {
        m
    } else {
        let d = drop as u32;
        let kept = m >> d;
        let rest = m & ((1u128 << d) - 1);
        let half = 1u128 << (d - 1);
        if rest > half || (rest == half && kept & 1 == 1) {
            kept + 1
        } else {
            kept
        }
    };
    let shift = if drop <= 0 { -SCALE } else { drop - SCALE };
    let v = q as f64 * 2f64.powi(shift);
    if neg {
        -v
    } else {
        v
    }
}

/// The reference D[i][j] for raw A row / B column and C.
fn reference(op: WmmaOp, a: &[u32], b: &[u32], c: u32, sa: bool, sb: bool, clamp: bool) -> u32 {
    let (ea, eb, acc, kdim) = op.shape();
    if acc == Acc::I32 {
        let int = |e: Elem, v: u32, s: bool| -> i64 {
            let w = bits(e) as u32;
            if s && v >> (w - 1) == 1 {
                i64::from(v) - (1i64 << w)
            } else {
                i64::from(v)
            }
        };
        let s: i64 = (0..kdim)
            .map(|k| int(ea, a[k], sa) * int(eb, b[k], sb))
            .sum::<i64>()
            + i64::from(c as i32);
        return if clamp {
            s.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32
        } else {
            s as i32 as u32
        };
    }
    let cv = match acc {
        Acc::F32 => f64::from(f32::from_bits(c)),
        Acc::F16 => f64::from(f16_to_f32(c as u16)),
        Acc::Bf16 => f64::from(f32::from_bits(c << 16)),
        Acc::I32 => unreachable!(),
    };
    let n: i128 = (0..kdim)
        .map(|k| fixed(value(ea, a[k]) * value(eb, b[k])))
        .sum::<i128>()
        + fixed(cv);
    match acc {
        Acc::F32 => (round_fixed(n, 24, -126) as f32).to_bits(),
        Acc::F16 => u32::from(super::float::f64_to_f16(round_fixed(n, 11, -14))),
        Acc::Bf16 => (round_fixed(n, 8, -126) as f32).to_bits() >> 16,
        Acc::I32 => unreachable!(),
    }
}

pub(super) struct Case {
    pub op: WmmaOp,
    pub target: &'static str,
    pub wave64: bool,
    pub neg: u32,
    pub clamp: bool,
    pub opsel_hi: bool,
}

/// Run one random case; returns how many elements were checked.
pub(super) fn check(case: &Case, seed: u64) {
    let Case {
        op,
        target,
        wave64,
        neg,
        clamp,
        opsel_hi,
    } = *case;
    let i = isa(target, wave64);
    let f = i.family;
    let (ea, eb, acc, kdim) = op.shape();
    let mut r = Rng(seed | 1);
    let mut w = Wave::new(i, 48);
    // Noise everywhere, so a register the layout misses shows.
    for reg in 0..48 {
        for l in 0..w.lanes {
            w.vgpr[reg][l] = r.next() as u32;
        }
    }
    let before = w.clone();
    let am: Vec<Vec<u32>> = (0..16)
        .map(|_| (0..kdim).map(|_| random_elem(&mut r, ea)).collect())
        .collect();
    let bm: Vec<Vec<u32>> = (0..16)
        .map(|_| (0..kdim).map(|_| random_elem(&mut r, eb)).collect())
        .collect();
    let cm: Vec<Vec<u32>> = (0..16)
        .map(|_| (0..16).map(|_| random_acc(&mut r, acc)).collect())
        .collect();
    for row in 0..16 {
        for k in 0..kdim {
            for at in input_regs(f, wave64, ea, kdim, row, k) {
                put(&mut w, A, at, bits(ea), am[row][k]);
            }
            for at in input_regs(f, wave64, eb, kdim, row, k) {
                put(&mut w, B, at, bits(eb), bm[row][k]);
            }
        }
    }
    let accw = match acc {
        Acc::F32 | Acc::I32 => 32,
        Acc::F16 | Acc::Bf16 => 16,
    };
    for (ii, row) in cm.iter().enumerate() {
        for (j, &c) in row.iter().enumerate() {
            put(&mut w, C, acc_reg(f, wave64, acc, ii, j, opsel_hi), accw, c);
        }
    }
    let opsel = if opsel_hi { 4 } else { 0 };
    let code = encode(opcode(op), neg, 0, opsel, clamp);
    super::tests::run(i, &code, &mut w);
    let mut written = vec![[false; 64]; 48];
    for ii in 0..16 {
        for j in 0..16 {
            let at = acc_reg(f, wave64, acc, ii, j, opsel_hi);
            let want = reference(
                op,
                &am[ii],
                &bm[j],
                cm[ii][j],
                neg & 1 != 0,
                neg & 2 != 0,
                clamp,
            );
            let got = get(&w, D, at, accw);
            assert_eq!(
                got, want,
                "{op:?} {target} wave64={wave64} D[{ii}][{j}] seed {seed}"
            );
            written[D as usize + at.0][at.1] = true;
        }
    }
    // Nothing else changed: other registers, and the other half of 16-bit
    // results where the layout leaves one.
    for reg in 0..48 {
        for l in 0..w.lanes {
            if written[reg][l] {
                if accw == 16 && f == Family::Gfx11 {
                    let keep = if opsel_hi { 0xffff } else { 0xffff_0000 };
                    assert_eq!(
                        w.vgpr[reg][l] & keep,
                        before.vgpr[reg][l] & keep,
                        "v{reg} lane {l}"
                    );
                }
                continue;
            }
            if (C as usize..C as usize + 8).contains(&reg)
                || (A as usize..C as usize).contains(&reg)
            {
                continue; // inputs were overwritten by the placement
            }
            assert_eq!(
                w.vgpr[reg][l], before.vgpr[reg][l],
                "{op:?} v{reg} lane {l} changed"
            );
        }
    }
}
