// 64-bit integer math: each work-item reads two u64 (x, y) and writes
//   out[4i]   = x * y + (x >> (y & 63))          (wrapping)
//   out[4i+1] = the high 64 bits of the 128-bit product x * y
//   out[4i+2] = (i64)x >> (y & 63), arithmetic, xor (x << (y >> 58))
//   out[4i+3] = x / 10 + popcount(y) + clz(x | 1)   (x / 10 unsigned)
// Kernarg layout: 0 out (unsigned long long*), 8 in (const unsigned long long*).
#include "common.h"

extern "C" __global__ void int64_math(unsigned long long *out, const unsigned long long *in) {
  unsigned i = gid_x();
  unsigned long long x = in[2 * i];
  unsigned long long y = in[2 * i + 1];
  out[4 * i] = x * y + (x >> (y & 63));
  out[4 * i + 1] = (unsigned long long)(((unsigned __int128)x * y) >> 64);
  out[4 * i + 2] = (unsigned long long)((long long)x >> (y & 63)) ^ (x << (y >> 58));
  out[4 * i + 3] = x / 10 + (unsigned long long)__builtin_popcountll(y) +
                   (unsigned long long)__builtin_clzll(x | 1);
}
