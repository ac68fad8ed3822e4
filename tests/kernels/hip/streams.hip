// The two kernels of the HIP multistream example (examples/hip_streams.rs):
// `counter` (every work-item adds 1 to the u32 at its argument) and
// `add_scalar` (acc[i] += value, i the global work-item id). extern "C"
// keeps the symbols unmangled. Built as code object v4, which HIP 5.2.3's
// loader takes (tests/it/sim_rocm.rs builds it with clang++-19):
//   clang++-19 -x hip --offload-arch=gfx1030 -mcode-object-version=4 \
//       --cuda-device-only -O2 --rocm-device-lib-path=<bitcode dir> \
//       tests/kernels/hip/streams.hip -o streams.co
#include <hip/hip_runtime.h>

extern "C" __global__ void counter(unsigned *counter) {
  __hip_atomic_fetch_add(counter, 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}

extern "C" __global__ void add_scalar(unsigned *acc, unsigned value) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  acc[i] += value;
}
