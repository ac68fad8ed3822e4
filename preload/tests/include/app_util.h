/* What the interposer test apps share: a checked call, reading a 32-bit
 * counter back from device memory, the 8-work-item counter node, and
 * reading the code object named on the command line. */
#ifndef RELAUNCH_TEST_APP_UTIL_H
#define RELAUNCH_TEST_APP_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include "hip_min.h"

#define hipMemcpyDeviceToHost 2

#define CHECK(call) do { hipError_t e_ = (call); if (e_ != 0) { \
    fprintf(stderr, "%s failed with %d (line %d)\n", #call, e_, __LINE__); exit(1); } } while (0)

static inline unsigned read_counter(void *dev) {
    unsigned v = 0;
    CHECK(hipMemcpy(&v, dev, sizeof v, hipMemcpyDeviceToHost));
    return v;
}

/* 2 blocks of 4 work-items: adds 8 to the counter args[0] points at. */
static inline hipKernelNodeParams counter_node(void *f, void **args) {
    hipKernelNodeParams p = {{4, 1, 1}, NULL, f, {2, 1, 1}, args, 0};
    return p;
}

/* The code object at `path` (at most 1 MiB), read into static storage;
 * exits with a message on failure. */
static inline const unsigned char *read_image(const char *path) {
    static unsigned char image[1 << 20];
    FILE *file = fopen(path, "rb");
    if (!file) { perror(path); exit(2); }
    size_t len = fread(image, 1, sizeof image, file);
    fclose(file);
    if (len == 0) { fprintf(stderr, "empty %s\n", path); exit(2); }
    return image;
}

#endif
