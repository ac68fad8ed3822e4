//! Floating-point helpers the vector ALU shares: f16 <-> f32/f64 with
//! round-to-nearest-even, denormal flushing per MODE, the class mask of
//! v_cmp_class, and the steps of the division sequence (div_scale,
//! div_fmas, div_fixup) as the RDNA ISA documents them.
//!
//! Host f32/f64 arithmetic (SSE on x86-64, no flush-to-zero) rounds to
//! nearest even with denormals kept, which is MODE's default for compute
//! kernels (FP_ROUND = 0, FP_DENORM = 3 for f64/f16; what RSRC1 asks for
//! f32). f16 results are computed exactly in f64 (or with an error term)
//! and rounded once.

/// f16 bits to f32 (exact).
#[inline]
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1F);
    let mant = u32::from(h & 0x3FF);
    let bits = match (exp, mant) {
        (0, 0) => sign,
        (0, m) => {
            // Denormal: m * 2^-24, exact in f32.
            let v = m as f32 * f32::from_bits(0x3380_0000);
            sign | v.to_bits()
        }
        (31, 0) => sign | 0x7F80_0000,
        // NaN: keep the payload, quiet.
        (31, m) => sign | 0x7FC0_0000 | (m << 13),
        (e, m) => sign | ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

/// f64 to f16 bits, rounding to nearest even. `sticky` is the sign of the
/// error of `x` against the exact value (0 when `x` is exact): it breaks
/// what would otherwise look like a tie.
pub fn f64_to_f16_sticky(x: f64, sticky: i8) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 63) as u16) << 15;
    let a = x.abs();
    if a.is_nan() {
        let payload = ((bits >> 42) & 0x3FF) as u16;
        return sign | 0x7E00 | payload;
    }
    if a >= 65520.0 {
        // At or past the rounding boundary of the largest finite f16.
        return sign | 0x7C00;
    }
    // Error relative to the magnitude: positive means the exact magnitude
    // is larger than |x|.
    let s = if x < 0.0 { -sticky } else { sticky };
    // The value in units of the f16 quantum at its exponent.
    let unit_exp = if a < f64::from_bits(0x3F10_0000_0000_0000) {
        // Below 2^-14: denormal range, quantum 2^-24.
        -24
    } else {
        ((a.to_bits() >> 52) as i32) - 1023 - 10
    };
    // 2^-unit_exp, unit_exp in [-24, 5] here.
    let scaled = a * f64::from_bits(((1023 - unit_exp) as u64) << 52);
    // scaled < 2^11 here (or the overflow path below), exact in f64.
    let whole = scaled.floor();
    let frac = scaled - whole;
    let mut q = whole as u64;
    let up = if frac > 0.5 {
        true
    } else if frac < 0.5 {
        false
    } else if s > 0 {
        true
    } else if s < 0 {
        false
    } else {
        q & 1 == 1
    };
    if up {
        q += 1;
    }
    // Reassemble: q * 2^unit_exp as f16.
    let value_exp = unit_exp; // value = q * 2^value_exp
    if value_exp == -24 {
        // Denormal or the smallest normal (q == 0x400).
        return sign | q as u16;
    }
    // Normal: q in [2^10, 2^11]; q == 2^11 carries into the exponent.
    let mut e = value_exp + 10;
    let mut m = q;
    if m == 1 << 11 {
        m >>= 1;
        e += 1;
    }
    let be = e + 15;
    if be >= 31 {
        return sign | 0x7C00;
    }
    sign | ((be as u16) << 10) | (m as u16 & 0x3FF)
}

/// f64 to f16 bits, round to nearest even.
#[inline]
pub fn f64_to_f16(x: f64) -> u16 {
    f64_to_f16_sticky(x, 0)
}

/// f32 to f16 bits, round to nearest even (f32 -> f64 is exact).
#[inline]
pub fn f32_to_f16(x: f32) -> u16 {
    f64_to_f16(f64::from(x))
}

/// f16 fma computed exactly: the product of two f16 is exact in f64 and the
/// sum's rounding error is carried as the sticky sign.
pub fn fma_f16(a: u16, b: u16, c: u16) -> u16 {
    fma_exact_to_f16(
        f64::from(f16_to_f32(a)),
        f64::from(f16_to_f32(b)),
        f64::from(f16_to_f32(c)),
    )
}

