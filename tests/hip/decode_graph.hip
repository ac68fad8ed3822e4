// An unmodified HIP program shaped like the reference decode step: LAYERS
// transformer layers of 12 small kernels each (rmsnorm, qkv matvec, rope,
// kv append, attention, output matvec, residual, rmsnorm, up matvec,
// silu*mul, down matvec, residual), hidden 64, captured once on one stream
// as a graph and launched once per token; the position lives in device
// memory, copied in before each launch. Usage: decode_graph [TOKENS]
// (default 4). Prints a digest per token, then "decode_graph: ok"; on
// stderr, the host time the hipGraphLaunch calls took (median, in us).
#include <hip/hip_runtime.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
    std::printf("%s failed: %s\n", #x, hipGetErrorString(e_)); return 1; } } while (0)

constexpr int H = 64, F = 128, LAYERS = 28, CTX = 64;

__global__ void init(float *p, int n, unsigned seed) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned h = (unsigned(i) + seed * 0x9E3779B9u) * 0x85EBCA6Bu;
        h ^= h >> 13;
        p[i] = (float(h & 0xFFFF) / 65536.0f - 0.5f) * 0.25f;
    }
}
__global__ void rmsnorm(const float *x, float *y) {
    int i = threadIdx.x;
    float s = 0.0f;
    for (int j = 0; j < H; ++j) s += x[j] * x[j];
    y[i] = x[i] / sqrtf(s / H + 1e-5f);
}
__global__ void matvec(const float *w, const float *x, float *y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; ++c) s += w[r * cols + c] * x[c];
        y[r] = s;
    }
}
__global__ void rope(float *qk, const int *pos) {
    int i = threadIdx.x;  // one pair of q and one of k
    float *v = qk + (i < H / 2 ? 0 : H) + 2 * (i % (H / 2));
    float a = float(*pos) * powf(10000.0f, -float(i % (H / 2)) / float(H / 2));
    float c = cosf(a), s = sinf(a), x = v[0], y = v[1];
    v[0] = x * c - y * s;
    v[1] = x * s + y * c;
}
__global__ void kv_append(const float *qkv, float *kc, float *vc, const int *pos) {
    int i = threadIdx.x;
    kc[*pos * H + i] = qkv[H + i];
    vc[*pos * H + i] = qkv[2 * H + i];
}
__global__ void attention(const float *qkv, const float *kc, const float *vc, float *out, const int *pos) {
    int i = threadIdx.x;
    int n = *pos + 1;
    float m = -1e30f;
    for (int t = 0; t < n; ++t) {
        float s = 0.0f;
        for (int j = 0; j < H; ++j) s += qkv[j] * kc[t * H + j];
        m = fmaxf(m, s * 0.125f);
    }
    float den = 0.0f, acc = 0.0f;
    for (int t = 0; t < n; ++t) {
        float s = 0.0f;
        for (int j = 0; j < H; ++j) s += qkv[j] * kc[t * H + j];
        float p = expf(s * 0.125f - m);
        den += p;
        acc += p * vc[t * H + i];
    }
    out[i] = acc / den;
}
__global__ void residual(float *x, const float *y) { x[threadIdx.x] += y[threadIdx.x]; }
__global__ void silu_mul(const float *gu, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float g = gu[i];
    out[i] = g / (1.0f + expf(-g)) * gu[F + i];
}

static unsigned digest(const std::vector<float> &v) {
    unsigned d = 0;
    for (float f : v) { unsigned u; std::memcpy(&u, &f, 4); d = d * 31u + u; }
    return d;
}

