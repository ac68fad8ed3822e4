//! The interpreter test kernels without twins (tests/kernels: reduce_lds,
//! divergent, atomics; hip/: wave_scan, half_math, int64_math) run on the
//! instruction interpreter on gfx1030, gfx1100, gfx1151 and gfx1201, each
//! against a CPU reference written here. The f16 reference rounds through a
//! table of every finite f16, independent of the simulator's conversions.

use relaunch_sim::device::SimConfig;
use relaunch_sim::isa::KernelMode;
use relaunch_testsupport::simkit::{linear, Rig};

const TARGETS: [&str; 4] = ["gfx1030", "gfx1100", "gfx1151", "gfx1201"];

fn rig(target: &str, object: &str) -> Rig {
    let mut cfg = SimConfig::new(target);
    cfg.kernels = KernelMode::Isa;
    Rig::with_config(cfg, object)
}

/// Deterministic inputs (an LCG).
fn inputs(n: usize, seed: u32) -> Vec<u32> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            x
        })
        .collect()
}

fn upload(rig: &Rig, bytes: &[u8]) -> u64 {
    let a = rig.alloc(bytes.len().max(4));
    rig.dev.memory.write(a, bytes).unwrap();
    a
}

fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn args(ptrs: &[u64]) -> Vec<u8> {
    ptrs.iter().flat_map(|p| p.to_le_bytes()).collect()
}

/// Dispatch `symbol` once over `grid` work-items in groups of `block`.
fn run(rig: &Rig, symbol: &str, grid: u32, block: u32, explicit: &[u8]) {
    if let Err(e) = try_run(rig, symbol, grid, block, explicit) {
        panic!("{e}");
    }
}

fn try_run(rig: &Rig, symbol: &str, grid: u32, block: u32, explicit: &[u8]) -> Result<(), String> {
    let mut b = rig.builder();
    rig.dispatch(&mut b, symbol, &linear(grid, block), explicit);
    let dwords = rig.dwords(b);
    rig.run(&dwords)
        .map(|_| ())
        .map_err(|e| format!("{} {symbol}: {e}", rig.dev.config().target))
}

#[test]
fn reduce_lds_sums_each_group_through_lds_and_barriers() {
    for target in TARGETS {
        for block in [64u32, 256] {
            let r = rig(target, "reduce_lds");
            let n = 1024u32;
            let data = inputs(n as usize, 7);
            let input = upload(&r, &u32s(&data));
            let groups = (n / block) as usize;
            let out = upload(&r, &vec![0u8; 4 * groups]);
            run(&r, "reduce_lds", n, block, &args(&[out, input]));
            for g in 0..groups {
                let want = data[g * block as usize..(g + 1) * block as usize]
                    .iter()
                    .fold(0u32, |a, &b| a.wrapping_add(b));
                let got = r.dev.memory.read_u32(out + 4 * g as u64).unwrap();
                assert_eq!(got, want, "{target} block {block} group {g}");
            }
        }
    }
}

/// The kernel's loop, on the CPU.
fn collatz(mut n: u32) -> (u32, u32) {
    let (mut steps, mut odd) = (0u32, 0u32);
    while n > 1 && steps < 1000 {
        if n & 1 != 0 {
            odd = odd.wrapping_add(n);
            n = n.wrapping_mul(3).wrapping_add(1);
        } else if n & 3 == 0 {
            n >>= 2;
            steps += 1;
        } else {
            n >>= 1;
        }
        steps += 1;
    }
    (steps, odd)
}

#[test]
fn divergent_loops_match_the_cpu() {
    for target in TARGETS {
        let r = rig(target, "divergent");
        let n = 256usize;
        let mut data: Vec<u32> = inputs(n, 3).iter().map(|x| x % 5000).collect();
        // Edge lanes: no iterations, one, a long run, a wrapping one.
        data[0] = 0;
        data[1] = 1;
        data[2] = 27;
        data[3] = u32::MAX;
        let input = upload(&r, &u32s(&data));
        let out = upload(&r, &vec![0u8; 8 * n]);
        run(&r, "divergent", n as u32, 64, &args(&[out, input]));
        let got = r.dev.memory.read_dwords(out, 2 * n).unwrap();
        for (i, &v) in data.iter().enumerate() {
            let (steps, odd) = collatz(v);
            assert_eq!(
                (got[2 * i], got[2 * i + 1]),
                (steps, odd),
                "{target} lane {i} input {v}"
            );
        }
    }
}

