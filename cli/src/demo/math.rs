//! Scalar pieces of the decode kernels, written once in the operation order
//! of `tests/kernels/decode/*.cl` and used by both the host twins and the
//! CPU oracle. Sums run in ascending index order from 0.0, products
//! associate left to right as in the OpenCL source (contraction is off).

/// log2(10000), as the kernels' `ROPE_LOG2_THETA` literal.
pub const ROPE_LOG2_THETA: f32 = 13.287712;

/// `sum_i a[i] * b[i]`, ascending.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = 0.0f32;
    for (x, y) in a.iter().zip(b) {
        acc += x * y;
    }
    acc
}

/// `1 / sqrt(sum x^2 / n + eps)` (rmsnorm and the sampler).
pub fn rms_inv(x: &[f32], eps: f32) -> f32 {
    let mut ss = 0.0f32;
    for v in x {
        ss += v * v;
    }
    1.0 / (ss / x.len() as f32 + eps).sqrt()
}

/// The rotation of pair `m` of a head at `pos`: returns (cos, sin).
pub fn rope_cos_sin(m: u32, head_dim: u32, pos: u32) -> (f32, f32) {
    let inv_freq = (-((2 * m) as f32) / head_dim as f32 * ROPE_LOG2_THETA).exp2();
    let angle = pos as f32 * inv_freq;
    (angle.cos(), angle.sin())
}

/// `(x0, x1)` rotated by (cos, sin).
pub fn rotate(x0: f32, x1: f32, (c, s): (f32, f32)) -> (f32, f32) {
    (x0 * c - x1 * s, x0 * s + x1 * c)
}

/// `silu(g) * u` with `silu(g) = g / (1 + exp(-g))`.
pub fn silu_mul(g: f32, u: f32) -> f32 {
    g / (1.0 + (-g).exp()) * u
}

/// The softmax-weighted value of one element: `scores` are one head's
/// scaled scores over positions 0..=pos, `value(p)` that element's value
/// at position p.
pub fn attend(scores: &[f32], mut value: impl FnMut(usize) -> f32) -> f32 {
    let mut best = f32::NEG_INFINITY;
    for &s in scores {
        best = if s > best { s } else { best };
    }
    let mut sum = 0.0f32;
    let mut acc = 0.0f32;
    for (p, &s) in scores.iter().enumerate() {
        let e = (s - best).exp();
        sum += e;
        acc += e * value(p);
    }
    acc / sum
}

/// The attention scale `1 / sqrt(head_dim)`.
pub fn attention_scale(head_dim: u32) -> f32 {
    1.0 / (head_dim as f32).sqrt()
}

/// Greedy sampling over `vocab` rows of `lm_head`: the first index of the
/// largest logit of `(x * inv) * w` (`inv` from `rms_inv`).
pub fn sample(x: &[f32], w: &[f32], lm_head: &[f32], eps: f32) -> u32 {
    let n = x.len();
    let inv = rms_inv(x, eps);
    let mut best = 0u32;
    let mut best_logit = f32::NEG_INFINITY;
    for (t, row) in lm_head.chunks_exact(n.max(1)).enumerate() {
        let mut logit = 0.0f32;
        for j in 0..n {
            logit += x[j] * inv * w[j] * row[j];
        }
        if logit > best_logit {
            best_logit = logit;
            best = t as u32;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_compute_what_they_say() {
        assert_eq!(dot(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]), 32.0);
        assert_eq!(rms_inv(&[3.0, 4.0], 0.0), 1.0 / 12.5f32.sqrt());
        assert_eq!(rope_cos_sin(0, 16, 0), (1.0, 0.0));
        let (c, s) = rope_cos_sin(0, 16, 1);
        assert!((c - 1f32.cos()).abs() < 1e-7 && (s - 1f32.sin()).abs() < 1e-7);
        assert_eq!(rotate(1.0, 0.0, (0.0, 1.0)), (0.0, 1.0));
        assert_eq!(silu_mul(0.0, 5.0), 0.0);
        // Equal scores: the plain mean of the values.
        assert_eq!(attend(&[0.5, 0.5], |p| [2.0, 4.0][p]), 3.0);
        // One position: its value, whatever the score.
        assert_eq!(attend(&[-100.0], |_| 7.0), 7.0);
        // Ties go to the first index.
        let lm = [1.0, 0.0, 1.0, 0.0, 0.0, 1.0];
        assert_eq!(sample(&[1.0, 0.0], &[1.0, 1.0], &lm, 0.0), 0);
        assert_eq!(sample(&[0.0, 1.0], &[1.0, 1.0], &lm, 0.0), 2);
    }
}
