//! The HIP dot-product kernel (tests/kernels/hip/dot_math.hip, no twin) on
//! the instruction interpreter on gfx1030, gfx1100, gfx1151 and gfx1201,
//! against a CPU reference written here. The float inputs are drawn so the
//! f64 sum of the products and S2 is exact; the reference then rounds once
//! (f32 by `as f32`, f16 through a table of every finite f16), independent
//! of the simulator's rounding code.

use relaunch_sim::device::SimConfig;
use relaunch_sim::isa::KernelMode;
use relaunch_testsupport::simkit::{linear, Rig};

const TARGETS: [&str; 4] = ["gfx1030", "gfx1100", "gfx1151", "gfx1201"];

/// An LCG.
struct Lcg(u32);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        self.0
    }
}

/// An f16 with exponent in [-4, 4] (bits), random sign and mantissa.
fn f16_bits(r: &mut Lcg) -> u32 {
    let x = r.next();
    ((x >> 31) << 15) | ((11 + (x >> 8) % 9) << 10) | (x & 0x3FF)
}

/// A bf16 with exponent in [-4, 4].
fn bf16_bits(r: &mut Lcg) -> u32 {
    let x = r.next();
    ((x >> 31) << 15) | ((123 + (x >> 8) % 9) << 7) | (x & 0x7F)
}

/// f16 bits to f64 (exact), written out from the format.
fn f16(v: u32) -> f64 {
    let (s, e, m) = ((v >> 15) & 1, (v >> 10) & 0x1F, v & 0x3FF);
    let mag = if e == 0 {
        f64::from(m) * 2f64.powi(-24)
    } else {
        (1.0 + f64::from(m) / 1024.0) * 2f64.powi(e as i32 - 15)
    };
    if s == 1 {
        -mag
    } else {
        mag
    }
}

fn bf16(v: u32) -> f64 {
    f64::from(f32::from_bits((v & 0xFFFF) << 16))
}

/// `x` rounded to the nearest finite f16 (ties to the even bit pattern),
/// through the table of every non-negative finite f16.
fn to_f16(table: &[f64], x: f64) -> u32 {
    let a = x.abs();
    let i = table.partition_point(|&t| t < a).min(table.len() - 1);
    let pick = if i == 0 || table[i] == a {
        i
    } else {
        let (lo, hi) = (a - table[i - 1], table[i] - a);
        if lo < hi || (lo == hi && (i - 1) % 2 == 0) {
            i - 1
        } else {
            i
        }
    };
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    sign | pick as u32
}

fn sext(v: u32, bits: u32, k: u32) -> i64 {
    let shift = 32 - bits;
    i64::from(((v << (shift - k * bits)) as i32) >> shift)
}

fn uext(v: u32, bits: u32, k: u32) -> i64 {
    i64::from((v >> (k * bits)) & ((1u32 << bits) - 1))
}

/// What the kernel writes for one record, per its header comment.
fn reference(gfx10: bool, table: &[f64], r: &[u32; 8]) -> [u32; 5] {
    let (ah, bh) = (r[0], r[1]);
    let c = f32::from_bits(r[6]);
    let ci = r[7];
    let hdot = f16(ah & 0xFFFF) * f16(bh & 0xFFFF) + f16(ah >> 16) * f16(bh >> 16);
    let fdot2 = (hdot + f64::from(c)) as f32;
    let sdot4: i64 = (0..4).map(|k| sext(r[4], 8, k) * sext(r[5], 8, k)).sum();
    let udot8: i64 = (0..8).map(|k| uext(r[4], 4, k) * uext(r[5], 4, k)).sum();
    let udot8 = (udot8 + i64::from(ci)).min(i64::from(u32::MAX)) as u32;
    let (o3, o4) = if gfx10 {
        let sdot2: i64 = (0..2).map(|k| sext(r[4], 16, k) * sext(r[5], 16, k)).sum();
        (
            fdot2.clamp(0.0, 1.0).to_bits(),
            (sdot2 as i32).wrapping_add(ci as i32) as u32,
        )
    } else {
        let bdot = bf16(r[2]) * bf16(r[3]) + bf16(r[2] >> 16) * bf16(r[3] >> 16);
        let hc = f16(to_f16(table, f64::from(c)));
        (
            ((bdot + f64::from(c)) as f32).to_bits(),
            to_f16(table, hdot + hc),
        )
    };
    [
        fdot2.to_bits(),
        (sdot4 as i32).wrapping_add(ci as i32) as u32,
        udot8,
        o3,
        o4,
    ]
}

