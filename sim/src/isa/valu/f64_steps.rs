//! The f64 step instructions and the exact arithmetic they need: the
//! division steps (v_div_scale/fmas/fixup_f64, with the ISA's f64
//! thresholds; div_fmas's scaled fma rounded once) and v_trig_preop_f64
//! (53-bit segments of 2/pi for range reduction).

use super::f64::{fl, ldexp, SIGN};

/// The fraction bits of 2/pi, b_1200 (the first after the point) to b_0,
/// most significant first, padded with zeros to 19 words: the table the ISA
/// describes v_trig_preop_f64 reading (a mathematical constant).
const TWO_OVER_PI: [u64; 19] = [
    0xA2F9_836E_4E44_1529,
    0xFC27_57D1_F534_DDC0,
    0xDB62_9599_3C43_9041,
    0xFE51_63AB_DEBB_C561,
    0xB724_6E3A_424D_D2E0,
    0x0649_2EEA_09D1_921C,
    0xFE1D_EB1C_B129_A73E,
    0xE882_35F5_2EBB_4484,
    0xE99C_7026_B45F_7E41,
    0x3991_D639_8353_39F4,
    0x9C84_5F8B_BDF9_283B,
    0x1FF8_97FF_DE05_980F,
    0xEF2F_118B_5A0A_6D1F,
    0x6D36_7ECF_27CB_09B7,
    0x4F46_3F66_9E5F_EA2D,
    0x7527_BAC7_EBE5_F17B,
    0x3D07_39F7_8A52_92EA,
    0x6BFB_5FB1_1F8D_5D08,
    0x5603_3046_FC7B_0000,
];

/// Fraction bit `k` of 2/pi (k = 1 the first after the point); zero past
/// the 1201 the table holds.
fn two_over_pi_bit(k: u32) -> u64 {
    if k == 0 || k > 1201 {
        return 0;
    }
    let i = (k - 1) as usize;
    (TWO_OVER_PI[i / 64] >> (63 - i % 64)) & 1
}

/// v_trig_preop_f64: the 53 bits of 2/pi that follow its first `shift`
/// fraction bits (shift = 53 * S1[4:0], plus the exponent of S0 past 1077),
/// scaled by 2^(-53 - shift) (and 2^128 more for an S0 exponent of 1968 or
/// above): the ISA's segments, whose sum is 2/pi.
pub fn trig_preop(s0: f64, segment: u32) -> f64 {
    let e = exponent(s0);
    let mut shift = (segment & 31) * 53;
    if e > 1077 {
        shift += (e - 1077) as u32;
    }
    // The 53 bits after the first `shift`: fraction bits shift+1 ..=
    // shift+53 (so segment 0 is 2/pi to 53 bits, segment 1 the next 53).
    let mut r = 0u64;
    for k in shift + 1..=shift + 53 {
        r = (r << 1) | two_over_pi_bit(k);
    }
    let mut scale = -53 - shift as i32;
    if e >= 1968 {
        scale += 128;
    }
    ldexp(r as f64, scale)
}

/// The biased exponent field of an f64.
#[inline]
fn exponent(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7FF) as i32
}

/// v_div_scale_f64: `s0` the value to scale (the numerator or the
/// denominator), `s1` the denominator, `s2` the numerator; the result and
/// the lane's VCC bit (v_div_fmas must rescale). The ISA's f64 thresholds:
/// exponent distance 768, numerator exponent 53, scale 2^128.
pub fn div_scale(s0: f64, s1: f64, s2: f64) -> (f64, bool) {
    let up = |v: f64| ldexp(v, 128);
    if s2 == 0.0 || s1 == 0.0 {
        return (f64::NAN, false);
    }
    let quotient_denorm = (s2 / s1).is_subnormal();
    let rcp_denorm = (1.0 / s1).is_subnormal();
    if exponent(s2) - exponent(s1) >= 768 {
        // The quotient is near the f64 maximum: scale the denominator.
        (if s0 == s1 { up(s0) } else { s0 }, true)
    } else if s1.is_subnormal() {
        (up(s0), false)
    } else if rcp_denorm && quotient_denorm {
        // A huge denominator: scaled down (up would overflow), so the
        // quotient comes out 2^128 large and div_fmas scales it back.
        (if s0 == s1 { ldexp(s0, -128) } else { s0 }, true)
    } else if rcp_denorm {
        (ldexp(s0, -128), false)
    } else if quotient_denorm {
        (if s0 == s2 { up(s0) } else { s0 }, true)
    } else if exponent(s2) <= 53 {
        // A tiny numerator.
        (up(s0), false)
    } else {
        (s0, false)
    }
}

/// v_div_fmas_f64: fma, rescaled by 2^128 or 2^-128 (by the quotient's
/// exponent, `s2`) when the lane's VCC bit is set; rounded once.
pub fn div_fmas(s0: f64, s1: f64, s2: f64, vcc: bool) -> f64 {
    if !vcc {
        return s0.mul_add(s1, s2);
    }
    // The ISA's 2^k * fma(...): the scaled exact value, rounded once (a
    // quotient scaled into the denormals must not round twice).
    let k = if exponent(s2) > 1023 { 128 } else { -128 };
    fma_scaled(s0, s1, s2, k)
}

