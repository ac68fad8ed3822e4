#include "common.h"
// Reverse each workgroup's slice of data[] through dynamic group memory.
// Kernarg layout: 0 data (global uint*), 8 tmp (local uint*: the byte offset
// of the dynamic group segment, 4 bytes).
__kernel void lds_reverse(__global uint *data, __local uint *tmp) {
    uint lid = __builtin_amdgcn_workitem_id_x();
    uint n = __builtin_amdgcn_workgroup_size_x();
    uint i = gid_x();
    tmp[lid] = data[i];
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    data[i] = tmp[n - 1 - lid];
}
