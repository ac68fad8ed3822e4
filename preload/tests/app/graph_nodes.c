/* Memset, memcpy and event nodes. Prints one line per check:
 * - "capture": a captured graph of a memset, a kernel, a device-to-device
 *   memcpy and two more kernels (x = 0; x += 8; y = x; y += 8; acc += 8),
 *   launched while the stream is held: the launch returns with its stream
 *   operations pending and nothing run;
 * - "interleaved": 100 launches on one stream, each followed by the app's
 *   own kernel launch, hipMemcpyAsync read-backs of acc and y and its own
 *   hipMemsetAsync of y: every read-back sees exactly the launches before
 *   it (acc = 8 per launch, y = 16, never the app's later 0);
 * - "explicit": hipGraphAddMemsetNode (2-D rows), a kernel, a 3-D
 *   hipGraphAddMemcpyNode of two rows, an event record node and its wait
 *   node before a last kernel; hipEventSynchronize on the event after the
 *   launch returns;
 * - "pageable": a host-to-device memcpy node from malloc'ed memory makes
 *   its graph fall through (the fake counts the launch);
 * - "foreign": a wait node on an event no node of the graph records falls
 *   through too. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_util.h"

#define LAUNCHES 100
#define hipMemcpyHostToDevice 1
#define hipMemcpyDeviceToDevice 3

static unsigned peek(void *p) { return __atomic_load_n((unsigned *)p, __ATOMIC_SEQ_CST); }

static void launch_counter(hipFunction_t f, void **args, hipStream_t s) {
    CHECK(hipModuleLaunchKernel(f, 2, 1, 1, 4, 1, 1, 0, s, args, NULL));
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s counter.co\n", argv[0]); return 2; }
    const unsigned char *image = read_image(argv[1]);
    CHECK(hipInit(0));
    hipModule_t module; hipFunction_t counter; hipStream_t stream;
    CHECK(hipModuleLoadData(&module, image));
    CHECK(hipModuleGetFunction(&counter, module, "counter"));
    CHECK(hipStreamCreate(&stream));

    /* The check program: a captured memset, kernel, memcpy, kernel, kernel. */
    void *x, *y, *acc, *own;
    CHECK(hipMalloc(&x, 4)); CHECK(hipMalloc(&y, 4)); CHECK(hipMalloc(&acc, 4)); CHECK(hipMalloc(&own, 4));
    void *args_x[] = {&x}, *args_y[] = {&y}, *args_acc[] = {&acc}, *args_own[] = {&own};
    CHECK(hipMemsetAsync(x, 0x7F, 4, stream)); /* before the capture: the graph's memset clears it */
    CHECK(hipStreamSynchronize(stream));
    hipGraph_t graph;
    CHECK(hipStreamBeginCapture(stream, hipStreamCaptureModeGlobal));
    CHECK(hipMemsetAsync(x, 0, 4, stream));
    launch_counter(counter, args_x, stream);
    CHECK(hipMemcpyAsync(y, x, 4, hipMemcpyDeviceToDevice, stream));
    launch_counter(counter, args_y, stream);
    launch_counter(counter, args_acc, stream);
    CHECK(hipStreamEndCapture(stream, &graph));
    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));

    fakehip_stream_hold(stream, 1);
    CHECK(hipGraphLaunch(exec, stream));
    long pending = fakehip_stream_pending(stream);
    unsigned before = peek(acc), x_before = peek(x);
    fakehip_stream_hold(stream, 0);
    CHECK(hipStreamSynchronize(stream));
    printf("capture pending=%ld before=%u x_before=%#x x=%u y=%u acc=%u launches=%ld\n", pending, before,
           x_before, peek(x), peek(y), peek(acc), fakehip_launches());

    static unsigned seen_acc[LAUNCHES], seen_y[LAUNCHES];
    long kernels_before = fakehip_kernel_launches();
    for (int i = 0; i < LAUNCHES; i++) {
        CHECK(hipGraphLaunch(exec, stream));
        launch_counter(counter, args_own, stream);
        CHECK(hipMemcpyAsync(&seen_acc[i], acc, 4, hipMemcpyDeviceToHost, stream));
        CHECK(hipMemcpyAsync(&seen_y[i], y, 4, hipMemcpyDeviceToHost, stream));
        CHECK(hipMemsetAsync(y, 0, 4, stream));
    }
    CHECK(hipStreamSynchronize(stream));
    int right = 0;
    for (int i = 0; i < LAUNCHES; i++) right += seen_acc[i] == 8u * (unsigned)(i + 2) && seen_y[i] == 16u;
    printf("interleaved right=%d of %d x=%u y=%u acc=%u own_kernels=%ld launches=%ld\n", right, LAUNCHES,
           peek(x), peek(y), peek(acc), fakehip_kernel_launches() - kernels_before, fakehip_launches());

    /* Explicit nodes: 2-D memset, kernel, 3-D memcpy, event record/wait. */
    unsigned char *m, *n;
    void *k1, *k2;
    CHECK(hipMalloc((void **)&m, 256)); CHECK(hipMalloc((void **)&n, 64));
    CHECK(hipMalloc(&k1, 4)); CHECK(hipMalloc(&k2, 4));
    void *args_k1[] = {&k1}, *args_k2[] = {&k2};
    hipEvent_t ev;
    CHECK(hipEventCreate(&ev));
    hipGraph_t g2;
    CHECK(hipGraphCreate(&g2, 0));
    hipGraphNode_t set, k1n, copy, rec, wait, k2n;
    hipMemsetParams sp = {m, 1, 4, 64, 0x5A, 16}; /* 4 rows of 16 bytes, 64 apart */
    CHECK(hipGraphAddMemsetNode(&set, g2, NULL, 0, &sp));
    hipKernelNodeParams p1 = counter_node(counter, args_k1);
    CHECK(hipGraphAddKernelNode(&k1n, g2, &set, 1, &p1));
    hipMemcpy3DParms cp;
    memset(&cp, 0, sizeof cp);
    cp.srcPtr = (hipPitchedPtr){m, 64, 64, 4};
    cp.srcPos = (hipPos){0, 1, 0};
    cp.dstPtr = (hipPitchedPtr){n, 16, 16, 4};
    cp.extent = (hipExtent){16, 2, 1};
    cp.kind = hipMemcpyDeviceToDevice;
    CHECK(hipGraphAddMemcpyNode(&copy, g2, &k1n, 1, &cp));
    CHECK(hipGraphAddEventRecordNode(&rec, g2, &copy, 1, ev));
    CHECK(hipGraphAddEventWaitNode(&wait, g2, &rec, 1, ev));
    hipKernelNodeParams p2 = counter_node(counter, args_k2);
    CHECK(hipGraphAddKernelNode(&k2n, g2, &wait, 1, &p2));
    hipGraphExec_t x2;
    CHECK(hipGraphInstantiate(&x2, g2, NULL, NULL, 0));
    CHECK(hipGraphLaunch(x2, stream));
    CHECK(hipEventSynchronize(ev));
    CHECK(hipStreamSynchronize(stream));
    int rows = 0, gaps = 0, copied = 0;
    for (int i = 0; i < 256; i++) {
        int in_row = i % 64 < 16;
        rows += in_row && m[i] == 0x5A;
        gaps += !in_row && m[i] == 0;
    }
    for (int i = 0; i < 32; i++) copied += n[i] == 0x5A;
    printf("explicit rows=%d gaps=%d copied=%d tail=%u k1=%u k2=%u launches=%ld\n", rows, gaps, copied,
           (unsigned)n[40], peek(k1), peek(k2), fakehip_launches());

    /* A host-to-device copy from pageable memory: falls through. */
    unsigned *pageable = malloc(64);
    memset(pageable, 1, 64);
    hipGraph_t g3;
    hipGraphNode_t h2d;
    CHECK(hipGraphCreate(&g3, 0));
    CHECK(hipGraphAddMemcpyNode1D(&h2d, g3, NULL, 0, n, pageable, 64, hipMemcpyHostToDevice));
    hipGraphExec_t x3;
    CHECK(hipGraphInstantiate(&x3, g3, NULL, NULL, 0));
    CHECK(hipGraphLaunch(x3, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("pageable launches=%ld\n", fakehip_launches());

    /* A wait for an event the graph does not record: falls through. */
    hipGraph_t g4;
    hipGraphNode_t w4, k4;
    CHECK(hipGraphCreate(&g4, 0));
    CHECK(hipGraphAddEventWaitNode(&w4, g4, NULL, 0, ev));
    CHECK(hipGraphAddKernelNode(&k4, g4, &w4, 1, &p2));
    hipGraphExec_t x4;
    CHECK(hipGraphInstantiate(&x4, g4, NULL, NULL, 0));
    CHECK(hipGraphLaunch(x4, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("foreign k2=%u launches=%ld\n", peek(k2), fakehip_launches());
    /* Byte-granular memsets (not in whole aligned dwords): a captured
     * hipMemsetAsync of 13 bytes at offset 1 and a memset node of five
     * 2-byte elements at offset 22: each aligned middle filled, the ends
     * copied from it; the bytes around them untouched. */
    unsigned char *z;
    CHECK(hipMalloc((void **)&z, 64));
    memset(z, 0x11, 64);
    hipGraph_t g5, g6;
    hipGraphExec_t x5, x6;
    CHECK(hipStreamBeginCapture(stream, 0));
    CHECK(hipMemsetAsync(z + 1, 0xAB, 13, stream));
    CHECK(hipStreamEndCapture(stream, &g5));
    hipGraphNode_t half;
    hipMemsetParams hp = {z + 22, 2, 1, 0, 0xBEEF, 5};
    CHECK(hipGraphCreate(&g6, 0));
    CHECK(hipGraphAddMemsetNode(&half, g6, NULL, 0, &hp));
    CHECK(hipGraphInstantiate(&x5, g5, NULL, NULL, 0));
    CHECK(hipGraphInstantiate(&x6, g6, NULL, NULL, 0));
    CHECK(hipGraphLaunch(x5, stream));
    CHECK(hipGraphLaunch(x6, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("bytes z=");
    for (int i = 0; i < 36; i++) printf("%02x", z[i]);
    printf(" launches=%ld\n", fakehip_launches());
    /* The 2-D and D8/D16 stream forms, captured: 3 rows of 6 bytes of
     * 0xCD 16 apart at w, those rows copied 8 apart to w + 64, four 0xBEEF
     * at w + 96 and eight 0x5A at w + 104; counted against the image. */
    unsigned char *w, want[128];
    CHECK(hipMalloc((void **)&w, sizeof want));
    memset(w, 0x11, sizeof want);
    memset(want, 0x11, sizeof want);
    for (int r = 0; r < 3; r++) {
        memset(want + 16 * r, 0xCD, 6);
        memset(want + 64 + 8 * r, 0xCD, 6);
    }
    for (int i = 0; i < 4; i++) { want[96 + 2 * i] = 0xEF; want[97 + 2 * i] = 0xBE; }
    memset(want + 104, 0x5A, 8);
    hipGraph_t g7;
    hipGraphExec_t x7;
    CHECK(hipStreamBeginCapture(stream, 0));
    CHECK(hipMemset2DAsync(w, 16, 0xCD, 6, 3, stream));
    CHECK(hipMemcpy2DAsync(w + 64, 8, w, 16, 6, 3, hipMemcpyDeviceToDevice, stream));
    CHECK(hipMemsetD16Async(w + 96, 0xBEEF, 4, stream));
    CHECK(hipMemsetD8Async(w + 104, 0x5A, 8, stream));
    CHECK(hipStreamEndCapture(stream, &g7));
    CHECK(hipGraphInstantiate(&x7, g7, NULL, NULL, 0));
    CHECK(hipGraphLaunch(x7, stream));
    CHECK(hipStreamSynchronize(stream));
    int same = 0;
    for (size_t i = 0; i < sizeof want; i++) same += w[i] == want[i];
    printf("twod right=%d of %zu launches=%ld\n", same, sizeof want, fakehip_launches());
    /* Other allocators: a copy between hipMallocAsync allocations replays;
     * one from managed memory, and one from registered memory that the
     * device reaches at another address, fall through. */
    unsigned char *as1, *as2, *managed;
    CHECK(hipMallocAsync((void **)&as1, 64, stream));
    CHECK(hipMallocAsync((void **)&as2, 64, stream));
    CHECK(hipMallocManaged((void **)&managed, 64, 1));
    CHECK(hipStreamSynchronize(stream));
    memset(as1, 0x42, 64);
    hipGraph_t g8, g9, g10;
    hipGraphExec_t x8, x9, x10;
    CHECK(hipStreamBeginCapture(stream, 0));
    CHECK(hipMemcpyAsync(as2, as1, 64, hipMemcpyDeviceToDevice, stream));
    CHECK(hipStreamEndCapture(stream, &g8));
    CHECK(hipGraphInstantiate(&x8, g8, NULL, NULL, 0));
    CHECK(hipGraphLaunch(x8, stream));
    CHECK(hipStreamSynchronize(stream));
    int moved = 0;
    for (int i = 0; i < 64; i++) moved += as2[i] == 0x42;
    printf("async moved=%d launches=%ld\n", moved, fakehip_launches());
    hipGraphNode_t mn, rn;
    CHECK(hipGraphCreate(&g9, 0));
    CHECK(hipGraphAddMemcpyNode1D(&mn, g9, NULL, 0, as2, managed, 64, hipMemcpyDeviceToDevice));
    CHECK(hipGraphInstantiate(&x9, g9, NULL, NULL, 0));
    CHECK(hipGraphLaunch(x9, stream));
    CHECK(hipHostRegister(pageable, 64, 0));
    CHECK(hipGraphCreate(&g10, 0));
    CHECK(hipGraphAddMemcpyNode1D(&rn, g10, NULL, 0, as2, pageable, 64, hipMemcpyHostToDevice));
    CHECK(hipGraphInstantiate(&x10, g10, NULL, NULL, 0));
    CHECK(hipGraphLaunch(x10, stream));
    CHECK(hipStreamSynchronize(stream));
    CHECK(hipHostUnregister(pageable));
    CHECK(hipFreeAsync(as1, stream));
    CHECK(hipFreeAsync(as2, stream));
    printf("managed registered launches=%ld\n", fakehip_launches());
    free(pageable);
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipStreamDestroy(stream));
    return 0;
}
