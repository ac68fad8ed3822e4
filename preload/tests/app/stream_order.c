/* Stream-ordered replays: a chain of four counter nodes (32 per launch)
 * launched on a stream whose fake-HIP thread executes stream operations in
 * order. Checks, printing one line each:
 * - the launch returns while the stream still holds its operations (the
 *   stream thread is held, so the replay cannot have started: the counter
 *   is still 0 and the launch's stream operations are pending);
 * - 100 launches interleaved with hipMemcpyAsync read-backs on the same
 *   stream: every read-back sees exactly the launches before it;
 * - hipEventRecord + hipEventSynchronize and hipDeviceSynchronize after a
 *   launch see it finished (the counter read directly, not through a
 *   synchronous copy);
 * - a kernarg patch issued while a launch waits at its gate lands after
 *   that launch without blocking the caller;
 * - so does a hipGraphExecUpdate from a graph of the same shape whose
 *   nodes all count into b. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_util.h"

#define N 4
#define LAUNCHES 100

static unsigned peek(void *p) { return __atomic_load_n((unsigned *)p, __ATOMIC_SEQ_CST); }

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s counter.co\n", argv[0]); return 2; }
    const unsigned char *image = read_image(argv[1]);
    CHECK(hipInit(0));
    void *a, *b;
    CHECK(hipMalloc(&a, 4)); CHECK(hipMalloc(&b, 4));
    hipModule_t module; hipFunction_t counter; hipStream_t stream;
    CHECK(hipModuleLoadData(&module, image));
    CHECK(hipModuleGetFunction(&counter, module, "counter"));
    CHECK(hipStreamCreate(&stream));
    hipGraph_t graph; hipGraphNode_t node[N];
    void *args_a[] = {&a}, *args_b[] = {&b};
    CHECK(hipGraphCreate(&graph, 0));
    for (int i = 0; i < N; i++) {
        hipKernelNodeParams p = counter_node(counter, args_a);
        CHECK(hipGraphAddKernelNode(&node[i], graph, i ? &node[i - 1] : NULL, i ? 1 : 0, &p));
    }
    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));

    /* 1. The launch returns before the replay ran. */
    fakehip_stream_hold(stream, 1);
    CHECK(hipGraphLaunch(exec, stream));
    long pending = fakehip_stream_pending(stream);
    unsigned before = peek(a);
    fakehip_stream_hold(stream, 0);
    CHECK(hipStreamSynchronize(stream));
    printf("returned pending=%ld before=%u after=%u launches=%ld\n", pending, before, peek(a), fakehip_launches());

    /* 2. Interleaved with async read-backs on the stream. */
    static unsigned seen[LAUNCHES];
    for (int i = 0; i < LAUNCHES; i++) {
        CHECK(hipGraphLaunch(exec, stream));
        CHECK(hipMemcpyAsync(&seen[i], a, 4, hipMemcpyDeviceToHost, stream));
    }
    CHECK(hipStreamSynchronize(stream));
    int right = 0;
    for (int i = 0; i < LAUNCHES; i++) right += seen[i] == 32u * (unsigned)(i + 2);
    printf("interleaved right=%d of %d a=%u\n", right, LAUNCHES, peek(a));

    /* 3. Events and device synchronisation see the launch finished. */
    hipEvent_t ev;
    CHECK(hipEventCreate(&ev));
    CHECK(hipGraphLaunch(exec, stream));
    CHECK(hipEventRecord(ev, stream));
    CHECK(hipEventSynchronize(ev));
    unsigned at_event = peek(a);
    CHECK(hipGraphLaunch(exec, stream));
    CHECK(hipDeviceSynchronize());
    printf("event a=%u device a=%u\n", at_event, peek(a));

    /* 4. A patch while a launch waits at its gate: lands after it. */
    fakehip_stream_hold(stream, 1);
    CHECK(hipGraphLaunch(exec, stream));
    hipKernelNodeParams patched = counter_node(counter, args_b);
    CHECK(hipGraphExecKernelNodeSetParams(exec, node[0], &patched));
    unsigned b_while = peek(b);
    fakehip_stream_hold(stream, 0);
    CHECK(hipGraphLaunch(exec, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("patched b_while=%u a=%u b=%u launches=%ld\n", b_while, peek(a), peek(b), fakehip_launches());

    /* 5. An update while a launch waits at its gate: lands after it. */
    hipGraph_t all_b; hipGraphNode_t node_b[N];
    CHECK(hipGraphCreate(&all_b, 0));
    for (int i = 0; i < N; i++) {
        hipKernelNodeParams p = counter_node(counter, args_b);
        CHECK(hipGraphAddKernelNode(&node_b[i], all_b, i ? &node_b[i - 1] : NULL, i ? 1 : 0, &p));
    }
    fakehip_stream_hold(stream, 1);
    CHECK(hipGraphLaunch(exec, stream));
    hipGraphNode_t error_node = NULL;
    int update_result = -1;
    CHECK(hipGraphExecUpdate(exec, all_b, &error_node, &update_result));
    unsigned a_while = peek(a);
    b_while = peek(b);
    pending = fakehip_stream_pending(stream);
    fakehip_stream_hold(stream, 0);
    CHECK(hipGraphLaunch(exec, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("updated result=%d pending=%ld a_while=%u b_while=%u a=%u b=%u launches=%ld\n", update_result,
           pending, a_while, b_while, peek(a), peek(b), fakehip_launches());
    CHECK(hipGraphDestroy(all_b));
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipStreamDestroy(stream));
    return 0;
}
