/* A HIP program as hipcc builds it, by hand: an offload bundle (made at
 * test-build time with clang-offload-bundler, path in BUNDLE_PATH) is
 * embedded in .hip_fatbin; a constructor registers it with
 * __hipRegisterFatBinary and the `counter` kernel under a host stub with
 * __hipRegisterFunction, as clang's generated constructor does. Phases,
 * one printed line each: a chain of counter nodes whose `func` is the host
 * stub (launched three times), a node whose `func` is a stub nobody
 * registered, the same bundle given to hipModuleLoadData, and a stream
 * capture of hipLaunchKernel launches of the stub. Prints the
 * counters and the fake HIP's launch and registration counts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_util.h"

#ifndef BUNDLE_PATH
#error "compile with -DBUNDLE_PATH='\"path/to/bundle.hipfb\"'"
#endif

#define N 4 /* nodes of the registered chain */

/* The bundle, embedded the way hipcc places it (its own section, aligned). */
__asm__(".pushsection .hip_fatbin,\"a\",@progbits\n"
        ".balign 4096\n"
        ".globl relaunch_test_bundle\n"
        "relaunch_test_bundle:\n"
        ".incbin \"" BUNDLE_PATH "\"\n"
        ".popsection\n");
extern const unsigned char relaunch_test_bundle[];

/* Host stubs: only their addresses matter (distinct bodies, so no folding). */
static volatile int stub_calls;
static void counter_stub(void) { stub_calls += 1; }
static void unregistered_stub(void) { stub_calls += 2; }
static void variable_stub(void) { stub_calls += 3; }
static int host_scale; /* the host shadow of a __device__ variable */

static hipFatBinaryWrapper wrapper = {0x48495046u, 1, relaunch_test_bundle, NULL};
static hipFatBinaryWrapper wrapper2 = {0x48495046u, 1, relaunch_test_bundle, NULL};
static void **modules, **modules2;

/* The second translation unit of the program: the same kernel, plus a
 * device variable (so nothing of it may replay). */
__attribute__((constructor)) static void register_kernels(void) {
    modules = __hipRegisterFatBinary(&wrapper);
    if (!modules) { fprintf(stderr, "__hipRegisterFatBinary refused the bundle\n"); exit(1); }
    __hipRegisterFunction(modules, (const void *)counter_stub, (char *)"counter", "counter", (unsigned)-1,
                          NULL, NULL, NULL, NULL, NULL);
    modules2 = __hipRegisterFatBinary(&wrapper2);
    if (!modules2) { fprintf(stderr, "__hipRegisterFatBinary refused the bundle\n"); exit(1); }
    __hipRegisterFunction(modules2, (const void *)variable_stub, (char *)"counter", "counter", (unsigned)-1,
                          NULL, NULL, NULL, NULL, NULL);
    __hipRegisterVar(modules2, &host_scale, (char *)"scale", (char *)"scale", 0, sizeof host_scale, 0, 0);
}

/* A chain of `n` counter nodes on `func` counting into `*args[0]`,
 * instantiated and launched `launches` times. */
static void run_chain(void *func, void **args, int n, int launches, hipStream_t stream) {
    hipGraph_t graph; hipGraphNode_t node[N]; hipGraphExec_t exec;
    CHECK(hipGraphCreate(&graph, 0));
    for (int i = 0; i < n; i++) {
        hipKernelNodeParams p = counter_node(func, args);
        CHECK(hipGraphAddKernelNode(&node[i], graph, i ? &node[i - 1] : NULL, i ? 1 : 0, &p));
    }
    CHECK(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));
    for (int i = 0; i < launches; i++) CHECK(hipGraphLaunch(exec, stream));
    CHECK(hipStreamSynchronize(stream));
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(graph));
}

int main(void) {
    CHECK(hipInit(0));
    void *a, *b, *c;
    CHECK(hipMalloc(&a, 4)); CHECK(hipMalloc(&b, 4)); CHECK(hipMalloc(&c, 4));
    hipStream_t stream;
    CHECK(hipStreamCreate(&stream));
    void *args_a[] = {&a}, *args_b[] = {&b}, *args_c[] = {&c};

    run_chain((void *)counter_stub, args_a, N, 3, stream);
    printf("static a=%u launches=%ld registrations=%ld\n", read_counter(a), fakehip_launches(),
           fakehip_registrations());

    run_chain((void *)unregistered_stub, args_b, 1, 1, stream);
    printf("unregistered b=%u launches=%ld\n", read_counter(b), fakehip_launches());

    /* A kernel of the fat binary that registers a device variable. */
    void *v;
    CHECK(hipMalloc(&v, 4));
    void *args_v[] = {&v};
    run_chain((void *)variable_stub, args_v, 1, 1, stream);
    printf("variable v=%u launches=%ld\n", read_counter(v), fakehip_launches());
    CHECK(hipFree(v));

    hipModule_t module; hipFunction_t counter;
    CHECK(hipModuleLoadData(&module, relaunch_test_bundle));
    CHECK(hipModuleGetFunction(&counter, module, "counter"));
    run_chain(counter, args_c, 2, 1, stream);
    CHECK(hipModuleUnload(module));
    printf("module c=%u launches=%ld\n", read_counter(c), fakehip_launches());

    /* Stream capture of kernel<<<...>>>-style launches (hipLaunchKernel of
     * the host stub): N launches captured as a chain, launched twice. */
    void *d;
    CHECK(hipMalloc(&d, 4));
    void *args_d[] = {&d};
    hipGraph_t graph; hipGraphExec_t exec;
    CHECK(hipStreamBeginCapture(stream, hipStreamCaptureModeGlobal));
    for (int i = 0; i < N; i++) {
        dim3 grid = {2, 1, 1}, block = {4, 1, 1};
        CHECK(hipLaunchKernel((const void *)counter_stub, grid, block, args_d, 0, stream));
    }
    CHECK(hipStreamEndCapture(stream, &graph));
    CHECK(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));
    for (int i = 0; i < 2; i++) CHECK(hipGraphLaunch(exec, stream));
    CHECK(hipStreamSynchronize(stream));
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(graph));
    printf("captured d=%u launches=%ld direct=%ld\n", read_counter(d), fakehip_launches(),
           fakehip_kernel_launches());
    CHECK(hipFree(d));

    __hipUnregisterFatBinary(modules2);
    __hipUnregisterFatBinary(modules);
    CHECK(hipFree(a)); CHECK(hipFree(b)); CHECK(hipFree(c));
    printf("done registrations=%ld\n", fakehip_registrations());
    return 0;
}
