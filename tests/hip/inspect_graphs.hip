// A HIP program that asks relaunch's interposer, when it is loaded, which
// of its graphs it replays: two stream-captured graphs, one on one stream
// and one forked onto a second stream and joined through events, each
// launched twice and checked. The inspection API (relaunch_hipgraph.h) is
// found with dlsym, so the program also runs without the interposer
// ("api none"). Prints "inspect_graphs: ok" when every result is right.
#include <hip/hip_runtime.h>
#include <dlfcn.h>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../../preload/include/relaunch_hipgraph.h"

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
    std::printf("%s failed: %s\n", #x, hipGetErrorString(e_)); return 1; } } while (0)

__global__ void scale(const float *x, float *y, float k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = k * x[i];
}
__global__ void add(const float *a, const float *b, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

// out = 2x + 5x, captured on s0 alone or forked onto s1.
static int capture(bool forked, hipStream_t s0, hipStream_t s1, const float *x, float *a, float *b,
                   float *out, int n, hipGraphExec_t *exec) {
    hipEvent_t fork, join;
    CHECK(hipEventCreateWithFlags(&fork, hipEventDisableTiming));
    CHECK(hipEventCreateWithFlags(&join, hipEventDisableTiming));
    const dim3 grid((n + 63) / 64), block(64);
    hipGraph_t graph;
    CHECK(hipStreamBeginCapture(s0, hipStreamCaptureModeGlobal));
    hipStream_t side = forked ? s1 : s0;
    if (forked) {
        CHECK(hipEventRecord(fork, s0));
        CHECK(hipStreamWaitEvent(s1, fork, 0));
    }
    hipLaunchKernelGGL(scale, grid, block, 0, s0, x, a, 2.0f, n);
    hipLaunchKernelGGL(scale, grid, block, 0, side, x, b, 5.0f, n);
    if (forked) {
        CHECK(hipEventRecord(join, s1));
        CHECK(hipStreamWaitEvent(s0, join, 0));
    }
    hipLaunchKernelGGL(add, grid, block, 0, s0, a, b, out, n);
    CHECK(hipStreamEndCapture(s0, &graph));
    CHECK(hipGraphInstantiate(exec, graph, nullptr, nullptr, 0));
    return 0;
}

#define FIND(name) (reinterpret_cast<decltype(&name)>(dlsym(RTLD_DEFAULT, #name)))

int main() {
    const int n = 1024;
    float *x, *a, *b, *out;
    CHECK(hipMalloc(&x, n * sizeof(float)));
    CHECK(hipMalloc(&a, n * sizeof(float)));
    CHECK(hipMalloc(&b, n * sizeof(float)));
    CHECK(hipMalloc(&out, n * sizeof(float)));
    hipStream_t s0, s1;
    CHECK(hipStreamCreate(&s0));
    CHECK(hipStreamCreate(&s1));
    hipGraphExec_t execs[2];
    const char *names[2] = {"single", "forked"};
    for (int g = 0; g < 2; ++g) {
        if (capture(g == 1, s0, s1, x, a, b, out, n, &execs[g])) return 1;
    }
    std::vector<float> hx(n), hout(n);
    for (int l = 0; l < 2; ++l) {
        for (int g = 0; g < 2; ++g) {
            for (int i = 0; i < n; ++i) hx[i] = float((i * 3 + l * 7 + g) % 31);
            CHECK(hipMemcpyAsync(x, hx.data(), n * sizeof(float), hipMemcpyHostToDevice, s0));
            CHECK(hipGraphLaunch(execs[g], s0));
            CHECK(hipMemcpyAsync(hout.data(), out, n * sizeof(float), hipMemcpyDeviceToHost, s0));
            CHECK(hipStreamSynchronize(s0));
            for (int i = 0; i < n; ++i) {
                if (hout[i] != 7.0f * hx[i]) {
                    std::printf("inspect_graphs: %s launch %d out[%d] = %f\n", names[g], l, i, hout[i]);
                    return 1;
                }
            }
        }
    }
    if (!FIND(rl_hipgraph_api_version)) {
        std::printf("api none\n");
    } else {
        std::printf("api %u\n", FIND(rl_hipgraph_api_version)());
        for (int g = 0; g < 2; ++g) {
            rl_hipgraph_exec_info_t info = {};
            info.struct_size = sizeof info;
            char text[512];
            int rc = FIND(rl_hipgraph_exec_info)(execs[g], &info, text, sizeof text);
            std::printf("%s rc=%d replayed=%d reason=%d launches=%llu/%llu/%llu text=%s\n", names[g],
                        rc, info.replayed, info.reason, (unsigned long long)info.launches_replayed,
                        (unsigned long long)info.launches_on_hip,
                        (unsigned long long)info.launches_failed, text);
        }
    }
    std::printf("inspect_graphs: ok\n");
    return 0;
}
