#include "common.h"
// Per-lane loops of different trip counts and nested branches: each
// work-item counts the Collatz steps of its input (capped at 1000) and
// sums the odd values met on the way, so lanes leave the loop at different
// iterations and take different sides of the branch in between.
// out[2i] = steps, out[2i+1] = sum of odd values (wrapping u32).
// Kernarg layout: 0 out (global uint*), 8 in (global const uint*).
__kernel void divergent(__global uint *out, __global const uint *in) {
    uint i = gid_x();
    uint n = in[i];
    uint steps = 0;
    uint odd_sum = 0;
    while (n > 1 && steps < 1000) {
        if (n & 1) {
            odd_sum += n;
            n = 3 * n + 1;
        } else if ((n & 3) == 0) {
            n >>= 2;
            steps++;
        } else {
            n >>= 1;
        }
        steps++;
    }
    out[2 * i] = steps;
    out[2 * i + 1] = odd_sum;
}
