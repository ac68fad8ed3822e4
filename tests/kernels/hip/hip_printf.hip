// HIP's device printf, which goes through the hostcall service (ockl's
// __ockl_printf_begin / _append_args / _append_string_n): every work-item
// writes out[i] = 3 * i + tag; work-item 0 prints one line with several
// conversions, work-items 0 and 1 (two lanes of one wave, so one hostcall
// packet carries both) print one line each.
// Kernarg layout: 0 out (unsigned*), 8 tag (unsigned), then HIP's hidden
// arguments (code object v4: hidden_hostcall_buffer at 40), which
// relaunch fills on the public-AQL path.
//
// `hostcall_unknown` (below) asks for a hostcall service relaunch does not
// serve. Built by tests/kernels/build.sh into build/gfx1100/hip_printf.co
// against the ROCm device libraries (printf needs ockl), as code object v4.
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

// A hostcall request for a service relaunch does not serve (id 9; ockl
// knows 0..4): work-item 0 stores the low word of the reply, which the
// host answers with -1, then prints, so the wave goes on after the reply.
typedef long hostcall_reply __attribute__((ext_vector_type(2)));
extern "C" __device__ hostcall_reply __ockl_hostcall_preview(unsigned service, unsigned long a0,
                                                             unsigned long a1, unsigned long a2,
                                                             unsigned long a3, unsigned long a4,
                                                             unsigned long a5, unsigned long a6,
                                                             unsigned long a7);

extern "C" __global__ void hostcall_unknown(unsigned *out) {
  if (__builtin_amdgcn_workgroup_id_x() == 0 && __builtin_amdgcn_workitem_id_x() == 0) {
    hostcall_reply r = __ockl_hostcall_preview(9, 1, 2, 3, 4, 5, 6, 7, 8);
    out[0] = (unsigned)r.x;
    printf("after the unknown service\n");
  }
}