int main(int argc, char **argv) {
    const int tokens = argc > 1 ? std::atoi(argv[1]) : 4;
    if (tokens < 1 || tokens > CTX) { std::printf("decode_graph: 1..%d tokens\n", CTX); return 2; }
    const size_t per_layer = size_t(3 * H * H + H * H + 2 * F * H + H * F);
    float *weights, *x, *h, *qkv, *att, *o, *gu, *act, *kc, *vc;
    int *pos;
    CHECK(hipMalloc(&weights, per_layer * LAYERS * sizeof(float)));
    CHECK(hipMalloc(&x, H * sizeof(float)));
    CHECK(hipMalloc(&h, H * sizeof(float)));
    CHECK(hipMalloc(&qkv, 3 * H * sizeof(float)));
    CHECK(hipMalloc(&att, H * sizeof(float)));
    CHECK(hipMalloc(&o, H * sizeof(float)));
    CHECK(hipMalloc(&gu, 2 * F * sizeof(float)));
    CHECK(hipMalloc(&act, F * sizeof(float)));
    CHECK(hipMalloc(&kc, size_t(LAYERS) * CTX * H * sizeof(float)));
    CHECK(hipMalloc(&vc, size_t(LAYERS) * CTX * H * sizeof(float)));
    CHECK(hipMalloc(&pos, sizeof(int)));
    int nw = int(per_layer * LAYERS);
    hipLaunchKernelGGL(init, dim3((nw + 255) / 256), dim3(256), 0, 0, weights, nw, 1u);
    hipLaunchKernelGGL(init, dim3(1), dim3(H), 0, 0, x, H, 2u);
    CHECK(hipDeviceSynchronize());

    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    hipGraph_t graph;
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    for (int l = 0; l < LAYERS; ++l) {
        const float *wqkv = weights + l * per_layer, *wo = wqkv + 3 * H * H;
        const float *wup = wo + H * H, *wdown = wup + 2 * F * H;
        float *lk = kc + size_t(l) * CTX * H, *lv = vc + size_t(l) * CTX * H;
        hipLaunchKernelGGL(rmsnorm, dim3(1), dim3(H), 0, s, x, h);
        hipLaunchKernelGGL(matvec, dim3(3), dim3(H), 0, s, wqkv, h, qkv, 3 * H, H);
        hipLaunchKernelGGL(rope, dim3(1), dim3(H), 0, s, qkv, pos);
        hipLaunchKernelGGL(kv_append, dim3(1), dim3(H), 0, s, qkv, lk, lv, pos);
        hipLaunchKernelGGL(attention, dim3(1), dim3(H), 0, s, qkv, lk, lv, att, pos);
        hipLaunchKernelGGL(matvec, dim3(1), dim3(H), 0, s, wo, att, o, H, H);
        hipLaunchKernelGGL(residual, dim3(1), dim3(H), 0, s, x, o);
        hipLaunchKernelGGL(rmsnorm, dim3(1), dim3(H), 0, s, x, h);
        hipLaunchKernelGGL(matvec, dim3(2 * F / H), dim3(H), 0, s, wup, h, gu, 2 * F, H);
        hipLaunchKernelGGL(silu_mul, dim3(F / H), dim3(H), 0, s, gu, act);
        hipLaunchKernelGGL(matvec, dim3(1), dim3(H), 0, s, wdown, act, o, H, F);
        hipLaunchKernelGGL(residual, dim3(1), dim3(H), 0, s, x, o);
    }
    CHECK(hipStreamEndCapture(s, &graph));
    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
    std::vector<float> hx(H);
    std::vector<int> positions(tokens);
    std::vector<double> launch_us;
    for (int t = 0; t < tokens; ++t) {
        positions[t] = t;
        CHECK(hipMemcpyAsync(pos, &positions[t], sizeof(int), hipMemcpyHostToDevice, s));
        auto t0 = std::chrono::steady_clock::now();
        CHECK(hipGraphLaunch(exec, s));
        launch_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        CHECK(hipMemcpyAsync(hx.data(), x, H * sizeof(float), hipMemcpyDeviceToHost, s));
        CHECK(hipStreamSynchronize(s));
        for (float f : hx) {
            if (!std::isfinite(f)) { std::printf("decode_graph: token %d is not finite\n", t); return 1; }
        }
        std::printf("decode_graph: token %d digest %08x\n", t, digest(hx));
    }
    std::sort(launch_us.begin(), launch_us.end());
    std::fprintf(stderr, "decode_graph: host us per hipGraphLaunch: %.1f (median of %zu)\n",
                 launch_us[launch_us.size() / 2], launch_us.size());
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(graph));
    std::printf("decode_graph: ok\n");
    return 0;
}
