#include "decode.h"
// out[r] = sum_c w[r*cols + c] * x[c] (row-major weights), c ascending.
// Used for the qkv, output, gate/up and down projections.
// Kernarg: 0 out, 8 x, 16 w (global float*), 24 rows, 28 cols (uint).
DECODE_KERNEL void matvec(__global float *out, __global const float *x,
                     __global const float *w, uint rows, uint cols) {
    uint r = decode_item();
    if (r >= rows)
        return;
    __global const float *row = w + (size_t)r * cols;
    float acc = 0.0f;
    for (uint c = 0; c < cols; ++c)
        acc += row[c] * x[c];
    out[r] = acc;
}
