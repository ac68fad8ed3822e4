// An unmodified HIP program: an explicit graph (kernel nodes joined by
// dependencies after a memset node), launched, then re-parameterised with
// hipGraphExecKernelNodeSetParams (a new scalar, then a new grid) and
// launched again. Prints one digest per launch and "explicit_graph: ok".
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstring>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
    std::printf("%s failed: %s\n", #x, hipGetErrorString(e_)); return 1; } } while (0)

__global__ void fill(float *y, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = v + float(i);
}
__global__ void axpy(const float *x, float *y, float k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += k * x[i];
}

static unsigned bits(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }

static int check(const char *what, const std::vector<float> &got, const std::vector<float> &want) {
    unsigned sum = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] != want[i]) {
            std::printf("explicit_graph: %s: y[%zu] = %f, want %f\n", what, i, got[i], want[i]);
            return 1;
        }
        sum = sum * 31u + bits(got[i]);
    }
    std::printf("explicit_graph: %s digest %08x\n", what, sum);
    return 0;
}

int main() {
    const int n = 2048;
    float *x, *y;
    CHECK(hipMalloc(&x, n * sizeof(float)));
    CHECK(hipMalloc(&y, n * sizeof(float)));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));

    hipGraph_t graph;
    CHECK(hipGraphCreate(&graph, 0));
    hipMemsetParams ms = {};
    ms.dst = y; ms.value = 0; ms.elementSize = 4; ms.width = n; ms.height = 1; ms.pitch = 0;
    hipGraphNode_t zero, fx, a1, a2;
    CHECK(hipGraphAddMemsetNode(&zero, graph, nullptr, 0, &ms));

    int nn = n;
    float v = 0.5f;
    void *fill_args[] = {&x, &v, &nn};
    hipKernelNodeParams fp = {};
    fp.func = (void *)fill; fp.gridDim = dim3(n / 256); fp.blockDim = dim3(256);
    fp.kernelParams = fill_args;
    CHECK(hipGraphAddKernelNode(&fx, graph, nullptr, 0, &fp));

    float k1 = 2.0f, k2 = -0.25f;
    void *a1_args[] = {&x, &y, &k1, &nn};
    void *a2_args[] = {&x, &y, &k2, &nn};
    hipKernelNodeParams ap = {};
    ap.func = (void *)axpy; ap.gridDim = dim3(n / 256); ap.blockDim = dim3(256);
    ap.kernelParams = a1_args;
    hipGraphNode_t deps[] = {zero, fx};
    CHECK(hipGraphAddKernelNode(&a1, graph, deps, 2, &ap));
    ap.kernelParams = a2_args;
    CHECK(hipGraphAddKernelNode(&a2, graph, &a1, 1, &ap));

    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
    std::vector<float> got(n), want(n);

    CHECK(hipGraphLaunch(exec, s));
    CHECK(hipMemcpyAsync(got.data(), y, n * sizeof(float), hipMemcpyDeviceToHost, s));
    CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < n; ++i) { float xi = 0.5f + float(i); want[i] = 0.0f + k1 * xi; want[i] += k2 * xi; }
    if (check("first launch", got, want)) return 1;

    // A new scalar for the second axpy: a kernarg patch.
    float k3 = 4.0f;
    void *a3_args[] = {&x, &y, &k3, &nn};
    ap.kernelParams = a3_args;
    CHECK(hipGraphExecKernelNodeSetParams(exec, a2, &ap));
    CHECK(hipGraphLaunch(exec, s));
    CHECK(hipMemcpyAsync(got.data(), y, n * sizeof(float), hipMemcpyDeviceToHost, s));
    CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < n; ++i) { float xi = 0.5f + float(i); want[i] = 0.0f + k1 * xi; want[i] += k3 * xi; }
    if (check("new scalar", got, want)) return 1;

    // A smaller grid for the first axpy: only its first half is updated.
    ap.kernelParams = a1_args;
    ap.gridDim = dim3(n / 512);
    CHECK(hipGraphExecKernelNodeSetParams(exec, a1, &ap));
    CHECK(hipGraphLaunch(exec, s));
    CHECK(hipMemcpyAsync(got.data(), y, n * sizeof(float), hipMemcpyDeviceToHost, s));
    CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < n; ++i) {
        float xi = 0.5f + float(i);
        want[i] = i < n / 2 ? k1 * xi : 0.0f;
        want[i] += k3 * xi;
    }
    if (check("new grid", got, want)) return 1;

    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(graph));
    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(x)); CHECK(hipFree(y));
    std::printf("explicit_graph: ok\n");
    return 0;
}
