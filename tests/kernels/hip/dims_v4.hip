// A HIP kernel built as ROCm 5.x builds it (code object v4): blockDim and
// gridDim come from the AQL dispatch packet through the dispatch pointer.
// Built by tests/hip_dispatch_packet.rs with
//   clang-19 -x hip -nogpulib --offload-arch=gfx1100 -mcode-object-version=4
//     --cuda-device-only --no-gpu-bundle-output -O2
// against Debian's HIP headers (libamdhip64-dev). With -nogpulib there are
// no ROCm device libraries, so the four work-item functions the headers
// call are defined here the way the device libraries define them for code
// object v4: through the clang builtins, which read the dispatch packet.
#include <hip/hip_runtime.h>

extern "C" __device__ size_t __ockl_get_local_id(unsigned d) {
  return d == 0 ? __builtin_amdgcn_workitem_id_x()
       : d == 1 ? __builtin_amdgcn_workitem_id_y()
                : __builtin_amdgcn_workitem_id_z();
}
extern "C" __device__ size_t __ockl_get_group_id(unsigned d) {
  return d == 0 ? __builtin_amdgcn_workgroup_id_x()
       : d == 1 ? __builtin_amdgcn_workgroup_id_y()
                : __builtin_amdgcn_workgroup_id_z();
}
extern "C" __device__ size_t __ockl_get_local_size(unsigned d) {
  return d == 0 ? __builtin_amdgcn_workgroup_size_x()
       : d == 1 ? __builtin_amdgcn_workgroup_size_y()
                : __builtin_amdgcn_workgroup_size_z();
}
extern "C" __device__ size_t __ockl_get_num_groups(unsigned d) {
  unsigned grid = d == 0 ? __builtin_amdgcn_grid_size_x()
                : d == 1 ? __builtin_amdgcn_grid_size_y()
                         : __builtin_amdgcn_grid_size_z();
  unsigned wg = __ockl_get_local_size(d);
  return (grid + wg - 1) / wg;
}

// out[2 * blockIdx.x] = blockDim.x, out[2 * blockIdx.x + 1] = gridDim.x.
extern "C" __global__ void dims(unsigned *out) {
  if (threadIdx.x == 0) {
    out[2 * blockIdx.x] = blockDim.x;
    out[2 * blockIdx.x + 1] = gridDim.x;
  }
}
