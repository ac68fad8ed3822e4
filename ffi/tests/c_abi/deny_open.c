/* Tries one C opener against the host deny list (#15.5):
 *   deny_open open SELECTOR | deny_open new ORDINAL | deny_open default
 * Prints "opened: <describe>" or "refused: <rl_last_error()>". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relaunch.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: deny_open open SEL | new N | default\n");
        return 2;
    }
    RlGpu *gpu = NULL;
    if (strcmp(argv[1], "open") == 0 && argc == 3) {
        gpu = rl_gpu_open(argv[2]);
    } else if (strcmp(argv[1], "new") == 0 && argc == 3) {
        gpu = rl_gpu_new(atoi(argv[2]));
    } else if (strcmp(argv[1], "default") == 0) {
        gpu = rl_gpu_open_default();
    } else {
        fprintf(stderr, "unknown opener %s\n", argv[1]);
        return 2;
    }
    if (gpu == NULL) {
        printf("refused: %s\n", rl_last_error());
        return 0;
    }
    char line[512];
    rl_gpu_describe(gpu, line, sizeof line);
    printf("opened: %s\n", line);
    rl_gpu_free(gpu);
    return 0;
}
