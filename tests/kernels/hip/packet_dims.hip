// Certification of code object v4 HIP kernels (tests/it/certify_cli.rs),
// built with the ROCm device libraries:
//   clang++-19 -x hip --offload-arch=gfx1030 -mcode-object-version=4
//     --rocm-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode
//     --cuda-device-only -O2
// For v4 the device libraries read blockDim and gridDim from the AQL
// dispatch packet through the dispatch pointer (s[4:5] after the private
// segment buffer s[0:3]); the kernarg pointer follows in s[6:7].
#include <hip/hip_runtime.h>

// Reads its workgroup size and grid from the dispatch packet and writes
// only through its kernarg pointer: vmem_only.
extern "C" __global__ void block_dims(unsigned *out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = blockDim.x * 1000u + gridDim.x;
}

// A __constant__ variable lives in a writable segment (the host may
// hipMemcpyToSymbol into it): a scalar load of it is not proven.
__constant__ unsigned coefficients[16];

extern "C" __global__ void constant_table(unsigned *out) {
  out[threadIdx.x] = coefficients[3] + coefficients[9] * blockDim.x;
}
