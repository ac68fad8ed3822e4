/* The code object v4 HIP kernel `dims` (tests/kernels/hip/dims_v4.hip:
 * out[2 * blockIdx.x] = blockDim.x, out[2 * blockIdx.x + 1] = gridDim.x,
 * both read through the dispatch packet) as a one-node graph whose
 * geometry hipGraphExecKernelNodeSetParams changes between launches.
 * Prints what every group of each launch read, and the fake's launch
 * count. */
#include <stdio.h>

#include "app_util.h"

static void run(hipGraphExec_t exec, hipGraphNode_t node, hipKernelNodeParams *p, unsigned *out,
                hipStream_t stream, unsigned block, unsigned groups) {
    p->blockDim.x = block;
    p->gridDim.x = groups;
    CHECK(hipGraphExecKernelNodeSetParams(exec, node, p));
    CHECK(hipGraphLaunch(exec, stream));
    CHECK(hipStreamSynchronize(stream));
    unsigned host[16];
    CHECK(hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost));
    printf("block=%u groups=%u read=", block, groups);
    for (unsigned g = 0; g < groups; g++) printf("%s%u/%u", g ? "," : "", host[2 * g], host[2 * g + 1]);
    printf(" launches=%ld\n", fakehip_launches());
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s dims_v4.co\n", argv[0]); return 2; }
    const unsigned char *image = read_image(argv[1]);
    CHECK(hipInit(0));
    unsigned *out;
    CHECK(hipMalloc((void **)&out, 16 * sizeof *out));
    hipModule_t module; hipFunction_t dims; hipStream_t stream;
    CHECK(hipModuleLoadData(&module, image));
    CHECK(hipModuleGetFunction(&dims, module, "dims"));
    CHECK(hipStreamCreate(&stream));
    void *args[] = {&out};
    hipKernelNodeParams p = {{64, 1, 1}, NULL, dims, {3, 1, 1}, args, 0};
    hipGraph_t graph; hipGraphNode_t node; hipGraphExec_t exec;
    CHECK(hipGraphCreate(&graph, 0));
    CHECK(hipGraphAddKernelNode(&node, graph, NULL, 0, &p));
    CHECK(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));
    run(exec, node, &p, out, stream, 64, 3);
    run(exec, node, &p, out, stream, 32, 5);
    run(exec, node, &p, out, stream, 128, 2);
    return 0;
}