#[test]
fn atomics_on_lds_and_global_memory_match_the_cpu() {
    for target in TARGETS {
        let r = rig(target, "atomics");
        let n = 512usize;
        let data = inputs(n, 11);
        let input = upload(&r, &u32s(&data));
        let hist = upload(&r, &[0u8; 64]);
        let stats = upload(&r, &[0u8; 8]);
        let explicit = args(&[hist, stats, input]);
        // The atomic max loop is a returning global_atomic_cmpswap.
        run(&r, "atomics", n as u32, 128, &explicit);
        let mut want = [0u32; 16];
        for v in &data {
            want[(v % 16) as usize] += 1;
        }
        let got = r.dev.memory.read_dwords(hist, 16).unwrap();
        assert_eq!(got, want.to_vec(), "{target} histogram");
        let s = r.dev.memory.read_dwords(stats, 2).unwrap();
        assert_eq!(s[0], *data.iter().max().unwrap(), "{target} max");
        assert_eq!(s[1], data.iter().fold(0, |a, b| a ^ b), "{target} xor");
    }
}

/// The kernel's scan as the hardware computes it, on the CPU: prefix sums
/// within each row of 16 lanes (the DPP row shifts), then for s = 16, 32 the
/// lanes with bit s set add the value ds_bpermute fetches from the last
/// lane of the preceding s-block. `span` is how many lanes ds_bpermute
/// routes among: the wave, except 32 in wave64 on gfx10/gfx11, where it
/// reads lane `(l & 32) | (index & 31)` of its own half (LLVM's
/// `GCNSubtarget::supportsWaveWideBPermute`).
fn wave_scan_reference(data: &[u32], wave: usize, span: usize) -> Vec<u32> {
    let mut out = Vec::with_capacity(data.len());
    for w in data.chunks(wave) {
        let mut x: Vec<u32> = (0..w.len())
            .map(|l| w[l & !15..=l].iter().fold(0u32, |a, &b| a.wrapping_add(b)))
            .collect();
        let mut s = 16;
        while s < wave {
            let prev = x.clone();
            for (l, v) in x.iter_mut().enumerate() {
                let index = ((l / s) * s).wrapping_sub(1);
                let from = (l & !(span - 1)) | (index & (span - 1));
                if l & s != 0 {
                    *v = v.wrapping_add(prev[from]);
                }
            }
            s *= 2;
        }
        out.extend(x);
    }
    out
}

fn check_wave_scan(target: &str, object: &str, wave: usize) {
    let r = rig(target, object);
    let n = 256usize;
    let data: Vec<u32> = inputs(n, 5).iter().map(|x| x >> 8).collect();
    let input = upload(&r, &u32s(&data));
    let out = upload(&r, &vec![0u8; 8 * n]);
    let explicit = args(&[out, input]);
    run(&r, "wave_scan", n as u32, 64, &explicit);
    let span = match (wave, target) {
        (64, "gfx1030" | "gfx1100" | "gfx1151") => 32,
        _ => wave,
    };
    let want = wave_scan_reference(&data, wave, span);
    let got = r.dev.memory.read_dwords(out, 2 * n).unwrap();
    for i in 0..n {
        if span == wave {
            // With a wave-wide permute the kernel is the plain inclusive scan.
            let start = i / wave * wave;
            let plain = data[start..=i].iter().fold(0u32, |a, &b| a.wrapping_add(b));
            assert_eq!(want[i], plain, "reference at {i}");
        }
        assert_eq!(got[2 * i], want[i], "{object} {target} scan at {i}");
        assert_eq!(
            got[2 * i + 1],
            data[i / 32 * 32],
            "{object} {target} swizzle at {i}"
        );
    }
}

#[test]
fn wave_scan_with_dpp_bpermute_and_swizzle_matches_the_cpu() {
    for target in TARGETS {
        check_wave_scan(target, "wave_scan", 32);
    }
    for target in ["gfx1100", "gfx1151", "gfx1201"] {
        check_wave_scan(target, "wave_scan-w64", 64);
    }
}

/// f16 bits to f64 (exact), written out independently of the simulator.
fn f16_value(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = i32::from((h >> 10) & 0x1F);
    let m = f64::from(h & 0x3FF);
    sign * match e {
        0 => m * 2f64.powi(-24),
        31 if m == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1.0 + m / 1024.0) * 2f64.powi(e - 15),
    }
}

