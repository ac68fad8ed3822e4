/* Build once, patch per token: one add_scalar dispatch (acc[i] += value)
 * is finalized once; each token patches the 4-byte `value` in place and
 * replays. The same tokens are also run by rebuilding the IB every token.
 * Both accumulators must equal sum(1..T); the speedup of patching over
 * rebuilding is printed.
 *
 *   decode_kernargs T CODE_OBJECT
 *
 * Device: $RELAUNCH_DEVICE, else GPU 0, else sim:gfx1201. */
#include "common.h"

#define N 64u     /* work-items (accumulator elements) */
#define BLOCK 32u /* work-items per workgroup */
#define VALUE_OFFSET 8u

static const char *SYMBOL = "add_scalar";

/* Packs add_scalar(acc, value) for this launch, hidden arguments included. */
static int32_t pack(RlModule *module, uint64_t acc, uint32_t value, uint8_t *out, size_t len,
                    size_t *written) {
    uint8_t explicit_args[12];
    for (int i = 0; i < 8; i++) explicit_args[i] = (uint8_t)(acc >> (8 * i));
    for (int i = 0; i < 4; i++) explicit_args[8 + i] = (uint8_t)(value >> (8 * i));
    return rl_module_pack_kernargs(module, SYMBOL, explicit_args, sizeof explicit_args, N, 1, 1,
                                   BLOCK, 1, 1, 0, out, len, written);
}

/* Records and finalizes one add_scalar dispatch. */
static int32_t build(RlGpu *gpu, RlModule *module, const uint8_t *kernarg, size_t len,
                     RlPm4Ib **ib) {
    RlPm4Builder *b = rl_pm4_builder_new(gpu);
    if (!b) return RL_ERR_HANDLE;
    int32_t status = rl_pm4_dispatch(b, module, SYMBOL, N, 1, 1, BLOCK, 1, 1, 0, kernarg, len);
    if (status != RL_OK) {
        rl_pm4_builder_free(b);
        return status;
    }
    return rl_pm4_finalize(gpu, b, ib); /* consumes b */
}

static int check(RlGpu *gpu, uint64_t acc, uint32_t expected, const char *what) {
    uint32_t values[N];
    if (rl_gpu_read(gpu, acc, values, sizeof values) != RL_OK) {
        fprintf(stderr, "reading %s: %s\n", what, rl_last_error());
        return 0;
    }
    for (unsigned i = 0; i < N; i++) {
        if (values[i] != expected) {
            fprintf(stderr, "%s[%u] = %u, expected %u\n", what, i, values[i], expected);
            return 0;
        }
    }
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s T CODE_OBJECT\n", argv[0]);
        return 2;
    }
    long tokens = strtol(argv[1], NULL, 10);
    if (tokens <= 0 || tokens > 90000) {
        fprintf(stderr, "T must be 1..90000 (the sum must fit in 32 bits)\n");
        return 2;
    }
    int rc = 0;
    size_t code_len = 0, kernarg_len = 0;
    uint8_t *code = NULL, *kernarg = NULL;
    RlGpu *gpu = NULL;
    RlModule *module = NULL;
    RlPm4Ib *ib = NULL, *rebuilt_ib = NULL;
    uint64_t patched = 0, rebuilt = 0;

    code = read_file(argv[2], &code_len);
    if (!code) return 1;
    gpu = open_device();
    if (!gpu) {
        rc = 1;
        goto done;
    }
    CHECK(rl_gpu_load_module(gpu, code, code_len, &module));
    int64_t size = rl_module_kernarg_size(module, SYMBOL);
    if (size <= 0) {
        fprintf(stderr, "%s: %s\n", SYMBOL, rl_last_error());
        rc = 1;
        goto done;
    }
    kernarg = calloc(1, (size_t)size);
    if (!kernarg) {
        rc = 1;
        goto done;
    }
    CHECK(rl_gpu_alloc(gpu, N * 4, RlMemHostVisible, &patched));
    CHECK(rl_gpu_alloc(gpu, N * 4, RlMemHostVisible, &rebuilt));

    /* Build once, patch `value` per token. */
    CHECK(pack(module, patched, 0, kernarg, (size_t)size, &kernarg_len));
    CHECK(build(gpu, module, kernarg, kernarg_len, &ib));
    double start = now_seconds();
    for (uint32_t token = 1; token <= (uint32_t)tokens; token++) {
        CHECK(rl_pm4_ib_set_kernargs(ib, 0, VALUE_OFFSET, (const uint8_t *)&token, sizeof token));
        CHECK(rl_pm4_replay(ib));
    }
    double patch_seconds = now_seconds() - start;

    /* Rebuild every token. */
    start = now_seconds();
    for (uint32_t token = 1; token <= (uint32_t)tokens; token++) {
        CHECK(pack(module, rebuilt, token, kernarg, (size_t)size, &kernarg_len));
        CHECK(build(gpu, module, kernarg, kernarg_len, &rebuilt_ib));
        CHECK(rl_pm4_replay(rebuilt_ib));
        rl_pm4_ib_free(rebuilt_ib);
        rebuilt_ib = NULL;
    }
    double rebuild_seconds = now_seconds() - start;

    uint32_t expected = (uint32_t)(tokens * (tokens + 1) / 2);
    int pass = check(gpu, patched, expected, "patched") && check(gpu, rebuilt, expected, "rebuilt");
    printf("patch+replay: %.1f us/token, rebuild+replay: %.1f us/token, speedup %.2fx\n",
           1e6 * patch_seconds / (double)tokens, 1e6 * rebuild_seconds / (double)tokens,
           patch_seconds > 0 ? rebuild_seconds / patch_seconds : 0.0);
    printf("decode kernargs: T=%ld sum = %u (patched and rebuilt) [%s]\n", tokens, expected,
           pass ? "PASS" : "FAIL");
    if (!pass) rc = 1;
done:
    rl_pm4_ib_free(rebuilt_ib);
    rl_pm4_ib_free(ib);
    rl_module_free(module);
    rl_gpu_free(gpu); /* the GPU's memory is released with its last user */
    free(kernarg);
    free(code);
    return rc;
}
