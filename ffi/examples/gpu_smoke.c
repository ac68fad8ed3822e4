/* The correctness gate: N dispatches of the counter kernel recorded with
 * the direct PM4 builder (a read-after-write boundary between them), one
 * replay, and the counter must read N.
 *
 *   gpu_smoke N CODE_OBJECT [MANIFEST]
 *
 * Device: $RELAUNCH_DEVICE, else GPU 0, else (no ROCm here) sim:gfx1201.
 * The kernel: $RELAUNCH_COUNTER_SYMBOL if set, else `ctr_k` (the reference
 * guide's counter, tests/kernels/hip/ctr_k.hip) when the code object has
 * it, else `counter` (tests/kernels/counter.cl). Both add 1 per work-item
 * to the u32 their only argument points at.
 *
 * Valid C and C++ (the guide builds it with `hipcc -x hip`): every variable
 * is declared before the first `goto done`. */
#include "common.h"

/* The counter kernel of `module` (see above). */
static const char *counter_symbol(const RlModule *module) {
    const char *symbol = getenv("RELAUNCH_COUNTER_SYMBOL");
    if (symbol && *symbol) return symbol;
    return rl_module_kernarg_size(module, "ctr_k") >= 0 ? "ctr_k" : "counter";
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s N CODE_OBJECT [MANIFEST]\n", argv[0]);
        return 2;
    }
    long n = strtol(argv[1], NULL, 10);
    if (n <= 0 || n > 1000000) {
        fprintf(stderr, "N must be 1..1000000\n");
        return 2;
    }

    int rc = 0;
    size_t code_len = 0, manifest_len = 0, written = 0;
    uint8_t *code = NULL, *manifest = NULL, *kernarg = NULL;
    RlGpu *gpu = NULL;
    RlModule *module = NULL;
    RlPm4Builder *builder = NULL, *consumed = NULL;
    RlPm4Ib *ib = NULL;
    uint64_t counter = 0;
    int64_t kernarg_size = 0;
    uint32_t value = 0;
    const char *symbol = NULL;
    const char *certified = "no";

    code = read_file(argv[2], &code_len);
    if (!code) return 1;
    gpu = open_device();
    if (!gpu) {
        rc = 1;
        goto done;
    }
    if (argc > 3) {
        manifest = read_file(argv[3], &manifest_len);
        if (!manifest) {
            rc = 1;
            goto done;
        }
        CHECK(rl_gpu_load_module_radiowave(gpu, code, code_len, manifest, manifest_len, &module));
        certified = "yes";
    } else {
        CHECK(rl_gpu_load_module(gpu, code, code_len, &module));
    }

    symbol = counter_symbol(module);
    kernarg_size = rl_module_kernarg_size(module, symbol);
    if (kernarg_size < 8) {
        fprintf(stderr, "kernel %s: kernarg size %lld: %s\n", symbol, (long long)kernarg_size,
                rl_last_error());
        rc = 1;
        goto done;
    }
    CHECK(rl_gpu_alloc(gpu, 4, RlMemHostVisible, &counter));
    kernarg = (uint8_t *)calloc(1, (size_t)kernarg_size);
    if (!kernarg) {
        rc = 1;
        goto done;
    }
    CHECK(rl_module_pack_kernargs(module, symbol, (const uint8_t *)&counter, sizeof counter, 1,
                                  1, 1, 1, 1, 1, 0, kernarg, (size_t)kernarg_size, &written));

    builder = rl_pm4_builder_new(gpu);
    if (!builder) {
        fprintf(stderr, "rl_pm4_builder_new: %s\n", rl_last_error());
        rc = 1;
        goto done;
    }
    for (long i = 0; i < n; i++) {
        if (i > 0) CHECK(rl_pm4_wait_rmw(builder, module, symbol));
        CHECK(rl_pm4_dispatch(builder, module, symbol, 1, 1, 1, 1, 1, 1, 0, kernarg, written));
    }
    consumed = builder;
    builder = NULL; /* rl_pm4_finalize always consumes the builder */
    CHECK(rl_pm4_finalize(gpu, consumed, &ib));
    printf("ib: %zu dispatches, %zu dwords\n", rl_pm4_ib_dispatch_count(ib), rl_pm4_ib_dwords(ib));
    CHECK(rl_pm4_replay(ib));

    CHECK(rl_gpu_read(gpu, counter, &value, sizeof value));
    printf("real-GPU C-ABI gate: counter = %u / %ld certified=%s [%s]\n", value, n, certified,
           value == (uint32_t)n ? "PASS" : "FAIL");
    if (value != (uint32_t)n) rc = 1;
done:
    /* Destroy the IB before the module and the GPU (any order is safe). */
    rl_pm4_ib_free(ib);
    rl_pm4_builder_free(builder);
    if (counter) rl_gpu_free_mem(gpu, counter);
    rl_module_free(module);
    rl_gpu_free(gpu);
    free(kernarg);
    free(manifest);
    free(code);
    return rc;
}
