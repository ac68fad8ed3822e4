#include "decode.h"
// out[i] = (x[i] * inv) * w[i], inv = 1 / sqrt(sum_j x[j]*x[j] / n + eps).
// Each work-item recomputes the sum (no cross-lane reduction, no LDS).
// Kernarg: 0 out, 8 x, 16 w (global float*), 24 n (uint), 28 eps (float).
DECODE_KERNEL void rmsnorm(__global float *out, __global const float *x,
                      __global const float *w, uint n, float eps) {
    uint i = decode_item();
    if (i >= n)
        return;
    float ss = 0.0f;
    for (uint j = 0; j < n; ++j)
        ss += x[j] * x[j];
    float inv = 1.0f / __builtin_sqrtf(ss / (float)n + eps);
    out[i] = x[i] * inv * w[i];
}
