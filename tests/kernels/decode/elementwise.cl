#include "decode.h"

// x[i] = x[i] + delta[i] (the residual stream, in place).
// Kernarg: 0 x, 8 delta (global float*), 16 n (uint).
DECODE_KERNEL void residual_add(__global float *x, __global const float *delta, uint n) {
    uint i = decode_item();
    if (i >= n)
        return;
    x[i] = x[i] + delta[i];
}

// out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g)); gate_up
// holds gate then up (n floats each).
// Kernarg: 0 out, 8 gate_up (global float*), 16 n (uint).
DECODE_KERNEL void silu_mul(__global float *out, __global const float *gate_up, uint n) {
    uint i = decode_item();
    if (i >= n)
        return;
    float g = gate_up[i];
    out[i] = g / (1.0f + __builtin_expf(-g)) * gate_up[n + i];
}
