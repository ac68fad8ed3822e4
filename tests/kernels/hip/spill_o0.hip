// A HIP kernel built at -O0, which keeps every local in scratch: a private
// array filled and then indexed at a run-time position, through helper
// functions (inlined: a real call would need a call stack relaunch cannot
// size, `uses_dynamic_stack`). Two private sizes, two kernels:
//   out[i] = mix(a[j % N], a[(j + 7) % N]), a[k] = 3i + k^2, j = idx[i].
// Built by relaunch_testsupport::asm::hip_o0 (clang++-19 -O0, then LLVM's
// own implicit-argument inference, then llc-19 -O0) and by hip_o0_plain
// (clang++-19 -O0 alone: the inputs it leaves enabled are proven unread
// by relaunch's reader), both with -nogpuinc: no HIP headers, whose -O0 bodies pull in device-library
// printf; clang's builtins give the ids.
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define INLINE __attribute__((always_inline)) inline

static __device__ INLINE unsigned mix(unsigned a, unsigned b) {
    return a * 31u + (b ^ (a >> 3));
}

static __device__ INLINE unsigned pick(const unsigned *a, unsigned n, unsigned j) {
    return mix(a[j % n], a[(j + 7) % n]);
}

template <unsigned N>
static __device__ INLINE void body(const unsigned *idx, unsigned *out, unsigned n) {
    unsigned i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
                 __builtin_amdgcn_workitem_id_x();
    if (i >= n) return;
    unsigned a[N];
    for (unsigned k = 0; k < N; ++k) a[k] = i * 3u + k * k;
    out[i] = pick(a, N, idx[i]);
}

extern "C" __global__ void spill_small(const unsigned *idx, unsigned *out, unsigned n) {
    body<8>(idx, out, n);
}

extern "C" __global__ void spill_large(const unsigned *idx, unsigned *out, unsigned n) {
    body<40>(idx, out, n);
}
