/* Every one of the seed header's 45 functions, called with the seed
 * header's own types (SEED-ABI.md: const pointers, enum parameters,
 * `struct RlAccess`), compiled as C99 and as C++17 with -Wall -Wextra
 * -Werror against relaunch.h and run on a simulated device.
 *
 *   seed_abi DEVICE COUNTER_CO ADD_SCALAR_CO
 *
 * First, each function's address is taken as a pointer of the seed's exact
 * type, so a differing parameter list, const-ness or return type fails
 * the build. Then each is called and its result checked; the program
 * prints "seed ABI: 45 functions [PASS]" at the end.
 *
 * The five certification calls are in the RL_TEST_CERTIFICATION block
 * (delivered by the certification work; the harness defines the macro
 * once they are merged). Without it the program checks 40 functions. */
#include <relaunch.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
#define SEED_NULL nullptr
#else
#define SEED_NULL NULL
#endif

/* `name` as a pointer of the seed's exact function type. */
#define SIG(ret, name, params) ret(*const sig_##name) params = name;

SIG(struct RlGraph *, rl_graph_new, (void))
SIG(struct RlGraph *, rl_graph_new_tuned, (uintptr_t, enum RlMode, uintptr_t))
SIG(void, rl_graph_free, (struct RlGraph *))
SIG(int32_t, rl_graph_buffer, (struct RlGraph *, const char *, uint64_t, uint32_t *))
SIG(int32_t, rl_graph_kernel,
    (struct RlGraph *, const char *, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
     const struct RlAccess *, uintptr_t, const uint32_t *, uintptr_t, uint32_t *))
SIG(int32_t, rl_graph_kernel_ex,
    (struct RlGraph *, const struct RlModule *, const char *, uint32_t, uint32_t, uint32_t,
     uint32_t, uint32_t, uint32_t, uint32_t, const uint8_t *, uintptr_t, const struct RlAccess *,
     uintptr_t, const uint32_t *, uintptr_t, uint32_t *))
SIG(int32_t, rl_graph_add_dependency, (struct RlGraph *, uint32_t, uint32_t))
SIG(int32_t, rl_graph_instantiate, (struct RlGraph *, struct RlGraphExec **))
SIG(void, rl_graphexec_free, (struct RlGraphExec *))
SIG(uintptr_t, rl_graphexec_lane_count, (const struct RlGraphExec *))
SIG(int32_t, rl_graphexec_fingerprint, (const struct RlGraphExec *, uint8_t *))
SIG(int32_t, rl_graphexec_launch, (const struct RlGpu *, const struct RlGraphExec *))
SIG(int32_t, rl_graphexec_set_node_kernargs,
    (struct RlGraphExec *, uint32_t, const uint8_t *, uintptr_t))
SIG(int32_t, rl_graphexec_launch_mock, (const struct RlGraphExec *))
SIG(uint32_t, rl_abi_version, (void))
SIG(struct RlGpu *, rl_gpu_new, (int32_t))
SIG(void, rl_gpu_free, (struct RlGpu *))
SIG(uintptr_t, rl_gpu_pm4_queue_count, (const struct RlGpu *, enum RlQueuePolicy, uintptr_t))
SIG(int32_t, rl_gpu_load_module,
    (const struct RlGpu *, const uint8_t *, uintptr_t, struct RlModule **))
SIG(void, rl_module_free, (struct RlModule *))
SIG(int64_t, rl_module_kernarg_size, (const struct RlModule *, const char *))
SIG(struct RlPm4Builder *, rl_pm4_builder_new, (const struct RlGpu *))
SIG(int32_t, rl_pm4_dispatch,
    (struct RlPm4Builder *, const struct RlModule *, const char *, uint32_t, uint32_t, uint32_t,
     uint32_t, uint32_t, uint32_t, uint32_t, const uint8_t *, uintptr_t))
