// The reference guide's counter kernel, under its symbol `ctr_k`: every
// work-item adds 1 to the u32 its only argument points at, so N dispatches
// of one work-item leave N (the guide's C, Python and graph smokes).
// Kernarg layout: 0 counter (unsigned*), then HIP's hidden arguments, which
// relaunch fills. extern "C" keeps the symbol unmangled.
//
// Built by tests/kernels/build.sh into build/<target>/ctr_k.co; on a ROCm
// machine the guide's own command builds it too:
//   hipcc --genco --offload-arch="$GPU_ARCH" tests/kernels/hip/ctr_k.hip \
//       -o /tmp/relaunch-counter.co
#include <hip/hip_runtime.h>

extern "C" __global__ void ctr_k(unsigned *counter) {
  __hip_atomic_fetch_add(counter, 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
