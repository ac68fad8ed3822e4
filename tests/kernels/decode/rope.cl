#include "decode.h"
// Rotary embedding of q and k in place. qk holds q then k (n floats each),
// split into heads of head_dim; element pairs (2m, 2m+1) of a head rotate
// by pos * 2^(-(2m/head_dim) * log2(10000)). One work-item per pair: n pairs.
// Kernarg: 0 qk (global float*), 8 n, 12 head_dim, 16 pos (uint, per token).
DECODE_KERNEL void rope(__global float *qk, uint n, uint head_dim, uint pos) {
    uint i = decode_item();
    if (i >= n)
        return;
    uint half_dim = head_dim / 2;
    uint m = i % half_dim;
    uint at = (i / half_dim) * head_dim + 2 * m;
    float inv_freq = __builtin_exp2f(-(float)(2 * m) / (float)head_dim * ROPE_LOG2_THETA);
    float angle = (float)pos * inv_freq;
    float c = __builtin_cosf(angle);
    float s = __builtin_sinf(angle);
    float x0 = qk[at];
    float x1 = qk[at + 1];
    qk[at] = x0 * c - x1 * s;
    qk[at + 1] = x0 * s + x1 * c;
}