SIG(void, rl_pm4_wait_idle, (struct RlPm4Builder *))
SIG(int32_t, rl_pm4_wait_rmw, (struct RlPm4Builder *, const struct RlModule *, const char *))
SIG(void, rl_pm4_builder_free, (struct RlPm4Builder *))
SIG(int32_t, rl_pm4_finalize, (const struct RlGpu *, struct RlPm4Builder *, struct RlPm4Ib **))
SIG(int32_t, rl_pm4_finalize_profiled,
    (const struct RlGpu *, struct RlPm4Builder *, struct RlPm4Ib **))
SIG(int32_t, rl_pm4_finalize_multi,
    (const struct RlGpu *, struct RlPm4Builder *const *, uintptr_t, struct RlPm4MultiIb **))
SIG(int32_t, rl_pm4_finalize_multi_profiled,
    (const struct RlGpu *, struct RlPm4Builder *const *, uintptr_t, struct RlPm4MultiIb **))
SIG(int32_t, rl_pm4_replay_multi, (struct RlPm4MultiIb *))
SIG(int32_t, rl_pm4_replay_multi_profiled, (struct RlPm4MultiIb *, double *))
SIG(uintptr_t, rl_pm4_multi_ib_lane_count, (const struct RlPm4MultiIb *))
SIG(uintptr_t, rl_pm4_multi_ib_dispatch_count, (const struct RlPm4MultiIb *, uintptr_t))
SIG(int32_t, rl_pm4_multi_ib_set_kernargs,
    (struct RlPm4MultiIb *, uintptr_t, uintptr_t, uintptr_t, const uint8_t *, uintptr_t))
SIG(void, rl_pm4_multi_ib_free, (struct RlPm4MultiIb *))
SIG(int32_t, rl_pm4_replay, (struct RlPm4Ib *))
SIG(int32_t, rl_pm4_replay_profiled, (struct RlPm4Ib *, double *))
SIG(int32_t, rl_pm4_ib_set_kernargs,
    (struct RlPm4Ib *, uintptr_t, uintptr_t, const uint8_t *, uintptr_t))
SIG(void, rl_pm4_ib_free, (struct RlPm4Ib *))

#ifdef RL_TEST_CERTIFICATION
SIG(int32_t, rl_gpu_load_module_radiowave,
    (const struct RlGpu *, const uint8_t *, uintptr_t, const uint8_t *, uintptr_t,
     struct RlModule **))
SIG(bool, rl_module_radiowave_certified, (const struct RlModule *))
SIG(enum RlSchedulerProfile, rl_module_scheduler_profile, (const struct RlModule *))
SIG(uint32_t, rl_module_wavefront_size, (const struct RlModule *))
SIG(enum RlMutableReadCache, rl_module_kernel_read_cache, (const struct RlModule *, const char *))
#define SEED_FUNCTIONS 45
#else
#define SEED_FUNCTIONS 40
#endif

static int failures = 0;

#define EXPECT(cond, ...)                                                   \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "line %d: %s failed: ", __LINE__, #cond);      \
            fprintf(stderr, __VA_ARGS__);                                   \
            fprintf(stderr, " (last error: %s)\n", rl_last_error());        \
            failures++;                                                     \
        }                                                                   \
    } while (0)

#define OK(call) EXPECT((call) == RL_OK, "%s", #call)

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    uint8_t *data = SEED_NULL;
    long size = -1;
    if (!f) return SEED_NULL;
    if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size > 0 && fseek(f, 0, SEEK_SET) == 0) {
        data = (uint8_t *)malloc((size_t)size);
        if (data && fread(data, 1, (size_t)size, f) != (size_t)size) {
            free(data);
            data = SEED_NULL;
        }
    }
    fclose(f);
    *len = data ? (size_t)size : 0;
    return data;
}

static uint32_t read_u32(const struct RlGpu *gpu, uint64_t addr) {
    uint32_t value = 0xFFFFFFFFu;
    /* rl_gpu_read is relaunch's extension (the seed has no allocator). */
    if (rl_gpu_read((RlGpu *)gpu, addr, &value, sizeof value) != RL_OK) return 0xFFFFFFFFu;
    return value;
}

