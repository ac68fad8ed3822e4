/* Helpers shared by the relaunch C examples: status checks, reading a
 * code object, opening the device the examples run on, and timing. */
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
        data = malloc((size_t)size);
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

/* The device: $RELAUNCH_DEVICE if set, else GPU 0, else sim:gfx1201. */
static inline RlGpu *open_device(void) {
    const char *selector = getenv("RELAUNCH_DEVICE");
    RlGpu *gpu = NULL;
    if (selector && *selector) {
        gpu = rl_gpu_open(selector);
        if (!gpu) fprintf(stderr, "rl_gpu_open(%s): %s\n", selector, rl_last_error());
        return gpu;
    }
    gpu = rl_gpu_new(0);
    if (!gpu) {
        gpu = rl_gpu_open("sim:gfx1201");
        if (!gpu) fprintf(stderr, "rl_gpu_open(sim:gfx1201): %s\n", rl_last_error());
    }
    if (gpu) {
        char desc[256];
        if (rl_gpu_describe(gpu, desc, sizeof desc) == RL_OK) printf("device: %s\n", desc);
    }
    return gpu;
}

static inline double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
