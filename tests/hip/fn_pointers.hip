// An unmodified HIP program calling device functions through a table of
// pointers (as RCCL calls its collectives): each thread picks its function
// by its input, so every wave runs the compiler's loop of calls over the
// lanes' distinct pointers. The table is a __device__ array the loader
// relocates; the callees are reached from nowhere else. Launched directly
// and through a stream-captured graph. Prints "fn_pointers: ok" when every
// element is right.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
    std::printf("%s failed: %s\n", #x, hipGetErrorString(e_)); return 1; } } while (0)

typedef unsigned (*op_t)(unsigned);
__device__ __attribute__((noinline)) unsigned twice(unsigned x) { return 2u * x; }
__device__ __attribute__((noinline)) unsigned square(unsigned x) { return x * x; }
__device__ __attribute__((noinline)) unsigned plus7(unsigned x) { return x + 7u; }
__device__ op_t table[3] = {twice, square, plus7};

__global__ void apply(const unsigned *in, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x = in[i];
    out[i] = table[x % 3u](x);
}

static unsigned want(unsigned x) {
    switch (x % 3u) {
    case 0: return 2u * x;
    case 1: return x * x;
    default: return x + 7u;
    }
}

static int check(const std::vector<unsigned> &in, const std::vector<unsigned> &out, const char *what) {
    for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] != want(in[i])) {
            std::printf("fn_pointers: %s out[%zu] = %u, want %u\n", what, i, out[i], want(in[i]));
            return 1;
        }
    }
    return 0;
}

int main() {
    const int n = 4096;
    std::vector<unsigned> in(n), out(n);
    for (int i = 0; i < n; ++i) in[i] = (unsigned(i) * 2654435761u) >> 7;
    unsigned *din, *dout;
    CHECK(hipMalloc(&din, n * sizeof(unsigned)));
    CHECK(hipMalloc(&dout, n * sizeof(unsigned)));
    CHECK(hipMemcpy(din, in.data(), n * sizeof(unsigned), hipMemcpyHostToDevice));
    const dim3 grid((n + 255) / 256), block(256);

    hipLaunchKernelGGL(apply, grid, block, 0, 0, din, dout, n);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(out.data(), dout, n * sizeof(unsigned), hipMemcpyDeviceToHost));
    if (check(in, out, "launch")) return 1;

    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    hipGraph_t graph;
    hipGraphExec_t exec;
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    hipLaunchKernelGGL(apply, grid, block, 0, s, din, dout, n);
    CHECK(hipStreamEndCapture(s, &graph));
    CHECK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
    for (int l = 0; l < 2; ++l) {
        CHECK(hipMemsetAsync(dout, 0, n * sizeof(unsigned), s));
        CHECK(hipGraphLaunch(exec, s));
        CHECK(hipMemcpyAsync(out.data(), dout, n * sizeof(unsigned), hipMemcpyDeviceToHost, s));
        CHECK(hipStreamSynchronize(s));
        if (check(in, out, "graph launch")) return 1;
    }
    std::printf("fn_pointers: ok\n");
    return 0;
}