/* The last error's pointer survives successful calls (SEED-ABI: valid
 * until the next failing call on this thread). */
static void last_error_is_stable(const struct RlGpu *gpu, const struct RlModule *counter) {
    EXPECT(rl_module_kernarg_size(counter, "no_such_kernel") == -1, "unknown kernel");
    const char *before = rl_last_error();
    char copy[512];
    snprintf(copy, sizeof copy, "%s", before);
    EXPECT(strstr(copy, "no_such_kernel") != SEED_NULL, "message names the kernel: %s", copy);
    EXPECT(rl_abi_version() == 1, "abi");
    EXPECT(rl_gpu_pm4_queue_count(gpu, RlQueueAuto, 2) >= 1, "queue count");
    EXPECT(rl_module_kernarg_size(counter, "counter") == 8, "kernarg size");
    size_t needed = 0;
    OK(rl_module_pack_kernargs(counter, "counter", SEED_NULL, 0, 1, 1, 1, 1, 1, 1, 0, SEED_NULL, 0,
                               &needed));
    EXPECT(needed == 8, "size query %zu", needed);
    EXPECT(rl_last_error() == before, "the pointer moved after successful calls");
    EXPECT(strcmp(rl_last_error(), copy) == 0, "the text changed: %s", rl_last_error());
}

/* Profiled replay: the IB's own timestamps give a span > 0 that grows
 * with its dispatches; per-dispatch times (relaunch's extension) are
 * ordered and inside the span. */
static void profiled(const struct RlGpu *gpu, const struct RlModule *counter,
                     uint64_t counter_addr) {
    uint8_t kernarg[8];
    memcpy(kernarg, &counter_addr, sizeof kernarg);
    double span[2] = {-1.0, -1.0};
    const int dispatches[2] = {1, 8};
    uint32_t before = read_u32(gpu, counter_addr);
    for (int k = 0; k < 2; k++) {
        struct RlPm4Builder *p = rl_pm4_builder_new(gpu);
        for (int d = 0; d < dispatches[k]; d++) {
            OK(rl_pm4_wait_rmw(p, SEED_NULL, SEED_NULL));
            OK(rl_pm4_dispatch(p, counter, "counter", 1, 1, 1, 1, 1, 1, 0, kernarg,
                               sizeof kernarg));
        }
        struct RlPm4Ib *pib = SEED_NULL;
        OK(rl_pm4_finalize_profiled(gpu, p, &pib));
        EXPECT(rl_pm4_replay_profiled(pib, SEED_NULL) == RL_ERR_NULL, "NULL out_gpu_us");
        OK(rl_pm4_replay_profiled(pib, &span[k]));
        double times[1];
        EXPECT(rl_pm4_ib_dispatch_times(pib, times, times, 1) == RL_ERR_REPLAY,
               "a span-only IB has no per-dispatch times");
        rl_pm4_ib_free(pib);
    }
    EXPECT(read_u32(gpu, counter_addr) == before + 9, "the profiled IBs ran");
    EXPECT(span[0] > 0.0, "span of 1 dispatch: %f us", span[0]);
    EXPECT(span[1] > span[0], "8 dispatches (%f us) outlast 1 (%f us)", span[1], span[0]);

    struct RlPm4Builder *p = rl_pm4_builder_new(gpu);
    for (int d = 0; d < 4; d++) {
        OK(rl_pm4_dispatch(p, counter, "counter", 1, 1, 1, 1, 1, 1, 0, kernarg, sizeof kernarg));
        rl_pm4_wait_idle(p);
    }
    struct RlPm4Ib *pib = SEED_NULL;
    OK(rl_pm4_finalize_profiled_dispatches(gpu, p, &pib));
    double start[4], end[4], total = -1.0;
    EXPECT(rl_pm4_ib_dispatch_times(pib, start, end, 4) == RL_ERR_REPLAY,
           "no times before a profiled replay");
    OK(rl_pm4_replay_profiled(pib, &total));
    EXPECT(rl_pm4_ib_dispatch_times(pib, start, end, 3) == RL_ERR_RECORD, "count too small");
    OK(rl_pm4_ib_dispatch_times(pib, start, end, 4));
    double previous = 0.0;
    for (int d = 0; d < 4; d++) {
        EXPECT(previous <= start[d] && start[d] < end[d] && end[d] <= total,
               "dispatch %d: %f..%f us in a %f us span", d, start[d], end[d], total);
        previous = end[d];
    }
    rl_pm4_ib_free(pib);
}

