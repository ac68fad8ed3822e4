// An unmodified HIP program exercising the copy paths ROCr serves with the
// copy engine (SDMA): pageable and pinned host memory both ways, a copy
// larger than HIP's staging buffers, async copies on a stream, 2-D copies
// with pitches, and device-to-device and memset (blit kernels) between.
// Prints "copies: ok" when every byte is right.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstring>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
    std::printf("%s failed: %s\n", #x, hipGetErrorString(e_)); return 1; } } while (0)

static unsigned char pattern(size_t i, unsigned salt) {
    return (unsigned char)((i * 2654435761u + salt) >> 13);
}

static int expect(const unsigned char *got, size_t n, unsigned salt, const char *what) {
    for (size_t i = 0; i < n; ++i) {
        if (got[i] != pattern(i, salt)) {
            std::printf("copies: %s: byte %zu is %u, want %u\n", what, i, got[i], pattern(i, salt));
            return 1;
        }
    }
    return 0;
}

int main() {
    // Larger than HIP's 4 MiB staging chunks, and not a multiple of them.
    const size_t big = (9u << 20) + 12345;
    std::vector<unsigned char> host(big), back(big);
    for (size_t i = 0; i < big; ++i) host[i] = pattern(i, 1);
    unsigned char *d0, *d1;
    CHECK(hipMalloc(&d0, big));
    CHECK(hipMalloc(&d1, big));
    CHECK(hipMemcpy(d0, host.data(), big, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(back.data(), d0, big, hipMemcpyDeviceToHost));
    if (expect(back.data(), big, 1, "pageable round trip")) return 1;
    // Device to device (a blit kernel; kept small: the interpreter runs it).
    const size_t part = (1u << 20) + 4;
    std::memset(back.data(), 0, part);
    CHECK(hipMemcpy(d1, d0, part, hipMemcpyDeviceToDevice));
    CHECK(hipMemcpy(back.data(), d1, part, hipMemcpyDeviceToHost));
    if (expect(back.data(), part, 1, "device to device")) return 1;

    // Pinned host memory: async copies on a stream, straight to the engine.
    const size_t n = 3 << 20;
    unsigned char *pinned_in, *pinned_out;
    CHECK(hipHostMalloc(&pinned_in, n));
    CHECK(hipHostMalloc(&pinned_out, n));
    for (size_t i = 0; i < n; ++i) pinned_in[i] = pattern(i, 2);
    std::memset(pinned_out, 0, n);
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    CHECK(hipMemcpyAsync(d0, pinned_in, n, hipMemcpyHostToDevice, s));
    CHECK(hipMemcpyAsync(pinned_out, d0, n, hipMemcpyDeviceToHost, s));
    CHECK(hipStreamSynchronize(s));
    if (expect(pinned_out, n, 2, "pinned async round trip")) return 1;

    // A memset between copies (a fill kernel), then back through the engine.
    CHECK(hipMemset(d1, 0x5a, 4096));
    CHECK(hipMemcpy(back.data(), d1, 4096, hipMemcpyDeviceToHost));
    for (size_t i = 0; i < 4096; ++i) {
        if (back[i] != 0x5a) { std::printf("copies: memset byte %zu is %u\n", i, back[i]); return 1; }
    }

    // 2-D: a 37 x 19 window of a host array with pitch 64 into a device
    // array with pitch 128, and back into a fresh host array with pitch 40.
    // Both host arrays share pages and the copies repeat: HIP pins the
    // host pages of each copy and releases the pins lazily, so the pins
    // overlap (the driver must accept that, as the kernel driver does; a
    // refusal sends HIP 5.2.3 down a staged path that misplaces rows).
    const size_t w = 37, h = 19, hp = 64, dp = 128, bp = 40;
    std::vector<unsigned char> host2d(hp * h + bp * h);
    unsigned char *src = host2d.data(), *dst = host2d.data() + hp * h;
    for (size_t i = 0; i < hp * h; ++i) src[i] = pattern(i, 3);
    for (int round = 0; round < 4; ++round) {
        std::memset(dst, 0, bp * h);
        CHECK(hipMemset(d0, 0, dp * h));
        CHECK(hipMemcpy2D(d0, dp, src, hp, w, h, hipMemcpyHostToDevice));
        CHECK(hipMemcpy2D(dst, bp, d0, dp, w, h, hipMemcpyDeviceToHost));
        for (size_t y = 0; y < h; ++y) {
            for (size_t x = 0; x < w; ++x) {
                if (dst[y * bp + x] != src[y * hp + x]) {
                    std::printf("copies: 2-D round %d element (%zu, %zu) differs\n", round, x, y);
                    return 1;
                }
            }
        }
    }

    CHECK(hipStreamDestroy(s));
    CHECK(hipHostFree(pinned_in));
    CHECK(hipHostFree(pinned_out));
    CHECK(hipFree(d0));
    CHECK(hipFree(d1));
    std::printf("copies: ok\n");
    return 0;
}
