/* Multi-queue retained PM4: one independent lane per counter, lane k
 * holding k+1 counter dispatches, finalized together over the queue
 * count the automatic policy picks, replayed twice, then lane 0 is
 * patched to count into another counter.
 *
 *   multi_queue CODE_OBJECT [LANES]
 *
 * Device: rl_gpu_open_default(): $RELAUNCH_DEVICE, else the first real
 * GPU, else sim:gfx1201. */
#include "common.h"

#define MAX_LANES 8

static const char *SYMBOL = "counter";

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s CODE_OBJECT [LANES]\n", argv[0]);
        return 2;
    }
    long lanes = argc > 2 ? strtol(argv[2], NULL, 10) : 4;
    if (lanes < 1 || lanes > MAX_LANES) {
        fprintf(stderr, "LANES must be 1..%d\n", MAX_LANES);
        return 2;
    }
    int rc = 0;
    size_t code_len = 0;
    uint8_t *code = NULL;
    RlGpu *gpu = NULL;
    RlModule *module = NULL;
    RlPm4MultiIb *multi = NULL;
    RlPm4Builder *builders[MAX_LANES] = {0};
    uint64_t counters[MAX_LANES] = {0};
    uint64_t spare = 0;
    uint8_t kernarg[512];
    size_t kernarg_len = 0;

    code = read_file(argv[1], &code_len);
    if (!code) return 1;
    gpu = rl_gpu_open_default();
    if (!gpu) {
        fprintf(stderr, "rl_gpu_open_default: %s\n", rl_last_error());
        rc = 1;
        goto done;
    }
    CHECK(rl_gpu_load_module(gpu, code, code_len, &module));
    size_t queues = rl_gpu_pm4_queue_count(gpu, RlQueueAuto, (size_t)lanes);
    printf("lanes=%ld auto queues=%zu (one queue: %zu)\n", lanes, queues,
           rl_gpu_pm4_queue_count(gpu, RlQueueOne, (size_t)lanes));
    if (queues == 0) {
        fprintf(stderr, "rl_gpu_pm4_queue_count: %s\n", rl_last_error());
        rc = 1;
        goto done;
    }

    for (long lane = 0; lane < lanes; lane++) {
        CHECK(rl_gpu_alloc(gpu, 4, RlMemHostVisible, &counters[lane]));
        CHECK(rl_module_pack_kernargs(module, SYMBOL, (const uint8_t *)&counters[lane], 8, 1, 1,
                                      1, 1, 1, 1, 0, kernarg, sizeof kernarg, &kernarg_len));
        builders[lane] = rl_pm4_builder_new(gpu);
        if (!builders[lane]) {
            fprintf(stderr, "rl_pm4_builder_new: %s\n", rl_last_error());
            rc = 1;
            goto done;
        }
        for (long i = 0; i <= lane; i++) {
            if (i > 0) CHECK(rl_pm4_wait_rmw(builders[lane], module, SYMBOL));
            CHECK(rl_pm4_dispatch(builders[lane], module, SYMBOL, 1, 1, 1, 1, 1, 1, 0, kernarg,
                                  kernarg_len));
        }
    }
    int32_t status = rl_pm4_finalize_multi(gpu, builders, (size_t)lanes, &multi);
    for (long lane = 0; lane < lanes; lane++) builders[lane] = NULL; /* consumed */
    CHECK(status);
    printf("multi-IB: %zu lanes on %zu queues\n", rl_pm4_multi_ib_lane_count(multi),
           rl_pm4_multi_ib_queue_count(multi));

    CHECK(rl_pm4_replay_multi(multi));
    CHECK(rl_pm4_replay_multi(multi));
    for (long lane = 0; lane < lanes; lane++) {
        uint32_t value = 0;
        CHECK(rl_gpu_read(gpu, counters[lane], &value, 4));
        printf("lane %ld: %zu dispatches, counter = %u\n", lane,
               rl_pm4_multi_ib_dispatch_count(multi, (size_t)lane), value);
        if (value != 2 * (uint32_t)(lane + 1)) rc = 1;
    }

    /* Redirect lane 0's first dispatch to the spare counter (the pointer
     * is the first 8 kernarg bytes) and replay once more. */
    CHECK(rl_gpu_alloc(gpu, 4, RlMemHostVisible, &spare));
    CHECK(rl_pm4_multi_ib_set_kernargs(multi, 0, 0, 0, (const uint8_t *)&spare, 8));
    CHECK(rl_pm4_replay_multi(multi));
    uint32_t spare_value = 0, lane0 = 0;
    CHECK(rl_gpu_read(gpu, spare, &spare_value, 4));
    CHECK(rl_gpu_read(gpu, counters[0], &lane0, 4));
    printf("after patch: spare = %u, lane 0 = %u\n", spare_value, lane0);
    if (spare_value != 1 || lane0 != 2) rc = 1;
    printf("multi-queue C-ABI: [%s]\n", rc == 0 ? "PASS" : "FAIL");
done:
    for (long lane = 0; lane < MAX_LANES; lane++) rl_pm4_builder_free(builders[lane]);
    rl_pm4_multi_ib_free(multi);
    rl_module_free(module);
    rl_gpu_free(gpu);
    free(code);
    return rc;
}
