/* The seed's C-ABI smoke: a two-node project/consume graph over one
 * 4096-byte buffer, instantiated and launched on the mock (no GPU work).
 * Also checks that a freed handle is refused instead of crashing. */
#include <relaunch.h>

#include <stdio.h>
#include <string.h>

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

int main(void) {
    int rc = 0;
    RlGraphExec *exec = NULL;
    RlGraph *graph = rl_graph_new();
    if (!graph) {
        fprintf(stderr, "rl_graph_new: %s\n", rl_last_error());
        return 1;
    }
    uint32_t activations = 0, project = 0, consume = 0;
    CHECK(rl_graph_buffer(graph, "activations", 4096, &activations));
    RlAccess project_access[2] = {
        {activations, 0, 2048, 0},
        {activations, 2048, 2048, 1},
    };
    CHECK(rl_graph_kernel(graph, "project", 32, 1, 1, 64, 1, 1, project_access, 2, NULL, 0,
                          &project));
    RlAccess consume_access[1] = {{activations, 2048, 2048, 0}};
    CHECK(rl_graph_kernel(graph, "consume", 32, 1, 1, 64, 1, 1, consume_access, 1, &project, 1,
                          &consume));
    CHECK(rl_graph_instantiate(graph, &exec));
    printf("abi=%u lanes=%zu\n", rl_abi_version(), rl_graphexec_lane_count(exec));

    uint8_t fingerprint[32];
    CHECK(rl_graphexec_fingerprint(exec, fingerprint));
    printf("fingerprint=");
    for (int i = 0; i < 32; i++) printf("%02x", fingerprint[i]);
    printf("\n");
    CHECK(rl_graphexec_launch_mock(exec));

    rl_graphexec_free(exec);
    if (rl_graphexec_launch_mock(exec) != RL_ERR_HANDLE ||
        strstr(rl_last_error(), "stale") == NULL) {
        fprintf(stderr, "a freed exec was not refused: %s\n", rl_last_error());
        rc = 1;
    }
    exec = NULL;
    if (rc == 0) printf("C-ABI smoke OK\n");
done:
    rl_graphexec_free(exec);
    rl_graph_free(graph);
    return rc;
}
