#include "common.h"
// Two stages: produce writes buf[i] = i * scale, consume adds buf[i] into out[i].
// produce kernargs: 0 buf (global uint*), 8 scale (uint).
// consume kernargs: 0 out (global uint*), 8 buf (global const uint*).
__kernel void produce(__global uint *buf, uint scale) {
    uint i = gid_x();
    buf[i] = i * scale;
}

__kernel void consume(__global uint *out, __global const uint *buf) {
    uint i = gid_x();
    out[i] += buf[i];
}
