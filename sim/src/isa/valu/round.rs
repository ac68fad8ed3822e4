//! MODE.FP_ROUND's directed rounding for f32, where host math can give it
//! exactly. The host computes the round-to-nearest-even result `r`; the
//! exact result is known as `s + err` in f64 (the product of two f32 is
//! exact in f64, and TwoSum gives a sum's rounding error exactly), and the
//! sign of `exact - r` says whether `r` must move one step. For an f64 `s`
//! rounded to nearest from `exact`, rounding is monotonic, so `s > r`
//! implies `exact > r` (and `s < r` the reverse); when `s == r` the sign of
//! `err` decides. Operations without such a model are refused by name.

use super::ops::FOp;

/// A rounding mode of MODE.FP_ROUND (2 bits per width: 0 nearest even,
/// 1 toward +inf, 2 toward -inf, 3 toward zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Round {
    NearestEven,
    Up,
    Down,
    Zero,
}

impl Round {
    fn of(bits: u32) -> Round {
        match bits & 3 {
            0 => Round::NearestEven,
            1 => Round::Up,
            2 => Round::Down,
            _ => Round::Zero,
        }
    }

    /// The f32 field (MODE bits 1:0).
    #[inline]
    pub fn f32_of(mode: u32) -> Round {
        Round::of(mode)
    }

    /// The f64/f16 field (MODE bits 3:2).
    #[inline]
    pub fn f16_of(mode: u32) -> Round {
        Round::of(mode >> 2)
    }
}

/// Why `op` cannot run under a directed rounding mode, or None when it can
/// (it is exact whatever the mode, or [`f32_directed`] models it).
pub fn f32_refusal(op: FOp) -> Option<&'static str> {
    use FOp::*;
    match op {
        Add | Sub | Subrev | Mul | Fma | Fmac | Fmamk | Fmaak | Ldexp => None,
        // Exact results: rounding never applies.
        Min | Max | Min3 | Max3 | Minmax | Maxmin | Med3 | Floor | Ceil | Trunc | Rndne
        | FrexpMant | FrexpExp => None,
        Rcp | RcpIflag | Rsq | Sqrt | Exp | Log | Sin | Cos => {
            Some("the hardware's transcendental results under directed rounding are not documented")
        }
        Fract | DivScale | DivFmas | DivFixup => {
            Some("no exact model of this operation under directed rounding")
        }
    }
}

/// Two f64 whose exact sum is `x + y` (Knuth's TwoSum; exact barring
/// overflow, which f32 operands cannot reach in f64).
#[inline]
pub(super) fn two_sum(x: f64, y: f64) -> (f64, f64) {
    let s = x + y;
    let bp = s - x;
    let ap = s - bp;
    (s, (x - ap) + (y - bp))
}

/// The next f32 toward +inf (`f32::next_up` needs Rust 1.86).
fn next_up(x: f32) -> f32 {
    let b = x.to_bits();
    if x.is_nan() || x == f32::INFINITY {
        x
    } else if x == 0.0 {
        f32::from_bits(1)
    } else if b >> 31 == 0 {
        f32::from_bits(b + 1)
    } else {
        f32::from_bits(b - 1)
    }
}

fn next_down(x: f32) -> f32 {
    -next_up(-x)
}

/// `r`, the nearest-even result of `op` on `a`, `b`, `c` (`c`: the third
/// source, the accumulator of fmac or the literal of fmamk/fmaak), rounded
/// instead as `rnd` says. Only for the operations [`f32_refusal`] accepts.
pub fn f32_directed(op: FOp, a: f32, b: f32, c: f32, rnd: Round, r: f32) -> f32 {
    use FOp::*;
    if rnd == Round::NearestEven || r.is_nan() {
        return r;
    }
    if op == Ldexp {
        // x * 2^n (n: the integer bits of `b`, clamped as the host does)
        // is exact in f64.
        let n = (b.to_bits() as i32).clamp(-400, 400);
        let p = f64::from_bits(((1023 + n / 2) as u64) << 52);
        let q = f64::from_bits(((1023 + (n - n / 2)) as u64) << 52);
        return step(f64::from(a) * p * q, 0.0, None, rnd, r);
    }
    let (a, b, c) = (f64::from(a), f64::from(b), f64::from(c));
    if !(a.is_finite() && b.is_finite() && c.is_finite()) {
        // Infinite operands give exact (infinite or NaN) results.
        return r;
    }
    // The exact result as s + err; the two addends, for a zero's sign.
    let sum = |x: f64, y: f64| {
        let (s, e) = two_sum(x, y);
        step(s, e, Some((x, y)), rnd, r)
    };
    match op {
        Add => sum(a, b),
        Sub => sum(a, -b),
        Subrev => sum(b, -a),
        Mul => step(a * b, 0.0, None, rnd, r),
        Fma | Fmac | Fmaak => sum(a * b, c),
        // fmamk: S0 * K + S1, K being `c`.
        Fmamk => sum(a * c, b),
        _ => r,
    }
}

