/* An ordinary HIP program (module API + explicit graphs), unchanged by the
 * interposer: two independent chains of `counter` nodes (each node adds
 * one per work-item), launched three times, then one node patched to a
 * third counter, then graphs whose node passes arguments in the `extra`
 * form (one well formed, one with a short buffer), a graph instantiated with flags, a graph holding a node added
 * through a call the interposer does not see, and a patch that changes a
 * node's geometry. Prints the counters and the fake HIP's launch count,
 * one line per phase, for the test to check. Declarations follow
 * hip_runtime_api.h. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_util.h"

#define N 4 /* nodes of the first chain */
#define M 3 /* nodes of the second chain */

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s counter.co\n", argv[0]); return 2; }
    const unsigned char *image = read_image(argv[1]);

    CHECK(hipInit(0));
    void *a, *b, *c, *d, *e, *f;
    CHECK(hipMalloc(&a, 4)); CHECK(hipMalloc(&b, 4)); CHECK(hipMalloc(&c, 4)); CHECK(hipMalloc(&d, 4));
    CHECK(hipMalloc(&e, 4)); CHECK(hipMalloc(&f, 4));
    hipModule_t module; hipFunction_t counter; hipStream_t stream;
    CHECK(hipModuleLoadData(&module, image));
    CHECK(hipModuleGetFunction(&counter, module, "counter"));
    CHECK(hipStreamCreate(&stream));

    /* Chain one: dependencies given at add time; chain two: added after. */
    hipGraph_t graph; hipGraphNode_t one[N], two[M];
    void *args_a[] = {&a}, *args_b[] = {&b}, *args_c[] = {&c};
    CHECK(hipGraphCreate(&graph, 0));
    for (int i = 0; i < N; i++) {
        hipKernelNodeParams p = counter_node(counter, args_a);
        CHECK(hipGraphAddKernelNode(&one[i], graph, i ? &one[i - 1] : NULL, i ? 1 : 0, &p));
    }
    for (int i = 0; i < M; i++) {
        hipKernelNodeParams p = counter_node(counter, args_b);
        CHECK(hipGraphAddKernelNode(&two[i], graph, NULL, 0, &p));
        if (i) CHECK(hipGraphAddDependencies(graph, &two[i - 1], &two[i], 1));
    }
    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));
    for (int i = 0; i < 3; i++) CHECK(hipGraphLaunch(exec, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("replay a=%u b=%u launches=%ld\n", read_counter(a), read_counter(b), fakehip_launches());

    /* Patch the first node of chain one to count into c instead. */
    hipKernelNodeParams patched = counter_node(counter, args_c);
    CHECK(hipGraphExecKernelNodeSetParams(exec, one[0], &patched));
    CHECK(hipGraphLaunch(exec, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("patched a=%u b=%u c=%u launches=%ld\n", read_counter(a), read_counter(b), read_counter(c),
           fakehip_launches());

    /* Arguments in the `extra` form (HIP_LAUNCH_PARAM_BUFFER_POINTER = 1,
     * _SIZE = 2, _END = 3; the buffer laid out as the kernel expects): a
     * node that replays, then one whose buffer is shorter than the
     * kernel's arguments, which must fall through. */
    hipGraph_t graph2, short_graph; hipGraphNode_t node, short_node; hipGraphExec_t exec2, short_exec;
    size_t arg_size = sizeof d, short_size = sizeof d / 2;
    void *extra[] = {(void *)1, &d, (void *)2, &arg_size, (void *)3};
    void *short_extra[] = {(void *)1, &d, (void *)2, &short_size, (void *)3};
    hipKernelNodeParams p = {{4, 1, 1}, extra, counter, {2, 1, 1}, NULL, 0};
    hipKernelNodeParams short_p = {{4, 1, 1}, short_extra, counter, {2, 1, 1}, NULL, 0};
    CHECK(hipGraphCreate(&graph2, 0));
    CHECK(hipGraphAddKernelNode(&node, graph2, NULL, 0, &p));
    CHECK(hipGraphInstantiate(&exec2, graph2, NULL, NULL, 0));
    CHECK(hipGraphLaunch(exec2, stream));
    CHECK(hipGraphCreate(&short_graph, 0));
    CHECK(hipGraphAddKernelNode(&short_node, short_graph, NULL, 0, &short_p));
    CHECK(hipGraphInstantiate(&short_exec, short_graph, NULL, NULL, 0));
    CHECK(hipGraphLaunch(short_exec, stream));
    CHECK(hipStreamSynchronize(stream));
    CHECK(hipGraphExecDestroy(short_exec)); CHECK(hipGraphDestroy(short_graph));
    printf("extra d=%u launches=%ld\n", read_counter(d), fakehip_launches());

    /* Instantiated with flags: two chained nodes, launched twice. */
    hipGraph_t graph3; hipGraphNode_t n3[2]; hipGraphExec_t exec3;
    void *args_e[] = {&e};
    CHECK(hipGraphCreate(&graph3, 0));
    for (int i = 0; i < 2; i++) {
        hipKernelNodeParams q = counter_node(counter, args_e);
        CHECK(hipGraphAddKernelNode(&n3[i], graph3, i ? &n3[0] : NULL, i ? 1 : 0, &q));
    }
    CHECK(hipGraphInstantiateWithFlags(&exec3, graph3, 0));
    CHECK(hipGraphLaunch(exec3, stream));
    CHECK(hipGraphLaunch(exec3, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("flags e=%u launches=%ld\n", read_counter(e), fakehip_launches());

    /* A node the interposer does not see (a memory-free node): falls through. */
    hipGraph_t graph4; hipGraphNode_t k4, empty; hipGraphExec_t exec4;
    void *args_f[] = {&f};
    hipKernelNodeParams q = counter_node(counter, args_f);
    CHECK(hipGraphCreate(&graph4, 0));
    CHECK(hipGraphAddKernelNode(&k4, graph4, NULL, 0, &q));
    CHECK(hipGraphAddMemFreeNode(&empty, graph4, &k4, 1, f));
    CHECK(hipGraphInstantiate(&exec4, graph4, NULL, NULL, 0));
    CHECK(hipGraphLaunch(exec4, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("hidden f=%u launches=%ld\n", read_counter(f), fakehip_launches());

    /* A patch that changes the geometry: the exec is built again with it. */
    hipKernelNodeParams wider = counter_node(counter, args_c);
    wider.gridDim.x = 4;
    CHECK(hipGraphExecKernelNodeSetParams(exec, one[0], &wider));
    CHECK(hipGraphLaunch(exec, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("regeometry a=%u c=%u launches=%ld\n", read_counter(a), read_counter(c), fakehip_launches());

    CHECK(hipGraphExecDestroy(exec4)); CHECK(hipGraphDestroy(graph4));
    CHECK(hipGraphExecDestroy(exec3)); CHECK(hipGraphDestroy(graph3));
    /* The other loaders: hipModuleLoad (a path) and hipModuleLoadDataEx
     * (JIT options), one counter node each on g, launched once. */
    void *g;
    CHECK(hipMalloc(&g, 4));
    void *args_g[] = {&g};
    hipModule_t by_path, by_ex;
    hipFunction_t counter_path, counter_ex;
    CHECK(hipModuleLoad(&by_path, argv[1]));
    CHECK(hipModuleLoadDataEx(&by_ex, image, 0, NULL, NULL));
    CHECK(hipModuleGetFunction(&counter_path, by_path, "counter"));
    CHECK(hipModuleGetFunction(&counter_ex, by_ex, "counter"));
    hipGraph_t graph5; hipGraphNode_t loaded[2]; hipGraphExec_t exec5;
    CHECK(hipGraphCreate(&graph5, 0));
    hipKernelNodeParams p_path = counter_node(counter_path, args_g), p_ex = counter_node(counter_ex, args_g);
    CHECK(hipGraphAddKernelNode(&loaded[0], graph5, NULL, 0, &p_path));
    CHECK(hipGraphAddKernelNode(&loaded[1], graph5, &loaded[0], 1, &p_ex));
    CHECK(hipGraphInstantiate(&exec5, graph5, NULL, NULL, 0));
    CHECK(hipGraphLaunch(exec5, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("loaders g=%u launches=%ld\n", read_counter(g), fakehip_launches());
    CHECK(hipGraphExecDestroy(exec5)); CHECK(hipGraphDestroy(graph5));
    CHECK(hipModuleUnload(by_path)); CHECK(hipModuleUnload(by_ex));
    CHECK(hipFree(g));

    /* Changes behind the builders' backs: a node re-pointed from x to y
     * with hipGraphKernelNodeSetParams before instantiate (followed: y
     * counts), then the node disabled in the exec (that exec falls
     * through); an attribute set on a node (its graph falls through). */
    void *x, *y;
    CHECK(hipMalloc(&x, 4)); CHECK(hipMalloc(&y, 4));
    void *args_x[] = {&x}, *args_y[] = {&y};
    hipGraph_t graph6, graph7; hipGraphNode_t changed, attributed; hipGraphExec_t exec6, exec7;
    hipKernelNodeParams p_x = counter_node(counter, args_x), p_y = counter_node(counter, args_y);
    CHECK(hipGraphCreate(&graph6, 0));
    CHECK(hipGraphAddKernelNode(&changed, graph6, NULL, 0, &p_x));
    CHECK(hipGraphKernelNodeSetParams(changed, &p_y));
    CHECK(hipGraphInstantiate(&exec6, graph6, NULL, NULL, 0));
    CHECK(hipGraphLaunch(exec6, stream));
    CHECK(hipGraphNodeSetEnabled(exec6, changed, 0));
    CHECK(hipGraphLaunch(exec6, stream));
    int attribute_value = 1;
    CHECK(hipGraphCreate(&graph7, 0));
    CHECK(hipGraphAddKernelNode(&attributed, graph7, NULL, 0, &p_y));
    CHECK(hipGraphKernelNodeSetAttribute(attributed, 1, &attribute_value));
    CHECK(hipGraphInstantiate(&exec7, graph7, NULL, NULL, 0));
    CHECK(hipGraphLaunch(exec7, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("changed x=%u y=%u launches=%ld\n", read_counter(x), read_counter(y), fakehip_launches());
    CHECK(hipGraphExecDestroy(exec7)); CHECK(hipGraphDestroy(graph7));
    CHECK(hipGraphExecDestroy(exec6)); CHECK(hipGraphDestroy(graph6));
    CHECK(hipFree(x)); CHECK(hipFree(y));

    /* A module whose device variable the application takes
     * (hipModuleGetGlobal): its exec replays until then, and falls
     * through after (relaunch's copy would not see the variable). */
    void *w;
    CHECK(hipMalloc(&w, 4));
    void *args_w[] = {&w};
    hipModule_t with_var; hipFunction_t counter_var; hipGraph_t graph8; hipGraphNode_t var_node;
    hipGraphExec_t exec8;
    CHECK(hipModuleLoadData(&with_var, image));
    CHECK(hipModuleGetFunction(&counter_var, with_var, "counter"));
    hipKernelNodeParams p_w = counter_node(counter_var, args_w);
    CHECK(hipGraphCreate(&graph8, 0));
    CHECK(hipGraphAddKernelNode(&var_node, graph8, NULL, 0, &p_w));
    CHECK(hipGraphInstantiate(&exec8, graph8, NULL, NULL, 0));
    CHECK(hipGraphLaunch(exec8, stream));
    void *global; size_t global_bytes;
    CHECK(hipModuleGetGlobal(&global, &global_bytes, with_var, "scale"));
    CHECK(hipGraphLaunch(exec8, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("global w=%u launches=%ld\n", read_counter(w), fakehip_launches());
    CHECK(hipGraphExecDestroy(exec8)); CHECK(hipGraphDestroy(graph8));
    CHECK(hipModuleUnload(with_var));
    CHECK(hipFree(w));

    CHECK(hipGraphExecDestroy(exec2)); CHECK(hipGraphDestroy(graph2));
    CHECK(hipGraphExecDestroy(exec)); CHECK(hipGraphDestroy(graph));
    CHECK(hipModuleUnload(module));
    CHECK(hipFree(a)); CHECK(hipFree(b)); CHECK(hipFree(c)); CHECK(hipFree(d));
    CHECK(hipFree(e)); CHECK(hipFree(f));
    printf("done\n");
    return 0;
}
