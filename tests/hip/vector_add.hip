// An unmodified HIP program: hipMalloc, hipMemcpy, hipMemset, a kernel,
// a stream and events. Prints "vector_add: ok" when every element is right.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
    std::printf("%s failed: %s\n", #x, hipGetErrorString(e_)); return 1; } } while (0)

__global__ void add(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + 2.0f * b[i];
}

int main() {
    const int n = 1000;
    std::vector<float> a(n), b(n), c(n, -1.0f);
    for (int i = 0; i < n; ++i) { a[i] = float(i); b[i] = float(3 * i + 1); }
    float *da, *db, *dc;
    CHECK(hipMalloc(&da, n * sizeof(float)));
    CHECK(hipMalloc(&db, n * sizeof(float)));
    CHECK(hipMalloc(&dc, n * sizeof(float)));
    CHECK(hipMemcpy(da, a.data(), n * sizeof(float), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(db, b.data(), n * sizeof(float), hipMemcpyHostToDevice));
    CHECK(hipMemset(dc, 0, n * sizeof(float)));
    hipStream_t s;
    hipEvent_t start, stop;
    CHECK(hipStreamCreate(&s));
    CHECK(hipEventCreate(&start));
    CHECK(hipEventCreate(&stop));
    CHECK(hipEventRecord(start, s));
    hipLaunchKernelGGL(add, dim3((n + 255) / 256), dim3(256), 0, s, da, db, dc, n);
    CHECK(hipGetLastError());
    CHECK(hipEventRecord(stop, s));
    CHECK(hipEventSynchronize(stop));
    CHECK(hipMemcpy(c.data(), dc, n * sizeof(float), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) {
        float want = a[i] + 2.0f * b[i];
        if (c[i] != want) { std::printf("vector_add: c[%d] = %f, want %f\n", i, c[i], want); return 1; }
    }
    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(da)); CHECK(hipFree(db)); CHECK(hipFree(dc));
    std::printf("vector_add: ok\n");
    return 0;
}
