/* Stream-ordered launches whose replays fail, several in flight: the
 * decode fixture's rmsnorm as a one-node graph, run where the simulator
 * has no twin for it (RELAUNCH_SIM_KERNELS=twin), so every replay fails.
 * Each round instantiates a fresh exec (its own stream words), holds the
 * stream, queues `n` launches of it with an async memset of the output
 * between them, releases the stream and synchronises it: the stream must
 * get past every launch (none left waiting for a gate nobody closes), in
 * order (the memsets after the launches ran: the output holds the last
 * one's byte). Rounds use n = 1..MAX_N, some with the stream not held.
 * Prints one line per round, with whether the exec's next launch reached
 * the fake HIP (a failed exec falls through: its next launch is HIP's). */
#include <stdio.h>
#include <stdlib.h>

#include "app_util.h"

#define MAX_N 6

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s decode.co rounds\n", argv[0]); return 2; }
    const unsigned char *image = read_image(argv[1]);
    int rounds = atoi(argv[2]);
    CHECK(hipInit(0));
    hipModule_t module; hipFunction_t f; hipStream_t stream;
    CHECK(hipModuleLoadData(&module, image));
    CHECK(hipModuleGetFunction(&f, module, "rmsnorm"));
    CHECK(hipStreamCreate(&stream));
    void *o, *x, *w; unsigned n = 64;
    CHECK(hipMalloc(&o, 256)); CHECK(hipMalloc(&x, 256)); CHECK(hipMalloc(&w, 256));
    float eps = 1e-5f; void *args[] = {&o, &x, &w, &n, &eps};
    for (int r = 0; r < rounds; r++) {
        int launches = 1 + r % MAX_N, held = r % 4 != 3;
        hipGraph_t g; hipGraphNode_t node; hipGraphExec_t exec;
        CHECK(hipGraphCreate(&g, 0));
        hipKernelNodeParams p = {{64, 1, 1}, NULL, f, {1, 1, 1}, args, 0};
        CHECK(hipGraphAddKernelNode(&node, g, NULL, 0, &p));
        CHECK(hipGraphInstantiate(&exec, g, NULL, NULL, 0));
        if (held) fakehip_stream_hold(stream, 1);
        for (int i = 0; i < launches; i++) {
            CHECK(hipGraphLaunch(exec, stream));
            CHECK(hipMemsetAsync(o, i + 1, 256, stream));
        }
        long pending = fakehip_stream_pending(stream);
        if (held) fakehip_stream_hold(stream, 0);
        CHECK(hipStreamSynchronize(stream));
        unsigned char last = 0;
        CHECK(hipMemcpy(&last, (char *)o + 255, 1, hipMemcpyDeviceToHost));
        /* The exec fell through after its failure: HIP's launch from now on. */
        long fake = fakehip_launches();
        CHECK(hipGraphLaunch(exec, stream));
        CHECK(hipStreamSynchronize(stream));
        printf("round %d launches=%d held=%d synced last=%u fell_through=%ld%s\n", r, launches, held,
               last, fakehip_launches() - fake,
               held && pending < launches ? " (launch ops missing while held)" : "");
        CHECK(hipGraphExecDestroy(exec));
        CHECK(hipGraphDestroy(g));
    }
    return 0;
}
