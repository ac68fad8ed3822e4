// Dot-product builtins: each work-item reads one record of eight dwords
//   {a_f16x2, b_f16x2, a_bf16x2, b_bf16x2, a_i8x4, b_i8x4, c_f32, c_i32}
// and writes five dwords:
//   out[5i]   = fdot2(a_f16, b_f16, c_f32)                  v_dot2_f32_f16
//   out[5i+1] = sdot4(a_i8, b_i8, c_i32), signed x signed   v_dot4_i32_i8 / _iu8
//   out[5i+2] = udot8(a_i8, b_i8, c_i32) with clamp         v_dot8_u32_u4
//   out[5i+3] gfx11+: fdot2_f32_bf16(a_bf16, b_bf16, c_f32) v_dot2_f32_bf16
//             gfx10.3: fdot2(a_f16, b_f16, c_f32) clamped    v_dot2_f32_f16 clamp
//   out[5i+4] gfx11+: fdot2_f16_f16(a_f16, b_f16, (half)c) in the low half
//             gfx10.3: sdot2(a_i8 as 2 x i16, b_i8 as 2 x i16, c_i32)
// Kernarg layout: 0 out (uint*), 8 in (const uint*). Not built for gfx1010
// (no dot instructions).
#include "common.h"

typedef _Float16 half2_t __attribute__((ext_vector_type(2)));
typedef __bf16 bf162_t __attribute__((ext_vector_type(2)));
typedef short short2_t __attribute__((ext_vector_type(2)));

template <typename T> __device__ T as(unsigned v) {
  T t;
  __builtin_memcpy(&t, &v, sizeof(t));
  return t;
}

extern "C" __global__ void dot_math(unsigned *out, const unsigned *in) {
  unsigned i = gid_x();
  const unsigned *r = in + 8 * i;
  half2_t ah = as<half2_t>(r[0]), bh = as<half2_t>(r[1]);
  float c = as<float>(r[6]);
  int ci = (int)r[7];
  unsigned *o = out + 5 * i;
  o[0] = __builtin_bit_cast(unsigned, __builtin_amdgcn_fdot2(ah, bh, c, false));
#if defined(__gfx1030__)
  o[1] = (unsigned)__builtin_amdgcn_sdot4((int)r[4], (int)r[5], ci, false);
#else
  o[1] = (unsigned)__builtin_amdgcn_sudot4(true, (int)r[4], true, (int)r[5], ci, false);
#endif
  o[2] = __builtin_amdgcn_udot8(r[4], r[5], (unsigned)ci, true);
#if defined(__gfx1030__)
  o[3] = __builtin_bit_cast(unsigned, __builtin_amdgcn_fdot2(ah, bh, c, true));
  o[4] = (unsigned)__builtin_amdgcn_sdot2(as<short2_t>(r[4]), as<short2_t>(r[5]), ci, false);
#else
  o[3] = __builtin_bit_cast(
      unsigned, __builtin_amdgcn_fdot2_f32_bf16(as<bf162_t>(r[2]), as<bf162_t>(r[3]), c, false));
  _Float16 h = __builtin_amdgcn_fdot2_f16_f16(ah, bh, (_Float16)c);
  o[4] = (unsigned)__builtin_bit_cast(unsigned short, h);
#endif
}
