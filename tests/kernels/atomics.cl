#include "common.h"
// Atomics on LDS and on global memory: each workgroup builds a 16-bin
// histogram of in[] % 16 with LDS atomic increments, then adds its bins to
// the global histogram with global atomic adds; every work-item also folds
// its input into a global maximum and a global xor.
// hist[0..16] += bins; stats[0] = max(in), stats[1] ^= in (all inputs).
// Kernarg layout: 0 hist (global uint*), 8 stats (global uint*),
// 16 in (global const uint*).
__kernel void atomics(__global uint *hist, __global uint *stats, __global const uint *in) {
    __local uint bins[16];
    uint lid = __builtin_amdgcn_workitem_id_x();
    if (lid < 16) {
        bins[lid] = 0;
    }
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    uint v = in[gid_x()];
    __atomic_fetch_add(&bins[v % 16], 1u, __ATOMIC_RELAXED);
    __atomic_fetch_max(&stats[0], v, __ATOMIC_RELAXED);
    __atomic_fetch_xor(&stats[1], v, __ATOMIC_RELAXED);
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    if (lid < 16) {
        __atomic_fetch_add(&hist[lid], bins[lid], __ATOMIC_RELAXED);
    }
}