/// a * b + c rounded once to f16, for `a`, `b` whose product is exact in
/// f64 (f16 or f32 values: at most 24-bit significands) and `c` an f32 or
/// f16 value.
pub fn fma_exact_to_f16(a: f64, b: f64, c: f64) -> u16 {
    let p = a * b;
    let s = p + c;
    if !s.is_finite() {
        return f64_to_f16(s);
    }
    // TwoSum: the exact error of the addition.
    let bb = s - p;
    let err = (p - (s - bb)) + (c - bb);
    let sticky = if err > 0.0 {
        1
    } else if err < 0.0 {
        -1
    } else {
        0
    };
    f64_to_f16_sticky(s, sticky)
}

/// Which of the denormal controls of MODE.FP_DENORM (2 bits per width:
/// bit 0 keeps input denormals, bit 1 keeps output denormals) apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Denorm {
    pub keep_in: bool,
    pub keep_out: bool,
}

impl Denorm {
    /// The f32 control (MODE bits 5:4).
    #[inline]
    pub fn f32_of(mode: u32) -> Denorm {
        let d = (mode >> 4) & 3;
        Denorm {
            keep_in: d & 1 != 0,
            keep_out: d & 2 != 0,
        }
    }

    /// The f64/f16 control (MODE bits 7:6).
    #[inline]
    pub fn f16_of(mode: u32) -> Denorm {
        let d = (mode >> 6) & 3;
        Denorm {
            keep_in: d & 1 != 0,
            keep_out: d & 2 != 0,
        }
    }

    #[inline]
    pub fn keeps_all(self) -> bool {
        self.keep_in && self.keep_out
    }
}

