#include "decode.h"
// Greedy sampling: final rmsnorm of x with w, logits against lm_head
// (vocab rows of n floats), token = the first index of the largest logit.
// One work-item (the only one: grid 1) does it all (vocab * n multiply-adds).
// Kernarg: 0 token (global uint*), 8 x, 16 w, 24 lm_head (global float*),
// 32 n, 36 vocab (uint), 40 eps (float).
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void
sampler(__global uint *token, __global const float *x, __global const float *w,
        __global const float *lm_head, uint n, uint vocab, float eps) {
    float ss = 0.0f;
    for (uint j = 0; j < n; ++j)
        ss += x[j] * x[j];
    float inv = 1.0f / __builtin_sqrtf(ss / (float)n + eps);
    uint best = 0;
    float best_logit = -INFINITY;
    for (uint t = 0; t < vocab; ++t) {
        __global const float *row = lm_head + (size_t)t * n;
        float logit = 0.0f;
        for (uint j = 0; j < n; ++j)
            logit += x[j] * inv * w[j] * row[j];
        if (logit > best_logit) {
            best_logit = logit;
            best = t;
        }
    }
    *token = best;
}