/// `r` moved one step if the exact result `s + err` asks for it.
fn step(s: f64, err: f64, addends: Option<(f64, f64)>, rnd: Round, r: f32) -> f32 {
    let r64 = f64::from(r);
    let above = if s != r64 { s > r64 } else { err > 0.0 };
    let below = if s != r64 { s < r64 } else { err < 0.0 };
    if s == 0.0 && err == 0.0 {
        // An exact zero sum of addends not both +0 is -0 rounding down
        // (IEEE 754 6.3); +0 in the other modes, as the host gives.
        let both_pos_zero = addends.is_some_and(|(x, y)| {
            x == 0.0 && y == 0.0 && x.is_sign_positive() && y.is_sign_positive()
        });
        if rnd == Round::Down && addends.is_some() && !both_pos_zero && r == 0.0 {
            return -0.0;
        }
        return r;
    }
    match rnd {
        Round::NearestEven => r,
        Round::Up if above => next_up(r),
        Round::Down if below => next_down(r),
        Round::Zero if below && r > 0.0 => next_down(r),
        Round::Zero if above && r < 0.0 => next_up(r),
        Round::Up | Round::Down | Round::Zero => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rounded(op: FOp, a: f32, b: f32, c: f32, rnd: Round) -> f32 {
        let r = super::super::fp::f32_lane(op, a, b, c, c, false);
        f32_directed(op, a, b, c, rnd, r)
    }

    #[test]
    fn one_plus_a_tiny_value_rounds_per_mode() {
        let t = f32::from_bits(1); // far below half an ulp of 1.0
        let up = f32::from_bits(1.0f32.to_bits() + 1);
        let below_one = f32::from_bits(1.0f32.to_bits() - 1);
        assert_eq!(rounded(FOp::Add, 1.0, t, 0.0, Round::NearestEven), 1.0);
        assert_eq!(rounded(FOp::Add, 1.0, t, 0.0, Round::Up), up);
        assert_eq!(rounded(FOp::Add, 1.0, t, 0.0, Round::Down), 1.0);
        assert_eq!(rounded(FOp::Sub, 1.0, t, 0.0, Round::Down), below_one);
        assert_eq!(rounded(FOp::Sub, 1.0, t, 0.0, Round::Zero), below_one);
        assert_eq!(rounded(FOp::Sub, 1.0, t, 0.0, Round::Up), 1.0);
        assert_eq!(rounded(FOp::Add, -1.0, -t, 0.0, Round::Zero), -1.0);
        assert_eq!(rounded(FOp::Add, -1.0, -t, 0.0, Round::Down), -up);
    }

    #[test]
    fn products_and_fma_match_f64_truncation() {
        // 1/3 in f32 squared: the f64 product is exact, truncating it must
        // agree with rounding toward zero.
        let x = 1.0f32 / 3.0;
        let p = f64::from(x) * f64::from(x);
        let rz = rounded(FOp::Mul, x, x, 0.0, Round::Zero);
        assert!(f64::from(rz) <= p && f64::from(next_up(rz)) > p);
        let ru = rounded(FOp::Mul, x, x, 0.0, Round::Up);
        assert!(f64::from(ru) >= p && f64::from(next_down(ru)) < p);
        // fma rounds once: x*x - p32 is the product's exact error.
        let p32 = x * x;
        let e = rounded(FOp::Fma, x, x, -p32, Round::Zero);
        assert_eq!(f64::from(e), p - f64::from(p32));
    }

    #[test]
    fn overflow_and_exact_zeros_follow_ieee() {
        let m = f32::MAX;
        assert_eq!(rounded(FOp::Add, m, m, 0.0, Round::Zero), m);
        assert_eq!(rounded(FOp::Add, m, m, 0.0, Round::Down), m);
        assert_eq!(rounded(FOp::Add, m, m, 0.0, Round::Up), f32::INFINITY);
        assert_eq!(rounded(FOp::Mul, -m, 2.0, 0.0, Round::Up), -m);
        let z = rounded(FOp::Sub, 1.5, 1.5, 0.0, Round::Down);
        assert!(z == 0.0 && z.is_sign_negative());
        let z = rounded(FOp::Sub, 1.5, 1.5, 0.0, Round::Up);
        assert!(z == 0.0 && z.is_sign_positive());
        let z = rounded(FOp::Add, 0.0, 0.0, 0.0, Round::Down);
        assert!(z == 0.0 && z.is_sign_positive());
    }

    #[test]
    fn denormal_results_round_per_mode() {
        // 2^-149 * 0.5 is half the smallest denormal.
        let d = f32::from_bits(1);
        assert_eq!(rounded(FOp::Mul, d, 0.5, 0.0, Round::Up), d);
        assert_eq!(rounded(FOp::Mul, d, 0.5, 0.0, Round::Zero), 0.0);
        assert_eq!(rounded(FOp::Mul, -d, 0.5, 0.0, Round::Down), -d);
        assert_eq!(
            rounded(
                FOp::Ldexp,
                3.0 * f32::from_bits(0x0040_0000),
                f32::from_bits(-23i32 as u32),
                0.0,
                Round::Zero
            ),
            d
        );
    }
}