static void direct_pm4(const struct RlGpu *gpu, const struct RlModule *counter,
                       const struct RlModule *add, uint64_t counter_addr, uint64_t acc_addr) {
    uint8_t kernarg[8];
    memcpy(kernarg, &counter_addr, sizeof kernarg);

    struct RlPm4Builder *b = rl_pm4_builder_new(gpu);
    EXPECT(b != SEED_NULL, "builder");
    OK(rl_pm4_dispatch(b, counter, "counter.kd", 1, 1, 1, 1, 1, 1, 0, kernarg, sizeof kernarg));
    OK(rl_pm4_wait_rmw(b, counter, "counter"));
    OK(rl_pm4_dispatch(b, counter, "counter", 1, 1, 1, 1, 1, 1, 0, kernarg, sizeof kernarg));
    rl_pm4_wait_idle(b);

    /* add_scalar packed as an engine packs its own struct: only the 16
     * explicit bytes. relaunch fills the hidden group sizes, so every
     * one of the 8 work-items finds its element. */
    struct {
        uint64_t acc;
        uint32_t value;
        uint32_t pad;
    } explicit_args = {acc_addr, 5, 0};
    EXPECT(rl_module_kernarg_size(add, "add_scalar") > 16, "add_scalar has hidden arguments");
    OK(rl_pm4_dispatch(b, add, "add_scalar", 8, 1, 1, 4, 1, 1, 0, (const uint8_t *)&explicit_args,
                       sizeof explicit_args));
    EXPECT(rl_pm4_dispatch(b, add, "add_scalar", 8, 1, 1, 4, 1, 1, 0,
                           (const uint8_t *)&explicit_args, 12) == RL_ERR_RECORD,
           "a 12-byte kernarg is refused");
    EXPECT(strstr(rl_last_error(), "16") && strstr(rl_last_error(), "272"),
           "both accepted lengths named");

    struct RlPm4Ib *ib = SEED_NULL;
    OK(rl_pm4_finalize(gpu, b, &ib));
    OK(rl_pm4_replay(ib));
    EXPECT(read_u32(gpu, counter_addr) == 2, "counter after one replay: %u",
           read_u32(gpu, counter_addr));
    for (uint64_t i = 0; i < 8; i++) {
        EXPECT(read_u32(gpu, acc_addr + 4 * i) == 5, "acc[%u] = %u", (unsigned)i,
               read_u32(gpu, acc_addr + 4 * i));
    }
    /* Patch the add_scalar value (dispatch 2, offset 8) and replay. */
    uint32_t seven = 7;
    OK(rl_pm4_ib_set_kernargs(ib, 2, 8, (const uint8_t *)&seven, sizeof seven));
    EXPECT(rl_pm4_ib_set_kernargs(ib, 3, 0, (const uint8_t *)&seven, sizeof seven) ==
               RL_ERR_HANDLE,
           "dispatch_index past the count is a handle error");
    EXPECT(rl_pm4_ib_set_kernargs(ib, 0, 8, (const uint8_t *)&seven, sizeof seven) ==
               RL_ERR_RECORD,
           "a range past the block is a record error");
    OK(rl_pm4_replay(ib));
    EXPECT(read_u32(gpu, counter_addr) == 4, "counter after two replays");
    EXPECT(read_u32(gpu, acc_addr + 28) == 12, "acc[7] after the patch: %u",
           read_u32(gpu, acc_addr + 28));

    /* An IB finalized without profiling is not measured (nor replayed). */
    double us = -1.0;
    EXPECT(rl_pm4_replay_profiled(ib, &us) == RL_ERR_REPLAY && us == -1.0,
           "an unprofiled IB is not measured");
    EXPECT(read_u32(gpu, counter_addr) == 4, "nothing was replayed");
    rl_pm4_ib_free(ib);

    profiled(gpu, counter, counter_addr);

    struct RlPm4Builder *unused = rl_pm4_builder_new(gpu);
    rl_pm4_builder_free(unused);
}

