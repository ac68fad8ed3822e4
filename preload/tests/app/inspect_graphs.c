/* The interposer's inspection API as an application uses it: two graphs,
 * one relaunch replays (two chained counter nodes) and one with a host
 * node, which runs on HIP; each launched twice. Then the API, found with
 * dlsym (absent without the interposer), lists the execs with their
 * verdicts, switches replay off for one launch and on again.
 *
 * Built as a program (prints one line per fact for the test) or, with
 * -DINSPECT_LIBRARY, as a library whose inspect_build() makes and launches
 * the graphs for a Python process to inspect. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "app_util.h"
#include "../../include/relaunch_hipgraph.h"

static void host_fn(void *data) { (void)data; }

static hipStream_t stream;
static hipGraphExec_t replayed_exec, host_exec;
static void *counter_a;

/* Make both execs and launch each twice. */
int inspect_build(const char *code_object) {
    const unsigned char *image = read_image(code_object);
    CHECK(hipInit(0));
    void *b;
    CHECK(hipMalloc(&counter_a, 4)); CHECK(hipMalloc(&b, 4));
    hipModule_t module; hipFunction_t counter;
    CHECK(hipModuleLoadData(&module, image));
    CHECK(hipModuleGetFunction(&counter, module, "counter"));
    CHECK(hipStreamCreate(&stream));
    void *args_a[] = {&counter_a}, *args_b[] = {&b};
    hipKernelNodeParams pa = counter_node(counter, args_a), pb = counter_node(counter, args_b);

    hipGraph_t graph, hosted; hipGraphNode_t k0, k1, hk, hn;
    CHECK(hipGraphCreate(&graph, 0));
    CHECK(hipGraphAddKernelNode(&k0, graph, NULL, 0, &pa));
    CHECK(hipGraphAddKernelNode(&k1, graph, &k0, 1, &pa));
    CHECK(hipGraphInstantiate(&replayed_exec, graph, NULL, NULL, 0));
    hipHostNodeParams hp = {host_fn, NULL};
    CHECK(hipGraphCreate(&hosted, 0));
    CHECK(hipGraphAddKernelNode(&hk, hosted, NULL, 0, &pb));
    CHECK(hipGraphAddHostNode(&hn, hosted, &hk, 1, &hp));
    CHECK(hipGraphInstantiate(&host_exec, hosted, NULL, NULL, 0));
    for (int i = 0; i < 2; i++) {
        CHECK(hipGraphLaunch(replayed_exec, stream));
        CHECK(hipGraphLaunch(host_exec, stream));
    }
    CHECK(hipStreamSynchronize(stream));
    return 0;
}

/* Launch the replayable exec once more. */
int inspect_launch_again(void) {
    CHECK(hipGraphLaunch(replayed_exec, stream));
    CHECK(hipStreamSynchronize(stream));
    return 0;
}

#ifndef INSPECT_LIBRARY
#define FIND(name) ((__typeof__(&name))dlsym(RTLD_DEFAULT, #name))

static void print_execs(void) {
    void *execs[8];
    size_t n = FIND(rl_hipgraph_execs)(execs, 8);
    printf("execs %zu\n", n);
    for (size_t i = 0; i < n && i < 8; i++) {
        rl_hipgraph_exec_info_t info = {.struct_size = sizeof info};
        char text[256];
        int rc = FIND(rl_hipgraph_exec_info)(execs[i], &info, text, sizeof text);
        printf("%s rc=%d replayed=%d reason=%d launches=%llu/%llu/%llu lanes=%u len_ok=%d text=%s\n",
               execs[i] == replayed_exec ? "chain" : execs[i] == host_exec ? "hosted" : "other", rc,
               info.replayed, info.reason, (unsigned long long)info.launches_replayed,
               (unsigned long long)info.launches_on_hip, (unsigned long long)info.launches_failed,
               info.lanes, info.reason_len == strlen(text) || info.reason_len >= sizeof text, text);
    }
}

static void print_counters(void) {
    rl_hipgraph_counters_t c = {.struct_size = sizeof c};
    int rc = FIND(rl_hipgraph_counters)(&c);
    printf("counters rc=%d execs=%llu/%llu launches=%llu/%llu/%llu enabled=%d\n", rc,
           (unsigned long long)c.execs_replayed, (unsigned long long)c.execs_on_hip,
           (unsigned long long)c.launches_replayed, (unsigned long long)c.launches_on_hip,
           (unsigned long long)c.launches_failed, c.replay_enabled);
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s counter.co\n", argv[0]); return 2; }
    inspect_build(argv[1]);
    if (!FIND(rl_hipgraph_api_version)) {
        printf("api none a=%u launches=%ld\n", read_counter(counter_a), fakehip_launches());
        return 0;
    }
    printf("api %u\n", FIND(rl_hipgraph_api_version)());
    print_execs();
    print_counters();
    /* Misuse: a struct too small, an unknown exec. */
    rl_hipgraph_exec_info_t tiny = {.struct_size = 2};
    rl_hipgraph_exec_info_t info = {.struct_size = sizeof info};
    printf("misuse %d %d %d\n", FIND(rl_hipgraph_exec_info)(replayed_exec, &tiny, NULL, 0),
           FIND(rl_hipgraph_exec_info)((void *)0x1234, &info, NULL, 0),
           FIND(rl_hipgraph_counters)(NULL));
    /* Off for one launch (it runs on HIP), then on again (replayed). */
    printf("was %d\n", FIND(rl_hipgraph_set_replay)(0));
    inspect_launch_again();
    print_execs();
    printf("was %d\n", FIND(rl_hipgraph_set_replay)(1));
    inspect_launch_again();
    print_counters();
    printf("a=%u launches=%ld\n", read_counter(counter_a), fakehip_launches());
    return 0;
}
#endif
