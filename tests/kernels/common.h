// Work-item indexing from clang's AMDGPU builtins. The kernels are built with
// -nogpulib (no ROCm device libraries), so OpenCL's get_global_id() and
// friends are not available; these do the same without a global offset.
#ifndef RELAUNCH_TEST_KERNELS_COMMON_H
#define RELAUNCH_TEST_KERNELS_COMMON_H

static inline uint gid_x(void) {
    return __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x()
        + __builtin_amdgcn_workitem_id_x();
}

static inline uint gid_y(void) {
    return __builtin_amdgcn_workgroup_id_y() * __builtin_amdgcn_workgroup_size_y()
        + __builtin_amdgcn_workitem_id_y();
}

#endif