static void multi_queue(const struct RlGpu *gpu, const struct RlModule *counter,
                        uint64_t lane_addr[3]) {
    struct RlPm4Builder *lanes[2];
    for (int i = 0; i < 2; i++) {
        uint8_t kernarg[8];
        memcpy(kernarg, &lane_addr[i], sizeof kernarg);
        lanes[i] = rl_pm4_builder_new(gpu);
        for (int d = 0; d <= i; d++) {
            if (d > 0) OK(rl_pm4_wait_rmw(lanes[i], SEED_NULL, SEED_NULL));
            OK(rl_pm4_dispatch(lanes[i], counter, "counter", 1, 1, 1, 1, 1, 1, 0, kernarg, 8));
        }
    }
    struct RlPm4Builder *const *builders = lanes;
    struct RlPm4MultiIb *multi = SEED_NULL;
    OK(rl_pm4_finalize_multi(gpu, builders, 2, &multi));
    EXPECT(rl_pm4_multi_ib_lane_count(multi) == 2, "lanes");
    EXPECT(rl_pm4_multi_ib_dispatch_count(multi, 1) == 2, "lane 1 dispatches");
    OK(rl_pm4_replay_multi(multi));
    EXPECT(read_u32(gpu, lane_addr[0]) == 1 && read_u32(gpu, lane_addr[1]) == 2, "lane counters");
    /* Lane 1's second dispatch now counts a spare word (lanes must not
     * share memory they write). */
    OK(rl_pm4_multi_ib_set_kernargs(multi, 1, 1, 0, (const uint8_t *)&lane_addr[2], 8));
    EXPECT(rl_pm4_multi_ib_set_kernargs(multi, 1, 2, 0, (const uint8_t *)&lane_addr[2], 8) ==
               RL_ERR_HANDLE,
           "dispatch past the lane's count is a handle error");
    OK(rl_pm4_replay_multi(multi));
    EXPECT(read_u32(gpu, lane_addr[0]) == 2 && read_u32(gpu, lane_addr[1]) == 3 &&
               read_u32(gpu, lane_addr[2]) == 1,
           "after the patch");
    double us = -1.0;
    EXPECT(rl_pm4_replay_multi_profiled(multi, &us) == RL_ERR_REPLAY && us == -1.0,
           "not profiled");
    rl_pm4_multi_ib_free(multi);

    /* Profiled lanes: the makespan covers the longer lane. */
    double lane_span[2] = {-1.0, -1.0};
    for (int n = 1; n <= 2; n++) {
        struct RlPm4Builder *two[2];
        for (int i = 0; i < 2; i++) {
            two[i] = rl_pm4_builder_new(gpu);
            for (int d = 0; d < n * (i + 1); d++) {
                if (d > 0) OK(rl_pm4_wait_rmw(two[i], SEED_NULL, SEED_NULL));
                OK(rl_pm4_dispatch(two[i], counter, "counter", 1, 1, 1, 1, 1, 1, 0,
                                   (const uint8_t *)&lane_addr[i], 8));
            }
        }
        struct RlPm4MultiIb *pm = SEED_NULL;
        OK(rl_pm4_finalize_multi_profiled(gpu, two, 2, &pm));
        OK(rl_pm4_replay_multi_profiled(pm, &lane_span[n - 1]));
        rl_pm4_multi_ib_free(pm);
    }
    EXPECT(lane_span[0] > 0.0 && lane_span[1] > lane_span[0], "makespans %f, %f us",
           lane_span[0], lane_span[1]);

    /* Per-dispatch times per lane (relaunch's extension), inside the
     * makespan. */
    struct RlPm4Builder *timed[2];
    for (int i = 0; i < 2; i++) {
        timed[i] = rl_pm4_builder_new(gpu);
        for (int d = 0; d < i + 1; d++) {
            if (d > 0) OK(rl_pm4_wait_rmw(timed[i], SEED_NULL, SEED_NULL));
            OK(rl_pm4_dispatch(timed[i], counter, "counter", 1, 1, 1, 1, 1, 1, 0,
                               (const uint8_t *)&lane_addr[i], 8));
        }
    }
    struct RlPm4MultiIb *tm = SEED_NULL;
    OK(rl_pm4_finalize_multi_profiled_dispatches(gpu, timed, 2, &tm));
    double makespan = -1.0, start[2], end[2];
    OK(rl_pm4_replay_multi_profiled(tm, &makespan));
    for (uintptr_t lane = 0; lane < 2; lane++) {
        OK(rl_pm4_multi_ib_dispatch_times(tm, lane, start, end, 2));
        for (uintptr_t d = 0; d <= lane; d++) {
            EXPECT(0.0 <= start[d] && start[d] < end[d] && end[d] <= makespan,
                   "lane %u dispatch %u: %f..%f us of %f", (unsigned)lane, (unsigned)d,
                   start[d], end[d], makespan);
        }
    }
    EXPECT(rl_pm4_multi_ib_dispatch_times(tm, 2, start, end, 2) == RL_ERR_HANDLE, "no lane 2");
    rl_pm4_multi_ib_free(tm);
}

