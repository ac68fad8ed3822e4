/* An ordinary HIP program that builds its graphs by stream capture of
 * module launches, unchanged by the interposer: N `counter` launches
 * (each adds one per work-item) captured on a stream, instantiated and
 * launched three times; a launch outside any capture; a capture holding a
 * launch with arguments in the `extra` form; a capture forked to a second
 * stream and joined back through events; then a plain capture again.
 * Prints the counters, the fake HIP's graph-launch and direct-launch
 * counts and the captured graphs' node/edge counts, one line per phase,
 * for the test to check. Declarations follow hip_runtime_api.h. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_util.h"

#define N 5 /* launches of the first capture */

/* 2 blocks of 4 work-items: adds 8 to the counter args[0] points at. */
static void launch(hipFunction_t f, hipStream_t stream, void **args) {
    CHECK(hipModuleLaunchKernel(f, 2, 1, 1, 4, 1, 1, 0, stream, args, NULL));
}

static void counts(hipGraph_t graph, size_t *nodes, size_t *edges) {
    CHECK(hipGraphGetNodes(graph, NULL, nodes));
    CHECK(hipGraphGetEdges(graph, NULL, NULL, edges));
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s counter.co\n", argv[0]); return 2; }
    const unsigned char *image = read_image(argv[1]);

    CHECK(hipInit(0));
    void *a, *b, *c, *d, *e, *f, *g;
    CHECK(hipMalloc(&a, 4)); CHECK(hipMalloc(&b, 4)); CHECK(hipMalloc(&c, 4)); CHECK(hipMalloc(&d, 4));
    CHECK(hipMalloc(&e, 4)); CHECK(hipMalloc(&f, 4)); CHECK(hipMalloc(&g, 4));
    hipModule_t module; hipFunction_t counter; hipStream_t stream, side;
    CHECK(hipModuleLoadData(&module, image));
    CHECK(hipModuleGetFunction(&counter, module, "counter"));
    CHECK(hipStreamCreate(&stream));
    CHECK(hipStreamCreate(&side));
    size_t nodes, edges;

    /* N launches captured in stream order: a chain of N nodes. */
    void *args_a[] = {&a};
    hipStreamCaptureStatus during, after;
    hipGraph_t graph; hipGraphExec_t exec;
    CHECK(hipStreamBeginCapture(stream, hipStreamCaptureModeGlobal));
    for (int i = 0; i < N; i++) launch(counter, stream, args_a);
    CHECK(hipStreamIsCapturing(stream, &during));
    CHECK(hipStreamEndCapture(stream, &graph));
    CHECK(hipStreamIsCapturing(stream, &after));
    counts(graph, &nodes, &edges);
    CHECK(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));
    for (int i = 0; i < 3; i++) CHECK(hipGraphLaunch(exec, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("capture a=%u launches=%ld direct=%ld nodes=%zu edges=%zu status=%d,%d\n", read_counter(a),
           fakehip_launches(), fakehip_kernel_launches(), nodes, edges, (int)during, (int)after);

    /* Outside a capture a launch goes straight to HIP (the fake only
     * counts it). */
    void *args_b[] = {&b};
    launch(counter, stream, args_b);
    CHECK(hipStreamSynchronize(stream));
    printf("direct b=%u direct=%ld\n", read_counter(b), fakehip_kernel_launches());

    /* Arguments in the `extra` form (HIP_LAUNCH_PARAM_BUFFER_POINTER = 1,
     * _SIZE = 2, _END = 3) inside a capture: recorded like kernelParams. */
    void *args_c[] = {&c};
    size_t arg_size = sizeof d;
    void *extra[] = {(void *)1, &d, (void *)2, &arg_size, (void *)3};
    hipGraph_t graph2; hipGraphExec_t exec2;
    CHECK(hipStreamBeginCapture(stream, hipStreamCaptureModeThreadLocal));
    launch(counter, stream, args_c);
    CHECK(hipModuleLaunchKernel(counter, 2, 1, 1, 4, 1, 1, 0, stream, NULL, extra));
    CHECK(hipStreamEndCapture(stream, &graph2));
    counts(graph2, &nodes, &edges);
    CHECK(hipGraphInstantiate(&exec2, graph2, NULL, NULL, 0));
    CHECK(hipGraphLaunch(exec2, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("extra c=%u d=%u launches=%ld nodes=%zu edges=%zu\n", read_counter(c), read_counter(d),
           fakehip_launches(), nodes, edges);

    /* Forked to a second stream and joined back through events: the
     * interposer does not follow the join, so the graph falls through. */
    void *args_e[] = {&e}, *args_f[] = {&f};
    hipEvent_t fork, join;
    hipGraph_t graph3; hipGraphExec_t exec3;
    CHECK(hipEventCreate(&fork)); CHECK(hipEventCreate(&join));
    CHECK(hipStreamBeginCapture(stream, hipStreamCaptureModeRelaxed));
    launch(counter, stream, args_e);
    CHECK(hipEventRecord(fork, stream));
    CHECK(hipStreamWaitEvent(side, fork, 0));
    launch(counter, side, args_f);
    CHECK(hipEventRecord(join, side));
    CHECK(hipStreamWaitEvent(stream, join, 0));
    launch(counter, stream, args_e);
    CHECK(hipStreamEndCapture(stream, &graph3));
    counts(graph3, &nodes, &edges);
    CHECK(hipGraphInstantiate(&exec3, graph3, NULL, NULL, 0));
    CHECK(hipGraphLaunch(exec3, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("joined e=%u f=%u launches=%ld nodes=%zu edges=%zu\n", read_counter(e), read_counter(f),
           fakehip_launches(), nodes, edges);

    /* A plain capture on the second stream afterwards replays again. */
    void *args_g[] = {&g};
    hipGraph_t graph4; hipGraphExec_t exec4;
    CHECK(hipStreamBeginCapture(side, hipStreamCaptureModeGlobal));
    launch(counter, side, args_g);
    launch(counter, side, args_g);
    CHECK(hipStreamEndCapture(side, &graph4));
    CHECK(hipGraphInstantiate(&exec4, graph4, NULL, NULL, 0));
    CHECK(hipGraphLaunch(exec4, side));
    CHECK(hipStreamSynchronize(side));
    printf("again g=%u launches=%ld direct=%ld\n", read_counter(g), fakehip_launches(),
           fakehip_kernel_launches());

    /* Re-capture and hipGraphExecUpdate, as engines do per step: the same
     * two launches now counting into h (updated in place, then launched),
     * then three launches (another topology: the real update refuses it). */
    void *h;
    CHECK(hipMalloc(&h, 4));
    void *args_h[] = {&h};
    hipGraph_t graph5, graph6; hipGraphNode_t error_node; int result;
    CHECK(hipStreamBeginCapture(side, hipStreamCaptureModeGlobal));
    launch(counter, side, args_h);
    launch(counter, side, args_h);
    CHECK(hipStreamEndCapture(side, &graph5));
    CHECK(hipGraphExecUpdate(exec4, graph5, &error_node, &result));
    CHECK(hipGraphLaunch(exec4, side));
    CHECK(hipStreamSynchronize(side));
    CHECK(hipStreamBeginCapture(side, hipStreamCaptureModeGlobal));
    for (int i = 0; i < 3; i++) launch(counter, side, args_h);
    CHECK(hipStreamEndCapture(side, &graph6));
    hipError_t refused = hipGraphExecUpdate(exec4, graph6, &error_node, &result);
    CHECK(hipGraphLaunch(exec4, side));
    CHECK(hipStreamSynchronize(side));
    printf("update g=%u h=%u launches=%ld refused=%d,%d\n", read_counter(g), read_counter(h),
           fakehip_launches(), (int)refused, result);
    CHECK(hipGraphDestroy(graph6)); CHECK(hipGraphDestroy(graph5));
    CHECK(hipFree(h));

    /* A captured graph's node changed through a handle from
     * hipGraphGetNodes (a handle the shadow never saw): the graph must
     * fall through, never replay the old arguments (k stays 0). */
    void *k, *m;
    CHECK(hipMalloc(&k, 4)); CHECK(hipMalloc(&m, 4));
    void *args_k[] = {&k}, *args_m[] = {&m};
    hipGraph_t graph7; hipGraphExec_t exec7; hipGraphNode_t captured[2]; size_t got = 2;
    CHECK(hipStreamBeginCapture(side, hipStreamCaptureModeGlobal));
    launch(counter, side, args_k);
    launch(counter, side, args_k);
    CHECK(hipStreamEndCapture(side, &graph7));
    CHECK(hipGraphGetNodes(graph7, captured, &got));
    hipKernelNodeParams to_m = counter_node(counter, args_m);
    CHECK(hipGraphKernelNodeSetParams(captured[0], &to_m));
    CHECK(hipGraphInstantiate(&exec7, graph7, NULL, NULL, 0));
    CHECK(hipGraphLaunch(exec7, side));
    CHECK(hipStreamSynchronize(side));
    printf("recaptured k=%u m=%u launches=%ld nodes=%zu\n", read_counter(k), read_counter(m),
           fakehip_launches(), got);
    CHECK(hipGraphExecDestroy(exec7)); CHECK(hipGraphDestroy(graph7));
    CHECK(hipFree(k)); CHECK(hipFree(m));

    /* A replayable exec launched inside a capture: it must become part of
     * the capture (the real launch), never synchronize the capturing
     * stream (which would invalidate the capture); the captured graph then
     * holds a node the shadow does not model and falls through. */
    void *n;
    CHECK(hipMalloc(&n, 4));
    void *args_n[] = {&n};
    hipGraph_t graph8; hipGraphExec_t exec8;
    CHECK(hipStreamBeginCapture(side, hipStreamCaptureModeGlobal));
    launch(counter, side, args_n);
    CHECK(hipGraphLaunch(exec4, side));
    launch(counter, side, args_n);
    CHECK(hipStreamEndCapture(side, &graph8));
    counts(graph8, &nodes, &edges);
    CHECK(hipGraphInstantiate(&exec8, graph8, NULL, NULL, 0));
    CHECK(hipGraphLaunch(exec8, side));
    CHECK(hipStreamSynchronize(side));
    printf("nested n=%u launches=%ld nodes=%zu edges=%zu\n", read_counter(n), fakehip_launches(), nodes, edges);
    CHECK(hipGraphExecDestroy(exec8)); CHECK(hipGraphDestroy(graph8));
    CHECK(hipFree(n));

    /* Capture into an existing graph (one explicit node on q, then one
     * captured launch): not followed, so the graph falls through. */
    void *q;
    CHECK(hipMalloc(&q, 4));
    void *args_q[] = {&q};
    hipGraph_t graph9, ended; hipGraphNode_t first; hipGraphExec_t exec9;
    hipKernelNodeParams p_q = counter_node(counter, args_q);
    CHECK(hipGraphCreate(&graph9, 0));
    CHECK(hipGraphAddKernelNode(&first, graph9, NULL, 0, &p_q));
    CHECK(hipStreamBeginCaptureToGraph(side, graph9, NULL, NULL, 0, hipStreamCaptureModeGlobal));
    launch(counter, side, args_q);
    CHECK(hipStreamEndCapture(side, &ended));
    counts(ended, &nodes, &edges);
    CHECK(hipGraphInstantiate(&exec9, ended, NULL, NULL, 0));
    CHECK(hipGraphLaunch(exec9, side));
    CHECK(hipStreamSynchronize(side));
    printf("tograph q=%u launches=%ld nodes=%zu same=%d\n", read_counter(q), fakehip_launches(), nodes,
           ended == graph9);
    CHECK(hipGraphExecDestroy(exec9)); CHECK(hipGraphDestroy(graph9));
    CHECK(hipFree(q));

    CHECK(hipGraphExecDestroy(exec4)); CHECK(hipGraphDestroy(graph4));
    CHECK(hipGraphExecDestroy(exec3)); CHECK(hipGraphDestroy(graph3));
    CHECK(hipGraphExecDestroy(exec2)); CHECK(hipGraphDestroy(graph2));
    CHECK(hipGraphExecDestroy(exec)); CHECK(hipGraphDestroy(graph));
    CHECK(hipEventDestroy(fork)); CHECK(hipEventDestroy(join));
    CHECK(hipModuleUnload(module));
    CHECK(hipFree(a)); CHECK(hipFree(b)); CHECK(hipFree(c)); CHECK(hipFree(d));
    CHECK(hipFree(e)); CHECK(hipFree(f)); CHECK(hipFree(g));
    printf("done\n");
    return 0;
}
