// Shared by the HIP test kernels. They are built with -nogpulib (no ROCm
// device libraries), so threadIdx/blockIdx, which the headers route through
// the device libraries, are not used: these read clang's builtins instead.
#ifndef RELAUNCH_TEST_KERNELS_HIP_COMMON_H
#define RELAUNCH_TEST_KERNELS_HIP_COMMON_H
#include <hip/hip_runtime.h>

__device__ static inline unsigned gid_x() {
  return __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
         __builtin_amdgcn_workitem_id_x();
}

// The lane's index within its wave (wave32 or wave64).
__device__ static inline unsigned lane_id() {
  unsigned lo = __builtin_amdgcn_mbcnt_lo(~0u, 0u);
  return __builtin_amdgcn_wavefrontsize() == 64 ? __builtin_amdgcn_mbcnt_hi(~0u, lo) : lo;
}
#endif
