#include "common.h"
// acc[i] += value for every work-item i; `value` is patched per token.
// Kernarg layout: 0 acc (global uint*), 8 value (uint).
__kernel void add_scalar(__global uint *acc, uint value) {
    uint i = gid_x();
    acc[i] += value;
}
