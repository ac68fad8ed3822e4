/* A HIP program whose GPU faults under relaunch: a graph on a counter
 * (replayed by relaunch), then a graph whose node writes a wild address
 * (the simulator reports a VM fault: the GPU is lost to relaunch), then
 * the first graph again and a graph instantiated after the fault. Linked
 * against the fake HIP built with FAKEHIP_HOST_GRAPHS (no stream memory
 * operations, so the interposer launches synchronously; graph launches
 * that reach the fake run their counter nodes on the host). Prints the
 * counters, the statuses and the fake's launch count, one line per phase. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_util.h"


int main(int argc, char **argv) {
    /* "sync": wait for the faulting launch before the next (a HIP with
     * stream memory operations returns from it before its replay failed). */
    if (argc != 2 && argc != 3) { fprintf(stderr, "usage: %s counter.co [sync]\n", argv[0]); return 2; }
    int sync_after_fault = argc == 3;
    const unsigned char *image = read_image(argv[1]);

    CHECK(hipInit(0));
    void *a, *b;
    CHECK(hipMalloc(&a, 4)); CHECK(hipMalloc(&b, 4));
    void *wild = (void *)(uintptr_t)0x7eadbeef0000ull;
    hipModule_t module; hipFunction_t counter; hipStream_t stream;
    CHECK(hipModuleLoadData(&module, image));
    CHECK(hipModuleGetFunction(&counter, module, "counter"));
    CHECK(hipStreamCreate(&stream));

    hipGraph_t good, bad, late; hipGraphNode_t n_good, n_bad, n_late;
    hipGraphExec_t x_good, x_bad, x_late;
    void *args_a[] = {&a}, *args_wild[] = {&wild}, *args_b[] = {&b};
    hipKernelNodeParams p_a = counter_node(counter, args_a), p_wild = counter_node(counter, args_wild),
                        p_b = counter_node(counter, args_b);
    CHECK(hipGraphCreate(&good, 0));
    CHECK(hipGraphAddKernelNode(&n_good, good, NULL, 0, &p_a));
    CHECK(hipGraphInstantiate(&x_good, good, NULL, NULL, 0));
    CHECK(hipGraphCreate(&bad, 0));
    CHECK(hipGraphAddKernelNode(&n_bad, bad, NULL, 0, &p_wild));
    CHECK(hipGraphInstantiate(&x_bad, bad, NULL, NULL, 0));

    CHECK(hipGraphLaunch(x_good, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("before a=%u launches=%ld\n", read_counter(a), fakehip_launches());

    /* The fault: relaunch's replay loses the GPU and the launch goes to
     * HIP, which reports the wild address its own way. */
    hipError_t rc = hipGraphLaunch(x_bad, stream);
    if (sync_after_fault) CHECK(hipStreamSynchronize(stream));
    printf("fault rc=%d launches=%ld\n", rc, fakehip_launches());

    /* The graph that replayed before: now HIP's, and it still counts. */
    CHECK(hipGraphLaunch(x_good, stream));
    CHECK(hipGraphLaunch(x_good, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("after a=%u launches=%ld\n", read_counter(a), fakehip_launches());

    /* A graph instantiated on the lost GPU: HIP's from the start. */
    CHECK(hipGraphCreate(&late, 0));
    CHECK(hipGraphAddKernelNode(&n_late, late, NULL, 0, &p_b));
    CHECK(hipGraphInstantiate(&x_late, late, NULL, NULL, 0));
    CHECK(hipGraphLaunch(x_late, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("late b=%u launches=%ld\n", read_counter(b), fakehip_launches());

    CHECK(hipGraphExecDestroy(x_late)); CHECK(hipGraphDestroy(late));
    CHECK(hipGraphExecDestroy(x_bad)); CHECK(hipGraphDestroy(bad));
    CHECK(hipGraphExecDestroy(x_good)); CHECK(hipGraphDestroy(good));
    CHECK(hipModuleUnload(module));
    CHECK(hipFree(a)); CHECK(hipFree(b));
    printf("done\n");
    return 0;
}
