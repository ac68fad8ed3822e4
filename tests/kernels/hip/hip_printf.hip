// HIP's device printf, which goes through the hostcall service (ockl's
// __ockl_printf_begin / _append_args / _append_string_n): every work-item
// writes out[i] = 3 * i + tag; work-item 0 prints one line with several
// conversions, work-items 0 and 1 (two lanes of one wave, so one hostcall
// packet carries both) print one line each.
// Kernarg layout: 0 out (unsigned*), 8 tag (unsigned), then HIP's hidden
// arguments (code object v4: hidden_hostcall_buffer at 40), which
// relaunch fills on the public-AQL path.
//
// Built by tests/kernels/build.sh into build/gfx1100/hip_printf.co against
// the ROCm device libraries (printf needs ockl), as code object v4.
#include <hip/hip_runtime.h>

extern "C" __global__ void hip_printf(unsigned *out, unsigned tag) {
  unsigned i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
               __builtin_amdgcn_workitem_id_x();
  out[i] = 3u * i + tag;
  if (i == 0) {
    printf("tag %u: %s %d %5.2f %#x %c|%-4s|%e\n", tag, "hello", -7, 1.5, 0xbeefu, 'z', "ab",
           1234.5);
  }
  if (i < 2) {
    printf("item %u of tag %u\n", i, tag);
  }
}
