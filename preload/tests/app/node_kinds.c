/* Node kinds other than kernels. A diamond of counter nodes joined by
 * empty nodes (k0 -> e0 -> {k1, k2} -> e1 -> k3; e1's edges added after
 * the fact) replays (32 per launch, the fake saw no launch); a graph with
 * a host node falls through (the fake counts the launch); a child graph
 * (two chained counter nodes) between two kernel nodes is flattened and
 * replays (32 per launch). */
#include <stdio.h>

#include "app_util.h"

static void host_fn(void *data) { (void)data; }

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

    void *args_a[] = {&a}, *args_b[] = {&b};
    hipKernelNodeParams pa = counter_node(counter, args_a), pb = counter_node(counter, args_b);
    hipGraph_t graph; hipGraphNode_t k[4], e[2];
    CHECK(hipGraphCreate(&graph, 0));
    CHECK(hipGraphAddKernelNode(&k[0], graph, NULL, 0, &pa));
    CHECK(hipGraphAddEmptyNode(&e[0], graph, &k[0], 1));
    CHECK(hipGraphAddKernelNode(&k[1], graph, &e[0], 1, &pa));
    CHECK(hipGraphAddKernelNode(&k[2], graph, &e[0], 1, &pa));
    CHECK(hipGraphAddEmptyNode(&e[1], graph, NULL, 0));
    CHECK(hipGraphAddKernelNode(&k[3], graph, &e[1], 1, &pa));
    hipGraphNode_t from[] = {k[1], k[2]}, to[] = {e[1], e[1]};
    CHECK(hipGraphAddDependencies(graph, from, to, 2));
    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));
    for (int i = 0; i < 3; i++) CHECK(hipGraphLaunch(exec, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("empty a=%u launches=%ld\n", read_counter(a), fakehip_launches());

    hipGraph_t hosted; hipGraphNode_t hk, hn; hipGraphExec_t hexec;
    hipHostNodeParams hp = {host_fn, NULL};
    CHECK(hipGraphCreate(&hosted, 0));
    CHECK(hipGraphAddKernelNode(&hk, hosted, NULL, 0, &pb));
    CHECK(hipGraphAddHostNode(&hn, hosted, &hk, 1, &hp));
    CHECK(hipGraphInstantiate(&hexec, hosted, NULL, NULL, 0));
    CHECK(hipGraphLaunch(hexec, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("host b=%u launches=%ld\n", read_counter(b), fakehip_launches());

    void *c;
    CHECK(hipMalloc(&c, 4));
    void *args_c[] = {&c};
    hipKernelNodeParams pc = counter_node(counter, args_c);
    hipGraph_t child, parent; hipGraphNode_t c0, c1, p0, pchild, p1; hipGraphExec_t pexec;
    CHECK(hipGraphCreate(&child, 0));
    CHECK(hipGraphAddKernelNode(&c0, child, NULL, 0, &pc));
    CHECK(hipGraphAddKernelNode(&c1, child, &c0, 1, &pc));
    CHECK(hipGraphCreate(&parent, 0));
    CHECK(hipGraphAddKernelNode(&p0, parent, NULL, 0, &pc));
    CHECK(hipGraphAddChildGraphNode(&pchild, parent, &p0, 1, child));
    CHECK(hipGraphAddKernelNode(&p1, parent, &pchild, 1, &pc));
    CHECK(hipGraphInstantiate(&pexec, parent, NULL, NULL, 0));
    for (int i = 0; i < 2; i++) CHECK(hipGraphLaunch(pexec, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("child c=%u launches=%ld\n", read_counter(c), fakehip_launches());

    /* A child graph ordering its two kernels through an event record and
     * wait pair: flattened with that order, and its event recorded. */
    void *d;
    CHECK(hipMalloc(&d, 4));
    void *args_d[] = {&d};
    hipKernelNodeParams pd = counter_node(counter, args_d);
    hipEvent_t ev;
    CHECK(hipEventCreate(&ev));
    hipGraph_t evchild, evparent; hipGraphNode_t e0, erec, ewait, e1, enode; hipGraphExec_t eexec;
    CHECK(hipGraphCreate(&evchild, 0));
    CHECK(hipGraphAddKernelNode(&e0, evchild, NULL, 0, &pd));
    CHECK(hipGraphAddEventRecordNode(&erec, evchild, &e0, 1, ev));
    CHECK(hipGraphAddEventWaitNode(&ewait, evchild, &erec, 1, ev));
    CHECK(hipGraphAddKernelNode(&e1, evchild, &ewait, 1, &pd));
    CHECK(hipGraphCreate(&evparent, 0));
    CHECK(hipGraphAddChildGraphNode(&enode, evparent, NULL, 0, evchild));
    CHECK(hipGraphInstantiate(&eexec, evparent, NULL, NULL, 0));
    for (int i = 0; i < 2; i++) CHECK(hipGraphLaunch(eexec, stream));
    CHECK(hipEventSynchronize(ev));
    CHECK(hipStreamSynchronize(stream));
    printf("events d=%u launches=%ld\n", read_counter(d), fakehip_launches());
    return 0;
}
