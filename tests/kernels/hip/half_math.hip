// f16 arithmetic, scalar and packed: each work-item reads two halves (a, b)
// and a float scale, and writes
//   out[2i]   = fma(a, b, c) in f16 and max(a, b) as a packed pair,
//   out[2i+1] = (float)a * scale + (float)b, converted to f16, and a - b,
// with c = 0.5. Contraction is off, so every operation rounds to nearest
// even once: a*scale and the sum in f32, then the conversion to f16.
// Kernarg layout: 0 out (half2*), 8 in (const half2*), 16 scale (float).
#include "common.h"

typedef _Float16 half2_t __attribute__((ext_vector_type(2)));

extern "C" __global__ void half_math(half2_t *out, const half2_t *in, float scale) {
#pragma clang fp contract(off)
  unsigned i = gid_x();
  half2_t v = in[i];
  _Float16 a = v.x;
  _Float16 b = v.y;
  _Float16 f = __builtin_fmaf16(a, b, (_Float16)0.5f);
  _Float16 m = __builtin_fmaxf16(a, b);
  half2_t r0 = {f, m};
  _Float16 w = (_Float16)((float)a * scale + (float)b);
  half2_t r1 = {w, (_Float16)(a - b)};
  out[2 * i] = r0;
  out[2 * i + 1] = r1;
}
