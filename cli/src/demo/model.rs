//! The demo model: fixed tiny dimensions and deterministic weights, shared by
//! the device buffers and the CPU oracle. Weights come from a seeded
//! splitmix64 stream, so every run (and every device) sees the same model.

use relaunch_lanes::reference::DecodeShape;

/// Hidden width (elements).
pub const HIDDEN: usize = 64;
/// Attention head width; `HIDDEN / HEAD_DIM` heads.
pub const HEAD_DIM: usize = 16;
/// MLP inner width.
pub const FFN: usize = 128;
pub const VOCAB: usize = 64;
/// KV-cache capacity: the most tokens one run can decode.
pub const CAPACITY: usize = 64;
/// RMS-norm epsilon (kernarg `eps`).
pub const EPS: f32 = 1e-5;

/// The reference graph's shape for this model.
pub fn shape(layers: usize, sequences: usize) -> DecodeShape {
    DecodeShape {
        layers,
        sequences,
        hidden: HIDDEN as u64,
        ffn: FFN as u64,
        vocab: VOCAB as u64,
        max_positions: CAPACITY as u64,
    }
}

/// One layer's weights, laid out as the kernels read them (row-major,
/// one row per output element).
#[derive(Debug, Clone)]
pub struct LayerWeights {
    pub attn_norm: Vec<f32>,
    /// `3 * HIDDEN` rows of `HIDDEN`: q, k, v.
    pub wqkv: Vec<f32>,
    /// `HIDDEN` rows of `HIDDEN`.
    pub wo: Vec<f32>,
    pub mlp_norm: Vec<f32>,
    /// `2 * FFN` rows of `HIDDEN`: gate, up.
    pub w_gate_up: Vec<f32>,
    /// `HIDDEN` rows of `FFN`.
    pub w_down: Vec<f32>,
}

#[derive(Debug, Clone)]
pub struct Weights {
    pub layers: Vec<LayerWeights>,
    pub final_norm: Vec<f32>,
    /// `VOCAB` rows of `HIDDEN`.
    pub lm_head: Vec<f32>,
    /// `VOCAB` rows of `HIDDEN`: the per-token input the host writes.
    /// Scaled up (x4) so the input token stays visible in the residual
    /// stream: greedy decoding of a random model otherwise settles on one
    /// token.
    pub embedding: Vec<f32>,
}

impl Weights {
    pub fn generate(layers: usize, seed: u64) -> Weights {
        let mut rng = SplitMix64(seed);
        let layers = (0..layers)
            .map(|_| LayerWeights {
                attn_norm: rng.norm_weights(HIDDEN),
                wqkv: rng.matrix(3 * HIDDEN, HIDDEN),
                wo: rng.matrix(HIDDEN, HIDDEN),
                mlp_norm: rng.norm_weights(HIDDEN),
                w_gate_up: rng.matrix(2 * FFN, HIDDEN),
                w_down: rng.matrix(HIDDEN, FFN),
            })
            .collect();
        Weights {
            layers,
            final_norm: rng.norm_weights(HIDDEN),
            lm_head: rng.matrix(VOCAB, HIDDEN),
            embedding: rng.uniform(VOCAB * HIDDEN, 4.0),
        }
    }

    /// The embedding row of `token` (the next step's input).
    pub fn embed(&self, token: u32) -> &[f32] {
        let at = (token as usize % VOCAB) * HIDDEN;
        &self.embedding[at..at + HIDDEN]
    }
}

/// The first input token of sequence `s` (distinct per sequence).
pub fn start_token(sequence: usize) -> u32 {
    ((sequence * 7 + 1) % VOCAB) as u32
}

/// splitmix64: tiny, seedable, and identical on every platform.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [-scale, scale), from the top 24 bits (exact in f32).
    fn unit(&mut self, scale: f32) -> f32 {
        let u = (self.next() >> 40) as f32 / (1u32 << 24) as f32;
        (2.0 * u - 1.0) * scale
    }

    fn uniform(&mut self, n: usize, scale: f32) -> Vec<f32> {
        (0..n).map(|_| self.unit(scale)).collect()
    }

    /// Rows of `cols`, scaled so outputs keep roughly unit size.
    fn matrix(&mut self, rows: usize, cols: usize) -> Vec<f32> {
        let scale = 1.0 / (cols as f32).sqrt();
        self.uniform(rows * cols, scale)
    }

    fn norm_weights(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| 1.0 + self.unit(0.1)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_deterministic_and_sized() {
        let a = Weights::generate(2, 7);
        let b = Weights::generate(2, 7);
        assert_eq!(a.layers[1].w_down, b.layers[1].w_down);
        assert_eq!(a.layers.len(), 2);
        assert_eq!(a.layers[0].wqkv.len(), 3 * HIDDEN * HIDDEN);
        assert_eq!(a.layers[0].w_gate_up.len(), 2 * FFN * HIDDEN);
        assert_eq!(a.lm_head.len(), VOCAB * HIDDEN);
        assert_ne!(a.layers[0].wo, a.layers[1].wo);
        let bound = 1.0 / (HIDDEN as f32).sqrt();
        assert!(a.layers[0].wo.iter().all(|w| w.abs() <= bound));
        assert_eq!(a.embed(3).len(), HIDDEN);
        assert_ne!(start_token(0), start_token(1));
    }
}
