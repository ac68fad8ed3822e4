#include "common.h"
// y = a*x + y over a 2-D grid of `width` columns.
// Kernarg layout: 0 y (global float*), 8 x (global const float*), 16 a (float), 20 width (uint).
__kernel void axpy(__global float *y, __global const float *x, float a, uint width) {
    uint i = gid_y() * width + gid_x();
    y[i] = a * x[i] + y[i];
}
