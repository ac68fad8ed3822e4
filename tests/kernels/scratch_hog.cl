#include "common.h"
// Needs scratch: a private array indexed by a run-time value cannot live in
// registers, so it lives in scratch (the direct PM4 path gives it a ring).
// Kernarg layout: 0 out (global uint*), 8 seed (uint).
__kernel void scratch_hog(__global uint *out, uint seed) {
    volatile uint table[256];
    for (uint k = 0; k < 256; ++k) {
        table[k] = k * seed;
    }
    uint i = gid_x();
    out[i] = table[(seed + i) & 255];
}
