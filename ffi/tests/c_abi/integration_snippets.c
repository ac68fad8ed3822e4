/* The C snippets of the reference integration document, each pasted into
 * a function that declares what the snippet assumes, compiled as C99 and
 * C++17 with -Wall -Wextra -Werror against relaunch.h. Snippet text is
 * unchanged except for the product name in one comment.
 *
 *   integration_snippets            runs every snippet; on a machine with
 *                                   no GPU they fail closed on NULL
 *                                   handles (no crash), and the selector
 *                                   snippet's failed open leaves one
 *                                   `relaunch: ...` line on stderr. */
#include <relaunch.h>

#include <stdio.h>

/* "Retained GPU dispatch": the core low-level sequence. */
static int retained_dispatch(const uint8_t *hsaco_bytes, size_t hsaco_len, uint32_t grid_x,
                             uint32_t grid_y, uint32_t grid_z, uint32_t block_x,
                             uint32_t block_y, uint32_t block_z, uint32_t dynamic_group_bytes,
                             const uint8_t *kernarg, size_t kernarg_len) {
RlGpu *gpu = rl_gpu_new(0);
RlModule *module = NULL;
int rc = rl_gpu_load_module(gpu, hsaco_bytes, hsaco_len, &module);

long kernarg_size = rl_module_kernarg_size(module, "my_kernel.kd");
/* Pack exactly kernarg_size bytes using the kernel ABI. */

RlPm4Builder *builder = rl_pm4_builder_new(gpu);
rc = rl_pm4_dispatch(builder, module, "my_kernel.kd",
                     grid_x, grid_y, grid_z,
                     block_x, block_y, block_z,
                     dynamic_group_bytes, kernarg, kernarg_len);

RlPm4Ib *ib = NULL;
rc = rl_pm4_finalize(gpu, builder, &ib); /* consumes builder */
rc = rl_pm4_replay(ib);                 /* submit + completion wait */

rl_pm4_ib_free(ib);
rl_module_free(module);
rl_gpu_free(gpu);
    (void)kernarg_size;
    return rc;
}

/* "Build once, patch per token". */
static int patch_per_token(RlPm4Ib *ib, size_t dispatch_index, size_t position_byte_offset,
                           uint32_t next_position) {
    int rc;
uint32_t position = next_position;
rc = rl_pm4_ib_set_kernargs(
    ib, dispatch_index, position_byte_offset,
    (const uint8_t *)&position, sizeof(position));
rc = rl_pm4_replay(ib);
    return rc;
}

/* "Device-anchored GPU selection": the C API. */
static int anchored_open(void) {
RlGpu *gpu = rl_gpu_open("uuid:GPU-43390a851e296ee5");
if (!gpu) {
    /* stderr already has one relaunch: … diagnostic */
    return 1;
}

char desc[256];
rl_gpu_describe(gpu, desc, sizeof(desc));
/* e.g. "gfx1100 0000:66:00.0 [uuid:GPU-43390a851e296ee5] card0 …" */

/* … load / build / replay … */

rl_gpu_free(gpu);
    return 0;
}

int main(void) {
    const uint8_t not_code[4] = {0, 1, 2, 3};
    int rc = retained_dispatch(not_code, sizeof not_code, 1, 1, 1, 1, 1, 1, 0, not_code, 4);
    printf("retained dispatch: %d\n", rc);
    rc = patch_per_token(NULL, 0, 8, 1);
    printf("patch per token: %d\n", rc);
    fprintf(stderr, "--- anchored open ---\n");
    rc = anchored_open();
    printf("anchored open: %d\n", rc);
    return 0;
}
