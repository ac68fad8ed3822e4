#include "common.h"
// Sum each workgroup's slice of in[] through LDS: a tree of halving steps
// with a barrier between them. out[group] = sum of the group's inputs
// (wrapping u32). The workgroup size must be a power of two <= 256.
// Kernarg layout: 0 out (global uint*), 8 in (global const uint*).
__kernel void reduce_lds(__global uint *out, __global const uint *in) {
    __local uint part[256];
    uint lid = __builtin_amdgcn_workitem_id_x();
    uint n = __builtin_amdgcn_workgroup_size_x();
    part[lid] = in[gid_x()];
    for (uint step = n / 2; step > 0; step /= 2) {
        __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
        __builtin_amdgcn_s_barrier();
        __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
        if (lid < step) {
            part[lid] += part[lid + step];
        }
    }
    if (lid == 0) {
        out[__builtin_amdgcn_workgroup_id_x()] = part[0];
    }
}
