// An unmodified HIP program: a stream-captured graph with a memset,
// launched several times with new input copied in between. With the
// argument `fork` the capture forks onto a second stream and joins back
// through events. Prints one line per launch and "capture_graph: ok"; the
// lines are identical whether or not relaunch's interposer replays it.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstring>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
    std::printf("%s failed: %s\n", #x, hipGetErrorString(e_)); return 1; } } while (0)

__global__ void scale(const float *x, float *y, float k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = k * x[i];
}
__global__ void square(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * x[i];
}
__global__ void combine(const float *a, const float *b, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] += a[i] - b[i];
}

static unsigned bits(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }

int main(int argc, char **argv) {
    const bool forked = argc > 1 && std::strcmp(argv[1], "fork") == 0;
    const int n = 4096, launches = 4;
    const dim3 grid((n + 127) / 128), block(128);
    float *x, *a, *b, *out;
    CHECK(hipMalloc(&x, n * sizeof(float)));
    CHECK(hipMalloc(&a, n * sizeof(float)));
    CHECK(hipMalloc(&b, n * sizeof(float)));
    CHECK(hipMalloc(&out, n * sizeof(float)));
    hipStream_t s0, s1;
    hipEvent_t fork, join;
    CHECK(hipStreamCreate(&s0));
    CHECK(hipStreamCreate(&s1));
    CHECK(hipEventCreateWithFlags(&fork, hipEventDisableTiming));
    CHECK(hipEventCreateWithFlags(&join, hipEventDisableTiming));

    hipGraph_t graph;
    CHECK(hipStreamBeginCapture(s0, hipStreamCaptureModeGlobal));
    CHECK(hipMemsetAsync(out, 0, n * sizeof(float), s0));
    hipStream_t side = forked ? s1 : s0;
    if (forked) {
        CHECK(hipEventRecord(fork, s0));
        CHECK(hipStreamWaitEvent(s1, fork, 0));
    }
    hipLaunchKernelGGL(scale, grid, block, 0, s0, x, a, 3.0f, n);
    hipLaunchKernelGGL(square, grid, block, 0, side, x, b, n);
    if (forked) {
        CHECK(hipEventRecord(join, s1));
        CHECK(hipStreamWaitEvent(s0, join, 0));
    }
    hipLaunchKernelGGL(combine, grid, block, 0, s0, a, b, out, n);
    hipLaunchKernelGGL(combine, grid, block, 0, s0, a, b, out, n);
    CHECK(hipStreamEndCapture(s0, &graph));
    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));

    std::vector<float> hx(n), hout(n);
    for (int l = 0; l < launches; ++l) {
        for (int i = 0; i < n; ++i) hx[i] = float((i * 7 + l * 13) % 97) / 8.0f;
        CHECK(hipMemcpyAsync(x, hx.data(), n * sizeof(float), hipMemcpyHostToDevice, s0));
        CHECK(hipGraphLaunch(exec, s0));
        CHECK(hipMemcpyAsync(hout.data(), out, n * sizeof(float), hipMemcpyDeviceToHost, s0));
        CHECK(hipStreamSynchronize(s0));
        unsigned sum = 0;
        for (int i = 0; i < n; ++i) {
            float v = hx[i];
            float want = 2.0f * (3.0f * v - v * v);
            if (hout[i] != want) {
                std::printf("capture_graph: launch %d out[%d] = %f, want %f\n", l, i, hout[i], want);
                return 1;
            }
            sum = sum * 31u + bits(hout[i]);
        }
        std::printf("capture_graph: launch %d digest %08x\n", l, sum);
    }
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(graph));
    CHECK(hipFree(x)); CHECK(hipFree(a)); CHECK(hipFree(b)); CHECK(hipFree(out));
    std::printf("capture_graph: ok\n");
    return 0;
}
