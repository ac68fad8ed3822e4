#include "common.h"
// Needs more scratch than the direct PM4 path gives (a private array of
// 17000 words, 68000 bytes per work-item, over its 64 KiB cap), so the PM4
// path refuses it and a graph runs its lane as public AQL.
// Kernarg layout: 0 out (global uint*), 8 seed (uint).
__kernel void scratch_huge(__global uint *out, uint seed) {
    volatile uint table[17000];
    for (uint k = 0; k < 17000; ++k) {
        table[k] = k * seed;
    }
    uint i = gid_x();
    out[i] = table[(seed + i) % 17000];
}