/// An f32 denormal flushed to a signed zero.
#[inline]
pub fn flush32(x: f32) -> f32 {
    if x.is_subnormal() {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}

/// The v_cmp_class mask bit of an f64 value (f32 and f16 widen exactly):
/// 0 signalling NaN, 1 quiet NaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0,
/// 6 +0, 7 +denormal, 8 +normal, 9 +inf. `quiet` says whether a NaN's
/// quiet bit is set in its own format; `denormal` whether it is denormal
/// in its own format.
#[inline]
pub fn class_bit(x: f64, quiet: bool, denormal: bool) -> u32 {
    let neg = x.is_sign_negative();
    let bit = if x.is_nan() {
        if quiet {
            1
        } else {
            0
        }
    } else if x.is_infinite() {
        if neg {
            2
        } else {
            9
        }
    } else if x == 0.0 {
        if neg {
            5
        } else {
            6
        }
    } else if denormal {
        if neg {
            4
        } else {
            7
        }
    } else if neg {
        3
    } else {
        8
    };
    1 << bit
}

/// The class bit of an f32 value.
#[inline]
pub fn class32(x: f32) -> u32 {
    class_bit(
        f64::from(x),
        x.to_bits() & 0x0040_0000 != 0,
        x.is_subnormal(),
    )
}

/// The class bit of an f16 value.
#[inline]
pub fn class16(h: u16) -> u32 {
    let exp = (h >> 10) & 0x1F;
    let mant = h & 0x3FF;
    if exp == 31 && mant != 0 {
        // Keep the f16 quiet bit (widening would set it).
        return 1 << u32::from(h & 0x200 != 0);
    }
    class_bit(f64::from(f16_to_f32(h)), true, exp == 0 && mant != 0)
}

/// The biased exponent field of an f32.
#[inline]
fn exponent(x: f32) -> i32 {
    ((x.to_bits() >> 23) & 0xFF) as i32
}

/// v_div_scale_f32: `s0` is the value to scale (the numerator or the
/// denominator), `s1` the denominator, `s2` the numerator. Returns the
/// result and the lane's VCC bit (set when v_div_fmas must rescale).
pub fn div_scale_f32(s0: f32, s1: f32, s2: f32) -> (f32, bool) {
    let scale_up = |v: f32| (f64::from(v) * 2f64.powi(64)) as f32;
    let scale_down = |v: f32| (f64::from(v) * 2f64.powi(-64)) as f32;
    if s2 == 0.0 || s1 == 0.0 {
        return (f32::NAN, false);
    }
    let quotient_denorm = {
        let q = s2 / s1;
        q.is_subnormal()
    };
    let rcp_denorm = {
        let r = 1.0 / f64::from(s1);
        // Denormal as an f32 would be.
        r != 0.0 && r.abs() < f64::from(f32::MIN_POSITIVE)
    };
    if exponent(s2) - exponent(s1) >= 96 {
        // The quotient is near the f32 maximum: scale the denominator.
        let d = if s0 == s1 { scale_up(s0) } else { s0 };
        (d, true)
    } else if s1.is_subnormal() {
        (scale_up(s0), false)
    } else if rcp_denorm && quotient_denorm {
        // A huge denominator: scaled down (up would overflow), so the
        // quotient comes out 2^64 large and div_fmas scales it back.
        let d = if s0 == s1 { scale_down(s0) } else { s0 };
        (d, true)
    } else if rcp_denorm {
        (scale_down(s0), false)
    } else if quotient_denorm {
        let d = if s0 == s2 { scale_up(s0) } else { s0 };
        (d, true)
    } else if exponent(s2) <= 23 {
        // A tiny numerator.
        (scale_up(s0), false)
    } else {
        (s0, false)
    }
}

/// v_div_fmas_f32: fma, rescaled by 2^64 or 2^-64 (by the quotient's
/// exponent, `s2`) when the lane's VCC bit is set.
pub fn div_fmas_f32(s0: f32, s1: f32, s2: f32, vcc: bool) -> f32 {
    if !vcc {
        return s0.mul_add(s1, s2);
    }
    let k = if exponent(s2) > 127 { 64 } else { -64 };
    // The scaled exact value rounded once to f32: the product is exact in
    // f64, the sum's error (TwoSum) is folded into the last f64 bit (round
    // to odd), and the power-of-two scale is exact in f64.
    let (a, b, c) = (f64::from(s0), f64::from(s1), f64::from(s2));
    let p = a * b;
    let sum = p + c;
    let bb = sum - p;
    let err = (p - (sum - bb)) + (c - bb);
    let odd = if sum.is_finite() && err != 0.0 && sum.to_bits() & 1 == 0 {
        // One f64 step toward the exact value.
        let up = (err > 0.0) == (sum > 0.0);
        f64::from_bits(if up {
            sum.to_bits() + 1
        } else {
            sum.to_bits() - 1
        })
    } else {
        sum
    };
    (odd * 2f64.powi(k)) as f32
}

/// v_div_fixup_f32: the special cases of n/d around the quotient `s0`
/// (`s1` the denominator, `s2` the numerator).
pub fn div_fixup_f32(s0: f32, s1: f32, s2: f32) -> f32 {
    let neg = s1.is_sign_negative() != s2.is_sign_negative();
    let signed = |v: f32| if neg { -v.abs() } else { v.abs() };
    if s2.is_nan() {
        quiet32(s2)
    } else if s1.is_nan() {
        quiet32(s1)
    } else if (s1 == 0.0 && s2 == 0.0) || (s1.is_infinite() && s2.is_infinite()) {
        f32::from_bits(0xFFC0_0000)
    } else if s1 == 0.0 || s2.is_infinite() {
        signed(f32::INFINITY)
    } else if s1.is_infinite() || s2 == 0.0 || exponent(s2) - exponent(s1) < -150 {
        // Zero, or a quotient below the smallest denormal.
        signed(0.0)
    } else if exponent(s1) == 255 || s0.is_nan() {
        signed(f32::INFINITY)
    } else {
        signed(s0)
    }
}

/// A NaN with its quiet bit set.
#[inline]
pub fn quiet32(x: f32) -> f32 {
    f32::from_bits(x.to_bits() | 0x0040_0000)
}

/// f32 to integer as v_cvt_i32_f32 / v_cvt_u32_f32 do: truncate, saturate,
/// NaN gives 0.
#[inline]
pub fn cvt_i32(x: f32) -> u32 {
    // Rust's `as` saturates and maps NaN to 0, as the hardware does.
    x as i32 as u32
}

#[inline]
pub fn cvt_u32(x: f32) -> u32 {
    x as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_round_trip_every_value() {
        for h in 0..=u16::MAX {
            let f = f16_to_f32(h);
            let back = f32_to_f16(f);
            if f.is_nan() {
                assert_eq!(back & 0x7C00, 0x7C00);
                assert_ne!(back & 0x3FF, 0);
            } else {
                assert_eq!(back, h, "{h:#06x} -> {f} -> {back:#06x}");
            }
        }
    }

    #[test]
    fn f16_rounds_to_nearest_even() {
        // 1 + 2^-11 is a tie between 1.0 and the next f16: even is 1.0.
        assert_eq!(f32_to_f16(1.0 + 2f32.powi(-11)), 0x3C00);
        // 1 + 3 * 2^-11 ties between 1+2^-10 (odd) and 1+2^-9 (even).
        assert_eq!(f32_to_f16(1.0 + 3.0 * 2f32.powi(-11)), 0x3C02);
        // Just above the tie rounds up.
        assert_eq!(f32_to_f16(1.0 + 2f32.powi(-11) + 2f32.powi(-20)), 0x3C01);
        // 65520 rounds to infinity, 65519 to the largest finite.
        assert_eq!(f32_to_f16(65520.0), 0x7C00);
        assert_eq!(f32_to_f16(65519.0), 0x7BFF);
        // Denormals: 2^-25 is a tie between 0 and 2^-24 (even: 0).
        assert_eq!(f32_to_f16(2f32.powi(-25)), 0);
        assert_eq!(f32_to_f16(3.0 * 2f32.powi(-25)), 2);
        // The largest denormal rounds up into the smallest normal.
        assert_eq!(f32_to_f16(2f32.powi(-14) - 2f32.powi(-26)), 0x0400);
        assert_eq!(f32_to_f16(-2.0), 0xC000);
    }

    #[test]
    fn f16_fma_rounds_once() {
        // (1 + 3*2^-10)^2 - 1 = 6*2^-10 + 9*2^-20, which rounds to
        // 6*2^-10 + 2^-17; rounding the product first would give 6*2^-10.
        let a = 0x3C03;
        let r = fma_f16(a, a, 0xBC00);
        assert_eq!(f16_to_f32(r), 6.0 * 2f32.powi(-10) + 2f32.powi(-17));
        // (1 + 2^-10) * 1.5 = 1.5 + 2^-10 + 2^-11: a tie between 0x3E01 and
        // 0x3E02 (even); an addend of -2^-24 or +2^-24 decides it.
        let (a, b) = (0x3C01, 0x3E00);
        assert_eq!(fma_f16(a, b, 0x0000), 0x3E02);
        assert_eq!(fma_f16(a, b, 0x8001), 0x3E01);
        assert_eq!(fma_f16(a, b, 0x0001), 0x3E02);
        assert_eq!(
            f64_to_f16_sticky(f64::from(f16_to_f32(0x3E01)) + 2f64.powi(-11), -1),
            0x3E01
        );
        assert_eq!(
            f64_to_f16_sticky(f64::from(f16_to_f32(0x3E00)) + 2f64.powi(-11), 1),
            0x3E01
        );
    }

    #[test]
    fn division_sequence_steps_of_ordinary_values_are_identities() {
        assert_eq!(div_scale_f32(3.0, 3.0, 7.0), (3.0, false));
        assert_eq!(div_scale_f32(7.0, 3.0, 7.0), (7.0, false));
        assert_eq!(div_fmas_f32(2.0, 3.0, 1.0, false), 7.0);
        assert_eq!(div_fixup_f32(2.5, 2.0, 5.0), 2.5);
        assert_eq!(div_fixup_f32(2.5, -2.0, 5.0), -2.5);
        assert_eq!(div_fixup_f32(0.0, 0.0, 5.0), f32::INFINITY);
        assert!(div_fixup_f32(0.0, 0.0, 0.0).is_nan());
    }

    #[test]
    fn class_bits() {
        assert_eq!(class32(f32::NEG_INFINITY), 1 << 2);
        assert_eq!(class32(-0.0), 1 << 5);
        assert_eq!(class32(f32::from_bits(1)), 1 << 7);
        assert_eq!(class32(1.0), 1 << 8);
        assert_eq!(class32(f32::NAN), 1 << 1);
        assert_eq!(class32(f32::from_bits(0x7F80_0001)), 1);
        assert_eq!(class16(0x7C01), 1);
        assert_eq!(class16(0x7E00), 2);
        assert_eq!(class16(0x0001), 1 << 7);
    }

    /// LLVM's f32 division built from the step helpers: scale, reciprocal,
    /// two refinements of the quotient, div_fmas and div_fixup.
    fn divide(a: f32, b: f32) -> f32 {
        let (den, _) = div_scale_f32(b, b, a);
        let rcp = 1.0 / den;
        let e = (-den).mul_add(rcp, 1.0);
        let rcp = e.mul_add(rcp, rcp);
        let (num, vcc) = div_scale_f32(a, b, a);
        let q = num * rcp;
        let r = (-den).mul_add(q, num);
        let q = r.mul_add(rcp, q);
        let r = (-den).mul_add(q, num);
        div_fixup_f32(div_fmas_f32(r, rcp, q, vcc), b, a)
    }

    #[test]
    fn f32_division_steps_round_huge_and_tiny_quotients_once() {
        let mut x = 0x2545_F491u32;
        let mut cases = vec![(3.0f32, f32::MAX), (1.0, 3.0), (1e-40, 3.0), (2.0, 1e38)];
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let a = f32::from_bits(x);
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            cases.push((a, f32::from_bits(x)));
        }
        for (a, b) in cases {
            if !a.is_finite() || !b.is_finite() {
                continue;
            }
            let (q, want) = (divide(a, b), a / b);
            assert!(
                q.to_bits() == want.to_bits() || (q.is_nan() && want.is_nan()),
                "{a:e} / {b:e}: {q:e}, want {want:e}"
            );
        }
    }
}
