// A wave-level inclusive prefix sum: DPP row shifts (row_shr:1,2,4,8)
// within each row of 16 lanes, then ds_bpermute to carry each row's total
// into the rows after it, and ds_swizzle (broadcast of lane 0 of each group
// of 32) for the first input of the half-wave. No LDS is allocated:
// ds_bpermute and ds_swizzle only use the LDS crossbar.
// out[2i] = sum of in[] over the lanes of i's wave up to and including i;
// out[2i+1] = in[] of lane 0 of i's half-wave (32 lanes).
// Kernarg layout: 0 out (unsigned*), 8 in (const unsigned*).
#include "common.h"

extern "C" __global__ void wave_scan(unsigned *out, const unsigned *in) {
  unsigned i = gid_x();
  unsigned lane = lane_id();
  unsigned x = in[i];
  // row_shr:n with bound_ctrl: lanes whose source is outside the row read 0.
  x += __builtin_amdgcn_update_dpp(0u, x, 0x111, 0xf, 0xf, true);
  x += __builtin_amdgcn_update_dpp(0u, x, 0x112, 0xf, 0xf, true);
  x += __builtin_amdgcn_update_dpp(0u, x, 0x114, 0xf, 0xf, true);
  x += __builtin_amdgcn_update_dpp(0u, x, 0x118, 0xf, 0xf, true);
  for (unsigned s = 16; s < __builtin_amdgcn_wavefrontsize(); s *= 2) {
    // The last lane of the preceding s-block holds that block's total.
    unsigned src = (lane / s) * s - 1;
    unsigned t = (unsigned)__builtin_amdgcn_ds_bpermute((int)(src * 4), (int)x);
    if (lane & s) {
      x += t;
    }
  }
  // Bitmask mode, and_mask 0, or_mask 0, xor_mask 0: every lane of a group
  // of 32 reads lane 0 of the group.
  unsigned first = (unsigned)__builtin_amdgcn_ds_swizzle((int)in[i], 0x0000);
  out[2 * i] = x;
  out[2 * i + 1] = first;
}
