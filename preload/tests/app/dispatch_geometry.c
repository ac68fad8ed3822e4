/* A code object v4 kernel reading its workgroup size through the dispatch
 * packet (add_scalar-v4: acc[workgroup_id * workgroup_size + local_id] +=
 * value) as a one-node graph whose geometry hipGraphExecKernelNodeSetParams
 * changes between launches: each replay must see its own geometry in the
 * packet (a stale packet would index with the old workgroup size). Prints
 * the first 16 counters after each launch and the fake's launch count. */
#include <stdio.h>

#include "app_util.h"

static void show(const char *phase, unsigned *acc) {
    unsigned host[16];
    CHECK(hipMemcpy(host, acc, sizeof host, hipMemcpyDeviceToHost));
    printf("%s acc=", phase);
    for (int i = 0; i < 16; i++) printf("%u", host[i]);
    printf(" launches=%ld\n", fakehip_launches());
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s add_scalar-v4.co\n", argv[0]); return 2; }
    const unsigned char *image = read_image(argv[1]);
    CHECK(hipInit(0));
    unsigned *acc;
    CHECK(hipMalloc((void **)&acc, 64 * sizeof *acc));
    hipModule_t module; hipFunction_t add; hipStream_t stream;
    CHECK(hipModuleLoadData(&module, image));
    CHECK(hipModuleGetFunction(&add, module, "add_scalar"));
    CHECK(hipStreamCreate(&stream));

    unsigned value = 1;
    void *args[] = {&acc, &value};
    /* 2 groups of 4: acc[0..8] += 1. */
    hipKernelNodeParams p = {{4, 1, 1}, NULL, add, {2, 1, 1}, args, 0};
    hipGraph_t graph; hipGraphNode_t node; hipGraphExec_t exec;
    CHECK(hipGraphCreate(&graph, 0));
    CHECK(hipGraphAddKernelNode(&node, graph, NULL, 0, &p));
    CHECK(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));
    CHECK(hipGraphLaunch(exec, stream));
    CHECK(hipStreamSynchronize(stream));
    show("first", acc);

    /* 2 groups of 8: acc[0..16] += 2. */
    value = 2;
    p.blockDim.x = 8;
    CHECK(hipGraphExecKernelNodeSetParams(exec, node, &p));
    CHECK(hipGraphLaunch(exec, stream));
    CHECK(hipStreamSynchronize(stream));
    show("wider", acc);

    /* 3 groups of 2: acc[0..6] += 4. */
    value = 4;
    p.blockDim.x = 2;
    p.gridDim.x = 3;
    CHECK(hipGraphExecKernelNodeSetParams(exec, node, &p));
    CHECK(hipGraphLaunch(exec, stream));
    CHECK(hipStreamSynchronize(stream));
    show("narrower", acc);

    /* While a launch waits at its gate (the stream held), a patch back to
     * 2 groups of 4 (acc[0..8] += 8): the held launch still runs 3 groups
     * of 2 with 4 (acc[0..6] += 4), the next one the new geometry. */
    fakehip_stream_hold(stream, 1);
    CHECK(hipGraphLaunch(exec, stream));
    value = 8;
    p.blockDim.x = 4;
    p.gridDim.x = 2;
    CHECK(hipGraphExecKernelNodeSetParams(exec, node, &p));
    CHECK(hipGraphLaunch(exec, stream));
    fakehip_stream_hold(stream, 0);
    CHECK(hipStreamSynchronize(stream));
    show("inflight", acc);
    return 0;
}
