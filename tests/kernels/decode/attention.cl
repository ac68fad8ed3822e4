#include "decode.h"
// The kv cache of one layer: k rows [0, capacity) then v rows, n floats a row.

// kv[pos] <- (k, v) where kv_new holds k then v (n floats each).
// Kernarg: 0 kv, 8 kv_new (global float*), 16 n, 20 capacity, 24 pos (uint).
DECODE_KERNEL void kv_append(__global float *kv, __global const float *kv_new, uint n,
                        uint capacity, uint pos) {
    uint i = decode_item();
    if (i >= n || pos >= capacity)
        return;
    kv[pos * n + i] = kv_new[i];
    kv[capacity * n + pos * n + i] = kv_new[n + i];
}

static float score(__global const float *q, __global const float *k, uint head_dim,
                   float scale) {
    float s = 0.0f;
    for (uint d = 0; d < head_dim; ++d)
        s += q[d] * k[d];
    return s * scale;
}

// One query over positions 0..=pos: out[i] = softmax(q_h . k_h[p] / sqrt(d)) . v[p][i]
// for the head h holding element i. Each work-item recomputes its head's
// scores (max pass, then exp-sum pass), positions ascending.
// Kernarg: 0 out, 8 q, 16 kv (global float*), 24 n, 28 head_dim,
// 32 capacity, 36 pos (uint, per token).
DECODE_KERNEL void attention(__global float *out, __global const float *q,
                        __global const float *kv, uint n, uint head_dim,
                        uint capacity, uint pos) {
    uint i = decode_item();
    if (i >= n || pos >= capacity)
        return;
    uint h0 = (i / head_dim) * head_dim;
    __global const float *v = kv + (size_t)capacity * n;
    float scale = 1.0f / __builtin_sqrtf((float)head_dim);
    float best = -INFINITY;
    for (uint p = 0; p <= pos; ++p) {
        float s = score(q + h0, kv + (size_t)p * n + h0, head_dim, scale);
        best = s > best ? s : best;
    }
    float sum = 0.0f;
    float acc = 0.0f;
    for (uint p = 0; p <= pos; ++p) {
        float e = __builtin_expf(score(q + h0, kv + (size_t)p * n + h0, head_dim, scale) - best);
        sum += e;
        acc += e * v[(size_t)p * n + i];
    }
    out[i] = acc / sum;
}