/// The nearest f16 to `x` (ties to the even pattern), by search over every
/// finite non-negative f16.
fn nearest_f16(x: f64) -> u16 {
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    if a >= 65520.0 {
        return sign | 0x7C00;
    }
    let (mut lo, mut hi) = (0u16, 0x7BFFu16);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if f16_value(mid) <= a {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let below = lo;
    let pick = if below == 0x7BFF {
        below
    } else {
        let (d0, d1) = (a - f16_value(below), f16_value(below + 1) - a);
        if d1 < d0 || (d1 == d0 && below & 1 == 1) {
            below + 1
        } else {
            below
        }
    };
    sign | pick
}

#[test]
fn half_math_matches_the_cpu() {
    for target in TARGETS {
        let r = rig(target, "half_math");
        let n = 256usize;
        // a, b in [-8, 8) on a 1/64 grid (exact f16), plus a few ties.
        let raw = inputs(2 * n, 9);
        let mut pairs: Vec<(u16, u16)> = (0..n)
            .map(|i| {
                let v = |x: u32| nearest_f16(f64::from((x >> 16) % 1024) / 64.0 - 8.0);
                (v(raw[2 * i]), v(raw[2 * i + 1]))
            })
            .collect();
        // (1 + 2^-10) * 1.5 + 0.5 lands exactly between two f16 values.
        pairs[0] = (0x3C01, 0x3E00);
        pairs[1] = (0x7BFF, 0x4000);
        let scale = 0.3f32;
        let bytes: Vec<u8> = pairs
            .iter()
            .flat_map(|&(a, b)| (u32::from(a) | (u32::from(b) << 16)).to_le_bytes())
            .collect();
        let input = upload(&r, &bytes);
        let out = upload(&r, &vec![0u8; 8 * n]);
        let mut explicit = args(&[out, input]);
        explicit.extend(scale.to_le_bytes());
        run(&r, "half_math", n as u32, 64, &explicit);
        let got = r.dev.memory.read_dwords(out, 2 * n).unwrap();
        for (i, &(a, b)) in pairs.iter().enumerate() {
            let (x, y) = (f16_value(a), f16_value(b));
            let fma = nearest_f16(x * y + 0.5);
            let max = if x >= y { a } else { b };
            let w = nearest_f64_via_f32(x, y, scale);
            let diff = nearest_f16(x - y);
            let w0 = u32::from(fma) | (u32::from(max) << 16);
            let w1 = u32::from(w) | (u32::from(diff) << 16);
            assert_eq!(got[2 * i], w0, "{target} item {i}: fma/max of {x}, {y}");
            assert_eq!(
                got[2 * i + 1],
                w1,
                "{target} item {i}: scaled sum/difference of {x}, {y}"
            );
        }
    }
}

/// (half)((float)a * scale + (float)b) with each f32 operation rounded.
fn nearest_f64_via_f32(a: f64, b: f64, scale: f32) -> u16 {
    let p = (a as f32) * scale;
    let s = p + b as f32;
    nearest_f16(f64::from(s))
}

#[test]
fn int64_math_matches_the_cpu() {
    for target in TARGETS {
        let r = rig(target, "int64_math");
        let n = 128usize;
        let raw = inputs(4 * n, 13);
        let mut vals: Vec<(u64, u64)> = (0..n)
            .map(|i| {
                let x = u64::from(raw[4 * i]) | (u64::from(raw[4 * i + 1]) << 32);
                let y = u64::from(raw[4 * i + 2]) | (u64::from(raw[4 * i + 3]) << 32);
                (x, y)
            })
            .collect();
        vals[0] = (0, 0);
        vals[1] = (u64::MAX, u64::MAX);
        vals[2] = (1 << 63, 63);
        vals[3] = (9, 1);
        let bytes: Vec<u8> = vals
            .iter()
            .flat_map(|&(x, y)| [x.to_le_bytes(), y.to_le_bytes()].concat())
            .collect();
        let input = upload(&r, &bytes);
        let out = upload(&r, &vec![0u8; 32 * n]);
        run(&r, "int64_math", n as u32, 64, &args(&[out, input]));
        let got = r.dev.memory.read_vec(out, 32 * n).unwrap();
        let word = |k: usize| u64::from_le_bytes(got[8 * k..8 * k + 8].try_into().unwrap());
        for (i, &(x, y)) in vals.iter().enumerate() {
            let want = [
                x.wrapping_mul(y).wrapping_add(x >> (y & 63)),
                ((u128::from(x) * u128::from(y)) >> 64) as u64,
                (((x as i64) >> (y & 63)) as u64) ^ (x << (y >> 58)),
                (x / 10)
                    .wrapping_add(u64::from(y.count_ones()))
                    .wrapping_add(u64::from((x | 1).leading_zeros())),
            ];
            for (k, w) in want.iter().enumerate() {
                assert_eq!(
                    word(4 * i + k),
                    *w,
                    "{target} item {i} result {k}: x {x:#x} y {y:#x}"
                );
            }
        }
    }
}
