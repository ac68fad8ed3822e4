// An unmodified HIP program whose kernels use private (scratch) memory:
// an array indexed at run time, kept in scratch, in two kernels of
// different private sizes, so ROCr's dynamic scratch protocol runs (the
// queue stops with "scratch needed", ROCr's handler allocates scratch and
// restarts the same packet) and then grows the queue's scratch for the
// larger one. Also launched through a stream-captured graph. Prints
// "scratch: ok" when every element is right.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
    std::printf("%s failed: %s\n", #x, hipGetErrorString(e_)); return 1; } } while (0)

template <int N>
__global__ void lookup(const unsigned *idx, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    volatile unsigned a[N];
    for (int k = 0; k < N; ++k) a[k] = unsigned(i) * 3u + unsigned(k * k);
    unsigned j = idx[i] % N;
    out[i] = a[j] + a[(j + 7) % N];
}

template <int N>
static unsigned want(unsigned i, unsigned idx) {
    auto a = [&](unsigned k) { return i * 3u + k * k; };
    unsigned j = idx % N;
    return a(j) + a((j + 7) % N);
}

template <int N>
static int check(const std::vector<unsigned> &idx, const std::vector<unsigned> &out, const char *what) {
    for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] != want<N>(unsigned(i), idx[i])) {
            std::printf("scratch: %s out[%zu] = %u, want %u\n", what, i, out[i], want<N>(unsigned(i), idx[i]));
            return 1;
        }
    }
    return 0;
}

int main() {
    const int n = 1000;
    std::vector<unsigned> idx(n), out(n);
    for (int i = 0; i < n; ++i) idx[i] = (unsigned(i) * 2654435761u) >> 7;
    unsigned *didx, *dout;
    CHECK(hipMalloc(&didx, n * sizeof(unsigned)));
    CHECK(hipMalloc(&dout, n * sizeof(unsigned)));
    CHECK(hipMemcpy(didx, idx.data(), n * sizeof(unsigned), hipMemcpyHostToDevice));
    const dim3 grid((n + 127) / 128), block(128);

    hipLaunchKernelGGL(lookup<40>, grid, block, 0, 0, didx, dout, n);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(out.data(), dout, n * sizeof(unsigned), hipMemcpyDeviceToHost));
    if (check<40>(idx, out, "40-element array")) return 1;

    hipLaunchKernelGGL(lookup<400>, grid, block, 0, 0, didx, dout, n);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(out.data(), dout, n * sizeof(unsigned), hipMemcpyDeviceToHost));
    if (check<400>(idx, out, "400-element array")) return 1;

    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    hipGraph_t graph;
    hipGraphExec_t exec;
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    hipLaunchKernelGGL(lookup<40>, grid, block, 0, s, didx, dout, n);
    CHECK(hipStreamEndCapture(s, &graph));
    CHECK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
    for (int l = 0; l < 2; ++l) {
        CHECK(hipMemsetAsync(dout, 0, n * sizeof(unsigned), s));
        CHECK(hipGraphLaunch(exec, s));
        CHECK(hipMemcpyAsync(out.data(), dout, n * sizeof(unsigned), hipMemcpyDeviceToHost, s));
        CHECK(hipStreamSynchronize(s));
        if (check<40>(idx, out, "graph launch")) return 1;
    }
    std::printf("scratch: ok\n");
    return 0;
}
