// Calls through a table of device function pointers (as RCCL calls its
// collectives): each work-item picks its function by its input, so a wave
// calls up to three callees in turn (the compiler's waterfall loop over
// v_readfirstlane). The table lives in .data, relocated at load time
// (R_AMDGPU_RELATIVE64); the callees are reached from nowhere else.
//   out[i] = table[in[i] % 3](in[i]):  2x, x*x, x+7
// Kernarg layout: 0 out (unsigned*), 8 in (const unsigned*).
#include "common.h"
typedef unsigned (*op_t)(unsigned);
__device__ __attribute__((noinline)) unsigned twice(unsigned x) { return 2 * x; }
__device__ __attribute__((noinline)) unsigned square(unsigned x) { return x * x; }
__device__ __attribute__((noinline)) unsigned plus7(unsigned x) { return x + 7; }
__device__ op_t table[3] = {twice, square, plus7};
extern "C" __global__ void fn_table(unsigned *out, const unsigned *in) {
  unsigned i = gid_x();
  unsigned x = in[i];
  out[i] = table[x % 3](x);
}