/// (sign, integer mantissa, exponent) of a finite non-zero f64.
fn parts(x: f64) -> (bool, u64, i32) {
    let b = x.to_bits();
    let e = ((b >> 52) & 0x7FF) as i32;
    let m = b & ((1 << 52) - 1);
    if e == 0 {
        (b & SIGN != 0, m, -1074)
    } else {
        (b & SIGN != 0, m | 1 << 52, e - 1075)
    }
}

/// `m` (a 128-bit integer whose bit 0 may be a sticky bit) shifted right
/// by `n`, the bits shifted out kept as a sticky bit.
fn shr_sticky(m: u128, n: u32) -> u128 {
    if n == 0 {
        m
    } else if n >= 128 {
        u128::from(m != 0)
    } else {
        (m >> n) | u128::from(m & ((1u128 << n) - 1) != 0)
    }
}

/// (a * b + c) * 2^k rounded once to nearest even.
pub fn fma_scaled(a: f64, b: f64, c: f64, k: i32) -> f64 {
    let r = a.mul_add(b, c);
    if !a.is_finite() || !b.is_finite() || !c.is_finite() || a == 0.0 || b == 0.0 {
        // Specials and exact sums: the host's fma is right, the scale exact
        // or a rounding of an exact c.
        return ldexp(r, k);
    }
    let (sa, ma, ea) = parts(a);
    let (sb, mb, eb) = parts(b);
    let (sp, mp, ep) = (sa != sb, u128::from(ma) * u128::from(mb), ea + eb);
    // Both terms placed so the larger top bit sits at bit 125 (room for a
    // carry), the rest of the smaller term kept as a sticky bit.
    let top = |m: u128, e: i32| 127 - m.leading_zeros() as i32 + e;
    let (sc, mc, ec) = if c == 0.0 {
        (sp, 0u128, ep)
    } else {
        let (s, m, e) = parts(c);
        (s, u128::from(m), e)
    };
    let hi = if mc == 0 {
        top(mp, ep)
    } else {
        top(mp, ep).max(top(mc, ec))
    };
    let base = hi - 125;
    let place = |m: u128, e: i32| {
        if e >= base {
            m << (e - base) as u32
        } else {
            shr_sticky(m, (base - e) as u32)
        }
    };
    let (p, q) = (place(mp, ep), place(mc, ec));
    let (neg, m) = if sp == sc {
        (sp, p + q)
    } else if p >= q {
        (sp, p - q)
    } else {
        (sc, q - p)
    };
    if m == 0 {
        return r;
    }
    round_exact(neg, m, base + k)
}

/// sign * m * 2^e rounded to the nearest f64 (ties to even); bit 0 of `m`
/// may be a sticky bit below the kept precision.
fn round_exact(neg: bool, m: u128, e: i32) -> f64 {
    let sign = if neg { SIGN } else { 0 };
    let t = 127 - m.leading_zeros() as i32;
    // The exponent of the lowest kept bit: 53 bits, or the denormal grid.
    let low = (t + e - 52).max(-1074);
    let shift = low - e;
    let kept = if shift <= 0 {
        (m << (-shift) as u32) as u64
    } else {
        // Everything below half the lowest kept bit's weight rounds to 0.
        let n = shift as u32;
        if n > 128 {
            0
        } else {
            let q = if n == 128 { 0 } else { m >> n };
            let rest = if n == 128 { m } else { m & ((1u128 << n) - 1) };
            let half = 1u128 << (n - 1);
            let up = rest > half || (rest == half && q & 1 == 1);
            (q + u128::from(up)) as u64
        }
    };
    // kept is at most 2^53: a carry out of 53 bits moves the exponent.
    let (kept, low) = if kept == 1 << 53 {
        (1u64 << 52, low + 1)
    } else {
        (kept, low)
    };
    if kept >= 1 << 52 {
        let exp = low + 52 + 1023;
        if exp >= 0x7FF {
            return f64::from_bits(sign | 0x7FF0_0000_0000_0000);
        }
        f64::from_bits(sign | (exp as u64) << 52 | (kept & ((1 << 52) - 1)))
    } else {
        // Denormal (low is -1074 here).
        f64::from_bits(sign | kept)
    }
}

/// v_div_fixup_f64: the special cases of n/d around the quotient `s0`
/// (`s1` the denominator, `s2` the numerator).
pub fn div_fixup(s0: f64, s1: f64, s2: f64) -> f64 {
    let neg = s1.is_sign_negative() != s2.is_sign_negative();
    let signed = |v: f64| if neg { -v.abs() } else { v.abs() };
    let quiet = |v: f64| fl(v.to_bits() | (1 << 51));
    if s2.is_nan() {
        quiet(s2)
    } else if s1.is_nan() {
        quiet(s1)
    } else if (s1 == 0.0 && s2 == 0.0) || (s1.is_infinite() && s2.is_infinite()) {
        fl(0xFFF8_0000_0000_0000)
    } else if s1 == 0.0 || s2.is_infinite() {
        signed(f64::INFINITY)
    } else if s1.is_infinite() || s2 == 0.0 || exponent(s2) - exponent(s1) < -1075 {
        // Zero, or a quotient below the smallest denormal.
        signed(0.0)
    } else if exponent(s1) == 0x7FF || s0.is_nan() {
        signed(f64::INFINITY)
    } else {
        signed(s0)
    }
}
