//! The CPU oracle: one decode step of one sequence in Rust f32, written as
//! whole-vector passes (not per work-item like the twins) but with each
//! element's operations in the kernels' order, so the simulated device must
//! match it bit for bit and real hardware within a tolerance.

use super::math::{attend, attention_scale, dot, rms_inv, rope_cos_sin, rotate, sample, silu_mul};
use super::model::{Weights, CAPACITY, EPS, FFN, HEAD_DIM, HIDDEN};

/// One sequence's state across steps: its kv cache per layer.
pub struct Oracle {
    /// Per layer: k rows then v rows, `CAPACITY * HIDDEN` each.
    kv: Vec<Vec<f32>>,
}

/// What one step produced.
#[derive(Debug, Clone, PartialEq)]
pub struct StepOut {
    pub token: u32,
    /// The residual stream after the last layer.
    pub hidden: Vec<f32>,
}

fn matvec(w: &[f32], x: &[f32]) -> Vec<f32> {
    w.chunks_exact(x.len()).map(|row| dot(row, x)).collect()
}

fn rmsnorm(x: &[f32], w: &[f32]) -> Vec<f32> {
    let inv = rms_inv(x, EPS);
    x.iter().zip(w).map(|(v, g)| v * inv * g).collect()
}

fn add_into(x: &mut [f32], delta: &[f32]) {
    for (v, d) in x.iter_mut().zip(delta) {
        *v += d;
    }
}

impl Oracle {
    pub fn new(layers: usize) -> Oracle {
        Oracle {
            kv: vec![vec![0.0; 2 * CAPACITY * HIDDEN]; layers],
        }
    }

    /// Runs the step at `pos` on `input` (the token embedding). `pos` must
    /// be below `CAPACITY` (the demo refuses longer runs up front).
    pub fn step(&mut self, weights: &Weights, input: &[f32], pos: usize) -> StepOut {
        let mut hidden = input.to_vec();
        let heads = HIDDEN / HEAD_DIM;
        let scale = attention_scale(HEAD_DIM as u32);
        for (w, kv) in weights.layers.iter().zip(&mut self.kv) {
            let normed = rmsnorm(&hidden, &w.attn_norm);
            let mut qkv = matvec(&w.wqkv, &normed);
            // Rope on q and k: pairs (2m, 2m+1) of each head.
            for head in 0..2 * heads {
                for m in 0..HEAD_DIM / 2 {
                    let at = head * HEAD_DIM + 2 * m;
                    let cs = rope_cos_sin(m as u32, HEAD_DIM as u32, pos as u32);
                    (qkv[at], qkv[at + 1]) = rotate(qkv[at], qkv[at + 1], cs);
                }
            }
            let (k_rows, v_rows) = kv.split_at_mut(CAPACITY * HIDDEN);
            k_rows[pos * HIDDEN..(pos + 1) * HIDDEN].copy_from_slice(&qkv[HIDDEN..2 * HIDDEN]);
            v_rows[pos * HIDDEN..(pos + 1) * HIDDEN].copy_from_slice(&qkv[2 * HIDDEN..]);
            let mut attn = vec![0.0f32; HIDDEN];
            for head in 0..heads {
                let h0 = head * HEAD_DIM;
                let q = &qkv[h0..h0 + HEAD_DIM];
                let scores: Vec<f32> = (0..=pos)
                    .map(|p| dot(q, &k_rows[p * HIDDEN + h0..p * HIDDEN + h0 + HEAD_DIM]) * scale)
                    .collect();
                for (i, out) in attn.iter_mut().enumerate().skip(h0).take(HEAD_DIM) {
                    *out = attend(&scores, |p| v_rows[p * HIDDEN + i]);
                }
            }
            add_into(&mut hidden, &matvec(&w.wo, &attn));
            let normed = rmsnorm(&hidden, &w.mlp_norm);
            let gate_up = matvec(&w.w_gate_up, &normed);
            let act: Vec<f32> = (0..FFN)
                .map(|i| silu_mul(gate_up[i], gate_up[FFN + i]))
                .collect();
            add_into(&mut hidden, &matvec(&w.w_down, &act));
        }
        StepOut {
            token: sample(&hidden, &weights.final_norm, &weights.lm_head, EPS),
            hidden,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::model::{start_token, VOCAB};

    #[test]
    fn steps_are_deterministic_and_depend_on_history() {
        let w = Weights::generate(2, 1);
        let mut a = Oracle::new(2);
        let mut b = Oracle::new(2);
        let first = a.step(&w, w.embed(start_token(0)), 0);
        assert_eq!(first, b.step(&w, w.embed(start_token(0)), 0));
        assert!((first.token as usize) < VOCAB);
        assert!(first.hidden.iter().all(|v| v.is_finite()));
        // Same input at the next position differs: the cache and rope matter.
        let second = a.step(&w, w.embed(start_token(0)), 1);
        assert_ne!(second.hidden, first.hidden);
    }
}
