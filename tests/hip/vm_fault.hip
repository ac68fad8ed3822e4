// An unmodified HIP program whose kernel stores to an address nothing
// maps. On hardware ROCr reports "Memory access fault by GPU node-N" and
// aborts the process; the same must happen on the simulated GPU.
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void wild(int *p) { p[threadIdx.x] = 42; }

int main() {
    std::printf("vm_fault: launching\n");
    std::fflush(stdout);
    hipLaunchKernelGGL(wild, dim3(1), dim3(64), 0, 0, (int *)0x7eadbeef0000ull);
    hipError_t e = hipDeviceSynchronize();
    std::printf("vm_fault: the process lived: %s\n", hipGetErrorString(e));
    return 0;
}
