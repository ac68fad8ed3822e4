/* A kernel written in C for the simulated device: add_scalar's host twin
 * registered with rl_sim_register_kernel (it replaces the built-in Rust
 * twin), run through the direct PM4 path. A second twin, for counter,
 * stores to an unmapped address: the replay must fail with a VM fault, which
 * loses the GPU for this process (RL_ERR_DEVICE) without ending it.
 *
 *   sim_twin ADD_SCALAR_CODE_OBJECT COUNTER_CODE_OBJECT   (sim:gfx1201) */
#include "common.h"

#include <string.h>

#define N 128u
#define BLOCK 32u

/* add_scalar(uint *acc, uint value): acc[gid] += value, per workgroup. */
static int32_t add_scalar_twin(RlSimWorkgroup *wg, void *user) {
    size_t len = 0;
    const uint8_t *args = rl_sim_kernarg(wg, &len);
    if (!args || len < 12) return 1;
    uint64_t acc;
    uint32_t value, id[3], size[3], grid[3];
    memcpy(&acc, args, 8);
    memcpy(&value, args + 8, 4);
    rl_sim_workgroup_id(wg, id);
    rl_sim_workgroup_size(wg, size);
    rl_sim_grid_size(wg, grid);
    if (grid[0] != N) return 2;
    for (uint32_t lid = 0; lid < size[0]; lid++) {
        uint64_t at = acc + 4ull * (id[0] * size[0] + lid);
        uint32_t old = 0;
        if (rl_sim_load(wg, at, &old, 4) != RL_OK) return 3;
        old += value;
        if (rl_sim_store(wg, at, &old, 4) != RL_OK) return 4;
    }
    __atomic_fetch_add((uint32_t *)user, 1u, __ATOMIC_RELAXED);
    return 0;
}

/* A broken counter: writes to address 16, which no allocation covers. */
static int32_t faulting_twin(RlSimWorkgroup *wg, void *user) {
    (void)user;
    uint32_t one = 1;
    rl_sim_atomic_add_u32(wg, 16, one, NULL);
    return 0; /* the fault is reported even though the status is ignored */
}

static int32_t record(RlGpu *gpu, RlModule *module, const char *symbol, const uint8_t *explicit_args,
                      size_t explicit_len, uint32_t grid, RlPm4Ib **ib) {
    uint8_t kernarg[512];
    size_t len = 0;
    int32_t status = rl_module_pack_kernargs(module, symbol, explicit_args, explicit_len, grid, 1,
                                             1, BLOCK < grid ? BLOCK : grid, 1, 1, 0, kernarg,
                                             sizeof kernarg, &len);
    if (status != RL_OK) return status;
    RlPm4Builder *b = rl_pm4_builder_new(gpu);
    status = rl_pm4_dispatch(b, module, symbol, grid, 1, 1, BLOCK < grid ? BLOCK : grid, 1, 1, 0,
                             kernarg, len);
    if (status != RL_OK) {
        rl_pm4_builder_free(b);
        return status;
    }
    return rl_pm4_finalize(gpu, b, ib);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s ADD_SCALAR_CODE_OBJECT COUNTER_CODE_OBJECT\n", argv[0]);
        return 2;
    }
    static uint32_t calls = 0;
    int rc = 0;
    size_t add_len = 0, counter_len = 0;
    uint8_t *add_code = read_file(argv[1], &add_len);
    uint8_t *counter_code = read_file(argv[2], &counter_len);
    RlGpu *gpu = NULL;
    RlModule *add = NULL, *counter = NULL;
    RlPm4Ib *ib = NULL, *bad = NULL;
    uint64_t acc = 0;
    if (!add_code || !counter_code) {
        rc = 1;
        goto done;
    }
    CHECK(rl_sim_register_kernel("add_scalar", add_scalar_twin, &calls));
    CHECK(rl_sim_register_kernel("counter.kd", faulting_twin, NULL));
    if (rl_sim_register_kernel("x", NULL, NULL) != RL_ERR_NULL) rc = 1;

    gpu = rl_gpu_open("sim:gfx1201");
    if (!gpu) {
        fprintf(stderr, "rl_gpu_open: %s\n", rl_last_error());
        rc = 1;
        goto done;
    }
    CHECK(rl_gpu_load_module(gpu, add_code, add_len, &add));
    CHECK(rl_gpu_load_module(gpu, counter_code, counter_len, &counter));
    CHECK(rl_gpu_alloc(gpu, N * 4, RlMemHostVisible, &acc));

    uint8_t args[12];
    uint32_t value = 5;
    memcpy(args, &acc, 8);
    memcpy(args + 8, &value, 4);
    CHECK(record(gpu, add, "add_scalar", args, sizeof args, N, &ib));
    CHECK(rl_pm4_replay(ib));
    CHECK(rl_pm4_replay(ib));
    uint32_t got[N];
    CHECK(rl_gpu_read(gpu, acc, got, sizeof got));
    for (unsigned i = 0; i < N; i++) {
        if (got[i] != 10) {
            fprintf(stderr, "acc[%u] = %u, expected 10\n", i, got[i]);
            rc = 1;
        }
    }
    printf("C twin add_scalar: %u workgroup calls, acc[0] = %u\n", calls, got[0]);
    if (calls != 2 * N / BLOCK) rc = 1;

    CHECK(record(gpu, counter, "counter", (const uint8_t *)&acc, 8, 1, &bad));
    int32_t status = rl_pm4_replay(bad);
    printf("faulting C twin: status %d: %s\n", (int)status, rl_last_error());
    /* A VM fault loses the GPU (RL_ERR_DEVICE), and every later replay too. */
    if (status != RL_ERR_DEVICE) rc = 1;
    if (rl_pm4_replay(ib) != RL_ERR_DEVICE) rc = 1;
    printf("C twin example: [%s]\n", rc == 0 ? "PASS" : "FAIL");
done:
    rl_pm4_ib_free(bad);
    rl_pm4_ib_free(ib);
    rl_module_free(counter);
    rl_module_free(add);
    rl_gpu_free(gpu);
    free(counter_code);
    free(add_code);
    return rc;
}