static void graphs(const struct RlGpu *gpu, const struct RlModule *counter,
                   const struct RlModule *add, uint64_t counter_addr, uint64_t acc_addr) {
    /* rl_graph_new is one serial lane; tuned Overlap gives lanes. */
    struct RlGraph *g = rl_graph_new();
    struct RlGraph *t = rl_graph_new_tuned(2, Overlap, 1);
    struct RlGraph *both[2] = {g, t};
    uintptr_t lanes[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        uint32_t a = 0, b = 0, n1 = 0, n2 = 0;
        OK(rl_graph_buffer(both[i], "a", 64, &a));
        OK(rl_graph_buffer(both[i], "b", 64, &b));
        struct RlAccess wa = {a, 0, 64, 1};
        struct RlAccess wb = {b, 0, 64, 1};
        OK(rl_graph_kernel(both[i], "fill_a", 64, 1, 1, 64, 1, 1, &wa, 1, SEED_NULL, 0, &n1));
        OK(rl_graph_kernel(both[i], "fill_b", 64, 1, 1, 64, 1, 1, &wb, 1, SEED_NULL, 0, &n2));
        struct RlAccess bad = {999, 0, 4, 0};
        uint32_t out = 0;
        EXPECT(rl_graph_kernel(both[i], "bad", 1, 1, 1, 1, 1, 1, &bad, 1, SEED_NULL, 0, &out) ==
                   RL_ERR_HANDLE,
               "unknown buffer handle");
        const uint32_t bad_dep = 999;
        EXPECT(rl_graph_kernel(both[i], "bad", 1, 1, 1, 1, 1, 1, SEED_NULL, 0, &bad_dep, 1,
                               &out) == RL_ERR_HANDLE,
               "unknown node handle in deps");
        struct RlGraphExec *e = SEED_NULL;
        OK(rl_graph_instantiate(both[i], &e));
        const struct RlGraphExec *ce = e;
        lanes[i] = rl_graphexec_lane_count(ce);
        OK(rl_graphexec_launch_mock(ce));
        rl_graphexec_free(e);
    }
    EXPECT(lanes[0] == 1, "rl_graph_new: %zu lanes", (size_t)lanes[0]);
    EXPECT(lanes[1] == 2, "rl_graph_new_tuned(2, Overlap): %zu lanes", (size_t)lanes[1]);
    rl_graph_free(t);
    rl_graph_free(g);

    /* A device graph: two counter nodes in a chain, launched twice. */
    g = rl_graph_new();
    uint32_t buf = 0, first = 0, second = 0;
    OK(rl_graph_buffer(g, "counter", 4, &buf));
    struct RlAccess rmw = {buf, 0, 4, 1};
    uint8_t kernarg[8];
    memcpy(kernarg, &counter_addr, sizeof kernarg);
    OK(rl_graph_kernel_ex(g, counter, "counter", 1, 1, 1, 1, 1, 1, 0, kernarg, 8, &rmw, 1,
                          SEED_NULL, 0, &first));
    OK(rl_graph_kernel_ex(g, counter, "counter", 1, 1, 1, 1, 1, 1, 0, kernarg, 8, &rmw, 1,
                          SEED_NULL, 0, &second));
    OK(rl_graph_add_dependency(g, first, second));
    EXPECT(rl_graph_add_dependency(g, first, 999) == RL_ERR_HANDLE, "unknown node handle");
    struct RlGraphExec *exec = SEED_NULL;
    OK(rl_graph_instantiate(g, &exec));
    uint8_t fp[32];
    OK(rl_graphexec_fingerprint(exec, fp));
    const struct RlGraphExec *cexec = exec;
    uint32_t before = read_u32(gpu, counter_addr);
    OK(rl_graphexec_launch(gpu, cexec));
    EXPECT(read_u32(gpu, counter_addr) == before + 2, "graph launch adds 2");
    /* The whole block replaced: the second node now counts elsewhere. */
    OK(rl_graphexec_set_node_kernargs(exec, second, kernarg, sizeof kernarg));
    EXPECT(rl_graphexec_set_node_kernargs(exec, second, kernarg, 4) == RL_ERR_RECORD,
           "a partial block is refused by the whole-block form");
    EXPECT(rl_graphexec_set_node_kernargs(exec, 999, kernarg, 8) == RL_ERR_HANDLE,
           "unknown node");
    OK(rl_graphexec_launch(gpu, cexec));
    EXPECT(read_u32(gpu, counter_addr) == before + 4, "second launch");
    rl_graphexec_free(exec);
    rl_graph_free(g);

    /* A node recorded and replaced with only its explicit arguments: the
     * hidden ones are filled from the node's geometry both times. */
    g = rl_graph_new();
    uint32_t acc = 0, node = 0;
    OK(rl_graph_buffer(g, "acc", 32, &acc));
    struct RlAccess acc_rw = {acc, 0, 32, 1};
    struct {
        uint64_t acc;
        uint32_t value;
        uint32_t pad;
    } args = {acc_addr, 2, 0};
    OK(rl_graph_kernel_ex(g, add, "add_scalar", 8, 1, 1, 4, 1, 1, 0, (const uint8_t *)&args,
                          sizeof args, &acc_rw, 1, SEED_NULL, 0, &node));
    OK(rl_graph_instantiate(g, &exec));
    OK(rl_graphexec_launch(gpu, exec));
    args.value = 3;
    OK(rl_graphexec_set_node_kernargs(exec, node, (const uint8_t *)&args, sizeof args));
    OK(rl_graphexec_launch(gpu, exec));
    for (uint64_t i = 0; i < 8; i++) {
        EXPECT(read_u32(gpu, acc_addr + 4 * i) == 5, "graph acc[%u] = %u", (unsigned)i,
               read_u32(gpu, acc_addr + 4 * i));
    }
    rl_graphexec_free(exec);
    rl_graph_free(g);
}

