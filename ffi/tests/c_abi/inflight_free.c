/* #14's lifetime check from C: rl_pm4_replay_async, then rl_pm4_ib_free
 * and rl_module_free while the replay is still running. The IB keeps its
 * module's code alive until the replay settles, so the counter still
 * reaches N and nothing freed is used (run under valgrind too).
 *
 *   inflight_free N CODE_OBJECT      (device: $RELAUNCH_DEVICE) */
#include "../../examples/common.h"

#include <string.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s N CODE_OBJECT\n", argv[0]);
        return 2;
    }
    long n = strtol(argv[1], NULL, 10);
    if (n <= 1 || n > 100000) {
        fprintf(stderr, "N must be 2..100000\n");
        return 2;
    }
    int rc = 0;
    size_t code_len = 0;
    uint8_t *code = read_file(argv[2], &code_len);
    uint8_t kernarg[256];
    RlGpu *gpu = NULL;
    RlModule *module = NULL;
    RlPm4Builder *builder = NULL;
    RlPm4Ib *ib = NULL;
    uint64_t counter = 0;
    if (!code) return 1;
    gpu = open_device();
    if (!gpu) {
        rc = 1;
        goto done;
    }
    CHECK(rl_gpu_load_module(gpu, code, code_len, &module));
    int64_t size = rl_module_kernarg_size(module, "counter");
    if (size < 8 || size > (int64_t)sizeof kernarg) {
        fprintf(stderr, "kernarg size %lld: %s\n", (long long)size, rl_last_error());
        rc = 1;
        goto done;
    }
    CHECK(rl_gpu_alloc(gpu, 4, RlMemHostVisible, &counter));
    memset(kernarg, 0, sizeof kernarg);
    size_t written = 0;
    CHECK(rl_module_pack_kernargs(module, "counter", (const uint8_t *)&counter, sizeof counter, 1,
                                  1, 1, 1, 1, 1, 0, kernarg, (size_t)size, &written));
    builder = rl_pm4_builder_new(gpu);
    if (!builder) {
        fprintf(stderr, "rl_pm4_builder_new: %s\n", rl_last_error());
        rc = 1;
        goto done;
    }
    for (long i = 0; i < n; i++) {
        if (i > 0) CHECK(rl_pm4_wait_rmw(builder, module, "counter"));
        CHECK(rl_pm4_dispatch(builder, module, "counter", 1, 1, 1, 1, 1, 1, 0, kernarg, written));
    }
    RlPm4Builder *consumed = builder;
    builder = NULL;
    CHECK(rl_pm4_finalize(gpu, consumed, &ib));
    CHECK(rl_pm4_replay_async(ib));
    /* Free the IB and the module with the replay in flight. */
    rl_pm4_ib_free(ib);
    ib = NULL;
    rl_module_free(module);
    module = NULL;
    uint32_t at_free = 0, value = 0;
    CHECK(rl_gpu_read(gpu, counter, &at_free, sizeof at_free));
    for (int polls = 0; polls < 60000 && value != (uint32_t)n; polls++) {
        CHECK(rl_gpu_read(gpu, counter, &value, sizeof value));
        if (value != (uint32_t)n) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
    printf("in-flight free: counter %u at the free, %u / %ld after [%s]\n", at_free, value, n,
           value == (uint32_t)n ? "PASS" : "FAIL");
    if (value != (uint32_t)n) rc = 1;
done:
    rl_pm4_ib_free(ib);
    rl_pm4_builder_free(builder);
    if (counter) rl_gpu_free_mem(gpu, counter);
    rl_module_free(module);
    rl_gpu_free(gpu);
    free(code);
    return rc;
}
