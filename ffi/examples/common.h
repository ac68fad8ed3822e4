/* Helpers shared by the relaunch C examples: status checks, reading a
 * code object, opening the device the examples run on, and timing. Valid
 * C++ too (casts on malloc): the reference guide builds gpu_smoke.c with
 * `hipcc -x hip`. */
#ifndef RELAUNCH_EXAMPLES_COMMON_H
#define RELAUNCH_EXAMPLES_COMMON_H

#include <relaunch.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Evaluate a call returning a status; on failure print it and jump to
 * the example's `done` label with `rc` = 1. */
#define CHECK(call)                                                        \
    do {                                                                   \
        int32_t status_ = (call);                                          \
        if (status_ != RL_OK) {                                            \
            fprintf(stderr, "%s failed (%d): %s\n", #call, (int)status_,   \
                    rl_last_error());                                      \
            rc = 1;                                                        \
            goto done;                                                     \
        }                                                                  \
    } while (0)

/* Reads a whole file; returns NULL (with a message) on failure. */
static inline uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return NULL;
    }
    uint8_t *data = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size > 0 && fseek(f, 0, SEEK_SET) == 0) {
        data = (uint8_t *)malloc((size_t)size);
        if (data && fread(data, 1, (size_t)size, f) != (size_t)size) {
            free(data);
            data = NULL;
        }
    }
    fclose(f);
    if (!data) fprintf(stderr, "cannot read %s\n", path);
    *len = data ? (size_t)size : 0;
    return data;
}

/* The device: $RELAUNCH_DEVICE if set, else the first GPU, else (only on a
 * machine without ROCm: no HSA runtime, or no /dev/kfd) the simulated
 * gfx1201, which the example then says in one line. A failed open has
 * already written one `relaunch:` line saying why. */
static inline RlGpu *open_device(void) {
    const char *selector = getenv("RELAUNCH_DEVICE");
    RlGpu *gpu = rl_gpu_open_default();
    if (!gpu) return NULL;
    char desc[256] = "";
    (void)rl_gpu_describe(gpu, desc, sizeof desc); /* a cut line is still printed */
    if (!(selector && *selector) && rl_gpu_simulated(gpu))
        printf("device: %s -- no ROCm GPU on this machine, running on the simulator "
               "(RELAUNCH_DEVICE picks another)\n",
               desc);
    else
        printf("device: %s\n", desc);
    return gpu;
}

static inline double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