#ifdef RL_TEST_CERTIFICATION
static void certification(const struct RlGpu *gpu, const uint8_t *code, size_t len,
                          const struct RlModule *counter) {
    struct RlModule *m = SEED_NULL;
    const uint8_t manifest[] = "{}";
    EXPECT(rl_gpu_load_module_radiowave(gpu, code, len, manifest, sizeof manifest - 1, &m) ==
               RL_ERR_CERTIFICATION,
           "an empty manifest is refused");
    EXPECT(m == SEED_NULL, "no module on failure");
    EXPECT(!rl_module_radiowave_certified(counter), "uncertified");
    enum RlSchedulerProfile profile = rl_module_scheduler_profile(counter);
    EXPECT(profile == RlSchedulerUnknown || profile == RlSchedulerDefault, "profile %d",
           (int)profile);
    uint32_t wave = rl_module_wavefront_size(counter);
    EXPECT(wave == 0 || wave == 32 || wave == 64, "wave %u", wave);
    enum RlMutableReadCache cache = rl_module_kernel_read_cache(counter, "no_such_kernel");
    EXPECT(cache == RlMutableScalarOrUnknown, "unknown kernels fail closed");
    rl_module_free(m);
}
#endif

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s DEVICE COUNTER_CO ADD_SCALAR_CO\n", argv[0]);
        return 2;
    }
    EXPECT(rl_abi_version() == RL_ABI_VERSION, "abi version");

    /* A failed rl_gpu_new says why on stderr (one line; the harness
     * checks it) and returns NULL. */
    fprintf(stderr, "--- expected: one diagnostic line ---\n");
    struct RlGpu *none = rl_gpu_new(-1);
    fprintf(stderr, "--- end ---\n");
    EXPECT(none == SEED_NULL, "ordinal -1 opened a GPU");
    rl_gpu_free(none);

    size_t counter_len = 0, add_len = 0;
    uint8_t *counter_code = read_file(argv[2], &counter_len);
    uint8_t *add_code = read_file(argv[3], &add_len);
    if (!counter_code || !add_code) {
        fprintf(stderr, "cannot read the code objects\n");
        return 2;
    }
    /* relaunch's selector form opens the simulated device. */
    struct RlGpu *gpu_mut = rl_gpu_open(argv[1]);
    if (!gpu_mut) return 1;
    const struct RlGpu *gpu = gpu_mut;
    EXPECT(rl_gpu_pm4_queue_count(gpu, RlQueueAuto, 1) == 1, "auto never exceeds the width");
    EXPECT(rl_gpu_pm4_queue_count(gpu, RlQueueFour, 8) == 4, "four");

    struct RlModule *counter = SEED_NULL, *add = SEED_NULL;
    OK(rl_gpu_load_module(gpu, counter_code, counter_len, &counter));
    OK(rl_gpu_load_module(gpu, add_code, add_len, &add));
    if (!counter || !add) return 1;

    uint64_t mem = 0;
    OK(rl_gpu_alloc(gpu_mut, 4096, RlMemHostVisible, &mem));
    uint64_t lanes[3] = {mem + 64, mem + 128, mem + 192};

    last_error_is_stable(gpu, counter);
    direct_pm4(gpu, counter, add, mem, mem + 256);
    multi_queue(gpu, counter, lanes);
    graphs(gpu, counter, add, mem + 512, mem + 1024);
#ifdef RL_TEST_CERTIFICATION
    certification(gpu, counter_code, counter_len, counter);
#endif

    rl_module_free(add);
    rl_module_free(counter);
    rl_gpu_free(gpu_mut);
    free(counter_code);
    free(add_code);
    if (failures) {
        fprintf(stderr, "seed ABI: %d failures [FAIL]\n", failures);
        return 1;
    }
    printf("seed ABI: %d functions [PASS]\n", SEED_FUNCTIONS);
    return 0;
}