fn records(n: usize) -> Vec<[u32; 8]> {
    let mut g = Lcg(11);
    let mut out: Vec<[u32; 8]> = (0..n)
        .map(|i| {
            let c = {
                let x = g.next();
                let e = 123 + (x >> 8) % 9;
                ((x >> 31) << 31) | (e << 23) | (x & 0x7F_FFFF)
            };
            // Every fourth record's S2 near u32::MAX, so udot8's clamp bites.
            let ci = if i % 4 == 3 {
                0xFFFF_FF00 | (g.next() & 0xFF)
            } else {
                g.next()
            };
            [
                f16_bits(&mut g) | f16_bits(&mut g) << 16,
                f16_bits(&mut g) | f16_bits(&mut g) << 16,
                bf16_bits(&mut g) | bf16_bits(&mut g) << 16,
                bf16_bits(&mut g) | bf16_bits(&mut g) << 16,
                g.next(),
                g.next(),
                c,
                ci,
            ]
        })
        .collect();
    // One rounding, not two: f16 (1, 2^-12) . (1, 2^-12) + 2^-24 is exactly
    // 1 + 2^-23; adding in f32 one term at a time would give 1.0.
    out[0][0] = 0x0C00_3C00;
    out[0][1] = 0x0C00_3C00;
    out[0][6] = 0x3380_0000;
    // Clamped f16 dot (gfx10.3) below 0 and above 1: (1, 1) . (0.5, 0.25)
    // = 0.75, plus -20 or 20.
    for (i, c) in [(1, -20f32), (2, 20f32)] {
        out[i][0] = 0x3C00_3C00;
        out[i][1] = 0x3400_3800;
        out[i][6] = c.to_bits();
    }
    out
}

#[test]
fn dot_math_matches_the_cpu() {
    let table: Vec<f64> = (0..0x7C00u32).map(f16).collect();
    let n = 128usize;
    let recs = records(n);
    let words: Vec<u8> = recs
        .iter()
        .flatten()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    for target in TARGETS {
        let mut cfg = SimConfig::new(target);
        cfg.kernels = KernelMode::Isa;
        let rig = Rig::with_config(cfg, "dot_math");
        let input = rig.alloc(words.len());
        rig.dev.memory.write(input, &words).unwrap();
        let out = rig.alloc(4 * 5 * n);
        let mut b = rig.builder();
        let mut explicit = out.to_le_bytes().to_vec();
        explicit.extend(input.to_le_bytes());
        rig.dispatch(&mut b, "dot_math", &linear(n as u32, 64), &explicit);
        let dwords = rig.dwords(b);
        if let Err(e) = rig.run(&dwords) {
            panic!("{target} dot_math: {e}");
        }
        let got = rig.dev.memory.read_dwords(out, 5 * n).unwrap();
        for (i, r) in recs.iter().enumerate() {
            let want = reference(target == "gfx1030", &table, r);
            assert_eq!(got[5 * i..5 * i + 5], want, "{target} record {i}: {r:08x?}");
        }
        // The hand-picked records did what they were picked for.
        assert_eq!(got[0], 0x3F80_0001, "{target}");
        if target == "gfx1030" {
            assert_eq!((got[5 + 3], got[10 + 3]), (0, 1f32.to_bits()));
        }
        assert_eq!(got[5 * 3 + 2], u32::MAX, "{target}: udot8 clamp");
    }
}
